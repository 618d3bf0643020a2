package tui_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/tui"
	"github.com/askuser-go/askuser/wire"
)

func TestSingleSelect(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.ask(session, "call_single", singleArgs)

	tm.waitScreen("[Framework] Which framework should we use?",
		"> Vue 3 (Recommended) — Matches the existing stack", "React — Larger ecosystem", "Other: type your own answer")
	tm.press(keyDown)
	tm.waitScreen("> React")
	tm.press(keyEnter)

	r := s.result(ch)
	if want := `{"answers":[{"question":"Which framework should we use?","selectedLabels":["React"],"customInput":null}]}`; r.Content != want {
		t.Fatalf("tool result %s, want %s", r.Content, want)
	}
	tm.waitHistory("Answered.")
	tm.waitScreen("→ React")
}

func TestMultiSelect(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.ask(session, "call_multi", multiArgs)

	tm.waitScreen("[Features] Which features should we include?", "Dark mode — Light and dark themes", "Export to PDF")
	// Nothing chosen: the form says so and sends nothing, as the host would refuse it.
	tm.press(keyEnter)
	tm.waitScreen("choose at least one option")
	tm.press(keySpace, keyDown, keyDown, keySpace)
	tm.press(keyEnter)

	got := answers(t, s.result(ch))
	if len(got) != 1 || strings.Join(got[0].SelectedLabels, "|") != "Dark mode|Export to PDF" || got[0].CustomInput != nil {
		t.Fatalf("answers %+v, want Dark mode and Export to PDF without Other", got)
	}
	tm.waitHistory("→ Dark mode, Export to PDF")
	tm.waitHistory("Answered.")
}

func TestOtherText(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, nil)

	// Single-select: Other replaces the option; a blank Other is refused in place.
	ch := s.ask(session, "call_other", singleArgs)
	tm.waitScreen("Other: type your own answer")
	tm.press(keyDown, keyDown, keyEnter)
	tm.waitScreen("Type your own answer, instead of the options.")
	tm.press(keyEnter)
	tm.waitScreen("type your answer, or choose an option")
	tm.typeText("  Svelte  ")
	tm.press(keyEnter)
	got := answers(t, s.result(ch))
	if len(got[0].SelectedLabels) != 0 || got[0].CustomInput == nil || *got[0].CustomInput != "Svelte" {
		t.Fatalf("answer %+v, want only the custom input \"Svelte\"", got[0])
	}
	tm.waitHistory(`→ "Svelte"`)

	// Multi-select: Other adds to the options chosen.
	ch = s.ask(session, "call_other_multi", multiArgs)
	tm.waitScreen("Which features should we include?")
	tm.press(keyDown, keySpace, keyDown, keyDown, keySpace, keyEnter)
	tm.waitScreen("Type your own answer, besides the options chosen;")
	tm.typeText("Offline mode")
	tm.press(keyEnter)
	got = answers(t, s.result(ch))
	if strings.Join(got[0].SelectedLabels, "|") != "i18n support" || got[0].CustomInput == nil || *got[0].CustomInput != "Offline mode" {
		t.Fatalf("answer %+v, want i18n support and \"Offline mode\"", got[0])
	}
}

// TestLongQuestionShowsItsOptions: a question long enough to take several lines, and
// a long header, leave every option in view, in each question of the set.
func TestLongQuestionShowsItsOptions(t *testing.T) {
	long := strings.Repeat("Which of these should we pick, given all that was said before? ", 8)
	args := `{"questions":[{"question":"` + long + `","header":"Long","options":[
		{"label":"First","description":"one"},{"label":"Second","description":"two"},
		{"label":"Third","description":"three"},{"label":"Fourth","description":"four"}],"multiSelect":false},
		{"question":"Short?","header":"Short","options":[{"label":"Yes","description":"y"},{"label":"No","description":"n"}],"multiSelect":true},
		{"question":"And again: ` + long + `","header":"Long too","options":[
		{"label":"Fifth","description":"5"},{"label":"Sixth","description":"6"}],"multiSelect":true}]}`
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.ask(session, "call_long", args)
	tm.waitScreen("> First — one", "Second — two", "Third — three", "Fourth — four", "Other: type your own answer")
	tm.press(keyEnter)
	tm.waitScreen("> • Yes", "• No")
	tm.press(keySpace, keyEnter)
	tm.waitScreen("> • Fifth — 5", "• Sixth — 6", "• Other: type your own answer")
	tm.press(keyEsc)
	if r := s.result(ch); r.Outcome != askuser.Declined {
		t.Fatalf("outcome %v, want declined", r.Outcome)
	}
}

// TestChooseAllAndGoBack: ctrl+a chooses every option but not Other, and chooses none
// when all are chosen; shift+tab leaves the Other box for the options, even with the
// box blank and its error shown, and the options then take keys again; a blank Other
// beside chosen options sends the options alone. No key leaves the person stuck.
func TestChooseAllAndGoBack(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	labels := func(a askuser.Answer) string { return strings.Join(a.SelectedLabels, "|") }

	// ctrl+a, ctrl+a, ctrl+a: all, none, all; Other stays as it is, the cursor too.
	ch := s.ask(session, "call_all", multiArgs)
	tm.waitScreen("ctrl+a all/none")
	tm.press(keyDown, keyCtrlA)
	tm.waitScreen("✓ Dark mode", "> ✓ i18n support", "✓ Export to PDF", "• Other: type your own answer")
	tm.press(keyCtrlA)
	tm.waitScreen("• Dark mode", "> • i18n support", "• Export to PDF")
	tm.press(keyCtrlA, keyEnter)
	got := answers(t, s.result(ch))
	if labels(got[0]) != "Dark mode|i18n support|Export to PDF" || got[0].CustomInput != nil {
		t.Fatalf("answer %+v, want the three options and no Other", got[0])
	}

	// Other alone, its box left blank: refused in place; shift+tab goes back to the
	// options, which take keys again.
	ch = s.ask(session, "call_back", multiArgs)
	tm.waitScreen("> • Dark mode")
	tm.press(keyDown, keyDown, keyDown, keySpace, keyEnter)
	tm.waitScreen("leave it empty to send only those")
	tm.press(keyEnter)
	tm.waitScreen("type your answer, or choose an option")
	tm.press(keyBack)
	tm.waitScreen("Choose any (space toggles)", "> ✓ Other: type your own answer")
	tm.press(keySpace, keyUp, keySpace)
	tm.waitScreen("> ✓ Export to PDF", "• Other: type your own answer")
	tm.press(keyEnter)
	got = answers(t, s.result(ch))
	if labels(got[0]) != "Export to PDF" || got[0].CustomInput != nil {
		t.Fatalf("answer %+v, want Export to PDF alone", got[0])
	}

	// Options and Other, the box left empty: the options alone are sent.
	ch = s.ask(session, "call_empty_other", multiArgs)
	tm.waitScreen("> • Dark mode")
	tm.press(keySpace, keyDown, keyDown, keyDown, keySpace, keyEnter)
	tm.waitScreen("leave it empty to send only those")
	tm.press(keyEnter)
	got = answers(t, s.result(ch))
	if labels(got[0]) != "Dark mode" || got[0].CustomInput != nil {
		t.Fatalf("answer %+v, want Dark mode alone", got[0])
	}
	tm.waitHistory("→ Dark mode\n")

	// Single-select: back from the Other box to the options, and another option chosen.
	ch = s.ask(session, "call_back_single", singleArgs)
	tm.waitScreen("> Vue 3")
	tm.press(keyDown, keyDown, keyEnter)
	tm.waitScreen("Type your own answer, instead of the options.")
	tm.press(keyBack)
	tm.waitScreen("Choose one, or Other", "> Other: type your own answer")
	tm.press(keyUp, keyEnter)
	if got := answers(t, s.result(ch)); labels(got[0]) != "React" || got[0].CustomInput != nil {
		t.Fatalf("answer %+v, want React", got[0])
	}
}

func TestPreviewsRendered(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.ask(session, "call_preview", previewArgs)

	// The preview of the option under the cursor, rendered as markdown beside the options:
	// no markdown syntax left (no heading's #, of any level), list bullets, the code
	// block kept as it is.
	scr := tm.waitScreen("Preview: Sidebar", "Sidebar layout", "• Nav on the left", "| nav  | content  |")
	for _, raw := range []string{"# Sidebar", "**Nav**", "```"} {
		if strings.Contains(scr, raw) {
			t.Errorf("the preview shows the markdown %q unrendered:\n%s", raw, scr)
		}
	}
	if !poll(func() bool {
		scr = tm.screen()
		return sameLine(scr, "Sidebar — Navigation on the left", "Sidebar layout")
	}) {
		t.Errorf("the preview is not beside the options:\n%s", scr)
	}
	// It follows the cursor.
	tm.press(keyDown)
	scr = tm.waitScreen("Preview: Top bar", "Top bar layout", "1. Nav across the top", "Fits few sections")
	tm.waitGone("Sidebar layout")
	if strings.Contains(scr, "#") {
		t.Errorf("the preview shows a heading's marks:\n%s", scr)
	}
	tm.press(keyEnter)
	if got := answers(t, s.result(ch)); got[0].SelectedLabels[0] != "Top bar" {
		t.Fatalf("answers %+v, want Top bar", got)
	}
}

// TestPreviewLinks: a preview's link shows its target as plain text beside its label,
// and an image its alt text, in either mode; no hyperlink (OSC 8) reaches the terminal,
// so no label can stand for an address the person does not see.
func TestPreviewLinks(t *testing.T) {
	const args = `{"questions":[{"question":"Go ahead?","header":"Links","options":[
		{"label":"Yes","description":"d","preview":"## Links\n\n[Allow](http://evil.example/approve)\n\n![diagram](http://img.example/d.png)"},
		{"label":"No","description":"d"}],"multiSelect":false}]}`
	for _, mode := range []struct {
		name, decline string
		opts          *tui.Options
	}{{"form", keyEsc, nil}, {"accessible", "d\r", accessible}} {
		t.Run(mode.name, func(t *testing.T) {
			s := newServer(t, nil)
			session := newSession()
			tm := newTerm(t, s, session, mode.opts)
			ch := s.ask(session, "call_links", args)
			scr := tm.waitScreen("Allow http://evil.example/approve", "Image: diagram")
			if strings.Contains(scr, "img.example") {
				t.Errorf("the image's address is shown:\n%s", scr)
			}
			tm.press(mode.decline)
			if r := s.result(ch); r.Outcome != askuser.Declined {
				t.Fatalf("outcome %v, want declined", r.Outcome)
			}
			if raw := tm.rawOutput(); strings.Contains(raw, "\x1b]8;") {
				t.Errorf("the terminal was sent a hyperlink: %q", raw[strings.Index(raw, "\x1b]8;"):][:60])
			}
		})
	}
}

// sameLine reports whether some line of the screen holds both a and b, a first.
func sameLine(screen, a, b string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.Index(l, a); i >= 0 && strings.Contains(l[i:], b) {
			return true
		}
	}
	return false
}

func TestDecline(t *testing.T) {
	for _, tc := range []struct{ name, key string }{{"esc", keyEsc}, {"ctrl-c", keyCtrlC}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, nil)
			session := newSession()
			tm := newTerm(t, s, session, nil)
			ch := s.ask(session, "call_decline", singleArgs)
			tm.waitScreen("esc or ctrl+c: decline")
			tm.press(tc.key)
			r := s.result(ch)
			if r.Outcome != askuser.Declined || r.Content != `{"error": "User declined to answer"}` {
				t.Fatalf("outcome %v, content %s; want a decline", r.Outcome, r.Content)
			}
			tm.waitHistory("→ declined")
			tm.waitHistory("Declined.")
		})
	}
}

var countdown = regexp.MustCompile(`(\d+):(\d\d) left`)

func TestCountdown(t *testing.T) {
	s := newServer(t, &askuser.Options{Timeout: 2 * time.Minute})
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.ask(session, "call_countdown", singleArgs)

	scr := tm.waitScreen("The agent asks you a question · ", " left")
	first := secondsLeft(t, scr)
	if first > 120 || first < 60 {
		t.Fatalf("countdown shows %d seconds of a 2-minute timeout:\n%s", first, scr)
	}
	// It counts down while the form is open.
	eventually(t, "the countdown to go down", func() bool {
		m := countdown.FindStringSubmatch(tm.screen())
		return m != nil && secondsLeft(t, m[0]) < first
	})
	tm.press(keyEnter)
	answers(t, s.result(ch))
}

func secondsLeft(t *testing.T, screen string) int {
	t.Helper()
	m := countdown.FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("no countdown on the screen:\n%s", screen)
	}
	min, _ := strconv.Atoi(m[1])
	sec, _ := strconv.Atoi(m[2])
	return min*60 + sec
}

func TestSeveralQuestionsInOneSet(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.ask(session, "call_two", twoArgs)

	tm.waitScreen("The agent asks you 2 questions", "[Database] Which database?")
	tm.press(keyDown, keyEnter)
	tm.waitScreen("[Extras] Which extras?", "Metrics — Prometheus", "Tracing — OpenTelemetry")
	tm.press(keyDown, keySpace, keyEnter)
	got := answers(t, s.result(ch))
	if len(got) != 2 || got[0].SelectedLabels[0] != "SQLite" || strings.Join(got[1].SelectedLabels, "|") != "Tracing" {
		t.Fatalf("answers %+v, want SQLite and Tracing", got)
	}
	tm.waitHistory("→ SQLite")
	tm.waitHistory("→ Tracing")
}

// TestInvalidAnswerShown: the host refuses an answer the terminal could not know was
// wrong (its Other text is longer than the host takes); the form opens again with the
// host's problem and the person's choices, and the person fixes it.
func TestInvalidAnswerShown(t *testing.T) {
	s := newServer(t, &askuser.Options{MaxCustomInput: 10})
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.ask(session, "call_invalid", singleArgs)

	tm.waitScreen("Other: type your own answer")
	tm.press(keyDown, keyDown, keyEnter)
	tm.waitScreen("Type your own answer")
	tm.typeText("far too long for this host")
	tm.press(keyEnter)

	tm.waitScreen("The host refused the answer; fix this and send again:", "customInput", "10")
	tm.waitScreen("> Other: type your own answer") // the choice made is kept
	tm.press(keyEnter)
	tm.waitScreen("Type your own answer", "> far too long for this host") // the text typed is kept
	tm.press("\x15")                                                      // Ctrl-U: clear the line
	tm.typeText("Svelte")
	tm.press(keyEnter)

	got := answers(t, s.result(ch))
	if got[0].CustomInput == nil || *got[0].CustomInput != "Svelte" {
		t.Fatalf("answer %+v, want the corrected custom input", got[0])
	}
	tm.waitHistory("Answered.")
}

// TestEndedElsewhere: the form closes, with a note, whenever its question ends
// without this terminal: another device answers or declines, it times out, the
// session is cancelled.
func TestEndedElsewhere(t *testing.T) {
	s := newServer(t, &askuser.Options{Timeout: time.Hour})
	session := newSession()
	tm := newTerm(t, s, session, nil)
	other := newTerm(t, s, session, nil) // a second terminal of the same person

	ch := s.ask(session, "call_elsewhere", singleArgs)
	tm.waitScreen("Which framework should we use?")
	other.waitScreen("Which framework should we use?")
	other.press(keyDown, keyEnter)
	if got := answers(t, s.result(ch)); got[0].SelectedLabels[0] != "React" {
		t.Fatalf("answers %+v, want the other device's React", got)
	}
	tm.waitScreen("Answered on another device.")
	tm.waitGone("enter submit")
	other.waitHistory("Answered.")

	ch = s.ask(session, "call_declined_elsewhere", singleArgs)
	tm.waitScreen("enter submit")
	other.waitScreen("enter submit")
	other.press(keyEsc)
	s.result(ch)
	tm.waitScreen("Declined on another device.")

	ch = s.ask(session, "call_cancelled", singleArgs)
	tm.waitScreen("enter submit")
	s.waitPending(session, 1)
	s.d.CancelSession(wire.ParseSessionID(session))
	if r := s.result(ch); r.Outcome != askuser.Cancelled {
		t.Fatalf("outcome %v, want cancelled", r.Outcome)
	}
	tm.waitScreen("Cancelled.")
	tm.waitGone("enter submit")
}

func TestTimedOut(t *testing.T) {
	s := newServer(t, &askuser.Options{Timeout: 2 * time.Second})
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.ask(session, "call_timeout", singleArgs)
	tm.waitScreen("enter submit")
	if r := s.result(ch); r.Outcome != askuser.TimedOut {
		t.Fatalf("outcome %v, want timeout", r.Outcome)
	}
	tm.waitScreen("Timed out.")
	tm.waitGone("enter submit")
}

// TestQueue: question sets asked while one is shown wait their turn, oldest first,
// and one that ends elsewhere while waiting is dropped.
func TestQueue(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, nil)

	first := s.ask(session, "call_first", singleArgs)
	tm.waitScreen("Which framework should we use?")
	second := s.ask(session, "call_second", multiArgs)
	third := s.ask(session, "call_third", twoArgs)
	tm.waitScreen("2 more question sets waiting")

	// The third is answered on another device while it waits here.
	s.waitPending(session, 3)
	other, err := tui.Dial(t.Context(), s.wsURL(session), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ev, _ := wire.NewEvent(wire.EventResult, wire.ParseSessionID(session), wire.ResultData{RequestID: "call_third", Declined: true})
	if err := other.Send(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	if r := s.result(third); r.Outcome != askuser.Declined {
		t.Fatalf("third: outcome %v, want declined", r.Outcome)
	}
	tm.waitScreen("1 more question set waiting")

	tm.press(keyEnter)
	answers(t, s.result(first))
	tm.waitScreen("Which features should we include?")
	tm.press(keySpace, keyEnter)
	answers(t, s.result(second))
	tm.waitHistory("→ Dark mode")
	if strings.Contains(tm.history(), "Which database?") {
		t.Errorf("the set answered elsewhere was shown:\n%s", tm.history())
	}
}

// TestHostGoesAway: when the host shuts down, the form closes and Run returns the
// connection's error instead of waiting forever.
func TestHostGoesAway(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.ask(session, "call_shutdown", singleArgs)
	tm.waitScreen("enter submit")
	s.d.Close()
	if r := s.result(ch); r.Outcome != askuser.Shutdown {
		t.Fatalf("outcome %v, want shutdown", r.Outcome)
	}
	tm.waitScreen("Ended: the host is shutting down.")
	_ = s.hub.Close()
	if err := tm.runEnded(); err == nil || errors.Is(err, tui.ErrInputEnded) {
		t.Fatalf("Run returned %v, want the connection's error", err)
	}
}

// TestOnEndAndStopping: Options.OnEnd hears of every set the terminal is done with, in
// the order they ended, shown or queued; a form whose Run is stopped closes with a note.
func TestOnEndAndStopping(t *testing.T) {
	s := newServer(t, &askuser.Options{Timeout: time.Hour})
	session := newSession()
	ended := newEndings()
	tm := newTerm(t, s, session, ended.options())

	first := s.ask(session, "call_answered", singleArgs)
	tm.waitScreen("enter submit")
	queued := s.ask(session, "call_queued", multiArgs)
	tm.waitScreen("1 more question set waiting")
	s.waitPending(session, 2)
	s.d.CancelSession(wire.ParseSessionID(session)) // ends both: the queued one leaves unseen
	s.result(first)
	s.result(queued)
	tm.waitScreen("Cancelled.")
	got := []string{<-ended, <-ended}
	slices.Sort(got)
	if want := []string{"call_answered", "call_queued"}; !slices.Equal(got, want) {
		t.Fatalf("OnEnd of %q, want %q", got, want)
	}

	ch := s.ask(session, "call_here", singleArgs)
	tm.waitScreen("enter submit")
	tm.press(keyEnter)
	answers(t, s.result(ch))
	ended.next(t, "call_here")
	tm.waitHistory("Answered.")

	stopped := s.ask(session, "call_stopped", singleArgs)
	tm.waitScreen("enter submit")
	tm.stop()
	tm.waitHistory("Stopped: this terminal no longer answers this question.")
	if err := tm.runEnded(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want its context's error", err)
	}
	s.d.CancelSession(wire.ParseSessionID(session))
	s.result(stopped)
}

// oscSequence is an operating system command: ESC ], up to BEL or ST.
var oscSequence = regexp.MustCompile("\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)")

// TestBellAndTitle: a request that arrives rings the bell and sets the terminal's title
// (the old one saved first, and given back once nothing waits); Quiet does neither.
func TestBellAndTitle(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.ask(session, "call_bell", singleArgs)
	tm.waitScreen("enter submit")
	raw := tm.rawOutput()
	save := strings.Index(raw, "\x1b[22;0t")
	title := strings.Index(raw, "\x1b]0;Waiting for you: Which framework should we use?\x07\a")
	if save < 0 || title < save {
		t.Fatalf("no saved title, then the title and the bell, in %q", raw)
	}
	tm.press(keyEnter)
	answers(t, s.result(ch))
	eventually(t, "the title given back", func() bool { return strings.Contains(tm.rawOutput(), "\x1b[23;0t") })

	session2 := newSession()
	quiet := newTerm(t, s, session2, &tui.Options{Quiet: true})
	ch = s.ask(session2, "call_quiet", singleArgs)
	quiet.waitScreen("enter submit")
	// A bell is a BEL outside every OSC sequence: the renderer's own queries (the
	// background colour's, "\x1b]11;?\a") end with one on some terminals.
	if raw := quiet.rawOutput(); strings.Contains(oscSequence.ReplaceAllString(raw, ""), "\a") || strings.Contains(raw, "Waiting for you") {
		t.Fatalf("Quiet rang or titled: %q", raw)
	}
	s.d.CancelSession(wire.ParseSessionID(session2))
	s.result(ch)
}
