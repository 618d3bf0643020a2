// Package modset reads versions.txt, the version of every module of the repository, and
// keeps each module's requirements of its siblings in step with it. scripts/versions and
// scripts/release use it; both read and write go.mod files only through `go mod edit`.
package modset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// File is versions.txt's name, at the repository's root.
const File = "versions.txt"

// Unreleased is the version versions.txt gives a module that is never released nor
// required by another module: examples and tests.
const Unreleased = "unreleased"

// Module is one module of the repository.
type Module struct {
	Dir     string // relative to the repository's root, "." for the root module
	Path    string // the module path its go.mod declares
	Version string // from versions.txt: a semantic version, or Unreleased
}

// Released reports whether the module is a library module, released at Version.
func (m Module) Released() bool { return m.Version != Unreleased }

// Tag is the git tag that releases the module at its version: "v0.1.0" for the root,
// "cluster/v0.1.0" for a nested module.
func (m Module) Tag() string {
	if m.Dir == "." {
		return m.Version
	}
	return m.Dir + "/" + m.Version
}

var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// ValidVersion reports whether v is a semantic version as Go modules spell it
// (v0.1.0, v1.2.3-rc.1). Build metadata (+...) is not accepted.
func ValidVersion(v string) bool { return semver.MatchString(v) }

// Root is the repository's root: the directory of the git work tree holding the current
// directory.
func Root() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("finding the repository's root: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Read reads versions.txt under root and the module path of each module it lists, and
// checks that it lists every directory with a go.mod that git knows, and nothing else.
// Lines are "<dir> <version>"; # starts a comment.
func Read(root string) ([]Module, error) {
	f, err := os.Open(filepath.Join(root, File))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mods []Module
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"<dir> <version>\", have %q", File, n, sc.Text())
		}
		m := Module{Dir: filepath.ToSlash(filepath.Clean(fields[0])), Version: fields[1]}
		if m.Released() && !ValidVersion(m.Version) {
			return nil, fmt.Errorf("%s:%d: %q is neither a semantic version (v0.1.0) nor %q", File, n, m.Version, Unreleased)
		}
		if seen[m.Dir] {
			return nil, fmt.Errorf("%s:%d: %s listed twice", File, n, m.Dir)
		}
		seen[m.Dir] = true
		mods = append(mods, m)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	known, err := gitModules(root)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, d := range known {
		if !seen[d] {
			problems = append(problems, fmt.Sprintf("%s/go.mod is not listed in %s", d, File))
		}
	}
	for i := range mods {
		if !contains(known, mods[i].Dir) {
			problems = append(problems, fmt.Sprintf("%s lists %s, which has no go.mod that git knows", File, mods[i].Dir))
			continue
		}
		gm, err := ReadGoMod(filepath.Join(root, mods[i].Dir))
		if err != nil {
			return nil, err
		}
		mods[i].Path = gm.Module.Path
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return mods, nil
}

// Write rewrites the versions of versions.txt under root, keeping its comments and order.
func Write(root string, mods []Module) error {
	name := filepath.Join(root, File)
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	version := map[string]string{}
	for _, m := range mods {
		version[m.Dir] = m.Version
	}
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		body, comment := line, ""
		if j := strings.IndexByte(line, '#'); j >= 0 {
			body, comment = line[:j], line[j:]
		}
		fields := strings.Fields(body)
		if len(fields) != 2 {
			continue
		}
		dir := filepath.ToSlash(filepath.Clean(fields[0]))
		if v, ok := version[dir]; ok && v != fields[1] {
			lines[i] = strings.Replace(body, fields[1], v, 1) + comment
		}
	}
	return os.WriteFile(name, []byte(strings.Join(lines, "\n")), 0o644)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// gitModules lists the directories holding a go.mod that git knows, sorted.
func gitModules(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "go.mod", "*/go.mod")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %v", err)
	}
	var dirs []string
	for _, f := range strings.Fields(string(out)) {
		dirs = append(dirs, filepath.ToSlash(filepath.Dir(f)))
	}
	sort.Strings(dirs)
	return dirs, nil
}

// GoMod is the part of `go mod edit -json`'s output read here.
type GoMod struct {
	Module  struct{ Path string }
	Require []struct {
		Path     string
		Version  string
		Indirect bool
	}
	Replace []struct {
		Old struct{ Path, Version string }
		New struct{ Path, Version string }
	}
}

// ReadGoMod reads the go.mod of the module in dir.
func ReadGoMod(dir string) (*GoMod, error) {
	out, err := goCmd(dir, "mod", "edit", "-json")
	if err != nil {
		return nil, err
	}
	var gm GoMod
	if err := json.Unmarshal(out, &gm); err != nil {
		return nil, fmt.Errorf("%s: go mod edit -json: %v", dir, err)
	}
	return &gm, nil
}

func goCmd(dir string, args ...string) ([]byte, error) {
	return goCmdEnv(dir, nil, args...)
}

func goCmdEnv(dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: go %s: %v\n%s", dir, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// Check returns, one line each, how the go.mod files under root differ from mods: a
// requirement of a sibling at another version than versions.txt's, a requirement of a
// module versions.txt calls unreleased, and a replace of a sibling in a released module
// (a replace is ignored when the module is a dependency, so it would hide a broken
// requirement; the workspace, go.work, points the siblings at the tree instead).
func Check(root string, mods []Module) ([]string, error) {
	byPath := map[string]Module{}
	for _, m := range mods {
		byPath[m.Path] = m
	}
	var problems []string
	for _, m := range mods {
		gm, err := ReadGoMod(filepath.Join(root, m.Dir))
		if err != nil {
			return nil, err
		}
		for _, r := range gm.Require {
			sib, ok := byPath[r.Path]
			if !ok {
				continue
			}
			switch {
			case !sib.Released():
				problems = append(problems, fmt.Sprintf("%s/go.mod requires %s, which %s calls %s", m.Dir, r.Path, File, Unreleased))
			case r.Version != sib.Version:
				problems = append(problems, fmt.Sprintf("%s/go.mod requires %s %s; %s says %s", m.Dir, r.Path, r.Version, File, sib.Version))
			}
		}
		if m.Released() {
			if p := checkVersionFunc(root, m); p != "" {
				problems = append(problems, p)
			}
			for _, r := range gm.Replace {
				if _, ok := byPath[r.Old.Path]; ok {
					problems = append(problems, fmt.Sprintf("%s/go.mod replaces %s: a library module must not (go.work points it at the tree)", m.Dir, r.Old.Path))
				}
			}
		}
	}
	return problems, nil
}

// Sync rewrites the go.mod files under root so that Check finds nothing: every
// requirement of a sibling at its version in mods, and no replace of a sibling in a
// released module, and each Version function of versionFuncs returning its version. It
// returns the directories of the modules it changed.
func Sync(root string, mods []Module) ([]string, error) {
	byPath := map[string]Module{}
	for _, m := range mods {
		byPath[m.Path] = m
	}
	var changed []string
	for _, m := range mods {
		dir := filepath.Join(root, m.Dir)
		gm, err := ReadGoMod(dir)
		if err != nil {
			return nil, err
		}
		var edits []string
		for _, r := range gm.Require {
			if sib, ok := byPath[r.Path]; ok && sib.Released() && r.Version != sib.Version {
				edits = append(edits, "-require="+r.Path+"@"+sib.Version)
			}
		}
		if m.Released() {
			for _, r := range gm.Replace {
				if _, ok := byPath[r.Old.Path]; ok {
					old := r.Old.Path
					if r.Old.Version != "" {
						old += "@" + r.Old.Version
					}
					edits = append(edits, "-dropreplace="+old)
				}
			}
		}
		rewrote, err := syncVersionFunc(root, m)
		if err != nil {
			return nil, err
		}
		if len(edits) == 0 {
			if rewrote {
				changed = append(changed, m.Dir)
			}
			continue
		}
		if _, err := goCmd(dir, append([]string{"mod", "edit"}, edits...)...); err != nil {
			return nil, err
		}
		changed = append(changed, m.Dir)
	}
	return changed, nil
}

// versionFuncs are the Go files, by module directory, whose function Version returns the
// module's version without its "v": the OpenTelemetry instrumentation's scope version.
var versionFuncs = map[string]string{"integrations/askotel": "askotel.go"}

var versionFunc = regexp.MustCompile(`func Version\(\) string \{ return "([^"]*)" \}`)

func checkVersionFunc(root string, m Module) string {
	file, ok := versionFuncs[m.Dir]
	if !ok {
		return ""
	}
	name := filepath.ToSlash(filepath.Join(m.Dir, file))
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		return err.Error()
	}
	match := versionFunc.FindSubmatch(data)
	switch {
	case match == nil:
		return fmt.Sprintf("%s has no func Version() string { return \"...\" }", name)
	case "v"+string(match[1]) != m.Version:
		return fmt.Sprintf("%s: Version() returns %q; %s says %s", name, match[1], File, m.Version)
	}
	return ""
}

func syncVersionFunc(root string, m Module) (bool, error) {
	file, ok := versionFuncs[m.Dir]
	if !ok || checkVersionFunc(root, m) == "" {
		return false, nil
	}
	name := filepath.Join(root, m.Dir, file)
	data, err := os.ReadFile(name)
	if err != nil {
		return false, err
	}
	if !versionFunc.Match(data) {
		return false, nil // Check names it
	}
	data = versionFunc.ReplaceAll(data, []byte(`func Version() string { return "`+strings.TrimPrefix(m.Version, "v")+`" }`))
	return true, os.WriteFile(name, data, 0o644)
}

// Tidy runs go mod tidy in every module of mods, outside the workspace, with each
// released sibling replaced by its directory for the while (go mod tidy ignores go.work,
// and a sibling's version in versions.txt may not be published yet, or may lack what the
// tree has). The replaces of the released modules are dropped again afterwards; those of
// the unreleased ones are theirs and stay.
func Tidy(root string, mods []Module) error {
	for _, m := range mods {
		dir := filepath.Join(root, m.Dir)
		gm, err := ReadGoMod(dir)
		if err != nil {
			return err
		}
		had := map[string]bool{}
		for _, r := range gm.Replace {
			had[r.Old.Path] = true
		}
		var add, drop []string
		for _, sib := range mods {
			if sib.Dir == m.Dir || !sib.Released() || had[sib.Path] {
				continue
			}
			rel, err := filepath.Rel(dir, filepath.Join(root, sib.Dir))
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if !strings.HasPrefix(rel, "../") {
				rel = "./" + rel
			}
			add = append(add, "-replace="+sib.Path+"="+rel)
			drop = append(drop, "-dropreplace="+sib.Path)
		}
		if len(add) > 0 {
			if _, err := goCmd(dir, append([]string{"mod", "edit"}, add...)...); err != nil {
				return err
			}
		}
		_, tidyErr := goCmdEnv(dir, []string{"GOWORK=off"}, "mod", "tidy")
		if len(drop) > 0 {
			if _, err := goCmd(dir, append([]string{"mod", "edit"}, drop...)...); err != nil {
				return err
			}
		}
		if tidyErr != nil {
			return tidyErr
		}
	}
	return nil
}
