package askuser

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// Reaching a person who is not looking: a request (a question set or an approval) that
// has gone [Options.NotifyAfter] with no device of its session visible to its person is
// given to the host's [notify.Notifier], once.

// defaultNotifyAfter is how long a request waits unseen before it is given to the
// Notifier, unless [Options.NotifyAfter] says otherwise.
const defaultNotifyAfter = 10 * time.Second

// notices is the dispatcher's table of the requests it may notify of: a timer for each
// until it fires, then the cancel of the notifier's context until the request ends.
type notices struct {
	mu     sync.Mutex
	closed bool
	m      map[key]*notice
	wg     sync.WaitGroup // the notifiers running
}

type notice struct {
	rev    uint64
	timer  *time.Timer
	cancel context.CancelFunc // set once the notifier runs
}

// arm starts the wait of rec's request, just sent; the dispatcher has a Notifier.
func (d *Dispatcher) arm(rec store.Record) {
	n := &d.notices
	k := key{rec.Session, rec.RequestID()}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	if n.m == nil {
		n.m = make(map[key]*notice)
	}
	if old := n.m[k]; old != nil {
		old.stop()
	}
	x := &notice{rev: rec.Rev}
	x.timer = time.AfterFunc(d.opts.NotifyAfter, func() { d.fire(k, x, rec, rec.AskedAt) })
	n.m[k] = x
}

// fire gives rec's request to the Notifier, unless it ended meanwhile; when a device
// has shown it since since, it looks again NotifyAfter later, so that the notice comes
// once the request has gone a whole NotifyAfter unseen.
func (d *Dispatcher) fire(k key, x *notice, rec store.Record, since time.Time) {
	if !d.calls.waiting(k, rec.Rev) {
		d.disarm(k, rec.Rev)
		return
	}
	n := &d.notices
	if now := time.Now(); d.watched(rec.Session, since) {
		n.mu.Lock()
		if !n.closed && n.m[k] == x {
			x.timer = time.AfterFunc(d.opts.NotifyAfter, func() { d.fire(k, x, rec, now) })
		}
		n.mu.Unlock()
		return
	}
	n.mu.Lock()
	if n.closed || n.m[k] != x {
		n.mu.Unlock()
		return
	}
	ctx, cancel := context.WithDeadline(d.closing, rec.ExpiresAt())
	x.cancel = cancel
	n.wg.Add(1)
	n.mu.Unlock()
	if d.obs != nil {
		d.obs.Observe(ctx, observe.Observation{Event: observe.Notified, Session: rec.Session, RequestID: rec.RequestID(), Kind: rec.Kind(), Carrier: rec.Carrier})
	}
	go func() {
		defer n.wg.Done()
		defer cancel()
		_ = d.opts.Notifier.Notify(ctx, noticeOf(rec))
	}()
}

// watched reports whether a device of session has shown it to its person since t.
func (d *Dispatcher) watched(session SessionID, t time.Time) bool {
	if a, ok := d.t.(wire.Attention); ok {
		return a.WatchedSince(session, t)
	}
	return d.presence != nil && d.presence.Connected(session)
}

// disarm forgets the request of k and rev: it ended, or it will not be notified of. A
// notifier still trying is stopped.
func (d *Dispatcher) disarm(k key, rev uint64) {
	n := &d.notices
	n.mu.Lock()
	defer n.mu.Unlock()
	if x := n.m[k]; x != nil && x.rev == rev {
		x.stop()
		delete(n.m, k)
	}
}

func (x *notice) stop() {
	x.timer.Stop()
	if x.cancel != nil {
		x.cancel()
	}
}

// closeNotices stops every wait and notifier, and waits for the notifiers to return.
func (d *Dispatcher) closeNotices() {
	n := &d.notices
	n.mu.Lock()
	n.closed = true
	for k, x := range n.m {
		x.stop()
		delete(n.m, k)
	}
	n.mu.Unlock()
	n.wg.Wait()
}

// noticeOf describes rec for a Notifier.
func noticeOf(rec store.Record) notify.Notice {
	n := notify.Notice{Kind: rec.Kind(), Session: rec.Session, RequestID: rec.RequestID(), ExpiresAt: rec.ExpiresAt()}
	if a := rec.Approval; a != nil {
		n.Title = a.Tool
		n.Decisions = append([]string(nil), a.Decisions...)
		if a.Approvers != nil {
			n.Users = slices.Clone(a.Approvers.Users) // a link of no person cannot decide it
		}
	} else if len(rec.Ask.Questions) > 0 {
		n.Title = rec.Ask.Questions[0].Question
	}
	return n
}
