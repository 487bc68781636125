package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Plan is the LauncherPlan of src/workloads/pipelines/launcher.ts: what one task Pod downloads before
// its command and uploads after it.
type Plan struct {
	PipelineRoot   string
	Downloads      []Download
	OutputPaths    []string
	Artifacts      map[string][]Artifact
	ParameterFiles []FileURI
	ExecutorOutput FileURI
}

// Download is one input artifact: the object at URI, or the objects under the prefix URI, to Path.
type Download struct{ Name, URI, Path string }

// FileURI is a local file and the URI it is uploaded to.
type FileURI struct{ Path, URI string }

// Artifact is the part of a KFP RuntimeArtifact the launcher needs.
type Artifact struct {
	Name string
	URI  string
	// CustomPath is where the component wrote it, when the executor output says so; HasCustomPath
	// tells an empty customPath from none (an empty one, as upstream, means the uri's local path).
	CustomPath    string
	HasCustomPath bool
}

// Location is an object (or a prefix) on the S3 endpoint.
type Location struct {
	Scheme, Bucket string
	// Key has no leading or trailing '/'; "" for the bucket itself.
	Key string
}

var s3URI = regexp.MustCompile(`^(s3|minio)://([^/?#]+)(/[^?#]*)?(\?.*)?$`)

// ParseS3URI reads `s3://bucket/key` or `minio://bucket/key` (a query string is dropped), as
// src/artifacts/s3-uri.ts does; ok is false for anything else.
func ParseS3URI(uri string) (Location, bool) {
	m := s3URI.FindStringSubmatch(uri)
	if m == nil {
		return Location{}, false
	}
	return Location{Scheme: m[1], Bucket: m[2], Key: strings.Trim(m[3], "/")}, true
}

// LocalPathForURI is where a KFP executor finds the artifact at an S3 URI (executor-input.ts's localPathForUri).
func LocalPathForURI(uri string) (string, bool) {
	switch {
	case strings.HasPrefix(uri, "minio://"):
		return "/minio/" + strings.TrimPrefix(uri, "minio://"), true
	case strings.HasPrefix(uri, "s3://"):
		return "/s3/" + strings.TrimPrefix(uri, "s3://"), true
	}
	return "", false
}

// SafeSegments are a key's or path's segments without the empty ones and without `.`/`..`, which
// would lead out of the target folder.
func SafeSegments(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." && s != ".." {
			out = append(out, s)
		}
	}
	return out
}

// ParsePlan reads SKIFF_LAUNCHER_PLAN; an error names the field that is missing or malformed, as
// podLauncherPlan does.
func ParsePlan(text string) (*Plan, error) {
	const where = "SKIFF_LAUNCHER_PLAN"
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("%s is not set", where)
	}
	var raw any
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, fmt.Errorf("%s is not JSON: %v", where, err)
	}
	bad := func(field string) error { return fmt.Errorf("%s: %s is missing or malformed", where, field) }
	o, ok := raw.(map[string]any)
	if !ok {
		return nil, bad("the plan")
	}
	p := &Plan{Artifacts: map[string][]Artifact{}}

	if p.PipelineRoot, ok = o["pipelineRoot"].(string); !ok {
		return nil, bad("pipelineRoot (an s3:// or minio:// URI)")
	}
	if _, ok := ParseS3URI(p.PipelineRoot); !ok {
		return nil, bad("pipelineRoot (an s3:// or minio:// URI)")
	}

	downloads, ok := o["downloads"].([]any)
	if !ok {
		return nil, bad("downloads")
	}
	for _, d := range downloads {
		m, ok := d.(map[string]any)
		if !ok {
			return nil, bad("downloads")
		}
		name, ok1 := m["name"].(string)
		uri, ok2 := m["uri"].(string)
		path, ok3 := m["path"].(string)
		if !ok1 || !ok2 || !ok3 || path == "" {
			return nil, bad("downloads")
		}
		p.Downloads = append(p.Downloads, Download{Name: name, URI: uri, Path: path})
	}

	paths, ok := o["outputPaths"].([]any)
	if !ok {
		return nil, bad("outputPaths")
	}
	for _, x := range paths {
		s, ok := x.(string)
		if !ok {
			return nil, bad("outputPaths")
		}
		p.OutputPaths = append(p.OutputPaths, s)
	}

	arts, ok := o["artifacts"].(map[string]any)
	if !ok {
		return nil, bad("artifacts")
	}
	for name, l := range arts {
		list, ok := l.(map[string]any)
		if !ok {
			return nil, bad(fmt.Sprintf("artifacts[%q]", name))
		}
		items, ok := list["artifacts"].([]any)
		if !ok && list["artifacts"] != nil {
			return nil, bad(fmt.Sprintf("artifacts[%q].artifacts", name))
		}
		out := []Artifact{}
		for i, x := range items {
			a, err := artifactOf(x)
			if err != nil {
				return nil, bad(fmt.Sprintf("artifacts[%q].artifacts[%d]", name, i))
			}
			out = append(out, a)
		}
		p.Artifacts[name] = out
	}

	files, ok := o["parameterFiles"].([]any)
	if !ok {
		return nil, bad("parameterFiles")
	}
	for _, x := range files {
		f, ok := fileURIOf(x)
		if !ok {
			return nil, bad("parameterFiles")
		}
		p.ParameterFiles = append(p.ParameterFiles, f)
	}

	if p.ExecutorOutput, ok = fileURIOf(o["executorOutput"]); !ok {
		return nil, bad("executorOutput")
	}
	return p, nil
}

func fileURIOf(x any) (FileURI, bool) {
	m, ok := x.(map[string]any)
	if !ok {
		return FileURI{}, false
	}
	path, ok1 := m["path"].(string)
	uri, ok2 := m["uri"].(string)
	return FileURI{Path: path, URI: uri}, ok1 && ok2 && path != ""
}

// artifactOf reads a RuntimeArtifact of the plan (the executor input's camelCase; custom_path too).
func artifactOf(x any) (Artifact, error) {
	m, ok := x.(map[string]any)
	if !ok {
		return Artifact{}, fmt.Errorf("must be an object")
	}
	var a Artifact
	if v, ok := m["name"]; ok && v != nil {
		if a.Name, ok = v.(string); !ok {
			return a, fmt.Errorf("name must be a string")
		}
	}
	if v, ok := m["uri"]; ok && v != nil {
		if a.URI, ok = v.(string); !ok {
			return a, fmt.Errorf("uri must be a string")
		}
	}
	for _, k := range []string{"customPath", "custom_path"} {
		if v, ok := m[k]; ok && v != nil {
			s, ok := v.(string)
			if !ok {
				return a, fmt.Errorf("%s must be a string", k)
			}
			a.CustomPath, a.HasCustomPath = s, true
			break
		}
	}
	return a, nil
}
