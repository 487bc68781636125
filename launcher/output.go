package main

import (
	"encoding/json"
	"fmt"
	"sort"
)

// ExecutorOutputArtifacts reads the artifacts of an ExecutorOutput as read-back.ts's
// parseExecutorOutput does: strict (an unknown field is an error), camelCase and snake_case names,
// the deprecated `parameters` map accepted and ignored.
func ExecutorOutputArtifacts(text []byte) (map[string][]Artifact, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("failed to unmarshal ExecutorOutput: "+format, args...)
	}
	var raw any
	if err := json.Unmarshal(text, &raw); err != nil {
		return nil, fail("%v", err)
	}
	o, ok := raw.(map[string]any)
	if !ok {
		return nil, fail("not a JSON object")
	}
	if err := checkKeys(o, "ExecutorOutput", "parameterValues", "parameter_values", "artifacts", "parameters"); err != nil {
		return nil, err
	}
	pv := pick(o, "parameterValues", "parameter_values")
	if _, ok := pv.(map[string]any); pv != nil && !ok {
		return nil, fail("parameterValues must be an object")
	}
	out := map[string][]Artifact{}
	if o["artifacts"] == nil {
		return out, nil
	}
	arts, ok := o["artifacts"].(map[string]any)
	if !ok {
		return nil, fail("artifacts must be an object")
	}
	for name, l := range arts {
		list, ok := l.(map[string]any)
		if !ok {
			return nil, fail("artifacts[%q] must be an object", name)
		}
		if err := checkKeys(list, fmt.Sprintf("artifacts[%q]", name), "artifacts"); err != nil {
			return nil, err
		}
		items, ok := list["artifacts"].([]any)
		if !ok && list["artifacts"] != nil {
			return nil, fail("artifacts[%q].artifacts must be a list", name)
		}
		out[name] = []Artifact{}
		for i, x := range items {
			where := fmt.Sprintf("artifacts[%q].artifacts[%d]", name, i)
			a, ok := x.(map[string]any)
			if !ok {
				return nil, fail("%s must be an object", where)
			}
			if err := checkKeys(a, where, "name", "type", "uri", "properties", "customProperties", "custom_properties", "metadata", "customPath", "custom_path"); err != nil {
				return nil, err
			}
			if md := a["metadata"]; md != nil {
				if _, ok := md.(map[string]any); !ok {
					return nil, fail("%s.metadata must be an object", where)
				}
			}
			r := Artifact{}
			r.Name, _ = a["name"].(string)
			r.URI, _ = a["uri"].(string)
			if cp, ok := pick(a, "customPath", "custom_path").(string); ok {
				r.CustomPath, r.HasCustomPath = cp, true
			}
			out[name] = append(out[name], r)
		}
	}
	return out, nil
}

func pick(o map[string]any, camel, snake string) any {
	if v, ok := o[camel]; ok {
		return v
	}
	return o[snake]
}

func checkKeys(o map[string]any, where string, allowed ...string) error {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
next:
	for _, k := range keys {
		for _, a := range allowed {
			if k == a {
				continue next
			}
		}
		return fmt.Errorf("failed to unmarshal ExecutorOutput: unknown field %q in %s", k, where)
	}
	return nil
}

// mergeArtifact is the launcher's mergeRuntimeArtifacts(src, dst) for what the upload needs: a
// non-empty uri wins, a customPath wins.
func mergeArtifact(src, dst Artifact) Artifact {
	out := dst
	if src.URI != "" {
		out.URI = src.URI
	}
	if src.HasCustomPath {
		out.CustomPath, out.HasCustomPath = src.CustomPath, true
	}
	return out
}

// Produced merges the provisioned output artifacts with those the executor output names, as
// read-back.ts's readBackOutputs does: the first of each name merged over the provisioned one, the
// further ones (a `-> List[Artifact]`) each over the provisioned uri.
func Produced(provisioned, fromExecutor map[string][]Artifact) map[string][]Artifact {
	out := map[string][]Artifact{}
	for name, list := range provisioned {
		if len(list) == 0 {
			continue
		}
		first := list[0]
		produced := fromExecutor[name]
		merged := []Artifact{first}
		if len(produced) > 0 {
			merged[0] = mergeArtifact(produced[0], first)
		}
		for _, extra := range produced[min(1, len(produced)):] {
			n := extra.Name
			if n == "" {
				n = name
			}
			merged = append(merged, mergeArtifact(extra, Artifact{Name: n, URI: first.URI}))
		}
		out[name] = merged
	}
	return out
}

// LocalPath is where the component wrote an artifact: its customPath, else its uri's local path.
func (a Artifact) LocalPath() (string, bool) {
	if a.CustomPath != "" {
		return a.CustomPath, true
	}
	return LocalPathForURI(a.URI)
}
