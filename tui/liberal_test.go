package tui_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creack/pty"
)

// liberalArgs is a call accepted beyond the advertised schema, as real models send it:
// a header of 28 characters (advertised: 12), six options, one without a description.
const liberalArgs = `{"questions":[{"question":"Can you share more detail on the operational context?","header":"Operational Context Details?","multiSelect":false,"options":[
	{"label":"All details available","description":""},
	{"label":"Need more info","description":"Ask me for the missing details"},
	{"label":"SMTP only","description":"Only the mail server is known"},
	{"label":"Rate limits","description":"Only the limits are known"},
	{"label":"Database","description":"Only the database is known"},
	{"label":"Everything else","description":"The rest of the context"}]}]}`

// resize makes the terminal cols × rows, before a form is shown.
func (tm *term) resize(cols, rows int) {
	tm.t.Helper()
	if err := pty.Setsize(tm.ptm, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)}); err != nil {
		tm.t.Fatal(err)
	}
	tm.mu.Lock()
	tm.emu.Resize(cols, rows)
	tm.mu.Unlock()
}

// TestLongHeaderAndSixOptions: in a terminal of 100 columns and in one of 60, the form
// shows the header whole, the question (wrapped when it must be), all six options (the
// one without a description by its label alone), Other and the help below them, none
// cut off (at 60 columns the title takes two lines, which the form's height once left
// out, cutting the last options); the sixth option is chosen with the arrows, and the
// answer goes. In the accessible mode, the options are numbered 1 to 6 and Other 7.
func TestLongHeaderAndSixOptions(t *testing.T) {
	options := []string{"> All details available", "Need more info — Ask me for the missing details", "SMTP only — Only the mail server is known",
		"Rate limits — Only the limits are known", "Database — Only the database is known", "Everything else — The rest of the context",
		"Other: type your own answer"}
	for _, cols := range []int{100, 60} {
		t.Run(strconv.Itoa(cols), func(t *testing.T) {
			s := newServer(t, nil)
			session := newSession()
			tm := newTerm(t, s, session, nil)
			tm.resize(cols, 30)
			ch := s.ask(session, "call_liberal", liberalArgs)
			scr := tm.waitScreen(append([]string{"[Operational Context Details?] Can you share more detail on"}, options...)...)
			lines := strings.Split(scr, "\n")
			at := func(text string) int {
				return slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, text) })
			}
			// In order, one line each, below the question.
			for k := 1; k < len(options); k++ {
				if at(options[k]) != at(options[k-1])+1 {
					t.Fatalf("%q is not on the line after %q:\n%s", options[k], options[k-1], scr)
				}
			}
			if help := at("↑ up • ↓ down • enter submit"); help <= at("Other:") || help > at("Other:")+2 {
				t.Fatalf("the help is not just below the options:\n%s", scr)
			}
			if !strings.Contains(strings.Join(lines[:at(options[0])], " "), "the operational context?") {
				t.Fatalf("the question is not whole above the options:\n%s", scr)
			}
			for _, l := range lines {
				if n := utf8.RuneCountInString(l); n > cols {
					t.Errorf("a line of %d characters in %d columns: %q", n, cols, l)
				}
			}
			tm.press(keyDown, keyDown, keyDown, keyDown, keyDown)
			tm.waitScreen("> Everything else")
			tm.press(keyEnter)
			if got := answers(t, s.result(ch)); len(got) != 1 || strings.Join(got[0].SelectedLabels, "|") != "Everything else" {
				t.Fatalf("answers %+v, want Everything else", got)
			}
			tm.waitHistory("[Operational Context Details?] Can you share more detail on")
			tm.waitHistory("→ Everything else")
		})
	}

	t.Run("accessible", func(t *testing.T) {
		s := newServer(t, nil)
		session := newSession()
		tm := newTerm(t, s, session, accessible)
		ch := s.ask(session, "call_liberal", liberalArgs)
		tm.waitScreen("Question 1 of 1. Operational Context Details?: Can you share more detail on the operational context?",
			"  1. All details available\n", "  2. Need more info: Ask me for the missing details",
			"  6. Everything else: The rest of the context", "  7. Other: type your own answer")
		tm.typeText("6\r")
		if got := answers(t, s.result(ch)); strings.Join(got[0].SelectedLabels, "|") != "Everything else" {
			t.Fatalf("answers %+v, want Everything else", got)
		}
		tm.noEscapes()
	})
}

// unityArgs is a call in the shape of Unity's AskUser: "questions" a JSON-encoded
// string, no header, no multiSelect; a free-text question ("type": "text") with a
// placeholder, then a choice.
const unityArgs = `{"questions":"[{\"question\":\"What art style should the blocks have?\",\"type\":\"text\",\"placeholder\":\"Flat 2D fantasy icons\"},{\"question\":\"Layer the icons at run time?\",\"type\":\"choice\",\"options\":[{\"label\":\"At run time\",\"description\":\"One base, seven icons\"},{\"label\":\"Baked\",\"description\":\"Seven finished images\"}]}]"}`

// TestFreeTextAndNoHeader: the form shows a question without options as its text box
// alone, with the model's placeholder, and a question without a header without a chip;
// in the accessible mode, the free-text question takes the line typed, a number too.
func TestFreeTextAndNoHeader(t *testing.T) {
	t.Run("form", func(t *testing.T) {
		s := newServer(t, nil)
		session := newSession()
		tm := newTerm(t, s, session, nil)
		ch := s.ask(session, "call_unity", unityArgs)
		scr := tm.waitScreen("What art style should the blocks have?", "Type your answer.", "Flat 2D fantasy icons")
		if strings.Contains(scr, "[]") || strings.Contains(scr, "Other") {
			t.Fatalf("a chip without a header, or an Other choice without options:\n%s", scr)
		}
		tm.typeText("Pixel art\r")
		tm.waitScreen("Layer the icons at run time?", "> At run time", "Other: type your own answer")
		tm.press(keyEnter)
		got := answers(t, s.result(ch))
		if len(got) != 2 || got[0].CustomInput == nil || *got[0].CustomInput != "Pixel art" || len(got[0].SelectedLabels) != 0 ||
			strings.Join(got[1].SelectedLabels, "|") != "At run time" || got[1].CustomInput != nil {
			t.Fatalf("answers %+v", got)
		}
		tm.waitHistory("What art style should the blocks have?")
	})
	t.Run("accessible", func(t *testing.T) {
		s := newServer(t, nil)
		session := newSession()
		tm := newTerm(t, s, session, accessible)
		ch := s.ask(session, "call_unity", unityArgs)
		tm.waitScreen("Question 1 of 2. What art style should the blocks have?\n", "Type your answer.\n", "(for example: Flat 2D fantasy icons)")
		tm.typeText("42\r")
		tm.waitScreen("Question 2 of 2. Layer the icons at run time?\n", "  1. At run time: One base, seven icons", "  3. Other: type your own answer")
		tm.typeText("2\r")
		got := answers(t, s.result(ch))
		if len(got) != 2 || got[0].CustomInput == nil || *got[0].CustomInput != "42" || strings.Join(got[1].SelectedLabels, "|") != "Baked" {
			t.Fatalf("answers %+v", got)
		}
		tm.noEscapes()
	})
}
