package tui_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/tui"
)

// What the model writes reaches the terminal as text only: no escape sequence or
// control character of its own, no hyperlink, no invisible character. These tests put
// hostile text into every field the terminal shows, in both modes, and read every byte
// the program wrote.

// quietAccessible is the accessible mode without its bell, so that no control
// character at all is the program's own.
var quietAccessible = &tui.Options{Accessible: true, Quiet: true}

// TestHostileTextIsCleaned: what the model wrote reaches the terminal as text only;
// escape sequences in questions, labels and previews (retitling the window, clearing
// the screen, writing the clipboard) never reach it, in either mode.
func TestHostileTextIsCleaned(t *testing.T) {
	const hostile = `{"questions":[{"question":"Pick one\u001b]0;pwned\u0007 please\u001b[2J","header":"Evil\u001b[31m","options":[
		{"label":"A\u001b]52;c;ZXZpbA==\u0007","description":"first\u202eeno","preview":"# Head\u001b[5m\n\ntext\u009b31m"},
		{"label":"B","description":"second"}],"multiSelect":false}]}`
	for _, mode := range []struct {
		name, decline string
		opts          *tui.Options
	}{{"form", keyEsc, nil}, {"accessible", "d\r", quietAccessible}} {
		t.Run(mode.name, func(t *testing.T) {
			s := newServer(t, nil)
			session := newSession()
			tm := newTerm(t, s, session, mode.opts)
			ch := s.ask(session, "call_hostile", hostile)
			tm.waitScreen("Pick one]0;pwned please[2J", "Head") // the escapes dropped, the rest as text
			tm.press(mode.decline)
			if r := s.result(ch); r.Outcome != askuser.Declined {
				t.Fatalf("outcome %v, want declined", r.Outcome)
			}
			checkOutput(t, tm.rawOutput(), mode.opts != nil)
		})
	}
}

// TestApprovalHostileTextIsCleaned: the tool's name and description and the model's
// arguments reach the terminal as text only, in either mode. In the arguments and in
// the tool's name (which is shown quoted then), what would act on the terminal or hide
// itself is shown as its JSON escape: what is shown is exactly what runs. In the
// description it is dropped.
func TestApprovalHostileTextIsCleaned(t *testing.T) {
	const tool = "delete\x1b]0;pwned\x07_branch \u202egnp.exe\u200b"
	const args = `{"name":"x\u001b]52;c;ZXZpbA==\u0007y","note":"\u202eevil","zw":"a` + "\u200b" + `b"}`
	for _, mode := range []struct {
		name, deny string
		opts       *tui.Options
	}{{"form", keyEsc, nil}, {"accessible", "d\r", quietAccessible}} {
		t.Run(mode.name, func(t *testing.T) {
			s := newServer(t, &askuser.Options{Policy: &askuser.Policy{
				Tools:   []askuser.Tool{{Name: tool, Description: "Deletes\x1b[2J a\u200b branch\u009b31m\u202e"}},
				Reasons: []string{"Not\x1b[5m now"},
			}})
			session := newSession()
			tm := newTerm(t, s, session, mode.opts)
			ch := s.approve(session, "call_hostile", tool, args)
			tm.waitScreen(`Tool: "delete\u001b]0;pwned\u0007_branch \u202egnp.exe\u200b"`,
				`every call of "delete\u001b]0;pwned\u0007_branch \u202egnp.exe\u200b"`,
				"Deletes[2J a branch31m", // the escapes dropped, the rest as text
				`"name": "x\u001b]52;c;ZXZpbA==\u0007y"`, `"note": "\u202eevil"`, `"zw": "a\u200bb"`)
			tm.press(mode.deny)
			if r := s.decision(ch); r.Outcome != askuser.Denied {
				t.Fatalf("outcome %v, want denied", r.Outcome)
			}
			tm.waitHistory("Denied.")
			checkOutput(t, tm.rawOutput(), mode.opts != nil)
		})
	}
}

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

// forbidden are sequences the program never writes itself, but a model's text would.
var forbidden = []string{"\x1b]0;pwned", "\x1b]2;", "\x1b]8;", "\x1b]52;", "\x1b]4;", "\x1b]1337;",
	"\x1b[2J", "\x1b[3J", "\x1b[H", "\x1b[?1049h", "\x1b[6n", "\x1b[21t", "\x1b[8m", "\x1b[5m", "\x1bc"}

// checkOutput fails the test for anything in raw, all that a terminal device wrote,
// that a model's text could have put there: a sequence of forbidden; an OSC, but the
// background colour's query and the device's own title (its text checked as the rest);
// a DCS, APC, PM or SOS string; a C0 control but tab, newline and carriage return (and
// the BELs that end an OSC and ring with the device's own title); DEL; a C1 control; a
// formatting character (bidirectional control, zero-width character); a line or
// paragraph separator; bytes that are not UTF-8. In the accessible mode, no escape
// sequence at all.
func checkOutput(t *testing.T, raw string, accessible bool) {
	t.Helper()
	failed := 0
	fail := func(i int, what string) {
		t.Helper()
		if failed++; failed <= 10 {
			t.Errorf("the terminal was sent %s at %d: %q", what, i, raw[max(i-40, 0):min(i+40, len(raw))])
		}
	}
	for _, f := range forbidden {
		if i := strings.Index(raw, f); i >= 0 {
			fail(i, fmt.Sprintf("%q", f))
		}
	}
	text := func(i, end int) { // raw[i:end] is text
		for i < end {
			r, size := utf8.DecodeRuneInString(raw[i:end])
			switch {
			case r == utf8.RuneError && size == 1:
				fail(i, "a byte that is not UTF-8")
			case r == '\t' || r == '\n' || r == '\r':
			case r < ' ' || r == 0x7f:
				fail(i, fmt.Sprintf("the control character %U", r))
			case r >= 0x80 && r < 0xa0:
				fail(i, fmt.Sprintf("the C1 control %U", r))
			case unicode.Is(unicode.Cf, r), r == '\u2028', r == '\u2029':
				fail(i, fmt.Sprintf("the invisible character %U", r))
			}
			i += size
		}
	}
	for i := 0; i < len(raw); {
		next := strings.IndexByte(raw[i:], '\x1b')
		if next < 0 {
			text(i, len(raw))
			break
		}
		text(i, i+next)
		i += next
		if accessible {
			fail(i, "an escape sequence in the accessible mode")
			return
		}
		rest := raw[i:]
		switch {
		case csi.MatchString(rest):
			i += len(csi.FindString(rest))
		case backgroundQuery.MatchString(rest):
			i += len(backgroundQuery.FindString(rest))
		case ownTitleAt.MatchString(rest):
			m := ownTitleAt.FindString(rest)
			text(i+len(titlePrefix), i+len(m)-1)
			i += len(m)
			if strings.HasPrefix(raw[i:], "\a") { // the bell that rings with the title
				i++
			}
		case len(rest) > 1 && strings.IndexByte("]P_^X", rest[1]) >= 0:
			fail(i, "an OSC, DCS, APC, PM or SOS")
			return
		default:
			i += 2 // a two-character escape: ESC 7, ESC 8, ESC =, ... (ESC c is forbidden)
		}
	}
}

// Sequences of the program's own.
var (
	// ownTitle is the title the device sets when a request arrives: no escape and no
	// BEL in its text.
	ownTitle        = regexp.MustCompile("\x1b\\]0;Waiting for you: [^\x07\x1b]*\x07")
	csi             = regexp.MustCompile(`^\x1b\[[0-?]*[ -/]*[@-~]`) // moves, erasures, colours, modes
	backgroundQuery = regexp.MustCompile(`^\x1b\]11;\?(?:\x07|\x1b\\)`)
	ownTitleAt      = regexp.MustCompile("^" + ownTitle.String())
)

// titlePrefix starts the title the device sets (ownTitle).
const titlePrefix = "\x1b]0;Waiting for you: "

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

// xssPayloads reads the public XSS payloads of the shared data (none when
// ASKUSER_SHARED is "none"), each with "{{C}}" (an address to load from) made the
// address of a server that counts its requests.
func xssPayloads(t *testing.T) (payloads []string, requests *atomic.Int64) {
	t.Helper()
	requests = new(atomic.Int64)
	dir := sharedDir(t)
	if dir == "" {
		return nil, requests
	}
	f, err := os.Open(filepath.Join(dir, "xss", "xss-payloads.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	t.Cleanup(srv.Close)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var p struct{ P string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		payloads = append(payloads, strings.ReplaceAll(p.P, "{{C}}", srv.URL+"/"))
	}
	if err := sc.Err(); err != nil || len(payloads) == 0 {
		t.Fatalf("no payloads read: %v", err)
	}
	return payloads, requests
}

// cut is s cut to at most n characters.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// cutBytes is s cut to at most n bytes of whole characters.
func cutBytes(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// pack joins whole texts, each after its marker, into chunks of at most limit bytes;
// a text too long for a chunk of its own is cut to fit.
func pack(texts []string, limit int, marker string) []string {
	var chunks []string
	var cur strings.Builder
	for i, s := range texts {
		part := fmt.Sprintf(marker, i) + s + " "
		if cur.Len() > 0 && cur.Len()+len(part) > limit {
			chunks = append(chunks, cur.String())
			cur.Reset()
		}
		cur.WriteString(cutBytes(part, limit-cur.Len()))
	}
	return append(chunks, cur.String())
}

// TestHostileCorpus puts every payload of the shared XSS corpus and every sequence of
// terminalEscapes into every field the terminal shows: each question, header (those
// that fit its 12 characters), option label (cut to its 100), description and
// preview; each tool name, tool description, argument key and value, preset reason and
// reason given on another device. In both modes, every field is shown (the form
// visits each option, so that each preview is drawn), and nothing but text reaches
// the terminal (checkOutput); nothing is loaded from the payloads' addresses.
func TestHostileCorpus(t *testing.T) {
	corpus := append([]string(nil), terminalEscapes...)
	xss, requests := xssPayloads(t)
	corpus = append(corpus, xss...)

	for _, mode := range []struct {
		name          string
		opts          *tui.Options
		next, decline string // answering a question (then the next one is shown), declining
	}{{"form", nil, keyEnter, keyEsc}, {"accessible", quietAccessible, "1\r", "d\r"}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, &askuser.Options{Policy: hostilePolicy(corpus)})
			session := newSession()
			tm := newTermSized(t, s, session, mode.opts, 120, 100)
			for n, set := range hostileSets(corpus) {
				ch := s.ask(session, fmt.Sprintf("call_hostile_%d", n), set.args)
				for qi, q := range set.questions {
					tm.waitScreen(q.marker)
					for oi, o := range q.options {
						if mode.opts == nil && oi > 0 {
							tm.send(keyDown) // the preview follows the cursor
						}
						tm.waitScreen(o.label, o.preview)
					}
					if qi < len(set.questions)-1 {
						tm.press(mode.next)
					}
				}
				tm.press(mode.decline)
				if r := s.result(ch); r.Outcome != askuser.Declined {
					t.Fatalf("set %d: outcome %v, want declined; %s", n, r.Outcome, r.Content)
				}
			}
			for i, a := range hostileApprovals(corpus) {
				ch := s.approve(session, fmt.Sprintf("call_hostile_tool_%d", i), a.tool, a.args)
				tm.waitScreen(a.marker, a.lastKey)
				if i < len(a.reasons) { // a reason given on another device
					p := s.d.PendingApprovals(askuser.ParseSessionID(session))[0]
					s.decideElsewhere(session, askuser.ApprovalResultData{RequestID: p.RequestID, Decision: askuser.DecisionDeny,
						Reason: a.reasons[i], Digest: p.Digest})
					tm.waitScreen("Denied on another device: " + a.reasons[i][:4])
				} else {
					tm.press(mode.decline)
				}
				if r := s.decision(ch); r.Outcome != askuser.Denied {
					t.Fatalf("approval %d: outcome %v, want denied; %v", i, r.Outcome, r.Problems)
				}
			}
			checkOutput(t, tm.rawOutput(), mode.opts != nil)

			// Every text as a preset reason, on a host of its own: a form of a few hundred
			// reasons takes a while to draw.
			var reasons []string
			for i, s := range corpus {
				reasons = append(reasons, fmt.Sprintf("R%03d %s", i, s))
			}
			rs := newServer(t, &askuser.Options{Policy: &askuser.Policy{Reasons: reasons}})
			rtm := newTermSized(t, rs, session, mode.opts, 120, 300)
			ch := rs.approve(session, "call_hostile_reasons", "delete_branch", `{}`)
			if mode.opts == nil {
				rtm.waitScreen("> Approve")
				rtm.press(keyDown, keyEnter)
			} else {
				rtm.waitScreen("Decision:")
				rtm.press("2\r")
			}
			rtm.waitScreen(reasons[0][:5], reasons[len(reasons)-1][:5])
			rtm.press(mode.decline)
			if r := rs.decision(ch); r.Outcome != askuser.Denied {
				t.Fatalf("outcome %v, want denied", r.Outcome)
			}
			checkOutput(t, rtm.rawOutput(), mode.opts != nil)
		})
	}
	t.Cleanup(func() {
		if n := requests.Load(); n != 0 {
			t.Errorf("%d requests to the payloads' address", n)
		}
	})
}

// hostileSet is a question set made of the corpus, and what shows each of its fields.
type hostileSet struct {
	args      string
	questions []hostileQuestion
}

type hostileQuestion struct {
	marker  string // at the start of the question
	options []struct{ label, preview string }
}

// hostileSets are question sets of four questions of four options, each option made of
// one text of the corpus: its label (after "L" and its number), description and preview
// (after "P" and the number, a paragraph of its own); each question of the texts of its
// options; each header one of the texts that fit.
func hostileSets(corpus []string) []hostileSet {
	var headers []string
	for _, s := range corpus {
		if strings.TrimSpace(s) != "" && utf8.RuneCountInString(s) <= 12 {
			headers = append(headers, s)
		}
	}
	type option struct {
		Label       string `json:"label"`
		Description string `json:"description"`
		Preview     string `json:"preview"`
	}
	type question struct {
		Question    string   `json:"question"`
		Header      string   `json:"header"`
		Options     []option `json:"options"`
		MultiSelect bool     `json:"multiSelect"`
	}
	var sets []hostileSet
	var qs []question
	var hs []hostileQuestion
	flush := func() {
		b, _ := json.Marshal(map[string]any{"questions": qs})
		sets = append(sets, hostileSet{args: string(b), questions: hs})
		qs, hs = nil, nil
	}
	for k := 0; k < len(corpus); k += 4 {
		n := len(qs) + 4*len(sets)
		q := question{Header: headers[n%len(headers)]}
		h := hostileQuestion{marker: fmt.Sprintf("Q%03d", n)}
		var texts []string
		for j := k; j < k+4 && j < len(corpus) || j < k+2; j++ { // at least two options
			p := corpus[j%len(corpus)]
			texts = append(texts, p)
			label := fmt.Sprintf("L%03d ", j)
			q.Options = append(q.Options, option{Label: cut(label+p, 100), Description: p, Preview: fmt.Sprintf("P%03d\n\n%s", j, p)})
			h.options = append(h.options, struct{ label, preview string }{label, fmt.Sprintf("P%03d", j)})
		}
		q.Question = cut(h.marker+" "+strings.Join(texts, " "), 1000)
		qs, hs = append(qs, q), append(hs, h)
		if len(qs) == 4 {
			flush()
		}
	}
	if len(qs) > 0 {
		flush()
	}
	return sets
}

// hostileApproval is a tool call made of the corpus.
type hostileApproval struct {
	tool, args, description string
	marker, lastKey         string // at the start of the tool's name; in the last argument's key
	reasons                 []string
}

// hostilePolicy describes each tool of hostileApprovals with the texts of its
// arguments.
func hostilePolicy(corpus []string) *askuser.Policy {
	p := &askuser.Policy{}
	for _, a := range hostileApprovals(corpus) {
		p.Tools = append(p.Tools, askuser.Tool{Name: a.tool, Description: a.description})
	}
	return p
}

// hostileApprovals are tool calls whose names hold the whole corpus between them (each
// name at most 256 bytes), and whose arguments have each text of the corpus as a key
// and as a value; with reasons of at most 1000 characters that hold it all too.
func hostileApprovals(corpus []string) []hostileApproval {
	names := pack(corpus, 256, "N%03d ")
	reasons := pack(corpus, 1000, "W%03d ")
	var out []hostileApproval
	per := (len(corpus) + len(names) - 1) / len(names)
	for i, name := range names {
		tool := fmt.Sprintf("T%03d %s", i, cutBytes(name, 250))
		args := map[string]string{}
		last := ""
		var texts []string
		for j := i * per; j < (i+1)*per && j < len(corpus); j++ {
			last = fmt.Sprintf("K%03d", j)
			args[last+" "+corpus[j]] = corpus[j]
			texts = append(texts, corpus[j])
		}
		b, _ := json.Marshal(args)
		a := hostileApproval{tool: tool, args: string(b), description: "D " + strings.Join(texts, " "),
			marker: fmt.Sprintf("T%03d", i), lastKey: last, reasons: reasons}
		if last == "" {
			a.args, a.lastKey = `{}`, "{}"
		}
		out = append(out, a)
	}
	return out
}
