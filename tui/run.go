package tui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/askuser-go/askuser"
)

// DefaultMaxCustomInput is the default bound, in characters, of an Other text: the
// host's own default.
const DefaultMaxCustomInput = 4000

// Options configure [Run]. A nil *Options means every default; Run copies it.
type Options struct {
	// Input is where the person's keystrokes come from. Default: os.Stdin, or the
	// controlling terminal when stdin is not one. For the forms Input should be a
	// terminal (an *os.File), which Run puts in raw mode while a form is shown and
	// restores after. Run reads Input from the first question on until it returns, and
	// drops what is typed between questions.
	Input io.Reader
	// Output is where the forms are drawn. Default: os.Stdout.
	Output io.Writer
	// Environ is the terminal's environment (TERM, COLORTERM, NO_COLOR, ...), which
	// decides the colors and capabilities used. Default: os.Environ(). Set it when the
	// terminal is not the process's own, such as an SSH session.
	Environ []string
	// Accessible shows each question as plain numbered lines and reads answers a line
	// at a time, with no redraws and no raw mode, for screen readers and dumb
	// terminals. Questions still end when another device answers; see docs/TERMINAL.md.
	Accessible bool
	// MaxCustomInput bounds the Other text, in characters. Default
	// [DefaultMaxCustomInput], the host's default; set it to the host's
	// askuser.Options.MaxCustomInput when that differs.
	MaxCustomInput int
	// OnEnd, when set, is called once for each question set this terminal is done
	// with: its form has closed and its closing note is printed, or, for one that ended
	// while it waited behind another, it has left the queue. A host that prints its own
	// lines on the same terminal waits for it, so that they follow the note. It is
	// called from Run's goroutine and must return quickly.
	OnEnd func(requestID string)
}

// Run makes this terminal a device of a session: it shows each question set the host
// sends on conn, oldest first, as a form (or as plain prompts with
// [Options.Accessible]), and sends the person's answers or decline back on conn. It
// keeps a queue of the pending question sets, and closes the one shown, with a note,
// when it ends elsewhere: answered on another device, timed out, cancelled. When the
// host refuses an answer, the form opens again with the host's problems and the
// choices made.
//
// Run returns when ctx ends (with ctx's error), when conn fails (with its error), or
// when the terminal cannot be used. It cancels the context of a Recv in progress before
// returning, which closes a [WebSocketConn]: a Conn serves one Run. Run starts no
// goroutine that outlives it, except that when Input is not an *os.File terminal or
// pipe, whose reads can be cancelled, a read in progress goes on until Input yields.
//
// Esc or Ctrl-C in a form declines the question set shown; in the accessible mode, the
// person types d.
func Run(ctx context.Context, conn Conn, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Output == nil {
		o.Output = os.Stdout
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.MaxCustomInput <= 0 {
		o.MaxCustomInput = DefaultMaxCustomInput
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d := &device{conn: conn, events: make(chan askuser.Event), failed: make(chan error, 1), onEnd: o.OnEnd}
	received := make(chan struct{})
	go func() {
		defer close(received)
		d.receive(ctx)
	}()
	defer func() { <-received }()
	defer cancel() // before waiting for the receiver

	if o.Accessible {
		if o.Input == nil {
			o.Input = os.Stdin
		}
		d.ui = newLineUI(&o)
	} else {
		d.ui = newFormUI(&o)
	}
	defer d.ui.close()
	return d.loop(ctx)
}

// device is the state of one Run. Only the loop's goroutine touches it, except for
// the channels the receiver writes.
type device struct {
	conn   Conn
	ui     ui
	events chan askuser.Event // from the receiver
	failed chan error         // the receiver's end: conn failed
	// queue holds the pending question sets in the order they came; queue[0] is shown.
	queue []*set
	onEnd func(requestID string) // Options.OnEnd, or nil
}

// ui shows question sets: the forms, or the accessible line prompts.
type ui interface {
	// show starts showing s, with waiting other sets queued behind it, and returns at
	// once. The view ends when the person replies or when it is ended.
	show(ctx context.Context, s *set, waiting int) view
	// say prints one line between views.
	say(text string)
	// close releases what the ui holds; the loop has ended every view first.
	close()
}

// view is one question set being shown.
type view interface {
	// done yields the view's one result once it has ended and left the terminal.
	done() <-chan viewResult
	// setWaiting tells how many other sets now wait behind this one.
	setWaiting(n int)
	// end closes the view with a note: the question ended elsewhere.
	end(note string)
}

// viewResult is how a view ended: with the person's reply, or closed (reply nil), or
// with the error that stopped it (the context's, or the terminal's).
type viewResult struct {
	reply *askuser.ResultData
	err   error
	// then, when set with a reply, ends Run once the host has had the reply: the input
	// ended, so nothing more can be answered here.
	then error
}

// resolution is the data of an ask_user_questions_resolved event, with the outcome kept
// as text: a device treats any outcome, known or not, as the end of the question.
type resolution struct {
	RequestID string `json:"requestId"`
	Outcome   string `json:"outcome"`
}

// receive feeds the loop with the host's events until ctx ends or conn fails.
func (d *device) receive(ctx context.Context) {
	for {
		ev, err := d.conn.Recv(ctx)
		if err != nil {
			d.failed <- err
			return
		}
		select {
		case d.events <- ev:
		case <-ctx.Done():
			return
		}
	}
}

// next waits for the host's next event.
func (d *device) next(ctx context.Context) (askuser.Event, error) {
	select {
	case ev := <-d.events:
		return ev, nil
	case err := <-d.failed:
		return askuser.Event{}, err
	case <-ctx.Done():
		return askuser.Event{}, ctx.Err()
	}
}

// loop shows the queue's head until the queue is empty, then waits for questions.
func (d *device) loop(ctx context.Context) error {
	for {
		if len(d.queue) == 0 {
			ev, err := d.next(ctx)
			if err != nil {
				return err
			}
			d.take(ev, nil)
			continue
		}
		if err := d.serve(ctx, d.queue[0]); err != nil {
			return err
		}
	}
}

// take handles an event that is not about the set s being shown or awaited (s may be
// nil): a new question set joins the queue; a resolution removes its set; an error is
// said. It reports whether the event was about s instead, leaving it to the caller.
func (d *device) take(ev askuser.Event, s *set) (mine bool) {
	switch ev.Type {
	case askuser.EventAsk:
		var a askuser.AskData
		if json.Unmarshal(ev.Data, &a) != nil || a.RequestID == "" || len(a.Questions) == 0 {
			return false
		}
		if d.find(a.RequestID) < 0 { // a device may be sent a pending set again
			d.queue = append(d.queue, newSet(ev.SessionID, a))
		}
	case askuser.EventResolved:
		var r resolution
		if json.Unmarshal(ev.Data, &r) != nil {
			return false
		}
		if s != nil && r.RequestID == s.ask.RequestID {
			return true
		}
		if i := d.find(r.RequestID); i >= 0 {
			d.queue = append(d.queue[:i:i], d.queue[i+1:]...)
			d.ended(r.RequestID)
		}
	case askuser.EventError:
		var e askuser.ErrorData
		if json.Unmarshal(ev.Data, &e) != nil {
			return false
		}
		if s != nil && e.RequestID == s.ask.RequestID {
			return true
		}
		if s == nil { // during a view, an error about something else is not worth a line
			d.ui.say("The host refused a message: " + clean(e.Message, false))
		}
	}
	return false
}

func (d *device) find(requestID string) int {
	for i, s := range d.queue {
		if s.ask.RequestID == requestID {
			return i
		}
	}
	return -1
}

// remove takes s out of the queue.
func (d *device) remove(s *set) {
	if i := d.find(s.ask.RequestID); i >= 0 {
		d.queue = append(d.queue[:i:i], d.queue[i+1:]...)
	}
}

// ended tells the host, through Options.OnEnd, that the terminal is done with a set.
func (d *device) ended(requestID string) {
	if d.onEnd != nil {
		d.onEnd(requestID)
	}
}

// stoppedNote closes a form that Run's context ended: the terminal answers it no more.
const stoppedNote = "Stopped: this terminal no longer answers this question."

// serve shows s until the person replies or it ends elsewhere, sends the reply, and
// waits for the host's verdict on it. It returns with s either out of the queue or
// still at its head with the host's problems, to be shown again.
func (d *device) serve(ctx context.Context, s *set) error {
	v := d.ui.show(ctx, s, len(d.queue)-1)
	ended := false
	var res viewResult
wait:
	for {
		select {
		case res = <-v.done():
			break wait
		case ev := <-d.events:
			if !d.take(ev, s) {
				v.setWaiting(len(d.queue) - 1)
				continue
			}
			if ev.Type == askuser.EventResolved && !ended {
				var r resolution
				_ = json.Unmarshal(ev.Data, &r)
				ended = true
				d.remove(s)
				v.end(endNote(r.Outcome, ""))
			}
		case err := <-d.failed:
			if ctx.Err() != nil { // Run was stopped: that ended the connection
				<-v.done()
				d.ui.say(stoppedNote) // under the form left on the screen
				return ctx.Err()
			}
			v.end("The connection to the host was lost.")
			<-v.done()
			return err
		}
	}
	if res.err != nil {
		if ctx.Err() != nil && !ended {
			d.ui.say(stoppedNote) // under the form left on the screen
		}
		return res.err
	}
	if ended || res.reply == nil {
		if ended {
			d.ended(s.ask.RequestID)
		}
		return nil
	}

	// The person replied: send it, and wait for the host to resolve the set or refuse it.
	sent := "answer"
	if res.reply.Declined {
		sent = "decline"
	}
	ev, err := askuser.NewEvent(askuser.EventResult, s.session, *res.reply)
	if err != nil {
		return err
	}
	if err := d.conn.Send(ctx, ev); err != nil {
		return err
	}
	for {
		ev, err := d.next(ctx)
		if err != nil {
			return err
		}
		if !d.take(ev, s) {
			continue
		}
		switch ev.Type {
		case askuser.EventResolved:
			var r resolution
			_ = json.Unmarshal(ev.Data, &r)
			d.remove(s)
			d.ui.say(endNote(r.Outcome, sent))
			d.ended(s.ask.RequestID)
			return res.then
		case askuser.EventError:
			var e askuser.ErrorData
			_ = json.Unmarshal(ev.Data, &e)
			if e.Code == "not_pending" {
				// It ended elsewhere first; its resolution has come or is lost.
				d.remove(s)
				d.ui.say("This question had already ended on another device.")
				d.ended(s.ask.RequestID)
				return res.then
			}
			s.problems = e.Problems
			if len(s.problems) == 0 {
				s.problems = []string{e.Message}
			}
			for i, p := range s.problems {
				s.problems[i] = clean(p, false)
			}
			d.ui.say("The host refused the answer: " + strings.Join(s.problems, "; "))
			return res.then
		}
	}
}

// ErrInputEnded is returned by [Run] when its input ends (end of file, a terminal
// that went away): nothing more can be answered on this terminal. In the accessible
// mode the question set shown is declined first.
var ErrInputEnded = errors.New("tui: input ended")
