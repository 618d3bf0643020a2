package tui_test

import (
	"testing"
)

func TestSingleSelect(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.ask(session, "call_single", singleArgs)
	scr := tm.waitScreen("Which framework should we use?", "Vue 3 (Recommended)")
	t.Logf("screen:\n%s", scr)
	tm.press(keyDown)
	tm.press(keyEnter)
	r := s.result(ch)
	t.Logf("result %s", r.Content)
	tm.waitHistory("Answered.")
	t.Logf("history:\n%s", tm.history())
}
