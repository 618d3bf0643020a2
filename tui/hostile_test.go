package tui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/tui"
	"github.com/askuser-go/askuser/wire"
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

// cutBytes is s cut to at most n bytes of whole characters.
func cutBytes(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// pack joins texts, in order and whole, into chunks of at most limit bytes and, when
// most > 0, at most most texts, each text after sep; a text too long for a chunk of
// its own is cut to fit.
func pack(texts []string, limit, most int, sep string) []string {
	var chunks []string
	var cur strings.Builder
	n := 0
	for _, s := range texts {
		part := sep + s
		if cur.Len() > 0 && (cur.Len()+len(part) > limit || most > 0 && n == most) {
			chunks = append(chunks, cur.String())
			cur.Reset()
			n = 0
		}
		cur.WriteString(cutBytes(part, limit-cur.Len()))
		n++
	}
	return append(chunks, cur.String())
}

// TestHostileCorpus puts the whole corpus (every sequence of terminalEscapes and every
// payload of the shared XSS corpus) into every field the terminal shows: the
// questions, headers (the texts that fit their 12 characters), option labels (in
// labels of 100 characters; a longer text cut), descriptions and previews (four texts
// a preview); the tool names (of 256 bytes), tool descriptions, argument keys and
// values, preset reasons (of 1000 characters) and reasons given on another device. In both modes, every
// field is shown (the form visits each option with a preview), and nothing but text
// reaches the terminal (checkOutput); nothing is loaded from the payloads' addresses.
// TestCorpusFields puts each text alone through each field's rendering.
func TestHostileCorpus(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	t.Cleanup(func() {
		srv.Close()
		if n := requests.Load(); n != 0 {
			t.Errorf("%d requests to the payloads' address", n)
		}
	})
	corpus := tui.HostileCorpus(t, srv.URL+"/")

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
					tm.waitScreen(append([]string{q.marker}, q.labels...)...)
					for pi, p := range q.previews {
						if mode.opts == nil && pi > 0 {
							tm.send(keyDown) // the preview follows the cursor
						}
						tm.waitScreen(p)
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
			// The approvals, a few queued ahead in their order, shown one after the other.
			// The first are denied on another device, with the corpus as reasons.
			reasons := pack(corpus, 990, 0, " ")
			approvals := hostileApprovals(corpus)
			decisions := make([]<-chan askuser.ApprovalResult, len(approvals))
			asked := 0
			ask := func(upTo int) {
				for ; asked < min(upTo, len(approvals)); asked++ {
					a := approvals[asked]
					decisions[asked] = s.approve(session, fmt.Sprintf("call_hostile_tool_%d", asked), a.tool, a.args)
					eventually(t, "the approval pending", func() bool {
						for _, p := range askusertest.Approvals(s.d, wire.ParseSessionID(session)) {
							if p.RequestID == fmt.Sprintf("call_hostile_tool_%d", asked) {
								return true
							}
						}
						return false
					})
				}
			}
			other, err := tui.Dial(t.Context(), s.wsURL(session), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			for i, a := range approvals {
				ask(i + 8)
				tm.waitScreen(a.marker, a.lastKey)
				if i < len(reasons) {
					var p wire.ApprovalData
					for _, p = range askusertest.Approvals(s.d, wire.ParseSessionID(session)) {
						if p.RequestID == fmt.Sprintf("call_hostile_tool_%d", i) {
							break
						}
					}
					ev, err := wire.NewEvent(wire.EventApprovalResult, wire.ParseSessionID(session), wire.ApprovalResultData{
						RequestID: p.RequestID, Decision: wire.DecisionDeny, Reason: fmt.Sprintf("W%03d%s", i, reasons[i]), Digest: p.Digest})
					if err == nil {
						err = other.Send(t.Context(), ev)
					}
					if err != nil {
						t.Fatal(err)
					}
					tm.waitScreen(fmt.Sprintf("Denied on another device: W%03d", i))
				} else {
					tm.press(mode.decline)
				}
				if r := s.decision(decisions[i]); r.Outcome != askuser.Denied {
					t.Fatalf("approval %d: outcome %v, want denied; %v", i, r.Outcome, r.Problems)
				}
			}
			checkOutput(t, tm.rawOutput(), mode.opts != nil)

			// The corpus as preset reasons (of 1000 characters), on a host of its own.
			var presets []string
			for i, r := range pack(corpus, 990, 0, " ") {
				presets = append(presets, fmt.Sprintf("R%03d%s", i, r))
			}
			rs := newServer(t, &askuser.Options{Policy: &askuser.Policy{Reasons: presets}})
			rtm := newTermSized(t, rs, session, mode.opts, 120, 300)
			ch := rs.approve(session, "call_hostile_reasons", "delete_branch", `{}`)
			if mode.opts == nil {
				rtm.waitScreen("> Approve")
				rtm.press(keyDown, keyEnter)
			} else {
				rtm.waitScreen("Decision:")
				rtm.press("2\r")
			}
			rtm.waitScreen(presets[0][:4], presets[len(presets)-1][:4])
			rtm.press(mode.decline)
			if r := rs.decision(ch); r.Outcome != askuser.Denied {
				t.Fatalf("outcome %v, want denied", r.Outcome)
			}
			checkOutput(t, rtm.rawOutput(), mode.opts != nil)
		})
	}
}

// hostileSet is a question set made of the corpus, and what shows each of its fields.
type hostileSet struct {
	args      string
	questions []hostileQuestion
}

type hostileQuestion struct {
	marker   string   // at the start of the question
	labels   []string // at the start of each option's label
	previews []string // at the start of the previews of its first options
}

// hostileSets are question sets of four questions of four options, made of the corpus
// packed into labels (after "L" and a number), descriptions, previews (after "P" and a
// number, a paragraph of its own) and questions (after "Q" and a number): the first
// questions and options have them (descriptions, one a question), the others a short
// text; each header is one of the texts that fit.
func hostileSets(corpus []string) []hostileSet {
	var headers []string
	for _, s := range corpus {
		if strings.TrimSpace(s) != "" && utf8.RuneCountInString(s) <= 12 {
			headers = append(headers, s)
		}
	}
	labels := pack(corpus, 95, 0, " ")
	descriptions := pack(corpus, 1000, 0, " ")
	previews := pack(corpus, 20000, 4, "\n\n")
	questions := pack(corpus, 990, 0, " ")

	type option struct {
		Label       string `json:"label"`
		Description string `json:"description"`
		Preview     string `json:"preview,omitempty"`
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
	options := max(len(labels), len(previews))
	for k := 0; k < options; k += 4 {
		n := len(qs) + 4*len(sets)
		q := question{Question: fmt.Sprintf("Q%03d", n), Header: headers[n%len(headers)]}
		if n < len(questions) {
			q.Question += questions[n]
		}
		h := hostileQuestion{marker: fmt.Sprintf("Q%03d", n)}
		for j := k; j < k+4 && j < options || j < k+2; j++ { // at least two options
			o := option{Label: fmt.Sprintf("L%03d", j) + labels[j%len(labels)], Description: "d"}
			if j%4 == 0 && j/4 < len(descriptions) { // one long text a question, for the form to fit
				o.Description = descriptions[j/4]
			}
			h.labels = append(h.labels, fmt.Sprintf("L%03d", j))
			if j < len(previews) {
				o.Preview = fmt.Sprintf("P%03d", j) + previews[j]
				h.previews = append(h.previews, fmt.Sprintf("P%03d", j))
			}
			q.Options = append(q.Options, o)
		}
		qs, hs = append(qs, q), append(hs, h)
		if len(qs) == 4 || k+4 >= options {
			b, _ := json.Marshal(map[string]any{"questions": qs})
			sets = append(sets, hostileSet{args: string(b), questions: hs})
			qs, hs = nil, nil
		}
	}
	return sets
}

// hostileApproval is a tool call made of the corpus.
type hostileApproval struct {
	tool, args, description string
	marker, lastKey         string // at the start of the tool's name; in the last argument's key
}

// hostilePolicy describes each tool of hostileApprovals.
func hostilePolicy(corpus []string) *askuser.Policy {
	p := &askuser.Policy{}
	for _, a := range hostileApprovals(corpus) {
		p.Tools = append(p.Tools, askuser.Tool{Name: a.tool, Description: a.description})
	}
	return p
}

// hostileApprovals are tool calls whose names (of at most 256 bytes) hold the corpus
// between them, and whose arguments have each text of the corpus as a key and as a
// value; each tool is described with the texts of its arguments.
func hostileApprovals(corpus []string) []hostileApproval {
	names := pack(corpus, 250, 0, " ")
	var out []hostileApproval
	per := (len(corpus) + len(names) - 1) / len(names)
	for i, name := range names {
		a := hostileApproval{tool: fmt.Sprintf("T%03d", i) + name, marker: fmt.Sprintf("T%03d", i), description: "D"}
		args := map[string]string{}
		for j := i * per; j < (i+1)*per && j < len(corpus); j++ {
			a.lastKey = fmt.Sprintf("K%03d", j)
			args[a.lastKey+" "+corpus[j]] = corpus[j]
			a.description += " " + corpus[j]
		}
		b, _ := json.Marshal(args)
		a.args = string(b)
		if a.lastKey == "" {
			a.lastKey = "{}"
		}
		out = append(out, a)
	}
	return out
}
