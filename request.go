package askuser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// The life of one request, a question set or an approval, from the record its caller
// builds to its end. Both kinds live it alike; only what devices are shown and what the
// caller makes of the end differ (dispatcher.go for question sets, gate.go for
// approvals). Read in order:
//
//  1. request: the caller registers as a waiter of the request's key (calls, in
//     registry.go), so that no end can be missed; takes the key (keyLocks), records the
//     request in the store (put) or finds it already there, binds to it, and, when it
//     made it, sends it to the devices (send); lets the key go. A request already
//     recorded is joined when same says it asks the same, refused otherwise, and
//     returned at once when it has ended and is kept.
//  2. wait: the first of the request's end, its expiry, or the caller's context. An
//     expiry ends it as TimedOut; a context that ends makes the caller leave, and end
//     it as Cancelled when no other caller of this dispatcher waits for it.
//  3. end: whoever ends a request (wait, a device's event in HandleEvent, a cancel, a
//     disconnection, Close) ends it in the store, where the first End wins. The winner
//     tells every device (announce: after the ask, the key's lock sees to it), the
//     host's hooks (report, audit), then the waiters here (calls.deliver). The waiters
//     on other dispatchers sharing the store learn of it from the store's Watch.

// errIDTaken is the error of a request whose id holds another request, of either kind:
// the record request returns is that other one.
var errIDTaken = errors.New("askuser: the request id is taken")

// request makes rec (not yet recorded: no Rev, no Outcome) and waits for it to end, as
// the life above says, and returns the ended record and the error of its end (the
// outcome's cause, when the end was this dispatcher's; nil otherwise). When rec's id
// holds a request that same does not take for rec's, it returns that request with an
// error matching errIDTaken, having changed nothing.
func (d *Dispatcher) request(ctx context.Context, rec Record, same func(Record) bool) (Record, error) {
	ended := func(o Outcome, err error) (Record, error) {
		rec.Outcome = o
		d.report(rec, err, 0)
		return rec, err
	}
	session, id := rec.Session, rec.RequestID()
	if d.obs != nil {
		rec.Carrier = d.obs.Carrier(ctx)
	}
	if d.opts.FailWithoutDevice && d.presence != nil && !d.presence.Connected(session) {
		return ended(Undelivered, errNoDevice)
	}
	k := key{session, id}
	w, ok := d.calls.add(k)
	if !ok {
		return ended(Shutdown, nil)
	}
	d.keys.lockAsk(k)
	rec, created, err := d.put(ctx, rec)
	if err == nil && rec.Outcome == 0 && (created || same(rec)) {
		// Bound under the key's lock, which a caller that cancels takes to see whether
		// it is the last one waiting.
		d.calls.bind(w, rec.Rev)
	}
	var sendErr error
	if err == nil && created {
		d.keys.beforeAsk(k, rec.Rev, d.announce)
		sendErr = d.send(ctx, rec)
	}
	d.keys.unlock(k, d.announce)
	if created && err == nil && sendErr == nil && d.opts.Notifier != nil {
		d.arm(rec)
	}
	d.calls.settled() // Close waits for this: no ask goes out after it returns
	switch {
	case errors.Is(err, ErrClosed):
		d.calls.remove(w)
		return ended(Shutdown, nil)
	case err != nil:
		d.calls.remove(w)
		d.warn(ctx, "askuser: the store failed to record a request", slog.String("askuser.session", session.String()), slog.String("askuser.request.id", id), slog.String("error", err.Error()))
		return ended(Undelivered, fmt.Errorf("%w: recording the request: %w", ErrUndelivered, err))
	case !created && !same(rec):
		d.calls.remove(w)
		return rec, errIDTaken
	case rec.Outcome != 0: // ended, and kept: a run resumed with the same call
		d.calls.remove(w)
		return rec, nil
	}
	if sendErr != nil {
		rec.Outcome = Undelivered
		d.end(context.Background(), rec, sendErr)
	}
	return d.wait(ctx, w, rec)
}

// put records rec in the store. A shared store's Put, which may take as long as the
// network does, is cancelled by Close (and then fails with ErrClosed); the dispatcher's
// own store never blocks.
func (d *Dispatcher) put(ctx context.Context, rec Record) (Record, bool, error) {
	if d.own != nil {
		return d.store.Put(ctx, rec)
	}
	putCtx, stopPut := context.WithCancelCause(ctx)
	defer stopPut(nil)
	stopAfter := context.AfterFunc(d.closing, func() { stopPut(ErrClosed) })
	defer stopAfter()
	rec, created, err := d.store.Put(putCtx, rec)
	if err != nil && errors.Is(context.Cause(putCtx), ErrClosed) {
		err = ErrClosed
	}
	return rec, created, err
}

// send delivers the request to the devices (its ask, or its approval event), and
// returns why it could not, an error wrapping [ErrUndelivered].
func (d *Dispatcher) send(ctx context.Context, rec Record) error {
	ev, err := rec.AskEvent()
	if err == nil {
		err = d.t.Send(ctx, ev)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUndelivered, err)
	}
	if d.obs != nil || d.log != nil {
		d.observe(ctx, Observation{What: ObservedAsk, Session: rec.Session, RequestID: rec.RequestID(), Kind: rec.Kind(), Questions: len(rec.Ask.Questions), ExpiresAt: rec.ExpiresAt(), Carrier: rec.Carrier})
	}
	return nil
}

// wait waits for the request w waits for to end, and returns its ended record and the
// error of its end. The request times out at its expiry; when ctx ends first, the
// caller stops waiting, and if no other caller of this dispatcher waits for it, the
// request ends as [Cancelled] so that nothing is left pending with nobody to read the
// answer. Should the store fail to record that end, the call returns it anyway, with the
// store's error; the request stays in the store until someone else ends it or it
// expires there.
func (d *Dispatcher) wait(ctx context.Context, w *waiter, rec Record) (Record, error) {
	t := time.NewTimer(time.Until(rec.ExpiresAt()))
	defer t.Stop()
	var cause error
	var err error
	select {
	case <-w.done:
		return w.end.record(rec), w.end.err
	case <-t.C:
		rec.Outcome = TimedOut
		_, err = d.end(context.Background(), rec, nil)
	case <-ctx.Done():
		cause = errors.Join(ErrCancelled, context.Cause(ctx))
		rec.Outcome = Cancelled
		// Under the key's lock no caller can join the request (callers bind under it),
		// so that none is left waiting for a request this one ends as Cancelled.
		k := key{rec.Session, rec.RequestID()}
		took, ended := d.keys.lockOrHandOff(k, cancelReq{rec, cause}, func() bool { return d.calls.remove(w) })
		if !took {
			if ended {
				break // it ended meanwhile: that end is the result, below
			}
			// The holder ends the request unless a caller that it bound still waits.
			return rec, cause
		}
		in, alone := d.calls.alone(w)
		if !in {
			// Ended, or shut down, meanwhile: that end is the result, below.
			d.keys.unlock(k, d.announce)
			break
		}
		if !alone {
			left := d.calls.remove(w)
			d.keys.unlock(k, d.announce)
			if left {
				// Others still wait: the request stays open for them.
				return rec, cause
			}
			// It ended meanwhile: that end is the result, below.
			break
		}
		_, err = d.end(context.Background(), rec, cause)
		d.keys.unlock(k, d.announce)
	}
	if err != nil && d.calls.remove(w) {
		return rec, errors.Join(outcomeErr(rec.Outcome, nil), cause, err)
	}
	// Ended by us, or a moment earlier by someone else, whose end is what w gets: the
	// first wins.
	e := w.wait()
	return e.record(rec), e.err
}

// end tries to end rec's request with rec.Outcome (and rec.Answers or rec.Decision),
// and reports whether it did, or the store's error. The dispatcher that ends a request
// tells every device of the session, then the host's hooks, then the callers waiting
// here; an end by another dispatcher sharing the store reaches the callers here through
// the store's Watch. When the store says the request had already ended, its record is
// fetched and delivered here too, in case the Watch has not. ctx bounds the store's work.
func (d *Dispatcher) end(ctx context.Context, rec Record, err error) (bool, error) {
	if rec.Approval != nil && rec.Decision == nil {
		rec.Decision = &Decision{At: time.Now()} // ended without a decision: when
	}
	k := key{rec.Session, rec.RequestID()}
	holder := d.keys.enter(k)
	won, serr := d.store.End(ctx, rec)
	switch {
	case holder:
		if won {
			d.announce(rec)
		}
		d.keys.unlock(k, d.announce)
	case won:
		d.keys.leave(k, &rec) // the holder sends the resolution, after the ask it is sending
	default:
		d.keys.leave(k, nil)
	}
	if serr != nil {
		d.warn(ctx, "askuser: the store failed to end a request", slog.String("askuser.session", rec.Session.String()), slog.String("askuser.request.id", rec.RequestID()), slog.String("askuser.outcome", rec.Outcome.String()), slog.String("error", serr.Error()))
		// Maybe ended by this very end, maybe not: it cannot be told, and a store that
		// has just failed would most likely make a caller wait as long again to say.
		// The store's Watch delivers the end, should there be one.
		return false, serr
	}
	if !won {
		if cur, gerr := d.store.Get(ctx, rec.Session, rec.RequestID()); gerr == nil && cur.Rev == rec.Rev && cur.Outcome != 0 {
			d.calls.deliver(cur, nil)
		}
		return false, nil
	}
	d.report(rec, err, time.Since(rec.AskedAt))
	if rec.Approval != nil {
		d.audit(rec)
	}
	d.disarm(k, rec.Rev)
	d.calls.deliver(rec, err)
	return true, nil
}

// ended takes an end the store's Watch saw, made by this dispatcher or another.
func (d *Dispatcher) ended(rec Record) {
	d.disarm(key{rec.Session, rec.RequestID()}, rec.Rev)
	d.calls.deliver(rec, nil)
}

// announce sends the resolution of an ended request to every device of the session.
// Best effort: a device that misses it is not shown the request again on reconnect,
// since it is no longer pending.
func (d *Dispatcher) announce(rec Record) {
	ev, err := rec.ResolvedEvent()
	if err == nil {
		_ = d.t.Send(context.Background(), ev)
	}
}

// report tells the observer that rec's request ended, with err, the error of its end
// (the outcome's own when nil).
func (d *Dispatcher) report(rec Record, err error, waited time.Duration) {
	if d.obs != nil || d.log != nil {
		d.observe(context.Background(), Observation{What: ObservedEnd, Session: rec.Session, RequestID: rec.RequestID(), Kind: rec.Kind(), Outcome: rec.Outcome, Waited: waited, Err: outcomeErr(rec.Outcome, err), Carrier: rec.Carrier})
	}
}

// outcomeErr is the error of an end: err when set, otherwise the outcome's sentinel (nil
// for the outcomes that are no error).
func outcomeErr(o Outcome, err error) error {
	if err != nil {
		return err
	}
	if e := endingOf(o, nil); e != nil {
		return e.err
	}
	return ErrUndelivered // an outcome this version does not know, from a shared store
}

// AskEvent returns the event that shows the pending request to devices: an
// [EventAsk] of its question set, or an [EventApproval].
func (r Record) AskEvent() (Event, error) {
	if r.Approval != nil {
		return NewEvent(EventApproval, r.Session, r.Approval)
	}
	return NewEvent(EventAsk, r.Session, &r.Ask)
}

// ResolvedEvent returns the event that tells devices how the ended request ended: an
// [EventResolved] with the answers of a question set, or an [EventApprovalResolved] with
// what the decision says. An outcome this version does not know (written to a shared
// store by a newer one) is told as [Undelivered].
func (r Record) ResolvedEvent() (Event, error) {
	if r.Approval == nil {
		data := ResolvedData{RequestID: r.Ask.RequestID, Outcome: r.Outcome, Answers: r.Answers}
		if e := endingOf(data.Outcome, nil); e == nil || data.Outcome >= Approved {
			data.Outcome, data.Answers = Undelivered, nil
		}
		return NewEvent(EventResolved, r.Session, data)
	}
	data := ApprovalResolvedData{RequestID: r.Approval.RequestID, Outcome: r.Outcome}
	if dec := r.Decision; dec != nil {
		data.Reason, data.Arguments = dec.Reason, dec.Arguments
		if dec.Grant != nil {
			data.Grant = dec.Grant.Covers
		}
	}
	if approvalEndingOf(data.Outcome) == nil || data.Outcome == Invalid {
		data.Outcome = Undelivered
	}
	return NewEvent(EventApprovalResolved, r.Session, data)
}
