package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCheckModule: the links to nothing are found, and only those, in a module made for
// the test; code blocks, words touching a bracket and unexported names are no links.
func TestCheckModule(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	write("m.go", `// Package m links [T], [T.Field], [T.Method], [Missing], [T.Gone], [strings.Builder],
// [strings.Nope], [*T] and [io/fs.FS]; not answers[0], x[T], [T](x) or [unexported].
//
//	[InCode] is code.
package m

import "strings"

// T is a type.
type T struct{ Field int }

// Method does nothing.
func (T) Method() {}

var _ strings.Builder
`)
	got, err := checkModule(dir)
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, b := range got {
		_, l, _ := strings.Cut(b, "[")
		l, _, _ = strings.Cut(l, "]")
		links = append(links, l)
	}
	slices.Sort(links)
	if want := []string{"Missing", "T.Gone", "strings.Nope"}; !slices.Equal(links, want) {
		t.Errorf("broken links %q, want %q (all: %q)", links, want, got)
	}
}
