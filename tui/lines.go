package tui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/askuser-go/askuser/wire"
	"github.com/muesli/cancelreader"
)

// lineUI is the accessible mode: each question set and approval as plain numbered
// lines, answers and decisions read a line at a time from a terminal left in its
// normal line mode, nothing redrawn. Lines are read by one goroutine, on demand, so
// that a prompt can be abandoned when its request ends elsewhere while a read is still
// waiting for the person.
type lineUI struct {
	out     io.Writer
	maxText int
	in      *lineReader
}

func newLineUI(o *Options) *lineUI {
	return &lineUI{out: o.Output, maxText: o.MaxCustomInput, in: newLineReader(o.Input)}
}

func (u *lineUI) say(text string) { _, _ = io.WriteString(u.out, text+"\n") }

func (u *lineUI) close() { u.in.close() }

func (u *lineUI) show(ctx context.Context, s *set, w waiting) view {
	decline := viewResult{reply: &wire.ResultData{RequestID: s.ask.RequestID, Declined: true}}
	v := u.newView("question set", s.ask.ExpiresAt, decline, "declining")
	v.from = s.origin
	go func() { v.result <- v.askSet(ctx, s, w) }()
	return v
}

func (u *lineUI) showApproval(ctx context.Context, a *approval, w waiting) view {
	eof, doing := viewResult{decision: a.denial()}, "denying"
	if a.readOnly {
		eof, doing = viewResult{}, "this terminal answers no more"
	}
	v := u.newView("approval", a.data.ExpiresAt, eof, doing)
	v.from = a.origin
	go func() {
		if a.readOnly {
			v.result <- v.watch(ctx, a)
			return
		}
		v.result <- v.decide(ctx, a, w)
	}()
	return v
}

func (u *lineUI) showInbox(ctx context.Context, l inboxList) view {
	v := u.newView("inbox", time.Time{}, viewResult{}, "going back")
	v.l = l
	go func() { v.result <- v.listInbox(ctx) }()
	return v
}

func (u *lineUI) inboxKey() string { return "type i instead of an answer or a decision" }

func (u *lineUI) newView(kind string, expires time.Time, eof viewResult, eofDoing string) *lineView {
	return &lineView{ui: u, kind: kind, expires: expires, eof: eof, eofDoing: eofDoing,
		waiting: make(chan waiting, 1), ended: make(chan string, 1), result: make(chan viewResult, 1),
		progressed: make(chan string, 1), lists: make(chan inboxList, 1)}
}

// lineView is one request asked in lines. Its goroutine alone writes to the output
// while it runs; the device loop talks to it through the channels.
type lineView struct {
	ui      *lineUI
	kind    string    // what is shown: "question set", "approval"
	expires time.Time // when it times out, for the announcements of the time left
	// eof is the reply the end of input makes, eofDoing what it is said to do.
	eof      viewResult
	eofDoing string
	waiting  chan waiting // latest count of requests waiting behind this one
	ended    chan string  // the note when the request ended elsewhere
	result   chan viewResult
	// progressed is the latest line of whom an approval waits for; lists the latest
	// inbox list, which l holds once said.
	progressed chan string
	lists      chan inboxList
	l          inboxList
	from       string // the request's session, when named
}

func (v *lineView) done() <-chan viewResult { return v.result }

func (v *lineView) setWaiting(w waiting) {
	select {
	case <-v.waiting: // keep only the latest
	default:
	}
	v.waiting <- w
}

func (v *lineView) end(note string) { v.ended <- note }

func (v *lineView) progress(line string) {
	select {
	case <-v.progressed: // keep only the latest
	default:
	}
	v.progressed <- line
}

func (v *lineView) list(l inboxList) {
	select {
	case <-v.lists: // keep only the latest
	default:
	}
	v.lists <- l
}

func (v *lineView) printf(format string, args ...any) { _, _ = fmt.Fprintf(v.ui.out, format, args...) }

// intro is the first line of a request: what is asked, the time left, what waits, and
// the word that declines or denies.
func (v *lineView) intro(what string, w waiting, key string) {
	if v.from != "" {
		what += " From " + v.from + "."
	}
	if !v.expires.IsZero() {
		what += " Time left: " + spokenDuration(time.Until(v.expires)) + "."
	}
	if w != (waiting{}) {
		what += " " + w.String() + " after this one."
	}
	if key != "" {
		what += " " + key
	}
	v.printf("\n%s\n", what)
}

func (v *lineView) askSet(ctx context.Context, s *set, w waiting) viewResult {
	n := len(s.qs)
	intro := "The agent asks you a question."
	if n > 1 {
		intro = fmt.Sprintf("The agent asks you %d questions.", n)
	}
	v.intro(intro, w, "Type d to decline.")
	if len(s.problems) > 0 {
		v.printf("The host refused the answer: %s. Answer again.\n", strings.Join(s.problems, "; "))
	}

	seen := w
	for i, q := range s.qs {
		v.printQuestion(i, n, q)
		for {
			v.printf("Answer %d: ", i+1)
			line, err := v.readLine(ctx, &seen)
			if err != nil {
				return v.stopped(err)
			}
			if inboxWord(line) {
				return viewResult{inbox: true}
			}
			decline, msg := v.parse(q, line)
			if decline {
				return viewResult{reply: &wire.ResultData{RequestID: s.ask.RequestID, Declined: true}}
			}
			if msg != "" {
				v.printf("%s\n", msg)
				continue
			}
			if !q.wantsText() || strings.TrimSpace(q.text) != "" {
				break
			}
			// Other was chosen by number: ask for its text.
			for {
				v.printf("Your own answer %d: ", i+1)
				text, err := v.readLine(ctx, &seen)
				if err != nil {
					return v.stopped(err)
				}
				text = strings.TrimSpace(clean(text, false))
				if err := checkText(text, v.ui.maxText); err != nil {
					v.printf("%s.\n", upperFirst(err.Error()))
					continue
				}
				q.text = text
				break
			}
			break
		}
	}
	r := s.reply()
	return viewResult{reply: &r}
}

// stopped turns what ended a read into the view's result: ended elsewhere (with its
// note), the context, or the end of input (a decline or denial, then Run ends).
func (v *lineView) stopped(err error) viewResult {
	var note endedError
	switch {
	case errors.As(err, &note):
		v.printf("\n%s\n", string(note))
		return viewResult{}
	case errors.Is(err, io.EOF):
		v.printf("\nEnd of input: %s.\n", v.eofDoing)
		r := v.eof
		r.then = ErrInputEnded
		return r
	}
	return viewResult{err: err}
}

type endedError string

func (e endedError) Error() string { return string(e) }

func (v *lineView) printQuestion(i, n int, q *question) {
	if h := clean(q.Header, false); strings.TrimSpace(h) != "" {
		v.printf("\nQuestion %d of %d. %s: %s\n", i+1, n, h, clean(q.Question.Question, false))
	} else {
		v.printf("\nQuestion %d of %d. %s\n", i+1, n, clean(q.Question.Question, false))
	}
	if q.freeText() {
		v.printf("Type your answer.\n")
		if p := clean(q.Placeholder, false); strings.TrimSpace(p) != "" {
			v.printf("  (for example: %s)\n", p)
		}
		return
	}
	if q.MultiSelect {
		v.printf("Choose any: type their numbers separated by commas, or type your own answer.\n")
	} else {
		v.printf("Choose one: type its number, or type your own answer.\n")
	}
	for j, o := range q.Options {
		v.printf("  %d. %s", j+1, clean(o.Label, false))
		if d := clean(o.Description, false); d != "" {
			v.printf(": %s", d)
		}
		v.printf("\n")
		if o.Preview != "" && !q.MultiSelect {
			v.printf("     Preview of %d:\n", j+1)
			var p previews
			for _, l := range strings.Split(p.render(o.Preview, 72, stylePlain), "\n") {
				v.printf("     %s\n", strings.TrimRight(l, " "))
			}
		}
	}
	v.printf("  %d. Other: type your own answer\n", q.other()+1)
}

// parse applies one answer line to q. It reports a decline, or a message saying what
// is wrong with the line; with neither, q holds the choice (Other's text may still be
// needed).
func (v *lineView) parse(q *question, line string) (decline bool, msg string) {
	// A terminal in line mode passes keys such as the arrows on as escape sequences.
	t := strings.TrimSpace(clean(line, false))
	switch strings.ToLower(t) {
	case "d", "decline":
		return true, ""
	case "":
		if q.freeText() {
			return false, "Type your answer, or d to decline."
		}
		return false, "Type a number, or your own answer, or d to decline."
	}
	if nums, ok := numbers(t); ok && !q.freeText() { // without options, "42" is an answer
		for _, k := range nums {
			if k < 1 || k > q.other()+1 {
				return false, fmt.Sprintf("There is no choice %d: type a number from 1 to %d.", k, q.other()+1)
			}
		}
		if !q.MultiSelect {
			if len(nums) != 1 {
				return false, "Choose one: type a single number."
			}
			q.single, q.text = nums[0]-1, ""
			return false, ""
		}
		q.multi, q.text = nil, ""
		for _, k := range nums {
			q.multi = append(q.multi, k-1)
		}
		return false, ""
	}
	// Free text is the Other answer: for a single-select question, instead of an option.
	if n := utf8.RuneCountInString(t); n > v.ui.maxText {
		return false, fmt.Sprintf("Your answer is %d characters long; at most %d fit.", n, v.ui.maxText)
	}
	q.text = t
	if q.MultiSelect {
		q.multi = []int{q.other()}
	} else {
		q.single = q.other()
	}
	return false, ""
}

// numbers parses "2" or "1, 3" or "1 3": distinct option numbers.
func numbers(s string) ([]int, bool) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	var out []int
	seen := map[int]bool{}
	for _, f := range fields {
		k, err := strconv.Atoi(f)
		if err != nil {
			return nil, false
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, len(out) > 0
}

// readLine waits for the person's next line, telling the time left at one minute and
// at ten seconds and saying when another request comes in. It returns an endedError
// when the request ends elsewhere, after discarding what was typed for it.
func (v *lineView) readLine(ctx context.Context, seen *waiting) (string, error) {
	in := v.ui.in
	in.request()
	for {
		var alarm <-chan time.Time
		var timer *time.Timer
		if d, ok := v.nextAlarm(); ok {
			timer = time.NewTimer(d)
			alarm = timer.C
		}
		stop := func() {
			if timer != nil {
				timer.Stop()
			}
		}
		select {
		case r := <-in.lines:
			stop()
			in.pending = false
			if r.at.Before(in.flushed) {
				in.request() // typed for a question that has ended
				continue
			}
			if r.err != nil && (r.text == "" || !errors.Is(r.err, io.EOF)) {
				return "", r.err
			}
			return strings.TrimRight(r.text, "\r\n"), nil
		case w := <-v.waiting:
			stop()
			v.cameIn(*seen, w)
			*seen = w
		case line := <-v.progressed:
			stop()
			v.printf("\n(%s)\n", line)
		case l := <-v.lists:
			stop()
			v.l = l
			v.printf("\nThe inbox changed.\n")
			v.printList()
		case <-alarm:
			v.printf("\n(%s left to answer.)\n", spokenDuration(time.Until(v.expires)))
		case note := <-v.ended:
			stop()
			in.discardTyped()
			return "", endedError(note)
		case <-ctx.Done():
			stop()
			return "", ctx.Err()
		}
	}
}

// nextAlarm is how long until the next announcement of the time left: at one minute
// and at ten seconds before the request times out.
func (v *lineView) nextAlarm() (time.Duration, bool) {
	exp := v.expires
	if exp.IsZero() {
		return 0, false
	}
	left := time.Until(exp)
	for _, at := range []time.Duration{time.Minute, 10 * time.Second} {
		if left > at+time.Second/2 {
			return left - at, true
		}
	}
	return 0, false
}

// cameIn says that a request came in while this one is shown, from the counts of what
// waits before (old) and now (w).
func (v *lineView) cameIn(old, w waiting) {
	if w.sets > old.sets {
		if v.kind == "question set" {
			v.printf("\n(Another question set came in; it waits after this one.)\n")
		} else {
			v.printf("\n(A question set came in; it waits after this one.)\n")
		}
	}
	if w.approvals > old.approvals {
		if v.kind == "approval" {
			v.printf("\n(Another approval came in; it waits after this one.)\n")
		} else {
			v.printf("\n(An approval came in; it waits after this one.)\n")
		}
	}
}

// spokenDuration says a duration in words, rounded to the second: "4 minutes 59 seconds".
func spokenDuration(d time.Duration) string {
	if d <= 0 {
		return "no time"
	}
	s := int((d + time.Second/2) / time.Second)
	unit := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.Itoa(n) + " " + one + "s"
	}
	switch {
	case s < 60:
		return unit(s, "second")
	case s%60 == 0:
		return unit(s/60, "minute")
	}
	return unit(s/60, "minute") + " " + unit(s%60, "second")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// lineReader reads lines from the input in one goroutine, one line per request.
// Only the view that is showing calls request, discardTyped and reads lines; pending
// and flushed are that view's, views running one after another.
type lineReader struct {
	cancel  cancelreader.CancelReader // nil when the input cannot be cancelled
	file    *os.File                  // the input, when it is a terminal
	reqs    chan struct{}
	lines   chan lineResult
	quit    chan struct{}
	stopped sync.WaitGroup

	pending bool      // a request is out
	flushed time.Time // lines read before this were typed for a question that ended
}

type lineResult struct {
	text string
	err  error
	at   time.Time // when the read returned
}

func newLineReader(in io.Reader) *lineReader {
	r := &lineReader{reqs: make(chan struct{}, 1), lines: make(chan lineResult, 1), quit: make(chan struct{})}
	src := in
	if cr, err := cancelreader.NewReader(in); err == nil {
		r.cancel, src = cr, cr
	}
	if f, ok := in.(*os.File); ok && isTerminal(f) {
		r.file = f
	}
	br := bufio.NewReader(src)
	r.stopped.Add(1)
	go func() {
		defer r.stopped.Done()
		for {
			select {
			case <-r.reqs:
			case <-r.quit:
				return
			}
			text, err := br.ReadString('\n')
			select {
			case r.lines <- lineResult{text: text, err: err, at: time.Now()}:
			case <-r.quit:
				return
			}
		}
	}()
	return r
}

// request asks for the next line, unless a request is already out.
func (r *lineReader) request() {
	if !r.pending {
		r.pending = true
		r.reqs <- struct{}{}
	}
}

// discardTyped drops what the person typed for a question that has just ended: the
// terminal's pending input is flushed, and a line already read is ignored.
func (r *lineReader) discardTyped() {
	if r.file != nil && flushInput(r.file) {
		r.flushed = time.Now()
	}
}

// close stops the reading goroutine. When the input can be cancelled (a terminal or
// a pipe), a read in progress is cancelled and close waits for the goroutine; otherwise
// that read goes on until the input yields.
func (r *lineReader) close() {
	close(r.quit)
	if r.cancel != nil && r.cancel.Cancel() {
		r.stopped.Wait()
		_ = r.cancel.Close()
	}
}

// inboxWord reports whether a line asks for the inbox list: i, or inbox.
func inboxWord(line string) bool {
	t := strings.ToLower(strings.TrimSpace(clean(line, false)))
	return t == "i" || t == "inbox"
}

// listInbox says the inbox list and reads which request to open, by its number; an
// empty line goes back.
func (v *lineView) listInbox(ctx context.Context) viewResult {
	who := ""
	if v.l.who != "" {
		who = ", " + v.l.who
	}
	v.printf("\nYour inbox%s.\n", who)
	v.printList()
	var seen waiting
	for {
		v.printf("Open: ")
		line, err := v.readLine(ctx, &seen)
		if err != nil {
			return v.stopped(err)
		}
		t := strings.TrimSpace(clean(line, false))
		if t == "" || len(v.l.pending) == 0 {
			return viewResult{}
		}
		k, err := strconv.Atoi(t)
		if err != nil || k < 1 || k > len(v.l.pending) {
			v.printf("Type a number from 1 to %d, or nothing to go back.\n", len(v.l.pending))
			continue
		}
		key := v.l.pending[k-1].key
		return viewResult{open: &key}
	}
}

// printList writes the inbox list held, then how to open a request of it.
func (v *lineView) printList() {
	for _, line := range listLines(v.l) {
		v.printf("%s\n", line)
	}
	if len(v.l.pending) > 0 {
		v.printf("Type a number to open it, or nothing to go back.\n")
	} else {
		v.printf("Type nothing to go back.\n")
	}
}
