package wshub

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The longest a part of panel.js may be, in lines: a file a reader can hold at once.
const maxPartLines = 550

func partFile(t *testing.T, name string) string {
	t.Helper()
	b, err := fs.ReadFile(panelFiles, "panel/js/"+name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func servedPanelJS(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	PanelHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/panel.js", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET panel.js: %d", rec.Code)
	}
	return rec.Body.String()
}

// TestPanelJSIsThePartsInOrder: the served panel.js is the wrapper's heading with the
// table of the parts, then, inside the wrapper's function, every part whole, in the order
// of panelParts, each under a line naming its file, and nothing else.
func TestPanelJSIsThePartsInOrder(t *testing.T) {
	served := servedPanelJS(t)
	wrapper := partFile(t, panelWrapper)
	head, rest, _ := strings.Cut(wrapper, " * @parts\n")
	middle, tail, _ := strings.Cut(rest, "  // @code\n")
	if !strings.HasPrefix(served, head) || !strings.HasSuffix(served, tail) {
		t.Fatal("panel.js does not begin and end as the wrapper does")
	}
	table, code, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(served, head), tail), middle)
	if !ok {
		t.Fatal("panel.js lacks the wrapper's text between the table of parts and the parts")
	}

	row := regexp.MustCompile(`^ \*   (\S+) +(.+)$`)
	var listed []string
	for _, line := range strings.Split(strings.TrimSuffix(table, "\n"), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("the table of parts has the line %q", line)
		}
		listed = append(listed, m[1])
		if first, _, _ := strings.Cut(partFile(t, m[1]), "\n"); "// "+m[2] != first {
			t.Errorf("the table says %s holds %q; its first line is %q", m[1], m[2], first)
		}
	}
	if !slices.Equal(listed, panelParts) {
		t.Errorf("the table lists %q, want %q", listed, panelParts)
	}

	banner := regexp.MustCompile(`(?m)^// ==== (\S+) =+\n`)
	at := banner.FindAllStringSubmatchIndex(code, -1)
	if len(at) == 0 || at[0][0] != 0 {
		t.Fatal("the code of panel.js does not begin with a part")
	}
	var joined []string
	for i, m := range at {
		name := code[m[2]:m[3]]
		joined = append(joined, name)
		end := len(code)
		if i+1 < len(at) {
			end = at[i+1][0] - 1 // a blank line before the next part's banner
			if code[end] != '\n' {
				t.Errorf("no blank line between %s and the next part", name)
			}
		}
		if got := code[m[1]:end]; got != partFile(t, name) {
			t.Errorf("panel.js's %s is not the file as it is", name)
		}
	}
	if !slices.Equal(joined, panelParts) {
		t.Errorf("panel.js joins %q, want %q", joined, panelParts)
	}
}

// TestPanelPartsAreAllListed: every file of panel/js but the wrapper is a part in
// panelParts, once, and every part there is a file.
func TestPanelPartsAreAllListed(t *testing.T) {
	entries, err := fs.ReadDir(panelFiles, "panel/js")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if e.Name() != panelWrapper {
			files = append(files, e.Name())
		}
	}
	listed := slices.Clone(panelParts)
	slices.Sort(listed)
	if len(slices.Compact(slices.Clone(listed))) != len(listed) {
		t.Errorf("panelParts names a part twice: %q", panelParts)
	}
	for _, f := range files {
		if !slices.Contains(panelParts, f) {
			t.Errorf("panel/js/%s is not in panelParts: panel.js would leave it out", f)
		}
	}
	for _, p := range panelParts {
		if !slices.Contains(files, p) {
			t.Errorf("panelParts names %s, which is not in panel/js", p)
		}
	}
}

// TestPanelParts: each part is short, begins with the line that says what it holds and
// lists what it exports to the later parts, declares no top-level name another part
// declares (they share one scope, where the later would silently win), and never writes
// markup or runs text as code.
func TestPanelParts(t *testing.T) {
	declared := map[string]string{} // top-level name -> the part that declares it
	decl := regexp.MustCompile(`(?m)^(?:function|var|let|const|class)\s+([A-Za-z_$][\w$]*)`)
	for _, name := range panelParts {
		src := partFile(t, name)
		if n := strings.Count(src, "\n"); n > maxPartLines {
			t.Errorf("%s has %d lines; split it (at most %d)", name, n, maxPartLines)
		}
		first, _, _ := strings.Cut(src, "\n")
		if !strings.HasPrefix(first, "// ") || len(first) > 100 {
			t.Errorf("%s begins with %q, not a line comment of what it holds", name, first)
		}
		exports := false
		for _, line := range strings.Split(src, "\n") {
			if !strings.HasPrefix(line, "//") {
				break // the end of the heading
			}
			exports = exports || strings.HasPrefix(line, "// Exports: ")
		}
		if !exports {
			t.Errorf("%s's heading has no line \"// Exports: ...\"", name)
		}
		for _, m := range decl.FindAllStringSubmatch(src, -1) {
			if other, ok := declared[m[1]]; ok {
				t.Errorf("%s and %s both declare %s", other, name, m[1])
			}
			declared[m[1]] = name
		}
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
			if strings.Contains(src, bad) {
				t.Errorf("%s uses %s: model text goes in as text, and the CSP allows no eval", name, bad)
			}
		}
	}
}

// TestPanelCSSImportsServedFiles: the stylesheets panel.css imports (the approval
// stack's) are files beside it that the handler serves, relative to it, so that a page
// that loads panel.css gets them whatever prefix it mounts the panel under.
func TestPanelCSSImportsServedFiles(t *testing.T) {
	css, err := fs.ReadFile(panelFiles, "panel/panel.css")
	if err != nil {
		t.Fatal(err)
	}
	imports := regexp.MustCompile(`@import url\("([^"]+)"\);`).FindAllStringSubmatch(string(css), -1)
	if len(imports) == 0 {
		t.Fatal("panel.css imports nothing; the approval stack's rules are in approvals.css")
	}
	for _, m := range imports {
		if strings.Contains(m[1], "/") {
			t.Errorf("panel.css imports %q: not a file beside it", m[1])
			continue
		}
		rec := httptest.NewRecorder()
		PanelHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/"+m[1], nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/css; charset=utf-8" {
			t.Errorf("panel.css imports %s, served %d %q", m[1], rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	// An @import counts only before every rule.
	if before, _, _ := strings.Cut(string(css), "@import"); strings.Contains(regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(before, ""), "{") {
		t.Error("panel.css has a rule before its @import, which the browser would then ignore")
	}
}

// TestPanelTextsInBothLanguages: the strings tables of the panel, the question panel's
// and the approval stack's, have the same texts in English and in Chinese, so that no
// text falls back to nothing in one of them.
func TestPanelTextsInBothLanguages(t *testing.T) {
	key := regexp.MustCompile(`(?m)^    ([A-Za-z]+):`)
	for _, c := range []struct{ part, en, zh string }{
		{"text.js", "\n  en: {\n", "\n  zh: {\n"},
		{"approvaltext.js", "\n  add(tables.en, {\n", "\n  add(tables.zh, {\n"},
		{"inboxtext.js", "\n  add(tables.en, {\n", "\n  add(tables.zh, {\n"},
	} {
		_, src, _ := strings.Cut(partFile(t, c.part), c.en)
		en, zh, ok := strings.Cut(src, c.zh)
		if !ok {
			t.Fatalf("%s: no English and Chinese tables (%q, %q)", c.part, c.en, c.zh)
		}
		keys := func(s string) []string {
			var out []string
			for _, m := range key.FindAllStringSubmatch(s, -1) {
				out = append(out, m[1])
			}
			slices.Sort(out)
			return out
		}
		if e, z := keys(en), keys(zh); !slices.Equal(e, z) || len(e) < 10 {
			t.Errorf("%s: English has %q\nChinese has %q", c.part, e, z)
		}
	}
}
