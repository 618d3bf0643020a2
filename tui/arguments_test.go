package tui

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/askuser-go/askuser/wire"
)

// The arguments of an approval as shown: these are the pure parts of the approval
// form, tested alone; the form itself is tested on a terminal (approval_test.go).

var prettyCases = []struct {
	name, in    string
	indent      string
	fold        int
	want        string
	sameJSON    bool // the output is the same JSON value as the input
	wantProblem bool
}{
	{"members in order, numbers as written", `{"z":1.50,"a":[1,"two",null,true],"m":{}}`, "  ", 0,
		"{\n  \"z\": 1.50,\n  \"a\": [1, \"two\", null, true],\n  \"m\": {}\n}", true, false},
	{"nested", `[{"a":[{"b":[]}]}]`, "  ", 0,
		"[\n  {\n    \"a\": [\n      {\n        \"b\": []\n      }\n    ]\n  }\n]", true, false},
	{"one line", `{"name":"x","n":[1,2],"o":{"p":null}}`, "", 0, `{"name": "x", "n": [1, 2], "o": {"p": null}}`, true, false},
	{"hidden characters escaped", `{"k\u202e":"a\u001b]0;t\u0007b\u200b\u2028\ud83d\ude00\udb40\udc41\ufffd\t\n\"\\"}`, "", 0,
		`{"k\u202e": "a\u001b]0;t\u0007b\u200b\u2028😀\udb40\udc41\ufffd\t\n\"\\"}`, true, false},
	{"long strings folded", `{"s":"abcdefghij","t":"abc"}`, "", 4, `{"s": "abcd…" (6 more characters), "t": "abc"}`, false, false},
	{"one character left", `"abcde"`, "", 4, `"abcd…" (1 more character)`, false, false},
	{"not JSON", `{"a":`, "", 0, "", false, true},
	{"two values", `{} {}`, "", 0, "", false, true},
}

func TestPrettyJSON(t *testing.T) {
	for _, tc := range prettyCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := prettyJSON([]byte(tc.in), tc.indent, tc.fold)
			if tc.wantProblem {
				if err == nil {
					t.Fatalf("prettyJSON(%s) = %q, want an error", tc.in, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("prettyJSON(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			if tc.sameJSON && !sameValue(t, tc.in, got) {
				t.Errorf("%q is not the JSON value %s", got, tc.in)
			}
		})
	}
}

// FuzzPrettyJSON: what the edit box starts with is always the model's JSON value, and
// never a character that acts on the terminal or hides itself.
func FuzzPrettyJSON(f *testing.F) {
	for _, tc := range prettyCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		for _, indent := range []string{"  ", ""} {
			got, err := prettyJSON([]byte(in), indent, 0)
			if err != nil {
				t.Fatalf("prettyJSON(%q): %v", in, err)
			}
			if !sameValue(t, in, got) {
				t.Fatalf("prettyJSON(%q) = %q, another value", in, got)
			}
			for _, r := range got {
				if r != '\n' && hidden(r) {
					t.Fatalf("prettyJSON(%q) = %q holds %U", in, got, r)
				}
			}
		}
	})
}

func sameValue(t *testing.T, a, b string) bool {
	t.Helper()
	decode := func(s string) any {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

func TestWrapAndCapLines(t *testing.T) {
	got := wrapLines("short\n    \"k\": \"aaaa bbbb cccc dddd eeee ffff gggg hhhh\"", 24)
	want := []string{"short", `    "k": "aaaa bbbb cccc`, "      dddd eeee ffff", "      gggg hhhh\""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("wrapLines = %q, want %q", got, want)
	}
	lines := []string{"1", "2", "3", "4", "5"}
	if got := capLines(lines, 3, "; more"); !reflect.DeepEqual(got, []string{"1", "2", "… 3 more lines; more"}) {
		t.Errorf("capLines = %q", got)
	}
	if got := capLines(lines, 5, ""); !reflect.DeepEqual(got, lines) {
		t.Errorf("capLines kept %q of %q", got, lines)
	}
	if got := oneLine([]byte(`{"a":"`+strings.Repeat("x", 100)+`"}`), 30); !bytes.HasSuffix([]byte(got), []byte("…")) || len([]rune(got)) != 30 {
		t.Errorf("oneLine = %q", got)
	}
}

// TestSourceLines: the lines that say whose tool an approval is for: the server, its
// trust, the title and the hints in the card's order (others by name), hostile text
// made safe; nothing for the host's own tools.
func TestSourceLines(t *testing.T) {
	if got := sourceLines(nil); got != nil {
		t.Fatalf("own tool: %q", got)
	}
	got := sourceLines(&wire.ToolSource{Server: "git\x1b[31mhub", Title: "Delete a repository", Hints: map[string]bool{"openWorld": true, "custom": false, "readOnly": false, "destructive": true}})
	want := []string{
		"A tool of the server " + clean("git\x1b[31mhub", false) + " (not marked trusted)",
		"Title: Delete a repository",
		"The server says this tool is: not read-only, destructive, reaching outside systems, custom: false.",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if strings.Contains(strings.Join(got, ""), "\x1b") {
		t.Fatal("an escape reached the terminal")
	}
	got = sourceLines(&wire.ToolSource{Server: "files", Trusted: true})
	if want := []string{"A tool of the server files (marked trusted by the host)", "The server says nothing of what this tool does."}; !slices.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
}
