package tui

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// set is one pending question set: what was asked and what the person has chosen so
// far. The chosen values outlive a form, so that a refused answer reopens with them.
// Only the device loop and the one view showing the set use it, one after the other.
type set struct {
	session askuser.SessionID // echoed on the reply
	ask     wire.AskData
	qs      []*question
	// problems are why the host refused the last reply; the reopened view shows them.
	problems []string
	// origin, when set, names its session in the view; the device loop sets it before a
	// view shows the set.
	origin string
}

// question is one question of a set and the person's choice so far.
type question struct {
	askuser.Question
	// single is the chosen option of a single-select question; other() means Other.
	single int
	// multi are the chosen options of a multi-select question; other() means Other.
	multi []int
	// text is the Other text, sent trimmed.
	text string
	// moving is set only while the form handles the key that moves on from one of the
	// question's fields (enter or tab), so that the choice and the text are checked then
	// and only then. huh also checks a field as it is shown and as it is left; an error
	// there, on a field the person is leaving, stops the form going back (shift+tab)
	// and leaves no field to type in.
	moving bool
}

func newSet(session askuser.SessionID, ask wire.AskData) *set {
	s := &set{session: session, ask: ask}
	for _, q := range ask.Questions {
		nq := &question{Question: q}
		if q.MultiSelect && len(q.Options) == 0 {
			nq.multi = []int{nq.other()} // single is other() already
		}
		s.qs = append(s.qs, nq)
	}
	return s
}

// freeText reports whether the question has no options: it is answered in free text,
// Other alone.
func (q *question) freeText() bool { return len(q.Options) == 0 }

// other is the index that stands for the free-text "Other" choice.
func (q *question) other() int { return len(q.Options) }

// wantsText reports whether the person chose Other, so that the Other text is needed.
func (q *question) wantsText() bool {
	if q.MultiSelect {
		for _, i := range q.multi {
			if i == q.other() {
				return true
			}
		}
		return false
	}
	return q.single == q.other()
}

// customText is the Other text to send, trimmed, and whether there is one: when Other
// is chosen, except that in a multi-select question with options chosen a blank text
// is no Other text (the form's box says so; the accessible mode asks for text).
func (q *question) customText() (string, bool) {
	if !q.wantsText() {
		return "", false
	}
	t := strings.TrimSpace(q.text)
	if t == "" && q.chosenOptions() > 0 {
		return "", false
	}
	return t, true
}

// chosenOptions counts the options of a multi-select question chosen, Other aside.
func (q *question) chosenOptions() int {
	n := 0
	for _, i := range q.multi {
		if i >= 0 && i < len(q.Options) {
			n++
		}
	}
	return n
}

// hasPreviews reports whether the question shows previews: a single-select question
// with a preview on at least one option, as in the panel.
func (q *question) hasPreviews() bool {
	if q.MultiSelect {
		return false
	}
	for _, o := range q.Options {
		if o.Preview != "" {
			return true
		}
	}
	return false
}

// answer is the question's answer as the protocol carries it: one label or the Other
// text for a single-select question, labels and perhaps the Other text for a
// multi-select one.
func (q *question) answer() askuser.Answer {
	a := askuser.Answer{Question: q.Question.Question, SelectedLabels: []string{}}
	if t, ok := q.customText(); ok {
		a.CustomInput = &t
	}
	if q.MultiSelect {
		for _, i := range q.multi {
			if i >= 0 && i < len(q.Options) {
				a.SelectedLabels = append(a.SelectedLabels, q.Options[i].Label)
			}
		}
	} else if q.single >= 0 && q.single < len(q.Options) {
		a.SelectedLabels = append(a.SelectedLabels, q.Options[q.single].Label)
	}
	return a
}

// Errors of a choice that the host would refuse, checked before sending.
var (
	errNoChoice  = errors.New("choose at least one option")
	errBlankText = errors.New("type your answer, or choose an option")
)

// checkChoice is the host's rule for a multi-select choice: something chosen.
func checkChoice(chosen []int) error {
	if len(chosen) == 0 {
		return errNoChoice
	}
	return nil
}

// checkText is the host's rule for Other text: not blank, and not longer than max
// characters.
func checkText(s string, max int) error {
	t := strings.TrimSpace(s)
	if t == "" {
		return errBlankText
	}
	if n := utf8.RuneCountInString(t); n > max {
		return fmt.Errorf("at most %d characters, got %d", max, n)
	}
	return nil
}

// reply is the result the set's answers make.
func (s *set) reply() wire.ResultData {
	r := wire.ResultData{RequestID: s.ask.RequestID}
	for _, q := range s.qs {
		r.Answers = append(r.Answers, q.answer())
	}
	return r
}

// clean makes model-written text safe to print on a terminal. It drops control
// characters (escape sequences could move the cursor, retitle the window or write the
// clipboard) and every formatting character, which takes no room on screen: the
// bidirectional controls, which reorder text, and the zero-width ones (U+200B, U+200D,
// U+2060, U+FEFF, tag characters, ...), which could hide inside a word. Newlines and
// tabs, and the line and paragraph separators as newlines, are kept when multiline
// (carriage returns dropped); otherwise each is a space.
func clean(s string, multiline bool) string {
	ok := true
	for _, r := range s {
		if unsafeRune(r, multiline) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '\n', '\t', '\r', '\u2028', '\u2029':
			switch {
			case !multiline:
				return ' '
			case r == '\r':
				return -1
			case r == '\t':
				return r
			}
			return '\n'
		}
		if unsafeRune(r, multiline) {
			return -1
		}
		return r
	}, s)
}

// unsafeRune reports whether clean takes r out of the text.
func unsafeRune(r rune, multiline bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !multiline
	case r < utf8.RuneSelf:
		return r < ' ' || r == 0x7f
	case unicode.IsControl(r), r == utf8.RuneError, r == '\u2028', r == '\u2029':
		return true
	}
	return unicode.Is(unicode.Cf, r) // bidirectional controls, zero-width characters, ...
}

// endNote says how a question set ended, given the resolution's outcome and what this
// device had sent for it ("" for nothing, "answer" or "decline").
func endNote(outcome, sent string) string {
	switch outcome {
	case "answered":
		if sent == "answer" {
			return "Answered."
		}
		return "Answered on another device."
	case "declined":
		if sent == "decline" {
			return "Declined."
		}
		return "Declined on another device."
	}
	return unansweredNote(outcome, "question")
}

// unansweredNote says how a request ended that no person answered or decided (timed
// out, cancelled, ...), or that ended in a way this version does not know; noun names
// the request.
func unansweredNote(outcome, noun string) string {
	switch outcome {
	case "timeout", "timed_out": // a question's, an approval's
		return "Timed out."
	case "cancelled":
		return "Cancelled."
	case "disconnected":
		return "Ended: every device of the session disconnected."
	case "shutdown":
		return "Ended: the host is shutting down."
	case "undelivered":
		return "Ended: the " + noun + " could not be delivered."
	}
	return "Ended (" + clean(outcome, false) + ")."
}

// A set is a request of the device's queue.

func (s *set) requestID() string { return s.ask.RequestID }

func (s *set) title() string { return clean(s.ask.Questions[0].Question, false) }

func (s *set) resolvedType() string { return wire.EventResolved }

func (s *set) noun() string { return "question" }

func (s *set) replyEvent(res viewResult) (wire.Event, error) {
	return wire.NewEvent(wire.EventResult, s.session, *res.reply)
}

func (s *set) endNote(r resolution, sent viewResult) string {
	what := ""
	if sent.reply != nil {
		what = "answer"
		if sent.reply.Declined {
			what = "decline"
		}
	}
	return endNote(r.Outcome, what)
}

func (s *set) key() reqKey { return reqKey{s.session, s.ask.RequestID} }

func (s *set) entry() wire.InboxEntry {
	q := s.ask.Questions[0]
	what := q.Header
	if strings.TrimSpace(clean(what, false)) == "" {
		what = q.Question
	}
	return wire.InboxEntry{SessionID: s.session, SessionTitle: s.ask.SessionTitle, RequestID: s.ask.RequestID,
		Kind: wire.InboxQuestion, What: what, AskedAt: s.ask.AskedAt, ExpiresAt: s.ask.ExpiresAt}
}

func (s *set) setOrigin(label string) { s.origin = label }

func (s *set) refused(problems []string) string {
	s.problems = problems
	return "answer"
}
