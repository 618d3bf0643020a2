package tui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/askuser-go/askuser/wire"
)

// DefaultMaxCustomInput is the default bound, in characters, of an Other text: the
// host's own default.
const DefaultMaxCustomInput = 4000

// Options configure [Run]. A nil *Options means every default; Run copies it.
type Options struct {
	// Input is where the person's keystrokes come from. Default: os.Stdin, or the
	// controlling terminal when stdin is not one. For the forms Input should be a
	// terminal (an *os.File), which Run puts in raw mode while a form is shown and
	// restores after. Run reads Input from the first form on until it returns, and
	// drops what is typed between forms.
	Input io.Reader
	// Output is where the forms are drawn. Default: os.Stdout.
	Output io.Writer
	// Environ is the terminal's environment (TERM, COLORTERM, NO_COLOR, ...), which
	// decides the colors and capabilities used. Default: os.Environ(). Set it when the
	// terminal is not the process's own, such as an SSH session.
	Environ []string
	// Accessible shows each question set and approval as plain numbered lines and reads
	// answers and decisions a line at a time, with no redraws and no raw mode, for
	// screen readers and dumb terminals. Requests still end when another device answers
	// or decides; see docs/TERMINAL.md.
	Accessible bool
	// MaxCustomInput bounds the Other text, in characters. Default
	// [DefaultMaxCustomInput], the host's default; set it to the host's
	// askuser.Options.MaxCustomInput when that differs.
	MaxCustomInput int
	// OnEnd, when set, is called once for each request (question set or approval) this
	// terminal is done with: its form has closed and its closing note is printed, or,
	// for one that ended while it waited behind another, it has left the queue. A host
	// that prints its own lines on the same terminal waits for it, so that they follow
	// the note. It is called from Run's goroutine and must return quickly.
	OnEnd func(requestID string)
	// Quiet keeps the terminal from ringing its bell and setting its title when a
	// request arrives.
	Quiet bool
}

// Run makes this terminal a device of a session: it shows each question set and each
// approval the host sends on conn, oldest first, as a form (or as plain prompts with
// [Options.Accessible]), and sends the person's answers, decline or decision back on
// conn. It keeps a queue of the pending requests, and closes the one shown, with a
// note, when it ends elsewhere: answered or decided on another device, timed out,
// cancelled. When the host refuses an answer or a decision (an edit its schema does
// not take), the form opens again with the host's problems and the choices made.
//
// Run returns when ctx ends (with ctx's error), when conn fails (with its error), or
// when the terminal cannot be used. It cancels the context of a Recv in progress before
// returning, which closes a [WebSocketConn]: a Conn serves one Run. Run starts no
// goroutine that outlives it, except that when Input is not an *os.File terminal or
// pipe, whose reads can be cancelled, a read in progress goes on until Input yields.
//
// Esc or Ctrl-C in a form declines the question set shown, or denies the approval
// shown without a reason; in the accessible mode, the person types d.
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
	d := &device{conn: conn, events: make(chan wire.Event), failed: make(chan error, 1), onEnd: o.OnEnd}
	if !o.Quiet {
		d.alerts, d.bellOnly = o.Output, o.Accessible
	}
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
	events chan wire.Event // from the receiver
	failed chan error      // the receiver's end: conn failed
	// queue holds the pending requests, question sets and approvals, in the order they
	// came; queue[0] is shown.
	queue []request
	onEnd func(requestID string) // Options.OnEnd, or nil
	// alerts is where the bell and the title go (Options.Output), nil when Quiet;
	// titled says the title was set and not yet restored.
	alerts io.Writer
	titled bool
	// bellOnly, in the accessible mode, rings without setting the title: that mode
	// writes no escape sequence.
	bellOnly bool
}

// request is one pending request of the queue: a question set (*set) or an approval
// (*approval). Only the device loop and the one view showing it use it.
type request interface {
	requestID() string
	// title says what it is about, in a line: the first question, or the tool's name.
	title() string
	// resolvedType is the type of the event that says it ended.
	resolvedType() string
	// replyEvent is the event that sends what the person did in a view.
	replyEvent(res viewResult) (wire.Event, error)
	// endNote says how it ended, from its resolution and what this device had sent for
	// it (the zero viewResult for nothing).
	endNote(r resolution, sent viewResult) string
	// refused keeps the host's problems with the last reply, for the view shown next,
	// and names what was refused: "answer", "decision".
	refused(problems []string) string
	// noun names its kind in a note: "question", "approval".
	noun() string
}

// ui shows requests: the forms, or the accessible line prompts.
type ui interface {
	// show starts showing the question set s, with w queued behind it, and returns at
	// once. The view ends when the person replies or when it is ended.
	show(ctx context.Context, s *set, w waiting) view
	// showApproval is show for an approval.
	showApproval(ctx context.Context, a *approval, w waiting) view
	// say prints one line between views.
	say(text string)
	// close releases what the ui holds; the loop has ended every view first.
	close()
}

// view is one request being shown.
type view interface {
	// done yields the view's one result once it has ended and left the terminal.
	done() <-chan viewResult
	// setWaiting tells what now waits behind this request.
	setWaiting(w waiting)
	// end closes the view with a note: the request ended elsewhere.
	end(note string)
}

// viewResult is how a view ended: with the person's reply (to a question set) or
// decision (on an approval), or closed (neither), or with the error that stopped it
// (the context's, or the terminal's).
type viewResult struct {
	reply    *wire.ResultData
	decision *wire.ApprovalResultData
	err      error
	// then, when set with a reply, ends Run once the host has had the reply: the input
	// ended, so nothing more can be answered here.
	then error
}

// replied reports whether the person replied.
func (r viewResult) replied() bool { return r.reply != nil || r.decision != nil }

// resolution is the data of an ask_user_questions_resolved or tool_approval_resolved
// event, with the outcome kept as text: a device treats any outcome, known or not, as
// the end of the request. Reason, Grant and Arguments are an approval's.
type resolution struct {
	RequestID string          `json:"requestId"`
	Outcome   string          `json:"outcome"`
	Reason    string          `json:"reason"`
	Grant     string          `json:"grant"`
	Arguments json.RawMessage `json:"arguments"`
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
func (d *device) next(ctx context.Context) (wire.Event, error) {
	select {
	case ev := <-d.events:
		return ev, nil
	case err := <-d.failed:
		return wire.Event{}, err
	case <-ctx.Done():
		return wire.Event{}, ctx.Err()
	}
}

// loop shows the queue's head until the queue is empty, then waits for requests.
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

// take handles an event that is not about the request cur being shown or awaited (cur
// may be nil): a new question set or approval joins the queue; a resolution removes its
// request; an error is said. It reports whether the event was about cur instead,
// leaving it to the caller.
func (d *device) take(ev wire.Event, cur request) (mine bool) {
	switch ev.Type {
	case wire.EventAsk:
		var a wire.AskData
		if json.Unmarshal(ev.Data, &a) != nil || a.RequestID == "" || len(a.Questions) == 0 {
			return false
		}
		d.enqueue(newSet(ev.SessionID, a))
	case wire.EventApproval:
		var a wire.ApprovalData
		if json.Unmarshal(ev.Data, &a) != nil || a.RequestID == "" || a.Tool == "" || len(a.Decisions) == 0 {
			return false
		}
		d.enqueue(newApproval(ev.SessionID, a))
	case wire.EventApprovalProgress:
		var p wire.ApprovalProgressData
		if json.Unmarshal(ev.Data, &p) != nil {
			return false
		}
		if cur != nil && p.RequestID == cur.requestID() {
			return true // a view may be showing it: the caller applies it
		}
		if i := d.find(p.RequestID); i >= 0 {
			if a, ok := d.queue[i].(*approval); ok {
				a.progress(p)
			}
		}
	case wire.EventResolved, wire.EventApprovalResolved:
		var r resolution
		if json.Unmarshal(ev.Data, &r) != nil {
			return false
		}
		if cur != nil && r.RequestID == cur.requestID() && ev.Type == cur.resolvedType() {
			return true
		}
		if i := d.find(r.RequestID); i >= 0 && d.queue[i].resolvedType() == ev.Type {
			d.queue = append(d.queue[:i:i], d.queue[i+1:]...)
			d.ended(r.RequestID)
		}
	case wire.EventError:
		var e wire.ErrorData
		if json.Unmarshal(ev.Data, &e) != nil {
			return false
		}
		if cur != nil && e.RequestID == cur.requestID() {
			return true
		}
		if cur == nil { // during a view, an error about something else is not worth a line
			d.ui.say("The host refused a message: " + clean(e.Message, false))
		}
	}
	return false
}

// enqueue adds r to the queue, unless it is there already: a device may be sent a
// pending request again.
func (d *device) enqueue(r request) {
	if d.find(r.requestID()) < 0 {
		d.queue = append(d.queue, r)
		d.alert(r)
	}
}

// alert rings the terminal's bell and sets its title, "Waiting for you: …", when r
// arrives, so that a person in another window or tab learns of it. The title the
// terminal had is saved first (XTWINOPS 22) and given back (23) once nothing waits. The
// accessible mode only rings.
func (d *device) alert(r request) {
	if d.alerts == nil {
		return
	}
	if d.bellOnly {
		_, _ = io.WriteString(d.alerts, "\a")
		return
	}
	var b strings.Builder
	if !d.titled {
		b.WriteString("\x1b[22;0t")
		d.titled = true
	}
	b.WriteString("\x1b]0;Waiting for you: " + truncateText(r.title(), 60) + "\x07\a")
	_, _ = io.WriteString(d.alerts, b.String())
}

// untitle gives the terminal its title back once nothing waits.
func (d *device) untitle() {
	if d.alerts != nil && d.titled && len(d.queue) == 0 {
		_, _ = io.WriteString(d.alerts, "\x1b[23;0t")
		d.titled = false
	}
}

func (d *device) find(requestID string) int {
	for i, r := range d.queue {
		if r.requestID() == requestID {
			return i
		}
	}
	return -1
}

// remove takes r out of the queue.
func (d *device) remove(r request) {
	if i := d.find(r.requestID()); i >= 0 {
		d.queue = append(d.queue[:i:i], d.queue[i+1:]...)
	}
}

// waitingBehind counts the requests of the queue other than r, by kind.
func (d *device) waitingBehind(r request) waiting {
	var w waiting
	for _, q := range d.queue {
		if q == r {
			continue
		}
		if _, ok := q.(*approval); ok {
			w.approvals++
		} else {
			w.sets++
		}
	}
	return w
}

// ended tells the host, through Options.OnEnd, that the terminal is done with a request.
func (d *device) ended(requestID string) {
	d.untitle()
	if d.onEnd != nil {
		d.onEnd(requestID)
	}
}

// stoppedNote closes a form that Run's context ended: the terminal answers it no more.
func stoppedNote(r request) string {
	return "Stopped: this terminal no longer answers this " + r.noun() + "."
}

// show starts the view of r.
func (d *device) show(ctx context.Context, r request) view {
	w := d.waitingBehind(r)
	if a, ok := r.(*approval); ok {
		return d.ui.showApproval(ctx, a, w)
	}
	return d.ui.show(ctx, r.(*set), w)
}

// serve shows r until the person replies or it ends elsewhere, sends the reply, and
// waits for the host's verdict on it. It returns with r either out of the queue or
// still at its head with the host's problems, to be shown again.
func (d *device) serve(ctx context.Context, r request) error {
	v := d.show(ctx, r)
	ended := false
	var res viewResult
	var progress []wire.ApprovalProgressData // of r, applied once the view is done
	reshow := false
wait:
	for {
		select {
		case res = <-v.done():
			break wait
		case ev := <-d.events:
			if !d.take(ev, r) {
				v.setWaiting(d.waitingBehind(r))
				continue
			}
			if ev.Type == wire.EventApprovalProgress {
				var p wire.ApprovalProgressData
				_ = json.Unmarshal(ev.Data, &p)
				progress = append(progress, p)
				if len(p.Arguments) > 0 && !ended && !reshow {
					reshow = true
					v.end("The arguments were edited on another device; they are shown again, to decide anew.")
				}
				continue
			}
			if ev.Type == r.resolvedType() && !ended {
				var rs resolution
				_ = json.Unmarshal(ev.Data, &rs)
				ended = true
				d.remove(r)
				v.end(r.endNote(rs, viewResult{}))
			}
		case err := <-d.failed:
			if ctx.Err() != nil { // Run was stopped: that ended the connection
				<-v.done()
				d.ui.say(stoppedNote(r)) // under the form left on the screen
				return ctx.Err()
			}
			v.end("The connection to the host was lost.")
			<-v.done()
			return err
		}
	}
	if a, ok := r.(*approval); ok {
		for _, p := range progress {
			a.progress(p)
		}
	}
	if res.err != nil {
		if ctx.Err() != nil && !ended {
			d.ui.say(stoppedNote(r)) // under the form left on the screen
		}
		return res.err
	}
	if ended || reshow || !res.replied() {
		if ended {
			d.ended(r.requestID())
		}
		return nil
	}

	// The person replied: send it, and wait for the host to resolve r or refuse it.
	ev, err := r.replyEvent(res)
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
		if !d.take(ev, r) {
			continue
		}
		switch ev.Type {
		case r.resolvedType():
			var rs resolution
			_ = json.Unmarshal(ev.Data, &rs)
			d.remove(r)
			d.ui.say(r.endNote(rs, res))
			d.ended(r.requestID())
			return res.then
		case wire.EventApprovalProgress:
			// Recorded, and waiting for others' approvals: not shown here again.
			a, ok := r.(*approval)
			if !ok {
				continue
			}
			var p wire.ApprovalProgressData
			_ = json.Unmarshal(ev.Data, &p)
			a.progress(p)
			d.remove(r)
			d.ui.say("Your decision is recorded. " + a.waitingLine())
			d.ended(r.requestID())
			return res.then
		case wire.EventError:
			var e wire.ErrorData
			_ = json.Unmarshal(ev.Data, &e)
			if e.Code == "not_approver" {
				d.remove(r)
				d.ui.say("You are not among the approvers of this " + r.noun() + ": it waits for them.")
				d.ended(r.requestID())
				return res.then
			}
			if e.Code == "not_pending" {
				// It ended elsewhere first; its resolution has come or is lost.
				d.remove(r)
				d.ui.say("This " + r.noun() + " had already ended on another device.")
				d.ended(r.requestID())
				return res.then
			}
			problems := e.Problems
			if len(problems) == 0 {
				problems = []string{e.Message}
			}
			for i, p := range problems {
				problems[i] = clean(p, false)
			}
			what := r.refused(problems)
			d.ui.say("The host refused the " + what + ": " + strings.Join(problems, "; "))
			return res.then
		}
	}
}

// ErrInputEnded is returned by [Run] when its input ends (end of file, a terminal
// that went away): nothing more can be answered on this terminal. In the accessible
// mode the question set shown is declined first.
var ErrInputEnded = errors.New("tui: input ended")

// truncateText cuts s to at most n characters, with "…" when it was longer.
func truncateText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
