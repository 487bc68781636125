package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func validPlan() map[string]any {
	return map[string]any{
		"pipelineRoot": "minio://mlpipeline/v2",
		"downloads":    []any{map[string]any{"name": "data", "uri": "minio://mlpipeline/v2/p/data", "path": "/minio/mlpipeline/v2/p/data"}},
		"outputPaths":  []any{"/minio/mlpipeline/v2/c/output_metadata.json"},
		"artifacts": map[string]any{"out": map[string]any{"artifacts": []any{
			map[string]any{"name": "out", "type": map[string]any{"schemaTitle": "system.Dataset"}, "uri": "minio://mlpipeline/v2/c/out", "metadata": map[string]any{}},
		}}},
		"parameterFiles": []any{map[string]any{"path": "/minio/mlpipeline/v2/c/p/Output", "uri": "minio://mlpipeline/v2/c/p/Output"}},
		"executorOutput": map[string]any{"path": "/minio/mlpipeline/v2/c/output_metadata.json", "uri": "minio://mlpipeline/v2/c/output_metadata.json"},
	}
}

func planText(t *testing.T, p map[string]any) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParsePlan(t *testing.T) {
	p, err := ParsePlan(planText(t, validPlan()))
	if err != nil {
		t.Fatal(err)
	}
	if p.PipelineRoot != "minio://mlpipeline/v2" || len(p.Downloads) != 1 || p.Downloads[0] != (Download{"data", "minio://mlpipeline/v2/p/data", "/minio/mlpipeline/v2/p/data"}) {
		t.Fatalf("plan: %+v", p)
	}
	if got := p.Artifacts["out"]; len(got) != 1 || got[0].URI != "minio://mlpipeline/v2/c/out" || got[0].HasCustomPath {
		t.Fatalf("artifacts: %+v", got)
	}
	if p.ExecutorOutput.URI != "minio://mlpipeline/v2/c/output_metadata.json" || len(p.ParameterFiles) != 1 {
		t.Fatalf("files: %+v", p)
	}
}

func TestParsePlanNamesTheField(t *testing.T) {
	cases := []struct {
		field string
		value any
		want  string
	}{
		{"pipelineRoot", "/local/root", "pipelineRoot (an s3:// or minio:// URI) is missing or malformed"},
		{"pipelineRoot", nil, "pipelineRoot (an s3:// or minio:// URI) is missing or malformed"},
		{"downloads", []any{map[string]any{"uri": 3}}, "downloads is missing or malformed"},
		{"downloads", "x", "downloads is missing or malformed"},
		{"outputPaths", []any{1}, "outputPaths is missing or malformed"},
		{"artifacts", nil, "artifacts is missing or malformed"},
		{"artifacts", map[string]any{"out": map[string]any{"artifacts": []any{map[string]any{"uri": 5}}}}, `artifacts["out"].artifacts[0] is missing or malformed`},
		{"parameterFiles", []any{map[string]any{"path": "/x"}}, "parameterFiles is missing or malformed"},
		{"executorOutput", nil, "executorOutput is missing or malformed"},
	}
	for _, c := range cases {
		p := validPlan()
		if c.value == nil {
			delete(p, c.field)
		} else {
			p[c.field] = c.value
		}
		_, err := ParsePlan(planText(t, p))
		if err == nil || err.Error() != "SKIFF_LAUNCHER_PLAN: "+c.want {
			t.Errorf("%s = %v: got %v, want %q", c.field, c.value, err, c.want)
		}
	}
	if _, err := ParsePlan("{"); err == nil || !strings.HasPrefix(err.Error(), "SKIFF_LAUNCHER_PLAN is not JSON") {
		t.Errorf("not JSON: %v", err)
	}
	if _, err := ParsePlan(""); err == nil || err.Error() != "SKIFF_LAUNCHER_PLAN is not set" {
		t.Errorf("unset: %v", err)
	}
	if _, err := ParsePlan("[]"); err == nil || err.Error() != "SKIFF_LAUNCHER_PLAN: the plan is missing or malformed" {
		t.Errorf("a list: %v", err)
	}
}

func TestParseS3URI(t *testing.T) {
	cases := map[string]Location{
		"s3://b/k/x":         {"s3", "b", "k/x"},
		"minio://b/k/x/?a=1": {"minio", "b", "k/x"},
		"minio://b":          {"minio", "b", ""},
		"s3://b//k//":        {"s3", "b", "k"},
		"minio://b?region=x": {"minio", "b", ""},
	}
	for uri, want := range cases {
		got, ok := ParseS3URI(uri)
		if !ok || got != want {
			t.Errorf("%s: %+v %v, want %+v", uri, got, ok, want)
		}
	}
	for _, uri := range []string{"gs://b/k", "/minio/b/k", "s3:/b/k", "minio://", "http://b/k"} {
		if _, ok := ParseS3URI(uri); ok {
			t.Errorf("%s parsed", uri)
		}
	}
}

func TestSafeSegmentsAndLocalPaths(t *testing.T) {
	if got := SafeSegments("a/../b/./c//d"); !reflect.DeepEqual(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("segments: %v", got)
	}
	if got := SafeSegments("../.."); len(got) != 0 {
		t.Errorf("segments: %v", got)
	}
	if p, _ := LocalPathForURI("minio://b/k"); p != "/minio/b/k" {
		t.Error(p)
	}
	if p, _ := LocalPathForURI("s3://b/k"); p != "/s3/b/k" {
		t.Error(p)
	}
	if _, ok := LocalPathForURI("gs://b/k"); ok {
		t.Error("gs:// has a local path here")
	}
}

func TestChildEnv(t *testing.T) {
	got := ChildEnv([]string{"PATH=/bin", "SKIFF_S3_SECRET_ACCESS_KEY=s", "SKIFF_S3_ENDPOINT=http://x", "SKIFF_LAUNCHER_PLAN={}", "SKIFF_OTHER=1", "HOME=/root"})
	if !reflect.DeepEqual(got, []string{"PATH=/bin", "SKIFF_OTHER=1", "HOME=/root"}) {
		t.Errorf("env: %v", got)
	}
}
