package tui

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/askuser-go/askuser/wire"
)

// The corpus of hostile text that the tests put into every field the terminal shows:
// the terminal escapes below, and the public XSS payloads of the repository's shared
// test data. Here each text goes alone through what makes each field's text; the
// terminal tests (hostile_test.go) show them all on a terminal.

// terminalEscapes are the sequences a model could write to act on a terminal, or to
// make text read other than it is.
var terminalEscapes = []string{
	"\x1b]0;pwned\x07",   // retitle the window (OSC 0, ended by BEL)
	"\x1b]2;pwned\x1b\\", // the same, ended by ST
	"\x1b]8;;http://evil.example/\x1b\\Allow\x1b]8;;\x1b\\", // a hyperlink labelled Allow
	"\x1b]52;c;ZXZpbA==\x07",                                // write the clipboard
	"\x1b]4;1;rgb:00/00/00\x07",                             // change the palette
	"\x1b]1337;File=inline=1:AAAA\x07",
	"\x1b[2J\x1b[H",   // clear the screen, cursor home
	"\x1b[?1049h",     // alternate screen
	"\x1b[6n",         // cursor position report: the reply comes as input
	"\x1b[21t",        // title report: the reply comes as input
	"\x1b[8m hidden",  // concealed text
	"\x1b[5m",         // blink
	"\x1bP$q m\x1b\\", // DCS: request status
	"\x1b_apc\x1b\\", "\x1b^pm\x1b\\", "\x1bXsos\x1b\\",
	"\u009b2J", "\u009d0;pwned\u009c", // C1: CSI, OSC and ST in one character each
	"\x1bc", // reset the terminal
	"safe\rEVIL", "back\bspace", "shift\x0eout", "del\x7f",
	"\u202egnp.exe", "\u2066isolate\u2069", "a\u200bb\u200dc\u2060d\ufeffe", "tag\U000E0041\U000E007F", "line\u2028sep",
	"&#27;[2J", "&#x1b;]8;;http://evil.example/&#7;Allow&#x1b;]8;;&#7;", "&#x202e;rlo &ZeroWidthSpace;zw",
	"[Allow](http://evil.example/approve)", // glamour would make it an OSC 8 hyperlink
}

// sharedDir is the repository's shared test data: $ASKUSER_SHARED, or shared/ beside
// the repository. It fails the test when the data is not there, and is "" when
// ASKUSER_SHARED is "none": the test goes on without.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ASKUSER_SHARED")
	switch dir {
	case "none":
		t.Log("ASKUSER_SHARED=none: without the shared test data")
		return ""
	case "":
		dir = filepath.Join("..", "..", "shared") // this package is one below the repository's root
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the shared test data: %v (set ASKUSER_SHARED to its directory, or to none)", err)
	}
	return dir
}

// hostileCorpus is terminalEscapes, then the XSS payloads of the shared data (none when
// ASKUSER_SHARED is "none"), with their "{{C}}" (an address to load from) made addr.
func hostileCorpus(t *testing.T, addr string) []string {
	t.Helper()
	corpus := append([]string(nil), terminalEscapes...)
	dir := sharedDir(t)
	if dir == "" {
		return corpus
	}
	f, err := os.Open(filepath.Join(dir, "xss", "xss-payloads.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := len(corpus)
	for sc.Scan() {
		var p struct{ P string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		corpus = append(corpus, strings.ReplaceAll(p.P, "{{C}}", addr))
	}
	if err := sc.Err(); err != nil || len(corpus) == n {
		t.Fatalf("no payloads read: %v", err)
	}
	return corpus
}

// TestCorpusFields: each text of the corpus alone, through what makes each field's
// text: clean for prose (on one line and on several), the previews in each style, a
// tool's name and the arguments. Nothing comes out but text (and the previews'
// colours); a tool's name and the arguments, shown with escapes, read back as exactly
// what runs.
func TestCorpusFields(t *testing.T) {
	var p previews
	for _, s := range hostileCorpus(t, "http://127.0.0.1:9/") {
		for _, out := range []string{clean(s, false), clean(s, true),
			p.render(s, 60, styleDark), p.render(s, 60, styleLight), p.render(s, 60, stylePlain)} {
			checkRendering(t, s, out)
		}

		a := approval{data: wire.ApprovalData{Tool: s}}
		name := a.tool()
		checkRendering(t, s, name)
		var back string
		if name != s && (json.Unmarshal([]byte(name), &back) != nil || back != s) {
			t.Errorf("the tool %q is shown as %q, which reads as %q", s, name, back)
		}

		args, err := json.Marshal(map[string]string{s: s})
		if err != nil {
			t.Fatal(err)
		}
		shown, err := prettyJSON(args, "  ", 0)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		checkRendering(t, s, shown)
		var read map[string]string
		if err := json.Unmarshal([]byte(shown), &read); err != nil || !reflect.DeepEqual(read, map[string]string{s: s}) {
			t.Errorf("the arguments %s are shown as %s, which reads as %q (%v)", args, shown, read, err)
		}
	}
}
