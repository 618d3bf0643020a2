package main

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
)

// TestPackageAPI records a package with one name of each kind, as the api files do.
func TestPackageAPI(t *testing.T) {
	const src = `package p

import (
	"context"
	"io"
)

const Max = 4
const Timeout Duration = 3
type Duration int64
var ErrGone error
func New(ctx context.Context, names ...string) (*T, error) { return nil, nil }
func Map[K comparable, V any](m map[K]V) []K { return nil }
type T struct {
	io.Reader
	Name string
	hidden int
}
func (t *T) Close() error { return nil }
func (T) String() string { return "" }
func (t *T) unexported() {}
type Sender interface {
	Send(context.Context, []byte) error
	private()
}
type Alias = T
const hiddenConst = 1
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.Default()}
	pkg, err := conf.Check("example.com/p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(packageAPI(pkg), "\n")
	want := strings.Join([]string{
		"pkg example.com/p, type Alias = T",
		"pkg example.com/p, type Duration int64",
		"pkg example.com/p, var ErrGone error",
		"pkg example.com/p, func Map[K comparable, V any](map[K]V) []K",
		"pkg example.com/p, const Max untyped int = 4",
		"pkg example.com/p, func New(context.Context, ...string) (*T, error)",
		"pkg example.com/p, type Sender interface, Send(context.Context, []byte) error",
		"pkg example.com/p, type Sender interface { Send, unexported methods }",
		"pkg example.com/p, type T struct",
		"pkg example.com/p, type T struct, embedded io.Reader",
		"pkg example.com/p, type T struct, Name string",
		"pkg example.com/p, method (*T) Close() error",
		"pkg example.com/p, method (T) String() string",
		"pkg example.com/p, const Timeout Duration = 3",
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestDiff(t *testing.T) {
	got := strings.Join(diff([]string{"a", "b", "c"}, []string{"a", "c", "d"}), ",")
	if want := "- b,+ d"; got != want {
		t.Errorf("diff = %q, want %q", got, want)
	}
}
