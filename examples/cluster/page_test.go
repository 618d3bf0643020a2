package main

import (
	"bytes"
	"os"
	"testing"
)

// The page's script and style are examples/web's, copied: they must not drift apart.
func TestPageIsTheWebDemos(t *testing.T) {
	for _, name := range []string{"app.js", "app.css"} {
		ours, err := os.ReadFile("page/" + name)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := os.ReadFile("../web/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("page/%s differs from examples/web/%s: copy it again (cp ../web/%s page/)", name, name, name)
		}
	}
}
