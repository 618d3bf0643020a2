package main

import (
	"os"
	"strings"
	"testing"
)

// TestModuleNeedsOnlyAskuser keeps the main demo quick to start from a fresh clone: its
// module requires askuser and nothing that askuser's own module does not, so that
// `go run ./examples/web` downloads and compiles no more than the library itself (the
// metrics, with OpenTelemetry and Prometheus, are examples/cluster's).
func TestModuleNeedsOnlyAskuser(t *testing.T) {
	root := requires(t, "../../go.mod")
	for path := range requires(t, "go.mod") {
		if path != "github.com/askuser-go/askuser" && !root[path] {
			t.Errorf("examples/web requires %s, which the askuser module does not: keep the main demo's dependencies to the library's", path)
		}
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
