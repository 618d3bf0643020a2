package modset

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckAndSync builds a repository of three modules whose go.mod files are out of step
// with versions.txt, and checks that Check names each problem and Sync mends them.
func TestCheckAndSync(t *testing.T) {
	root := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("versions.txt", "# comment\n. v0.2.0\nsub v0.2.0 # trailing\nexamples unreleased\n")
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	write("sub/go.mod", "module example.com/m/sub\n\ngo 1.26\n\nrequire example.com/m v0.0.0-00010101000000-000000000000\n\nreplace example.com/m => ../\n")
	write("examples/go.mod", "module example.com/m/examples\n\ngo 1.26\n\nrequire example.com/m/sub v0.1.0\n\nreplace example.com/m/sub => ../sub\n")
	git := exec.Command("git", "init", "-q")
	git.Dir = root
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	add := exec.Command("git", "add", ".")
	add.Dir = root
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}

	mods, err := Read(root)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := Check(root, mods)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"sub/go.mod requires example.com/m v0.0.0-00010101000000-000000000000; versions.txt says v0.2.0",
		"sub/go.mod replaces example.com/m: a library module must not (go.work points it at the tree)",
		"examples/go.mod requires example.com/m/sub v0.1.0; versions.txt says v0.2.0",
	}
	if got := strings.Join(problems, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("Check:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if _, err := Sync(root, mods); err != nil {
		t.Fatal(err)
	}
	if problems, err := Check(root, mods); err != nil || len(problems) > 0 {
		t.Errorf("after Sync, Check: %q, %v", problems, err)
	}
	examples, _ := os.ReadFile(filepath.Join(root, "examples", "go.mod"))
	if !strings.Contains(string(examples), "replace example.com/m/sub => ../sub") {
		t.Errorf("Sync dropped an unreleased module's replace:\n%s", examples)
	}

	for i := range mods {
		if mods[i].Released() {
			mods[i].Version = "v0.3.0"
		}
	}
	if err := Write(root, mods); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(root, "versions.txt"))
	if want := "# comment\n. v0.3.0\nsub v0.3.0 # trailing\nexamples unreleased\n"; string(got) != want {
		t.Errorf("Write: versions.txt is\n%s\nwant\n%s", got, want)
	}

	write("other/go.mod", "module example.com/m/other\n\ngo 1.26\n")
	add = exec.Command("git", "add", ".")
	add.Dir = root
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	if _, err := Read(root); err == nil || !strings.Contains(err.Error(), "other/go.mod is not listed in versions.txt") {
		t.Errorf("Read with a module versions.txt does not list: %v", err)
	}
}
