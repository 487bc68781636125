package main

import (
	"strings"
	"testing"
)

func TestExecutorOutputArtifacts(t *testing.T) {
	got, err := ExecutorOutputArtifacts([]byte(`{"parameterValues": {"x": 1}, "artifacts": {"model": {"artifacts": [
		{"name": "model", "uri": "minio://b/other", "metadata": {"a": 1}, "customPath": "/tmp/model"},
		{"custom_path": "/tmp/second"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	m := got["model"]
	if len(m) != 2 || m[0].URI != "minio://b/other" || m[0].CustomPath != "/tmp/model" || !m[1].HasCustomPath || m[1].CustomPath != "/tmp/second" {
		t.Fatalf("artifacts: %+v", m)
	}
	if got, err := ExecutorOutputArtifacts([]byte(`{"parameter_values": {}, "parameters": {}}`)); err != nil || len(got) != 0 {
		t.Fatalf("no artifacts: %v %v", got, err)
	}
	for text, want := range map[string]string{
		`{`:                               "failed to unmarshal ExecutorOutput: unexpected end of JSON input",
		`[]`:                              "failed to unmarshal ExecutorOutput: not a JSON object",
		`{"bogus": 1}`:                    `failed to unmarshal ExecutorOutput: unknown field "bogus" in ExecutorOutput`,
		`{"artifacts": {"a": {"x": []}}}`: `failed to unmarshal ExecutorOutput: unknown field "x" in artifacts["a"]`,
		`{"artifacts": {"a": {"artifacts": [{"metadata": 3}]}}}`: `failed to unmarshal ExecutorOutput: artifacts["a"].artifacts[0].metadata must be an object`,
		`{"parameterValues": 3}`:                                 "failed to unmarshal ExecutorOutput: parameterValues must be an object",
	} {
		if _, err := ExecutorOutputArtifacts([]byte(text)); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", text, err, want)
		}
	}
}

func TestProduced(t *testing.T) {
	provisioned := map[string][]Artifact{
		"out":   {{Name: "out", URI: "minio://b/r/out"}},
		"model": {{Name: "model", URI: "minio://b/r/model"}},
		"none":  {},
	}
	fromExecutor := map[string][]Artifact{
		"model": {
			{URI: "", CustomPath: "/tmp/model", HasCustomPath: true},
			{Name: "", URI: "minio://b/r/model-2"},
		},
		"unknown": {{URI: "minio://b/x"}},
	}
	got := Produced(provisioned, fromExecutor)
	if len(got) != 2 {
		t.Fatalf("produced: %+v", got)
	}
	if a := got["out"]; len(a) != 1 || a[0].URI != "minio://b/r/out" || a[0].HasCustomPath {
		t.Errorf("out: %+v", a)
	}
	m := got["model"]
	if len(m) != 2 || m[0].URI != "minio://b/r/model" || m[0].CustomPath != "/tmp/model" || m[1].URI != "minio://b/r/model-2" || m[1].Name != "model" {
		t.Errorf("model: %+v", m)
	}
	if p, _ := m[0].LocalPath(); p != "/tmp/model" {
		t.Errorf("model's local path: %s", p)
	}
	if p, _ := m[1].LocalPath(); p != "/minio/b/r/model-2" {
		t.Errorf("the second model's local path: %s", p)
	}
	// an empty customPath from the executor output means the uri's own path
	got = Produced(provisioned, map[string][]Artifact{"out": {{CustomPath: "", HasCustomPath: true}}})
	if p, _ := got["out"][0].LocalPath(); p != "/minio/b/r/out" {
		t.Errorf("empty customPath: %s", p)
	}
	if !strings.HasPrefix(got["out"][0].URI, "minio://") {
		t.Errorf("uri lost: %+v", got["out"])
	}
}
