package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestREADMEQuickStart: the README's quick start is this program, from its package
// clause on, so that what a newcomer copies compiles (go vet and go test build it).
func TestREADMEQuickStart(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := bytes.Cut(readme, []byte("\n## Quick start\n"))
	if !ok {
		t.Fatal(`README.md has no "## Quick start" section`)
	}
	_, block, ok := bytes.Cut(section, []byte("```go\n"))
	if !ok {
		t.Fatal("the quick start has no Go code block")
	}
	block, _, _ = bytes.Cut(block, []byte("```\n"))
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(src, []byte("package main\n"))
	if i < 0 {
		t.Fatal("main.go has no package clause")
	}
	if got, want := string(block), string(src[i:]); got != want {
		t.Errorf("the README's quick start differs from examples/readme/main.go; copy one to the other.\nREADME:\n%s\nmain.go:\n%s", got, firstDiff(got, want))
	}
}

// firstDiff returns want from the first line where got differs.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range w {
		if i >= len(g) || g[i] != w[i] {
			return strings.Join(w[i:], "\n")
		}
	}
	return ""
}
