// Command apirecord records the exported API of every library module, one file per
// module under api/ (api/askuser.txt for the root, api/cluster.txt, api/askotel.txt,
// ...), and checks that the record is current: with no flag it exits with 1, naming every
// line added or gone, when a module's exported API differs from its record; -update
// rewrites the records.
//
//	go run ./scripts/apirecord           # check, as scripts/test.sh does
//	go run ./scripts/apirecord -update   # record a deliberate change of the API
//
// A record has one line per exported name of each package of the module (internal
// packages and commands left out), as Go's own api/*.txt files do: functions with their
// signatures, types with their exported fields, methods and interface methods, constants
// with their types and values, variables with their types. Other packages are named by
// their import path. The packages are read from the export data the compiler writes for
// linux/amd64 (go list -export), so the record is the same on every machine. A change of
// a record is a change of the library's face: review it as one.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/askuser-go/askuser/scripts/internal/modset"
)

func main() {
	update := flag.Bool("update", false, "rewrite the records under api/")
	flag.Parse()
	root, err := modset.Root()
	if err != nil {
		fail(err)
	}
	mods, err := modset.Read(root)
	if err != nil {
		fail(err)
	}
	differ := 0
	for _, m := range mods {
		if !m.Released() {
			continue
		}
		lines, err := moduleAPI(filepath.Join(root, m.Dir))
		if err != nil {
			fail(fmt.Errorf("%s: %v", m.Dir, err))
		}
		name := filepath.Join("api", path.Base(m.Path)+".txt")
		if path.Base(m.Path) == "askuser" && m.Dir != "." {
			fail(fmt.Errorf("%s: its record would be the root's, %s", m.Dir, name))
		}
		want := strings.Join(lines, "\n") + "\n"
		if *update {
			if err := os.MkdirAll(filepath.Join(root, "api"), 0o755); err != nil {
				fail(err)
			}
			if err := os.WriteFile(filepath.Join(root, name), []byte(want), 0o644); err != nil {
				fail(err)
			}
			continue
		}
		have, err := os.ReadFile(filepath.Join(root, name))
		if err != nil && !os.IsNotExist(err) {
			fail(err)
		}
		if d := diff(readLines(have), lines); len(d) > 0 {
			differ++
			fmt.Printf("%s differs from the exported API of %s (+ not recorded, - recorded but gone):\n", name, m.Path)
			for _, l := range d {
				fmt.Println("\t" + l)
			}
		}
	}
	if differ > 0 {
		fmt.Printf("apirecord: the exported API of %d module(s) changed without its record; if the change is meant, go run ./scripts/apirecord -update, and commit the record with it\n", differ)
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "apirecord: %v\n", err)
	os.Exit(2)
}

func readLines(data []byte) []string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// diff returns the lines of want missing from have ("+ ...") and those of have missing
// from want ("- ..."), sorted by line.
func diff(have, want []string) []string {
	in := func(list []string) map[string]bool {
		m := map[string]bool{}
		for _, l := range list {
			m[l] = true
		}
		return m
	}
	h, w := in(have), in(want)
	var d []string
	for _, l := range want {
		if !h[l] {
			d = append(d, "+ "+l)
		}
	}
	for _, l := range have {
		if !w[l] {
			d = append(d, "- "+l)
		}
	}
	sort.Slice(d, func(i, j int) bool { return d[i][2:] < d[j][2:] })
	return d
}

// listed is what go list -export -json says of a package.
type listed struct {
	ImportPath string
	Name       string
	Export     string
	Module     *struct{ Path string }
	DepOnly    bool
}

// moduleAPI returns the sorted lines of the exported API of the module in dir.
func moduleAPI(dir string) ([]string, error) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Name,Export,Module,DepOnly", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	var mine []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly && p.Name != "main" && !isInternal(p.ImportPath) {
			mine = append(mine, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var lines []string
	for _, p := range mine {
		pkg, err := imp.Import(p.ImportPath)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %v", p.ImportPath, err)
		}
		lines = append(lines, packageAPI(pkg)...)
	}
	sort.Strings(lines)
	return lines, nil
}

func isInternal(importPath string) bool {
	for _, e := range strings.Split(importPath, "/") {
		if e == "internal" {
			return true
		}
	}
	return false
}

// packageAPI returns the lines of the exported API of pkg.
func packageAPI(pkg *types.Package) []string {
	w := writer{pkg: pkg}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			w.add("const %s %s = %s", name, w.typ(obj.Type()), obj.Val().ExactString())
		case *types.Var:
			w.add("var %s %s", name, w.typ(obj.Type()))
		case *types.Func:
			w.add("func %s%s%s", name, w.typeParams(obj.Type().(*types.Signature).TypeParams()), w.sig(obj.Type().(*types.Signature)))
		case *types.TypeName:
			w.typeName(obj)
		}
	}
	return w.lines
}

type writer struct {
	pkg   *types.Package
	lines []string
}

func (w *writer) add(format string, args ...any) {
	w.lines = append(w.lines, "pkg "+w.pkg.Path()+", "+fmt.Sprintf(format, args...))
}

// typ spells t, naming other packages by their import path and this one not at all.
func (w *writer) typ(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == w.pkg {
			return ""
		}
		return p.Path()
	})
}

// sig spells a signature as Go's api files do: parameter types without their names.
func (w *writer) sig(s *types.Signature) string {
	var params []string
	for i := 0; i < s.Params().Len(); i++ {
		t := s.Params().At(i).Type()
		if s.Variadic() && i == s.Params().Len()-1 {
			params = append(params, "..."+w.typ(t.(*types.Slice).Elem()))
			continue
		}
		params = append(params, w.typ(t))
	}
	out := "(" + strings.Join(params, ", ") + ")"
	switch r := s.Results(); r.Len() {
	case 0:
	case 1:
		out += " " + w.typ(r.At(0).Type())
	default:
		var res []string
		for i := 0; i < r.Len(); i++ {
			res = append(res, w.typ(r.At(i).Type()))
		}
		out += " (" + strings.Join(res, ", ") + ")"
	}
	return out
}

func (w *writer) typeParams(tp *types.TypeParamList) string {
	if tp.Len() == 0 {
		return ""
	}
	var ps []string
	for i := 0; i < tp.Len(); i++ {
		ps = append(ps, tp.At(i).Obj().Name()+" "+w.typ(tp.At(i).Constraint()))
	}
	return "[" + strings.Join(ps, ", ") + "]"
}

func (w *writer) typeName(obj *types.TypeName) {
	name := obj.Name()
	if obj.IsAlias() {
		rhs := types.Unalias(obj.Type())
		if a, ok := obj.Type().(*types.Alias); ok {
			rhs = a.Rhs()
		}
		w.add("type %s = %s", name, w.typ(rhs))
		return
	}
	named, ok := obj.Type().(*types.Named)
	if !ok {
		return
	}
	decl := name + w.typeParams(named.TypeParams())
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.add("type %s struct", decl)
		for i := 0; i < u.NumFields(); i++ {
			f := u.Field(i)
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				w.add("type %s struct, embedded %s", decl, w.typ(f.Type()))
			} else {
				w.add("type %s struct, %s %s", decl, f.Name(), w.typ(f.Type()))
			}
		}
	case *types.Interface:
		var names []string
		unexported := false
		for i := 0; i < u.NumMethods(); i++ {
			m := u.Method(i)
			if !m.Exported() {
				unexported = true
				continue
			}
			names = append(names, m.Name())
			w.add("type %s interface, %s%s", decl, m.Name(), w.sig(m.Type().(*types.Signature)))
		}
		if unexported {
			names = append(names, "unexported methods")
		}
		w.add("type %s interface { %s }", decl, strings.Join(names, ", "))
	default:
		w.add("type %s %s", decl, w.typ(u))
	}
	for i := 0; i < named.NumMethods(); i++ {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		s := m.Type().(*types.Signature)
		recv := name
		if _, ptr := s.Recv().Type().(*types.Pointer); ptr {
			recv = "*" + name
		}
		w.add("method (%s) %s%s", recv, m.Name(), w.sig(s))
	}
}
