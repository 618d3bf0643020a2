// Command doclinks fails when a Go doc comment has a doc link that names nothing
// exported. It checks every package of the modules given as arguments (directories
// holding a go.mod; default: the current directory):
//
//	go run ./scripts/doclinks . cluster tui
//
// A link is what go doc would make one of: a bracketed name or dotted name, not touching
// letters or digits on either side, outside code blocks. These are its forms:
//
//	[Name]           an exported name of the package
//	[Type.Name]      an exported method or field of one of its types
//	[pkg.Name]       an exported name of a package the package imports, by its name
//	[pkg.Type.Name]  a method or field of a type of such a package
//	[io/fs.FS]       an exported name of a standard-library package, by its path
//
// Other packages are read from their source as the module resolves them. Every link to
// nothing is printed with where it is, and the command exits with 1.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func main() {
	mods := os.Args[1:]
	if len(mods) == 0 {
		mods = []string{"."}
	}
	var broken []string
	for _, m := range mods {
		b, err := checkModule(m)
		if err != nil {
			fmt.Fprintf(os.Stderr, "doclinks: %s: %v\n", m, err)
			os.Exit(2)
		}
		broken = append(broken, b...)
	}
	if len(broken) > 0 {
		sort.Strings(broken)
		for _, b := range broken {
			fmt.Println(b)
		}
		fmt.Printf("doclinks: %d doc link(s) name nothing exported\n", len(broken))
		os.Exit(1)
	}
}

// symbols are the exported names of one package: "Name" for top-level names, and
// "Type.Name" for the methods and fields of its types.
type symbols map[string]bool

// checker checks the packages of one module, caching what it reads of other packages.
type checker struct {
	module string // the module's directory
	fset   *token.FileSet
	others map[string]symbols // by import path; nil for a package that cannot be read
	names  map[string]string  // package names, by import path
	// modName is the module's directory as given, to print where a link is.
	modName string
}

// checkModule checks every package of the module in dir.
func checkModule(dir string) ([]string, error) {
	out, err := goList(dir, "-f", "{{.Dir}}", "./...")
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	c := &checker{module: abs, fset: token.NewFileSet(), others: make(map[string]symbols), names: make(map[string]string), modName: dir}
	var broken []string
	for _, pkgDir := range strings.Fields(out) {
		b, err := c.checkPackage(pkgDir)
		if err != nil {
			return nil, err
		}
		broken = append(broken, b...)
	}
	return broken, nil
}

func goList(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %v: %s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(out), nil
}

// parseDir parses the non-test Go files of dir, with comments.
func (c *checker) parseDir(dir string, withComments bool) ([]*ast.File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	mode := parser.SkipObjectResolution
	if withComments {
		mode |= parser.ParseComments
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(c.fset, name, nil, mode)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// exported returns the exported names of files, top-level and of their types.
func exported(files []*ast.File) symbols {
	s := make(symbols)
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil || len(d.Recv.List) == 0 {
					s[d.Name.Name] = true
				} else {
					s[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch sp := spec.(type) {
					case *ast.TypeSpec:
						if sp.Name.IsExported() {
							s[sp.Name.Name] = true
						}
						members(s, sp.Name.Name, sp.Type)
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							if n.IsExported() {
								s[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return s
}

// members adds the exported fields and interface methods of type typ.
func members(s symbols, typ string, expr ast.Expr) {
	var list *ast.FieldList
	switch t := expr.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list = t.Methods
	}
	if list == nil {
		return
	}
	for _, f := range list.List {
		for _, n := range f.Names {
			if n.IsExported() {
				s[typ+"."+n.Name] = true
			}
		}
		if len(f.Names) == 0 { // embedded: its name is a field
			if name := recvName(f.Type); ast.IsExported(name) {
				s[typ+"."+name] = true
			}
		}
	}
}

// recvName is the type name of a receiver or embedded field: T, *T, T[P], pkg.T.
func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// checkPackage checks the doc comments of the package in dir.
func (c *checker) checkPackage(dir string) ([]string, error) {
	files, err := c.parseDir(dir, true)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	own := exported(files)
	imports := c.importsOf(files)
	var broken []string
	for _, f := range files {
		for _, cg := range f.Comments {
			for _, l := range links(cg.Text()) {
				if !c.resolves(l, own, imports) {
					pos := c.fset.Position(cg.Pos())
					rel, err := filepath.Rel(c.module, pos.Filename)
					if err != nil {
						rel = pos.Filename
					}
					broken = append(broken, fmt.Sprintf("%s:%d: [%s] names nothing exported", filepath.Join(c.modName, rel), pos.Line, l))
				}
			}
		}
	}
	return broken, nil
}

// importsOf maps the names the package's files import packages by to their paths: the
// import's own name, or the imported package's name (as go doc resolves links).
func (c *checker) importsOf(files []*ast.File) map[string]string {
	m := make(map[string]string)
	for _, f := range files {
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				continue
			}
			name := c.packageName(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			m[name] = p
		}
	}
	return m
}

// packageName returns the name of the package at import path, from its package clause.
func (c *checker) packageName(path string) string {
	if name, ok := c.names[path]; ok {
		return name
	}
	name := path[strings.LastIndex(path, "/")+1:]
	if out, err := goList(c.module, "-f", "{{.Name}}", path); err == nil {
		name = strings.TrimSpace(out)
	}
	c.names[path] = name
	return name
}

// resolves reports whether link names something exported: in the package (own), or in a
// package the file imports, or in the standard library.
func (c *checker) resolves(link string, own symbols, imports map[string]string) bool {
	link = strings.TrimPrefix(link, "*")
	if own[link] {
		return true
	}
	first, rest, dotted := strings.Cut(link, ".")
	if !dotted {
		return false
	}
	path, ok := imports[first]
	if !ok {
		path = first // a standard-library package by its path, as in [net/http.Handler]
		if !c.isStd(path) {
			return false
		}
	}
	syms := c.symbolsOf(path)
	return syms[rest]
}

// isStd reports whether path is a standard-library package.
func (c *checker) isStd(path string) bool {
	_, err := os.Stat(filepath.Join(goroot(), "src", path))
	return err == nil
}

var gorootDir string

func goroot() string {
	if gorootDir == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err == nil {
			gorootDir = strings.TrimSpace(string(out))
		}
	}
	return gorootDir
}

// symbolsOf returns the exported names of the package at import path, read from its
// source as the module resolves it.
func (c *checker) symbolsOf(path string) symbols {
	if s, ok := c.others[path]; ok {
		return s
	}
	var s symbols
	if out, err := goList(c.module, "-f", "{{.Dir}}", path); err == nil {
		if files, err := c.parseDir(strings.TrimSpace(out), false); err == nil {
			s = exported(files)
		}
	}
	c.others[path] = s
	return s
}

// links returns the doc links of a comment's text: what go doc would link, outside code
// blocks and link definitions.
func links(text string) []string {
	var out []string
	d := new(comment.Parser).Parse(text)
	var walkText func([]comment.Text)
	walkText = func(ts []comment.Text) {
		for _, t := range ts {
			switch x := t.(type) {
			case comment.Plain:
				out = append(out, bracketed(string(x))...)
			case comment.Italic:
				out = append(out, bracketed(string(x))...)
			case *comment.Link:
				walkText(x.Text)
			case *comment.DocLink:
				// With no lookups set, the parser links a standard-library package by
				// itself: the rest is checked as any other link.
				l := x.Name
				if x.Recv != "" {
					l = x.Recv + "." + l
				}
				if x.ImportPath != "" {
					l = x.ImportPath + "." + l
				}
				out = append(out, l)
			}
		}
	}
	for _, b := range d.Content {
		switch x := b.(type) {
		case *comment.Paragraph:
			walkText(x.Text)
		case *comment.Heading:
			walkText(x.Text)
		case *comment.List:
			for _, it := range x.Items {
				for _, ib := range it.Content {
					if p, ok := ib.(*comment.Paragraph); ok {
						walkText(p.Text)
					}
				}
			}
		}
	}
	return out
}

// bracketed finds the bracketed names and dotted names in s that do not touch a letter
// or digit on either side: what go doc takes for a doc link.
func bracketed(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '[' {
			continue
		}
		if i > 0 {
			if r, _ := utf8.DecodeLastRuneInString(s[:i]); unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
				continue
			}
		}
		j := strings.IndexByte(s[i:], ']')
		if j < 0 {
			break
		}
		inner := s[i+1 : i+j]
		end := i + j + 1
		if end < len(s) {
			if r, _ := utf8.DecodeRuneInString(s[end:]); unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '(' {
				continue
			}
		}
		if isLink(inner) {
			out = append(out, inner)
		}
	}
	return out
}

// isLink reports whether s has a doc link's form: an optional *, then identifiers joined
// by dots, the last one exported, or an import path then an exported name.
func isLink(s string) bool {
	s = strings.TrimPrefix(s, "*")
	if s == "" {
		return false
	}
	parts := strings.Split(s, ".")
	for _, p := range parts {
		if p == "" {
			return false
		}
		for k, r := range p {
			if !(unicode.IsLetter(r) || r == '_' || k > 0 && unicode.IsDigit(r) || r == '/') {
				return false
			}
		}
	}
	last := parts[len(parts)-1]
	r, _ := utf8.DecodeRuneInString(last)
	return unicode.IsUpper(r)
}
