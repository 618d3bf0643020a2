package release

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// TestOutside checks the library's modules as a user gets them. It builds a module proxy
// directory from the tree: every library module of versions.txt, zipped at the version it
// is about to be released at, with its go.mod and .info file. Then, in fresh modules in a
// temporary directory outside the repository, with no replace and no workspace, it
// requires each library module alone and resolves its module graph (its requirements of
// its siblings must name the versions being released), and it `go get`s the modules a
// small host imports (testdata/host.go.txt: the root package, wshub, the cluster module
// and askotel) and builds and runs the host. The host needs no NATS server: it only
// builds cluster.Options.
//
// GOPROXY is the proxy directory, then the module cache's download directory, so that
// third-party modules resolve offline from what the repository's own builds downloaded,
// and nothing else: a library module that requires a sibling at a version not being
// released (a broken requirement) fails, naming it. The module cache is the test's own
// (a released version must never stick in the real one); the build cache is the user's
// (with -trimpath its entries do not depend on where the module cache is).
func TestOutside(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mods := releasedModules(t, root)
	released := map[string]string{}
	for _, m := range mods {
		released[m.path] = m.version
	}
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	size, sizes := 0, []string{}
	for _, m := range mods {
		n := writeModule(t, proxy, root, m)
		size += n
		sizes = append(sizes, fmt.Sprintf("%s %d", m.dir, n/1024))
	}
	t.Logf("proxy directory: %d modules, %d KiB (%s)", len(mods), size/1024, strings.Join(sizes, ", "))

	cache := strings.TrimSpace(string(run(t, root, nil, "go", "env", "GOMODCACHE")))
	host := filepath.Join(tmp, "host")
	if err := os.MkdirAll(host, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "host.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(host, "main.go"), src)
	writeFile(t, filepath.Join(host, "go.mod"), []byte("module example.com/host\n\ngo 1.26.0\n"))
	env := []string{
		"GOPROXY=" + fileURL(proxy) + "," + fileURL(filepath.Join(cache, "cache", "download")),
		"GOFLAGS=-mod=mod -modcacherw",
		"GOWORK=off",
		"GOSUMDB=off",
		"GONOSUMDB=", "GONOPROXY=", "GOPRIVATE=", "GOINSECURE=",
		"GOTOOLCHAIN=local",
		"GOMODCACHE=" + filepath.Join(tmp, "modcache"),
	}
	// Each library module alone, as a user who adds only it gets it: its requirements
	// of its siblings must resolve, at the versions being released.
	start := time.Now()
	for _, m := range mods {
		alone := filepath.Join(tmp, "alone", strings.ReplaceAll(m.dir, "/", "_"))
		if err := os.MkdirAll(alone, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(alone, "go.mod"), []byte("module example.com/alone\n\ngo 1.26.0\n\nrequire "+m.path+" "+m.version+"\n"))
		// go mod graph reads the go.mod of every module in the graph, and only that.
		graph, err := try(alone, env, "go", "mod", "graph")
		if err != nil {
			t.Errorf("%s %s, required alone: its requirements do not resolve: %v", m.path, m.version, err)
			continue
		}
		for _, edge := range strings.Split(strings.TrimSpace(string(graph)), "\n") {
			_, req, _ := strings.Cut(edge, " ")
			path, version, _ := strings.Cut(req, "@")
			if want, ok := released[path]; ok && version != want {
				t.Errorf("%s %s, required alone: %s requires %s, not %s, the version being released (go run ./scripts/versions -w sets it)", m.path, m.version, strings.Fields(edge)[0], req, want)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// The host: it gets the modules it imports, as a user adds them.
	get := []string{"get"}
	for _, m := range mods {
		if used[m.dir] {
			get = append(get, m.path+"@"+m.version)
		}
	}
	run(t, host, env, "go", get...)
	gomod, err := os.ReadFile(filepath.Join(host, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(gomod, []byte("replace")) {
		t.Fatalf("the host's go.mod has a replace:\n%s", gomod)
	}
	run(t, host, env, "go", "build", "-trimpath", "-o", "host", ".")
	out := run(t, host, env, filepath.Join(host, "host"))
	if !bytes.HasPrefix(out, []byte("host: ok")) {
		t.Fatalf("the host printed:\n%s", out)
	}
	t.Logf("%d modules' requirements, go get of %d, build and run: %v; %s", len(mods), len(get)-1, time.Since(start).Round(time.Second), bytes.TrimSpace(out))
}

// used are the modules whose packages the host imports (testdata/host.go.txt): `go get`
// loads their packages, which needs the zips of what they import. The others' packages
// are not loaded, only their requirements: their dependencies' zips, at the versions
// they alone would select, need not be in the module cache.
var used = map[string]bool{".": true, "cluster": true, "integrations/askotel": true}

// A library module, as versions.txt lists it.
type mod struct {
	dir, path, version string
}

// releasedModules reads versions.txt: "<dir> <version>" lines, "unreleased" for the
// modules that are never released (scripts/versions keeps the go.mod files in step).
func releasedModules(t *testing.T, root string) []mod {
	f, err := os.Open(filepath.Join(root, "versions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mods []mod
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) != 2 || fields[1] == "unreleased" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, fields[0], "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		path := modfile.ModulePath(data)
		if path == "" {
			t.Fatalf("%s/go.mod names no module", fields[0])
		}
		mods = append(mods, mod{dir: fields[0], path: path, version: fields[1]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(mods) == 0 {
		t.Fatal("versions.txt lists no library module")
	}
	return mods
}

// writeModule writes m's .info, .mod and .zip into the proxy directory, as a module
// proxy serves them, and returns their size. The zip holds the files of m's directory
// that git knows or would add (tracked, or untracked and not ignored), less those of
// nested modules, as the zip of a tagged commit would.
func writeModule(t *testing.T, proxy, root string, m mod) int {
	escaped, err := module.EscapePath(m.path)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	modDir := filepath.Join(root, m.dir)
	listed := run(t, modDir, nil, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", ".")
	var files []zip.File
	for _, name := range strings.Split(string(listed), "\x00") {
		if name == "" {
			continue
		}
		full := filepath.Join(modDir, name)
		info, err := os.Lstat(full)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or not a file
		}
		files = append(files, file{slash: filepath.ToSlash(name), full: full, info: info})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path() < files[j].Path() })
	var z bytes.Buffer
	v := module.Version{Path: m.path, Version: m.version}
	if err := zip.Create(&z, v, files); err != nil {
		t.Fatalf("zipping %s: %v", m.dir, err)
	}
	gomod, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(struct{ Version, Time string }{m.version, "2026-01-01T00:00:00Z"})
	writeFile(t, filepath.Join(dir, m.version+".info"), info)
	writeFile(t, filepath.Join(dir, m.version+".mod"), gomod)
	writeFile(t, filepath.Join(dir, m.version+".zip"), z.Bytes())
	writeFile(t, filepath.Join(dir, "list"), []byte(m.version+"\n"))
	return len(info) + len(gomod) + z.Len()
}

// file is a zip.File read from the work tree.
type file struct {
	slash, full string
	info        os.FileInfo
}

func (f file) Path() string                 { return f.slash }
func (f file) Lstat() (os.FileInfo, error)  { return f.info, nil }
func (f file) Open() (io.ReadCloser, error) { return os.Open(f.full) }

// run runs a command in dir, with env added to the test's environment, and returns its
// standard output; it fails the test with everything the command printed if it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	out, err := try(dir, env, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// try runs a command as run does, and returns its error with everything it printed.
func try(dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("in %s: %s %s: %v\n%s%s", dir, name, strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

func writeFile(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileURL is the file:// URL of a local directory, as GOPROXY takes it.
func fileURL(dir string) string {
	return "file://" + filepath.ToSlash(dir)
}
