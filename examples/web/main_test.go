package main

import (
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// TestModuleNeedsOnlyAskuser keeps the main demo quick to start from a fresh clone: the packages
// `go run ./examples/web` builds come from askuser and from modules askuser's own go.mod
// requires, so that it downloads and compiles no more than the library itself, although
// the examples module beside it requires OpenTelemetry, Prometheus, NATS and LLM SDKs for
// the other examples (the metrics are examples/cluster's).
func TestModuleNeedsOnlyAskuser(t *testing.T) {
	root := requires(t, "../../go.mod")
	root["github.com/askuser-go/askuser"] = true
	root["github.com/askuser-go/askuser/examples"] = true // the demo and examples/internal
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the demo's packages: %v", err)
	}
	// The modules of the packages the demo's binary is built from (the standard library's
	// have none).
	cmd := exec.Command(goCmd, "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", ".")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	used := map[string]bool{}
	for _, path := range strings.Fields(string(out)) {
		used[path] = true
	}
	for _, path := range []string{"github.com/askuser-go/askuser", "github.com/coder/websocket"} {
		if !used[path] {
			t.Fatalf("go list -deps names no package of %s: not the demo's packages (%q)", path, out)
		}
	}
	var extra []string
	for path := range used {
		if !root[path] {
			extra = append(extra, path)
		}
	}
	sort.Strings(extra)
	for _, path := range extra {
		t.Errorf("examples/web builds packages of %s, which the askuser module does not require: keep the main demo's dependencies to the library's", path)
	}
}

// requires returns the module paths a go.mod requires, directly or indirectly.
func requires(t *testing.T, name string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	block := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "require" && len(f) > 1 && f[1] == "(":
			block = true
		case f[0] == "require" && len(f) >= 3:
			out[f[1]] = true
		case block && f[0] == ")":
			block = false
		case block && len(f) >= 2:
			out[f[0]] = true
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s requires nothing: not a go.mod this test can read", name)
	}
	return out
}
