package tui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/askuser-go/askuser"
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

// Run makes this terminal a device of its sessions: it shows each question set and each
// approval the host sends on conn, oldest first, as a form (or as plain prompts with
// [Options.Accessible]), and sends the person's answers, decline or decision back on
// conn. When the host says who the terminal is connected as (the inbox event), an
// approval its person may not decide is shown read-only, after the requests they can
// answer; ctrl+o in a form (i in the accessible mode) lists every pending request,
// newest first, to open one (docs/TERMINAL.md, "The inbox"). It keeps a queue of the pending requests, and closes the one shown, with a
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
	// queue holds the pending requests, question sets and approvals, of every session
	// the terminal is given, in the order they came. The one shown is head().
	queue []request
	onEnd func(requestID string) // Options.OnEnd, or nil
	// alerts is where the bell and the title go (Options.Output), nil when Quiet;
	// titled says the title was set and not yet restored.
	alerts io.Writer
	titled bool
	// bellOnly, in the accessible mode, rings without setting the title: that mode
	// writes no escape sequence.
	bellOnly bool
	// The inbox (inbox.go): who the terminal is connected as, from the host's inbox
	// event ("" when none came: every approval is then shown with its decisions), and
	// the requests that ended lately, newest first. chosen is the request the person
	// opened from the inbox list, shown before the queue's order until it leaves the
	// queue; listing says the person asked for the list, shown next; listShown that it
	// is shown now. titles are the sessions the terminal has had requests of (or was
	// told of), with their titles; listed is the pending list last printed.
	user    string
	groups  []string
	decided []wire.InboxEntry
	chosen  request
	listing bool
	listUp  bool
	titles  map[askuser.SessionID]string
	listed  string
}

// reqKey names a request: its session and its id. Requests of different sessions may
// have the same id (two agents' first tool calls, say).
type reqKey struct {
	session askuser.SessionID
	id      string
}

// request is one pending request of the queue: a question set (*set) or an approval
// (*approval). Only the device loop and the one view showing it use it.
type request interface {
	requestID() string
	key() reqKey
	// title says what it is about, in a line: the first question, or the tool's name.
	title() string
	// entry is its line in the inbox, as a pending request.
	entry() wire.InboxEntry
	// setOrigin names its session in the view to come ("" for none).
	setOrigin(label string)
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
	// showInbox starts showing the inbox list l, and returns at once. The view ends
	// when the person opens one of its requests or goes back.
	showInbox(ctx context.Context, l inboxList) view
	// inboxKey says how the person opens the inbox list: "ctrl+o in a form".
	inboxKey() string
	// say prints one line between views.
	say(text string)
	// close releases what the ui holds; the loop has ended every view first.
	close()
}

// view is one request, or the inbox list, being shown.
type view interface {
	// done yields the view's one result once it has ended and left the terminal.
	done() <-chan viewResult
	// setWaiting tells what now waits behind this request.
	setWaiting(w waiting)
	// progress tells an approval's view whom it waits for now (waitingLine).
	progress(line string)
	// list gives the inbox list's view the list now.
	list(l inboxList)
	// end closes the view with a note: the request ended elsewhere. An empty note
	// leaves nothing behind.
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
	// inbox says the person asked for the inbox list, leaving the request for now; open,
	// from the list, names the request they opened.
	inbox bool
	open  *reqKey
}

// replied reports whether the person replied.
func (r viewResult) replied() bool { return r.reply != nil || r.decision != nil }

// resolution is the data of an ask_user_questions_resolved or tool_approval_resolved
// event, with the outcome kept as text: a device treats any outcome, known or not, as
// the end of the request. Reason, Grant, Arguments and By are an approval's.
type resolution struct {
	RequestID string          `json:"requestId"`
	Outcome   string          `json:"outcome"`
	Reason    string          `json:"reason"`
	Grant     string          `json:"grant"`
	Arguments json.RawMessage `json:"arguments"`
	By        string          `json:"by"`
	At        time.Time       `json:"at"`
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

// loop shows the inbox list when the person asks for it, else the request at the head
// until the queue is empty, then waits for requests.
func (d *device) loop(ctx context.Context) error {
	for {
		if d.listing {
			if err := d.serveInbox(ctx); err != nil {
				return err
			}
			continue
		}
		r := d.head()
		if r == nil {
			ev, err := d.next(ctx)
			if err != nil {
				return err
			}
			d.take(ev, nil)
			continue
		}
		d.printList()
		if err := d.serve(ctx, r); err != nil {
			return err
		}
	}
}

// head is the request to show: the one the person opened from the inbox list, else
// the oldest the person may answer or decide, else the oldest approval they may only
// watch; nil when nothing is pending.
func (d *device) head() request {
	if d.chosen != nil && d.find(d.chosen.key()) >= 0 {
		return d.chosen
	}
	d.chosen = nil
	for _, r := range d.queue {
		if !d.readOnly(r) {
			return r
		}
	}
	if len(d.queue) > 0 {
		return d.queue[0]
	}
	return nil
}

// take handles an event that is not about the request cur being shown or awaited (cur
// may be nil): a new question set or approval joins the queue; a resolution removes its
// request; an error is said; the inbox event tells who the terminal is connected as. It
// reports whether the event was about cur instead, leaving it to the caller.
func (d *device) take(ev wire.Event, cur request) (mine bool) {
	isCur := func(id string) bool { return cur != nil && cur.key() == reqKey{ev.SessionID, id} }
	switch ev.Type {
	case wire.EventInbox:
		var in wire.InboxData
		if json.Unmarshal(ev.Data, &in) != nil {
			return false
		}
		d.person(ev.SessionID, in)
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
		if isCur(p.RequestID) {
			return true // a view may be showing it: the caller applies it
		}
		if i := d.find(reqKey{ev.SessionID, p.RequestID}); i >= 0 {
			if a, ok := d.queue[i].(*approval); ok {
				was := d.readOnly(a)
				a.progress(p)
				if was && !d.readOnly(a) {
					d.alert(a) // an escalation step names the person
				}
			}
		}
	case wire.EventResolved, wire.EventApprovalResolved:
		var r resolution
		if json.Unmarshal(ev.Data, &r) != nil {
			return false
		}
		if isCur(r.RequestID) && ev.Type == cur.resolvedType() {
			return true
		}
		if i := d.find(reqKey{ev.SessionID, r.RequestID}); i >= 0 && d.queue[i].resolvedType() == ev.Type {
			q := d.queue[i]
			d.queue = append(d.queue[:i:i], d.queue[i+1:]...)
			d.record(q, r)
			d.ended(r.RequestID)
		}
	case wire.EventError:
		var e wire.ErrorData
		if json.Unmarshal(ev.Data, &e) != nil {
			return false
		}
		if cur != nil && e.RequestID == cur.requestID() && (ev.SessionID.IsZero() || ev.SessionID == cur.key().session) {
			return true
		}
		if cur == nil && !d.listUp { // during a view, an error about something else is not worth a line
			d.ui.say("The host refused a message: " + clean(e.Message, false))
		}
	}
	return false
}

// enqueue adds r to the queue, unless it is there already: a device may be sent a
// pending request again.
func (d *device) enqueue(r request) {
	if d.find(r.key()) < 0 {
		d.queue = append(d.queue, r)
		e := r.entry()
		d.noteSession(e.SessionID, e.SessionTitle)
		if !d.readOnly(r) {
			d.alert(r)
		}
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

// untitle gives the terminal its title back once nothing waits for the person.
func (d *device) untitle() {
	if d.alerts != nil && d.titled && !slices.ContainsFunc(d.queue, func(r request) bool { return !d.readOnly(r) }) {
		_, _ = io.WriteString(d.alerts, "\x1b[23;0t")
		d.titled = false
	}
}

func (d *device) find(k reqKey) int {
	for i, r := range d.queue {
		if r.key() == k {
			return i
		}
	}
	return -1
}

// remove takes r out of the queue.
func (d *device) remove(r request) {
	if i := d.find(r.key()); i >= 0 {
		d.queue = append(d.queue[:i:i], d.queue[i+1:]...)
	}
}

// waitingBehind counts the requests of the queue other than r that the person may
// answer or decide, by kind.
func (d *device) waitingBehind(r request) waiting {
	var w waiting
	for _, q := range d.queue {
		if q == r || d.readOnly(q) {
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
	r.setOrigin(d.origin(r))
	if a, ok := r.(*approval); ok {
		a.readOnly = d.readOnly(a)
		return d.ui.showApproval(ctx, a, w)
	}
	return d.ui.show(ctx, r.(*set), w)
}

// Notes of a view that closes for another to be shown.
const (
	setAsideNote = "Set aside: something you can answer came in. It comes back once nothing else waits."
	escalateNote = "An escalation step names you: you may decide it now."
)

// serve shows r until the person replies or it ends elsewhere, sends the reply, and
// waits for the host's verdict on it. It returns with r either out of the queue or
// still in it (with the host's problems, to be shown again; or set aside).
func (d *device) serve(ctx context.Context, r request) error {
	v := d.show(ctx, r)
	a, _ := r.(*approval)
	readOnly := a != nil && a.readOnly
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
				if readOnly && !reshow && !ended && d.head() != r {
					reshow = true
					v.end(setAsideNote)
				}
				continue
			}
			if ev.Type == wire.EventApprovalProgress {
				var p wire.ApprovalProgressData
				_ = json.Unmarshal(ev.Data, &p)
				progress = append(progress, p)
				if ended || reshow || a == nil {
					continue
				}
				data := a.data
				for _, p := range progress {
					data = withProgress(data, p)
				}
				switch {
				case len(p.Arguments) > 0:
					reshow = true
					v.end("The arguments were edited on another device; they are shown again, to decide anew.")
				case readOnly && mayDecide(data.Approvers, d.user, d.groups):
					reshow = true
					d.alert(r)
					v.end(escalateNote)
				default:
					v.progress(waitingLine(data.Approvers))
				}
				continue
			}
			if ev.Type == r.resolvedType() && !ended {
				var rs resolution
				_ = json.Unmarshal(ev.Data, &rs)
				ended = true
				d.remove(r)
				d.record(r, rs)
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
	if a != nil {
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
	d.listing = res.inbox
	if ended || reshow || !res.replied() {
		if ended {
			d.ended(r.requestID())
		}
		return res.then // the input ended under a view that sends nothing
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
			d.record(r, rs)
			d.ui.say(r.endNote(rs, res))
			d.ended(r.requestID())
			return res.then
		case wire.EventApprovalProgress:
			// Recorded, and waiting for others' approvals: not shown here again.
			if a == nil {
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
