package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
)

// frame is what the model of every form has, a question set's or an approval's: the
// countdown, the count of what waits, the terminal's size and background, and how the
// form ended. Bubble Tea calls the model from the program's goroutine only; stop is
// closed by the view after the program has ended.
type frame struct {
	expires time.Time // when the request times out; zero for no countdown
	waiting waiting   // what is queued behind this request
	stop    chan struct{}

	width, height int
	sized         bool // the terminal's size is known; nothing is drawn before
	dark          bool
	now           time.Time

	// How it ended: with the person's reply (kept by the model), or a note (ended
	// elsewhere). closed is set with either, and the program quits.
	closed     bool
	note       string
	inputEnded bool // no more keys will come: Run ends
	// inbox says the person asked for the inbox list (ctrl+o), leaving the request for
	// now; aside that the form closed for another view and leaves no record behind.
	inbox, aside bool
	// from names the request's session in the header, when the terminal holds requests
	// of several sessions.
	from string
}

func newFrame(expires time.Time, w waiting) frame {
	return frame{expires: expires, waiting: w, stop: make(chan struct{}), dark: true, now: time.Now(), width: 80, height: 24}
}

// tickMsg drives the countdown.
type tickMsg time.Time

// tick waits a second, or returns nothing once the program has ended, so that no timer
// goroutine outlives the form.
func (f *frame) tick() tea.Cmd {
	stop := f.stop
	return func() tea.Msg {
		t := time.NewTimer(time.Second)
		defer t.Stop()
		select {
		case now := <-t.C:
			return tickMsg(now)
		case <-stop:
			return nil
		}
	}
}

// init is the commands every form starts with.
func (f *frame) init() tea.Cmd { return tea.Batch(f.tick(), tea.RequestBackgroundColor) }

// update takes the messages that every form handles alike, and reports whether msg was
// one of them, so that the model does no more with it. After a tea.WindowSizeMsg the
// model fits its form to the new size.
func (f *frame) update(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case tickMsg:
		f.now = time.Time(msg)
		return f.tick(), true
	case waitingMsg:
		f.waiting = waiting(msg)
		return nil, true
	case endMsg:
		f.note = string(msg)
		f.closed = true
		return tea.Quit, true
	case inputEndedMsg:
		f.note = "The terminal's input ended."
		f.inputEnded = true
		f.closed = true
		return tea.Quit, true
	case tea.BackgroundColorMsg:
		f.dark = msg.IsDark()
		return nil, false // the form styles itself by it too
	case tea.WindowSizeMsg:
		f.width, f.height = msg.Width, msg.Height
		if f.width <= 0 || f.height <= 0 { // not a terminal: assume the classic size
			f.width, f.height = 80, 24
		}
		f.sized = true
		return nil, true
	}
	return nil, false
}

// step handles msg once the model has taken its own keys: the messages of the frame,
// fitting the form to a new size with resize, then the huh form's. When the person has
// completed the form, completed keeps the reply and the form closes.
func (f *frame) step(msg tea.Msg, form **huh.Form, resize, completed func()) tea.Cmd {
	if cmd, done := f.update(msg); done {
		if _, ok := msg.(tea.WindowSizeMsg); ok {
			resize()
		}
		return cmd
	}
	next, cmd := (*form).Update(msg)
	if ff, ok := next.(*huh.Form); ok {
		*form = ff
	}
	if (*form).State == huh.StateCompleted {
		completed()
		f.closed = true
		return tea.Quit
	}
	return cmd
}

// openInbox takes ctrl+o, which closes the form, its choices kept, for the inbox list.
func (f *frame) openInbox(msg tea.Msg) bool {
	if k, ok := msg.(tea.KeyPressMsg); !ok || k.String() != "ctrl+o" {
		return false
	}
	f.inbox, f.aside, f.closed = true, true, true
	return true
}

// header is a form's first line: what is asked, then the session it comes from, the
// time left and what waits.
func (f *frame) header(what string) string {
	if f.from != "" {
		what += " · from " + f.from
	}
	if !f.expires.IsZero() {
		what += " · " + timeLeft(f.expires.Sub(f.now))
	}
	if w := f.waiting.String(); w != "" {
		what += " · " + w
	}
	return what
}

// headerView is the header, bold, wrapped at the terminal's width.
func (f *frame) headerView(what string) string {
	lines := wrapLines(f.header(what), f.width)
	for i, l := range lines {
		lines[i] = headerStyle.Render(l)
	}
	return strings.Join(lines, "\n")
}

// timeLeft formats a countdown: "4:59 left", "time is up".
func timeLeft(d time.Duration) string {
	if d <= 0 {
		return "time is up"
	}
	s := int((d + time.Second - 1) / time.Second) // round up: 0:00 only when it is up
	return fmt.Sprintf("%d:%02d left", s/60, s%60)
}

// waiting counts the requests queued behind the one shown, by kind.
type waiting struct{ sets, approvals int }

// String says what waits, for a form's header: "1 more question set waiting", "2 more
// approvals waiting", "3 more waiting: 1 question set and 2 approvals"; "" for nothing.
func (w waiting) String() string {
	n := w.sets + w.approvals
	switch {
	case n == 0:
		return ""
	case w.approvals == 0:
		return fmt.Sprintf("%d more %s waiting", n, plural(n, "question set"))
	case w.sets == 0:
		return fmt.Sprintf("%d more %s waiting", n, plural(n, "approval"))
	}
	return fmt.Sprintf("%d more waiting: %d %s and %d %s", n, w.sets, plural(w.sets, "question set"), w.approvals, plural(w.approvals, "approval"))
}

// plural is noun for one, nouns for any other number.
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
