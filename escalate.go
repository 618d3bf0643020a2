package askuser

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// Escalation: an approval whose [Approvers] have Escalate steps widens who may decide
// it as it waits ([store.Escalation]). The dispatcher that made the request, and one
// that joins it while it is pending, arm a timer per step not yet fired; a step that
// comes records itself in the store with [store.Store.Update] (Tally.Escalated, a
// compare-and-set), so that it fires once across the dispatchers sharing the store,
// and only the one whose Update won tells the devices (a tool_approval_progress with
// the approvers now), the observer ([observe.Escalated]) and the Notifier (a
// [notify.Notice] To the step's people). The timers stop when the request ends here,
// as the Notifier's do (notifier.go); a timer that fires after an end elsewhere finds
// the request ended in the store, and does nothing.
//
// A step whose store fails tries again every storeRetry, a few times, while the request
// lasts. Should every dispatcher that armed a request's timers stop (its process died), the
// steps not yet fired wait for a dispatcher to join the request again; they fire at
// once then, when due. A step fired is never lost: it is in the store.

// storeRetry is how long a step waits to try again when the store failed.
const storeRetry = time.Second

// escalations is the dispatcher's table of the approvals whose steps it may fire.
type escalations struct {
	mu     sync.Mutex
	closed bool
	m      map[key]*escalation
	wg     sync.WaitGroup // the steps firing, and the notifiers running
}

type escalation struct {
	rev    uint64
	timers []*time.Timer
	ctx    context.Context // ends when the request ends here, or times out
	cancel context.CancelFunc
}

// armEscalation starts the timers of rec's pending steps, unless they run here
// already; rec is an approval, made or joined by this dispatcher, and pending.
func (d *Dispatcher) armEscalation(rec store.Record) {
	t := rec.Tally
	if t == nil || t.Escalated >= len(t.Approvers.Escalate) {
		return
	}
	e := &d.escalations
	k := key{rec.Session, rec.RequestID()}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	if e.m == nil {
		e.m = make(map[key]*escalation)
	}
	if old := e.m[k]; old != nil {
		if old.rev == rec.Rev {
			return
		}
		old.stop()
	}
	x := &escalation{rev: rec.Rev}
	x.ctx, x.cancel = context.WithDeadline(d.closing, rec.ExpiresAt())
	for i := t.Escalated; i < len(t.Approvers.Escalate); i++ {
		wait := time.Until(rec.AskedAt.Add(t.Approvers.Escalate[i].After))
		x.timers = append(x.timers, time.AfterFunc(max(wait, 0), func() { d.escalate(k, x, i) }))
	}
	e.m[k] = x
}

// escalate fires step i of the request of k, unless it has fired, or the request has
// ended; the dispatcher whose Update records it tells of it.
func (d *Dispatcher) escalate(k key, x *escalation, i int) {
	e := &d.escalations
	e.mu.Lock()
	if e.closed || e.m[k] != x {
		e.mu.Unlock()
		return
	}
	e.wg.Add(1)
	e.mu.Unlock()
	defer e.wg.Done()
	// failed waits a while after the store failed, and reports whether to try again.
	failed := func() bool {
		select {
		case <-x.ctx.Done():
			return false // ended, timed out, or closing
		case <-time.After(storeRetry):
			return true
		}
	}
	for try := 0; try <= maxUpdateTries; try++ {
		rec, err := d.store.Get(x.ctx, k.session, k.id)
		switch {
		case errors.Is(err, wire.ErrNotPending) || err == nil && (rec.Rev != x.rev || rec.Outcome != 0 || rec.Approval == nil || rec.Tally == nil):
			// Ended before this dispatcher armed it, or elsewhere, unseen.
			d.disarmEscalation(k, x.rev)
			return
		case err != nil:
			if !failed() {
				return
			}
			continue
		case rec.Tally.Escalated > i || !time.Now().Before(rec.ExpiresAt()):
			return // the step fired, or the timeout is ending it
		}
		t := *rec.Tally
		from := t.Escalated
		t.Escalated = i + 1
		a := cloneApproval(*rec.Approval)
		if a.Approvers == nil {
			a.Approvers = &wire.ApproversData{}
		}
		a.Approvers.Users, a.Approvers.Groups = approversNow(&t)
		a.Approvers.Names = approverNames(&t)
		next := rec
		next.Tally, next.Approval = &t, &a
		upd, ok, err := d.store.Update(x.ctx, next)
		if err != nil {
			if !failed() {
				return
			}
			continue
		}
		if ok {
			for s := from; s <= i; s++ {
				d.escalated(x, upd, s)
			}
			return
		}
		// Changed meanwhile (an approval, or this step by another dispatcher): again.
	}
}

// escalated tells of step s of rec, just recorded: the devices, the observer, the
// Notifier.
func (d *Dispatcher) escalated(x *escalation, rec store.Record, s int) {
	step := rec.Tally.Approvers.Escalate[s]
	to := slices.Concat(step.Users, step.Groups)
	a := rec.Approval
	data := wire.ApprovalProgressData{RequestID: a.RequestID, Approved: a.Approvers.Approved, Digest: a.Digest,
		Names: a.Approvers.Names, Users: a.Approvers.Users, Groups: a.Approvers.Groups}
	if data.Approved == nil {
		data.Approved = []string{}
	}
	if ev, err := wire.NewEvent(wire.EventApprovalProgress, rec.Session, data); err == nil {
		_ = d.t.Send(x.ctx, ev)
	}
	if d.obs != nil {
		d.observe(x.ctx, observe.Observation{Event: observe.Escalated, Session: rec.Session, RequestID: a.RequestID, Kind: store.KindApproval, ExpiresAt: a.ExpiresAt, Carrier: rec.Carrier, To: to})
	}
	if d.opts.Notifier == nil {
		return
	}
	n := noticeOf(rec)
	n.To, n.Users = to, slices.Clone(step.Users)
	e := &d.escalations
	e.wg.Add(1) // within escalate's own: Close's Wait has not returned
	go func() {
		defer e.wg.Done()
		_ = d.opts.Notifier.Notify(x.ctx, n)
	}()
}

// approverNames returns who may decide an approval of t now, for people to read: its
// users, its groups, then those of each step fired.
func approverNames(t *store.Tally) []string {
	a := &t.Approvers
	names := slices.Concat(a.Users, a.Groups)
	for _, e := range a.Escalate[:min(t.Escalated, len(a.Escalate))] {
		for _, n := range slices.Concat(e.Users, e.Groups) {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

// approversNow returns who may decide an approval of t now: its users and its groups,
// then those of each step fired.
func approversNow(t *store.Tally) (users, groups []string) {
	a := &t.Approvers
	users, groups = slices.Clone(a.Users), slices.Clone(a.Groups)
	for _, e := range a.Escalate[:min(t.Escalated, len(a.Escalate))] {
		for _, n := range e.Users {
			if !slices.Contains(users, n) {
				users = append(users, n)
			}
		}
		for _, n := range e.Groups {
			if !slices.Contains(groups, n) {
				groups = append(groups, n)
			}
		}
	}
	return users, groups
}

// disarmEscalation forgets the request of k and rev: it ended. Its notifiers still
// trying are stopped.
func (d *Dispatcher) disarmEscalation(k key, rev uint64) {
	e := &d.escalations
	e.mu.Lock()
	defer e.mu.Unlock()
	if x := e.m[k]; x != nil && x.rev == rev {
		x.stop()
		delete(e.m, k)
	}
}

func (x *escalation) stop() {
	for _, t := range x.timers {
		t.Stop()
	}
	x.cancel()
}

// closeEscalations stops every timer and notifier, and waits for them to return.
func (d *Dispatcher) closeEscalations() {
	e := &d.escalations
	e.mu.Lock()
	e.closed = true
	for k, x := range e.m {
		x.stop()
		delete(e.m, k)
	}
	e.mu.Unlock()
	e.wg.Wait()
}
