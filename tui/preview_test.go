package tui

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// The previews as rendered: markdown from the model, drawn by glamour, of which only
// the text and its colours may reach the terminal.

var previewCases = []struct {
	name, md string
	want     []string // in the plain text, in this order
	not      []string // nowhere in the plain text
}{
	{"headings without marks", "# One\n\n## Two\n\n###### Six", []string{"One", "Two", "Six"}, []string{"#"}},
	{"a link's target beside its label", "[Allow](http://evil.example/approve) it", []string{"Allow http://evil.example/approve it"}, nil},
	{"a reference link", "[Allow][r]\n\n[r]: http://ref.example", []string{"Allow http://ref.example"}, nil},
	{"an autolink", "<http://auto.example> and www.bare.example", []string{"http://auto.example and http://www.bare.example"}, nil},
	{"a script link", "[Allow](javascript:alert(1))", []string{"Allow javascript:alert(1)"}, nil},
	{"an image as its alt text", "see ![diagram](http://img.example/d.png) here", []string{"see Image: diagram", "here"}, []string{"img.example", "→"}},
	{"an image in a link", "[![alt](http://img.example/i.png)](http://x.example)", []string{"Image: alt", "http://x.example"}, []string{"img.example"}},
	{"a link in a table", "| a |\n|---|\n| [L](http://t.example) |", []string{"L[1]", "[1]: L http://t.example"}, nil},
	{"references to controls dropped", "a&#27;[2Jb &#x1B;]0;t&#7; &#x9b;31m &#8238;rlo &#x200b;zw &ZeroWidthSpace;x &shy;y &#0;z &#99999999999;w",
		[]string{"a[2Jb ]0;t 31m rlo zw x y z w"}, nil},
	{"references in a link", "[x&#27;y](http://a&#27;b&#7;c)", []string{"xy http://abc"}, nil},
	{"other references kept", "&amp; &lt;b&gt; &#169; &copy; &#x2192;", []string{"& <b> © © →"}, nil},
}

func TestPreviewRendering(t *testing.T) {
	for _, c := range previewCases {
		t.Run(c.name, func(t *testing.T) {
			for _, style := range []string{styleDark, styleLight, stylePlain} {
				var p previews
				out := p.render(c.md, 60, style)
				checkRendering(t, c.md, out)
				text := ansi.Strip(out)
				squeezed := strings.Join(strings.Fields(text), " ")
				at := 0
				for _, w := range c.want {
					i := strings.Index(squeezed[at:], w)
					if i < 0 {
						t.Fatalf("%s: %q renders as %q, without %q (after %d)", style, c.md, squeezed, w, at)
					}
					at += i + len(w)
				}
				for _, n := range c.not {
					if strings.Contains(text, n) {
						t.Errorf("%s: %q renders as %q, with %q", style, c.md, text, n)
					}
				}
			}
		})
	}
}

// checkRendering fails the test if out, a preview as rendered, holds anything but text
// and SGR sequences: an OSC 8 hyperlink, another escape sequence, a control character,
// an invisible or direction-changing one.
func checkRendering(t *testing.T, md, out string) {
	t.Helper()
	for i := 0; i < len(out); {
		if m := sgr.FindString(out[i:]); m != "" {
			i += len(m)
			continue
		}
		r, size := utf8.DecodeRuneInString(out[i:])
		if unsafeRune(r, true) {
			t.Fatalf("%q renders with %U at %d: %q", md, r, i, out)
		}
		i += size
	}
}

func FuzzPreview(f *testing.F) {
	for _, c := range previewCases {
		f.Add(c.md)
	}
	f.Fuzz(func(t *testing.T, md string) {
		var p previews
		checkRendering(t, md, p.render(md, 40, styleDark))
		checkRendering(t, md, p.render(md, 40, stylePlain))
	})
}
