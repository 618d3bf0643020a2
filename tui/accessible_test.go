package tui_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/tui"
)

var accessible = &tui.Options{Accessible: true}

// TestAccessible: plain numbered lines, answers typed a line at a time, and not one
// escape sequence written: nothing is redrawn, so a screen reader reads it all once.
func TestAccessible(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, accessible)

	ch := s.ask(session, "call_a_single", singleArgs)
	tm.waitScreen("The agent asks you a question. Time left: 5 minutes. Type d to decline.",
		"Question 1 of 1. Framework: Which framework should we use?",
		"Choose one: type its number, or type your own answer.",
		"1. Vue 3 (Recommended): Matches the existing stack",
		"2. React: Larger ecosystem",
		"3. Other: type your own answer",
		"Answer 1:")
	tm.typeText("7\r")
	tm.waitScreen("There is no choice 7: type a number from 1 to 3.")
	tm.typeText("2\r")
	if got := answers(t, s.result(ch)); got[0].SelectedLabels[0] != "React" || got[0].CustomInput != nil {
		t.Fatalf("answers %+v, want React", got)
	}
	tm.waitHistory("Answered.")

	ch = s.ask(session, "call_a_multi", multiArgs)
	tm.waitScreen("Choose any: type their numbers separated by commas, or type your own answer.", "4. Other")
	tm.typeText("1, 3\r")
	if got := answers(t, s.result(ch)); strings.Join(got[0].SelectedLabels, "|") != "Dark mode|Export to PDF" {
		t.Fatalf("answers %+v, want Dark mode and Export to PDF", got)
	}

	// Text is the Other answer; so is the Other number, which asks for the text.
	ch = s.ask(session, "call_a_text", twoArgs)
	tm.waitScreen("Question 1 of 2. Database: Which database?")
	tm.typeText("DuckDB\r")
	tm.waitScreen("Question 2 of 2. Extras: Which extras?")
	tm.typeText("2,3\r")
	tm.waitScreen("Your own answer 2:")
	tm.typeText("   \r")
	tm.waitScreen("Type your answer, or choose an option.")
	tm.typeText("Profiling\r")
	got := answers(t, s.result(ch))
	if len(got[0].SelectedLabels) != 0 || *got[0].CustomInput != "DuckDB" ||
		strings.Join(got[1].SelectedLabels, "|") != "Tracing" || *got[1].CustomInput != "Profiling" {
		t.Fatalf("answers %+v, want DuckDB; Tracing and Profiling", got)
	}
	tm.waitHistory("Answered.")

	tm.noEscapes()
}

func TestAccessibleDecline(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, accessible)
	ch := s.ask(session, "call_a_decline", singleArgs)
	tm.waitScreen("Answer 1:")
	tm.typeText("d\r")
	if r := s.result(ch); r.Outcome != askuser.Declined {
		t.Fatalf("outcome %v, want declined", r.Outcome)
	}
	tm.waitScreen("Declined.")
}

func TestAccessiblePreviews(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, accessible)
	ch := s.ask(session, "call_a_preview", previewArgs)
	scr := tm.waitScreen("1. Sidebar: Navigation on the left", "Preview of 1:", "Sidebar layout", "Nav on the left",
		"| nav  | content  |", "Preview of 2:", "Top bar layout", "Fits few sections", "Answer 1:")
	if strings.Contains(scr, "**Nav**") || strings.Contains(scr, "```") || strings.Contains(scr, "#") {
		t.Errorf("the previews are not rendered:\n%s", scr)
	}
	tm.typeText("1\r")
	answers(t, s.result(ch))
}

// TestAccessibleEndedElsewhere: a prompt is abandoned when its question is answered on
// another device, and what was typed for it is not taken as the answer to the next.
func TestAccessibleEndedElsewhere(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, accessible)
	other := newTerm(t, s, session, nil)

	ch := s.ask(session, "call_a_elsewhere", singleArgs)
	tm.waitScreen("Answer 1:")
	other.waitScreen("enter submit")
	tm.typeText("1") // typing, not yet sent
	tm.waitScreen("Answer 1: 1")
	other.press(keyEnter)
	answers(t, s.result(ch))
	tm.waitScreen("Answered on another device.")

	ch = s.ask(session, "call_a_next", singleArgs)
	eventually(t, "the next prompt", func() bool { return strings.Count(tm.history(), "Answer 1:") == 2 })
	other.waitScreen("enter submit")
	tm.typeText("2\r")
	if got := answers(t, s.result(ch)); got[0].SelectedLabels[0] != "React" {
		t.Fatalf("answers %+v, want React: the 1 typed for the ended question must not count", got)
	}
	other.waitScreen("Answered on another device.")
}

func TestAccessibleInvalidAnswer(t *testing.T) {
	s := newServer(t, &askuser.Options{MaxCustomInput: 10})
	session := newSession()
	tm := newTerm(t, s, session, accessible)
	ch := s.ask(session, "call_a_invalid", singleArgs)
	tm.waitScreen("Answer 1:")
	tm.typeText("far too long for this host\r")
	tm.waitScreen("The host refused the answer: answers[0].customInput")
	eventually(t, "the question asked again", func() bool { return strings.Count(tm.history(), "Answer 1:") == 2 })
	tm.typeText("1\r")
	if got := answers(t, s.result(ch)); got[0].SelectedLabels[0] != "Vue 3 (Recommended)" {
		t.Fatalf("answers %+v, want Vue 3", got)
	}
}

// TestAccessibleTimeLeft: the time left is said when the question is shown, and again
// at ten seconds, without redrawing anything.
func TestAccessibleTimeLeft(t *testing.T) {
	s := newServer(t, &askuser.Options{Timeout: 13 * time.Second})
	session := newSession()
	tm := newTerm(t, s, session, accessible)
	ch := s.ask(session, "call_a_time", singleArgs)
	tm.waitScreen("Time left: 1")
	tm.waitScreen("(10 seconds left to answer.)")
	tm.typeText("1\r")
	answers(t, s.result(ch))
}

// TestAccessibleEndOfInput: end of input (Ctrl-D) declines the question shown, and Run
// ends: nothing more can be answered here.
func TestAccessibleEndOfInput(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, accessible)
	ch := s.ask(session, "call_a_eof", singleArgs)
	tm.waitScreen("Answer 1:")
	tm.press("\x04")
	if r := s.result(ch); r.Outcome != askuser.Declined {
		t.Fatalf("outcome %v, want declined", r.Outcome)
	}
	if err := tm.runEnded(); !errors.Is(err, tui.ErrInputEnded) {
		t.Fatalf("Run returned %v, want ErrInputEnded", err)
	}
	tm.waitHistory("End of input: declining.")
}
