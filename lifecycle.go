package askuser

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
)

// The life of one request, a question set or an approval, from the record its caller
// builds to its end. Both kinds live it alike; only what devices are shown and what the
// caller makes of the end differ (dispatcher.go for question sets, gate.go for
// approvals). This file holds all of it, top to bottom:
//
//  1. request: the caller registers as a waiter of the request's key (calls.add), so
//     that no end can be missed; takes the key (keyLocks), records the request in the
//     store (put) or finds it already there, binds to it (calls.bind), and, when it made
//     it, sends it to the devices (send); lets the key go. A request already recorded
//     is joined when same says it asks the same, refused otherwise, and returned at
//     once when it has ended and is kept: a run resumed with the same call gets the
//     answer it missed.
//  2. wait: the first of the request's end, its expiry, or the caller's context. An
//     expiry ends it as TimedOut; a context that ends makes the caller leave, and end
//     it as Cancelled when no other caller of this dispatcher waits for it.
//  3. end: whoever ends a request (wait, a device's answer or decision, a cancel of its
//     session, a disconnection, Close) ends it in the store, where the first End wins.
//     The winner tells every device (announce), the host's hooks (report, audit), then
//     the waiters here (calls.deliver). The waiters on other dispatchers sharing the
//     store learn of it from the store's Watch (ended).
//
// Three parts share the work: the [store.Store] keeps the requests and picks the first end of
// each (memstore.go is the default one); calls, the table of waiters, knows who waits
// for what; keyLocks orders the events devices are sent for each key. Together they are
// the design card's registry of pending futures.
//
// Locking rules, for the whole file:
//
//   - calls.mu guards the waiter table and the waiters in it. Whoever takes a waiter
//     out of the table with an end gives it that end after letting calls.mu go; a
//     waiter's signal has a buffer of one, so giving never blocks.
//   - keyLocks.mu guards the state of every key. A key is held (a flag in its state,
//     not a mutex) across the store, the transport and the observer: by a caller
//     recording and sending its ask, by a caller whose context ended deciding whether it
//     was the last one waiting, and by an end recording itself and telling the devices.
//     An end never waits for a key, so a transport may end a request from inside Send;
//     a caller that cancels never waits for an ask's Put (keyLocks says how).
//   - The order is: a key's hold, then keyLocks.mu, then calls.mu. The two mutexes are
//     held for a few lines and never across the store, the transport or the host's
//     hooks. What the store's Watch calls (ended) takes no key, so a store may call it
//     at any time.
//   - Close waits for every caller between calls.add and calls.settled (recording or
//     sending its ask), cancelling a shared store's Put, so that no ask goes out after
//     it returns.

// key is a struct, not a joined string: session ids may contain any character.
type key struct {
	session SessionID
	id      string
}

// errIDTaken is the error of a request whose id holds another request, of either kind:
// the record request returns is that other one.
var errIDTaken = errors.New("askuser: the request id is taken")

// request makes *rec (not yet recorded: no Rev, no Outcome) and waits for it to end, as
// the life above says; then *rec is the ended record, and it returns the error of its
// end (the outcome's cause, when the end was this dispatcher's; nil otherwise). When
// rec's id holds a request that same does not take for rec's, *rec is that request and
// the error matches errIDTaken, nothing changed.
func (d *Dispatcher) request(ctx context.Context, rec *store.Record, same func(store.Record) bool) error {
	// The request is made in a call of its own, which returns before the wait: making it
	// grows the stack (encoding, the store, the transport, the observer), and the wait
	// then runs with only these few frames on it, so that the collector can give most of
	// the stack back while the request waits, for minutes maybe (BenchmarkPendingMemory).
	w, err := d.start(ctx, rec, same)
	if w == nil {
		return err
	}
	return d.wait(ctx, w, rec)
}

// start makes rec as request says. It returns the waiter to wait on, or nil and the
// error of the request's end when it has ended already (then rec is its record).
func (d *Dispatcher) start(ctx context.Context, r *store.Record, same func(store.Record) bool) (*waiter, error) {
	rec := *r
	ended := func(o Outcome, err error) (*waiter, error) {
		rec.Outcome = o
		d.report(rec, err, 0)
		*r = rec
		return nil, err
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
		d.keys.beforeAsk(k, rec.Rev)
		sendErr = d.send(ctx, rec)
	}
	d.keys.unlock(k)
	if created && err == nil && sendErr == nil && d.opts.Notifier != nil {
		d.arm(rec)
	}
	if err == nil && rec.Outcome == 0 && (created && sendErr == nil || !created && same(rec)) {
		d.armEscalation(rec)
	}
	d.calls.settled() // Close waits for this: no ask goes out after it returns
	switch {
	case errors.Is(err, ErrClosed):
		d.calls.remove(w)
		return ended(Shutdown, nil)
	case err != nil:
		d.calls.remove(w)
		d.storeFailed(ctx, *r, err)
		return ended(Undelivered, fmt.Errorf("%w: recording the request: %w", ErrUndelivered, err))
	case !created && !same(rec):
		d.calls.remove(w)
		*r = rec
		return nil, errIDTaken
	case rec.Outcome != 0: // ended, and kept: a run resumed with the same call
		d.calls.remove(w)
		*r = rec
		return nil, nil
	}
	if sendErr != nil {
		rec.Outcome = Undelivered
		d.end(context.Background(), rec, sendErr)
	}
	*r = rec
	return w, nil
}

// put records rec in the store. A shared store's Put, which may take as long as the
// network does, is cancelled by Close (and then fails with ErrClosed); the dispatcher's
// own store never blocks.
func (d *Dispatcher) put(ctx context.Context, rec store.Record) (store.Record, bool, error) {
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
func (d *Dispatcher) send(ctx context.Context, rec store.Record) error {
	ev, err := rec.AskEvent()
	if err == nil {
		err = d.t.Send(ctx, ev)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUndelivered, err)
	}
	if d.obs != nil {
		d.observe(ctx, observe.Observation{Event: observe.Asked, Session: rec.Session, RequestID: rec.RequestID(), Kind: rec.Kind(), Questions: len(rec.Ask.Questions), ExpiresAt: rec.ExpiresAt(), Carrier: rec.Carrier})
	}
	return nil
}

// wait waits for the request w waits for to end, sets *r to its ended record, and
// returns the error of its end. The request times out at its expiry; when ctx ends first, the
// caller stops waiting, and if no other caller of this dispatcher waits for it, the
// request ends as [Cancelled] so that nothing is left pending with nobody to read the
// answer. Should the store fail to record that end, the call returns it anyway, with the
// store's error; the request stays in the store until someone else ends it or it
// expires there.
func (d *Dispatcher) wait(ctx context.Context, w *waiter, r *store.Record) error {
	// Only this small frame, and its callers', are on the stack while the request waits.
	t := time.NewTimer(time.Until(r.ExpiresAt()))
	woke := wokeEnded
	select {
	case <-w.done:
	case <-t.C:
		woke = wokeExpired
	case <-ctx.Done():
		woke = wokeCancelled
	}
	t.Stop()
	var err error
	*r, err = d.woke(ctx, w, r, woke)
	return err
}

// Why a waiting caller woke.
const (
	wokeEnded     = iota // the request ended
	wokeExpired          // it expired
	wokeCancelled        // the caller's context ended
)

// woke is the rest of wait, once the caller has woken.
func (d *Dispatcher) woke(ctx context.Context, w *waiter, r *store.Record, woke int) (store.Record, error) {
	rec := *r
	var cause error
	var err error
	switch woke {
	case wokeEnded:
		return w.end.record(rec), w.end.err
	case wokeExpired:
		rec.Outcome = TimedOut
		_, err = d.end(context.Background(), rec, nil)
	case wokeCancelled:
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
			d.keys.unlock(k)
			break
		}
		if !alone {
			left := d.calls.remove(w)
			d.keys.unlock(k)
			if left {
				// Others still wait: the request stays open for them.
				return rec, cause
			}
			// It ended meanwhile: that end is the result, below.
			break
		}
		_, err = d.end(context.Background(), rec, cause)
		d.keys.unlock(k)
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
func (d *Dispatcher) end(ctx context.Context, rec store.Record, err error) (bool, error) {
	if rec.Approval != nil && rec.Decision == nil {
		rec.Decision = &store.Decision{At: time.Now()} // ended without a decision: when
		if rec.Tally != nil && counting(&rec.Tally.Approvers) {
			// Ended by the clock or a cancel, with the record its caller made: the
			// approvals recorded meanwhile are kept with the end, for the audit.
			if cur, err := d.store.Get(ctx, rec.Session, rec.RequestID()); err == nil && cur.Rev == rec.Rev && cur.Outcome == 0 {
				rec.Approval, rec.Tally = cur.Approval, cur.Tally
			}
		}
	}
	k := key{rec.Session, rec.RequestID()}
	holder := d.keys.enter(k)
	won, serr := d.store.End(ctx, rec)
	switch {
	case holder:
		if won {
			d.announce(rec)
		}
		d.keys.unlock(k)
	case won:
		d.keys.leave(k, &rec) // the holder sends the resolution, after the ask it is sending
	default:
		d.keys.leave(k, nil)
	}
	if serr != nil {
		d.storeFailed(ctx, rec, serr)
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
	if rec.Tally != nil {
		d.disarmEscalation(k, rec.Rev)
	}
	d.calls.deliver(rec, err)
	return true, nil
}

// ended takes an end the store's Watch saw, made by this dispatcher or another.
func (d *Dispatcher) ended(rec store.Record) {
	d.disarm(key{rec.Session, rec.RequestID()}, rec.Rev)
	if rec.Tally != nil {
		d.disarmEscalation(key{rec.Session, rec.RequestID()}, rec.Rev)
	}
	d.calls.deliver(rec, nil)
}

// cancelHandedOff ends c's request as Cancelled, for a caller that stopped waiting while
// the key was held (see wait), unless a caller of this dispatcher bound to the request
// meanwhile still waits for it. The key's holder runs it before letting the key go.
func (d *Dispatcher) cancelHandedOff(c cancelReq) {
	if !d.calls.waiting(key{c.rec.Session, c.rec.RequestID()}, c.rec.Rev) {
		d.end(context.Background(), c.rec, c.cause)
	}
}

// closeRequests is Close's part: new requests are refused, and every call waiting
// returns as Shutdown. With the dispatcher's own store, every request recorded ends
// here as Shutdown, and a caller whose request is being recorded now gets ErrClosed
// from the store; a request that an answer has just ended keeps that end. With a shared
// store, the requests stay pending there for the other dispatchers sharing it.
func (d *Dispatcher) closeRequests() {
	if d.own != nil {
		d.calls.close(0)
		for _, rec := range d.own.close() {
			rec.Outcome = Shutdown
			d.end(context.Background(), rec, nil)
		}
		return
	}
	d.calls.close(Shutdown)
}

// announce sends the resolution of an ended request to every device of the session.
// Best effort: a device that misses it is not shown the request again on reconnect,
// since it is no longer pending.
func (d *Dispatcher) announce(rec store.Record) {
	ev, err := rec.ResolvedEvent()
	if err == nil {
		_ = d.t.Send(context.Background(), ev)
	}
}

// report tells the observer that rec's request ended, with err, the error of its end
// (the outcome's own when nil).
func (d *Dispatcher) report(rec store.Record, err error, waited time.Duration) {
	if d.obs != nil {
		d.observe(context.Background(), observe.Observation{Event: observe.Ended, Session: rec.Session, RequestID: rec.RequestID(), Kind: rec.Kind(), Outcome: rec.Outcome, Waited: waited, Err: outcomeErr(rec.Outcome, err), Carrier: rec.Carrier})
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

// calls is the dispatcher's table of the callers waiting for their request to end, in
// the shape of nats.go's respMap: a map under a mutex, and a signal with a buffer of one
// per waiter. Whoever learns that a request ended (the dispatcher that ended it, or the
// store's Watch for an end elsewhere) removes that request's waiters under the lock,
// then delivers the end to each without blocking. It holds no store state and no
// ordering of events: only who waits for what.
type calls struct {
	mu     sync.Mutex
	m      map[key]*waiter // the first waiter of each key; the others follow by next
	closed bool
	// unsettled counts the callers added and not yet settled: still recording or
	// sending their request. close waits for them, on settledCond.
	unsettled   int
	settledCond sync.Cond
}

// waiter is one caller waiting for its request to end. key is set at creation; rev,
// early and next are guarded by calls.mu; end is written once, before done is
// signalled.
type waiter struct {
	key key
	// rev is the Rev of the request waited for, once the store has said it (bind);
	// until then it is 0, and ends of the key are kept in early, since one of them may be
	// that of the request the store is recording for this caller right now.
	rev   uint64
	early []end
	next  *waiter
	end   end
	done  chan struct{} // buffer 1: signalled once end is set
}

// end is how a request ended, as delivered to a waiter (who knows what it asked): which
// request (rev), its outcome and answers, and the error of the end when this dispatcher
// ended it (a cause besides the outcome's sentinel).
type end struct {
	rev      uint64
	outcome  Outcome
	answers  []Answer
	decision *store.Decision
	err      error
}

// endOf is the end of rec, with err.
func endOf(rec store.Record, err error) end {
	return end{rec.Rev, rec.Outcome, rec.Answers, rec.Decision, err}
}

// record is the ended record of the request rec made, ended as e says.
func (e end) record(rec store.Record) store.Record {
	rec.Rev, rec.Outcome, rec.Answers, rec.Decision = e.rev, e.outcome, e.answers, e.decision
	return rec
}

func newCalls() *calls {
	c := &calls{m: make(map[key]*waiter)}
	c.settledCond.L = &c.mu
	return c
}

// add registers a caller of key before its request is recorded, so that no end of it
// can be missed; false once the table is closed.
func (c *calls) add(k key) (*waiter, bool) {
	w := &waiter{key: k, done: make(chan struct{}, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, false
	}
	w.next = c.m[k]
	c.m[k] = w
	c.unsettled++
	return w, true
}

// settled says that a caller added has recorded and sent its request, or given up.
func (c *calls) settled() {
	c.mu.Lock()
	if c.unsettled--; c.unsettled == 0 {
		c.settledCond.Broadcast()
	}
	c.mu.Unlock()
}

// wait returns the end delivered to w, once it has been.
func (w *waiter) wait() end {
	<-w.done
	return w.end
}

// give delivers e to w, which its caller has removed from the table.
func (w *waiter) give(e end) {
	w.end = e
	w.done <- struct{}{}
}

// bind sets the request w waits for. An end of it seen meanwhile is delivered now.
func (c *calls) bind(w *waiter, rev uint64) {
	c.mu.Lock()
	early := w.early
	w.rev, w.early = rev, nil
	var found *end
	for i := range early {
		if early[i].rev == rev {
			found = &early[i]
		}
	}
	if found != nil && c.removeLocked(w) {
		c.mu.Unlock()
		w.give(*found)
		return
	}
	c.mu.Unlock()
}

// deliver gives rec, an ended request, and err, the error of its end when this
// dispatcher ended it, to its waiters, and returns how many.
func (c *calls) deliver(rec store.Record, err error) int {
	k := key{rec.Session, rec.RequestID()}
	var ended *waiter // linked by next, once out of the table
	c.mu.Lock()
	var kept *waiter
	for w := c.m[k]; w != nil; {
		next := w.next
		switch w.rev {
		case rec.Rev:
			w.next, ended = ended, w
		case 0:
			w.early = append(w.early, endOf(rec, err))
			w.next, kept = kept, w
		default:
			w.next, kept = kept, w
		}
		w = next
	}
	if kept == nil {
		delete(c.m, k)
	} else {
		c.m[k] = kept
	}
	c.mu.Unlock()
	n := 0
	for w := ended; w != nil; {
		next := w.next
		w.next = nil
		w.give(endOf(rec, err))
		w = next
		n++
	}
	return n
}

// remove takes w out of the table and reports whether it was still there: false means an
// end has been, or is being, delivered to it.
func (c *calls) remove(w *waiter) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.removeLocked(w)
}

func (c *calls) removeLocked(w *waiter) bool {
	var prev *waiter
	for x := c.m[w.key]; x != nil; prev, x = x, x.next {
		if x != w {
			continue
		}
		switch {
		case prev != nil:
			prev.next = x.next
		case x.next != nil:
			c.m[w.key] = x.next
		default:
			delete(c.m, w.key)
		}
		x.next = nil
		return true
	}
	return false
}

// alone reports whether w is still in the table (not yet given an end, by Close say),
// and whether it is the only caller there waiting for its request. A caller not yet
// bound does not count: the dispatcher asks with the request's key locked, and callers
// bind under that lock, so such a caller records its request only after w's has ended
// (and finds it ended and kept, or asks anew).
func (c *calls) alone(w *waiter) (in, alone bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	alone = true
	for x := c.m[w.key]; x != nil; x = x.next {
		if x == w {
			in = true
		} else if x.rev == w.rev {
			alone = false
		}
	}
	return in, alone
}

// waiting reports whether a caller in the table waits for request rev of k.
func (c *calls) waiting(k key, rev uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for x := c.m[k]; x != nil; x = x.next {
		if x.rev == rev {
			return true
		}
	}
	return false
}

// close makes add fail from then on, waits for the callers added to settle, and, unless
// last is 0, ends every wait with the outcome last.
func (c *calls) close(last Outcome) {
	c.mu.Lock()
	c.closed = true
	for c.unsettled > 0 {
		c.settledCond.Wait()
	}
	if last == 0 {
		c.mu.Unlock()
		return
	}
	// Each waiter's rev is read here, under the lock: a caller whose request has just
	// been recorded may be binding it right now.
	var ended []*waiter
	var revs []uint64
	for _, w := range c.m {
		for w != nil {
			next := w.next
			w.next = nil
			ended, revs = append(ended, w), append(revs, w.rev)
			w = next
		}
	}
	c.m = make(map[key]*waiter)
	c.mu.Unlock()
	for i, w := range ended {
		w.give(end{rev: revs[i], outcome: last})
	}
}

// keyLocks orders the events of each request key: the ask of a request is recorded
// and sent while its key is held, and so is the resolution of every request of that
// key, so that no device is told of a request's end before its ask, nor of an ask of an
// id before the resolution of that id's previous request.
//
// An end never waits for the key. When it is held (by a caller sending the ask, say,
// whose transport may be the very one that ends the request from inside Send), the
// end joins the holder as a guest: it records the end in the store at once and leaves
// the resolution with the holder, who sends it before letting the key go. Unrelated
// keys never wait for each other; a key's state is dropped when nobody uses it.
//
// A caller whose context ends takes the key to decide, with no caller binding meanwhile,
// whether it is the last one waiting for its request (and so ends it as Cancelled). It
// does not wait for a caller that holds the key to record an ask, which may take as long
// as a shared store's Put: it leaves the decision with that holder (lockOrHandOff).
type keyLocks struct {
	mu sync.Mutex
	m  map[key]*keyState
	// free holds states let go, for state to use again: a key's lock costs no
	// allocation once a few have been made. Nothing refers to a state let go.
	free []*keyState
	// publish sends a resolution; cancel is run for each cancellation handed to a holder.
	// Both are set once, by New (announce and cancelHandedOff).
	publish func(store.Record)
	cancel  func(cancelReq)
}

// cancelReq is a caller that stopped waiting while the key was held: the holder ends rec's
// request as Cancelled unless another caller waits for it by then.
type cancelReq struct {
	rec   store.Record
	cause error
}

// keyState is one key's lock; every field is guarded by keyLocks.mu.
type keyState struct {
	held     bool
	asking   bool           // the holder is recording (Put) and sending an ask
	waiters  int            // callers of lockAsk and lockOrHandOff waiting for the key
	guests   int            // ends running while someone else holds the key
	deferred []store.Record // resolutions the guests left, for the holder to send
	cancels  []cancelReq
	changed  sync.Cond
}

// state returns k's state, made if need be; l.mu is held.
func (l *keyLocks) state(k key) *keyState {
	if l.m == nil {
		l.m = make(map[key]*keyState)
	}
	s := l.m[k]
	if s == nil {
		if n := len(l.free); n > 0 {
			s = l.free[n-1]
			l.free[n-1] = nil
			l.free = l.free[:n-1]
		} else {
			s = &keyState{}
			s.changed.L = &l.mu
		}
		l.m[k] = s
	}
	return s
}

// maxFreeStates bounds the states kept for use again.
const maxFreeStates = 64

// lockOrHandOff takes k when it is free and returns true. When it is held, it runs
// leave (which takes the caller out of the table of waiters) and, if that reports true,
// hands c to the holder; it returns false then, and ended reports whether leave failed.
func (l *keyLocks) lockOrHandOff(k key, c cancelReq, leave func() bool) (took, ended bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.state(k)
	for s.held && !s.asking {
		s.waiters++
		s.changed.Wait()
		s.waiters--
	}
	if !s.held {
		s.held = true
		return true, false
	}
	if !leave() {
		return false, true
	}
	s.cancels = append(s.cancels, c)
	return false, false
}

// lockAsk takes k, once it is free, for a caller about to record and send an ask: a
// caller that cancels meanwhile hands its decision to it instead of waiting for its Put.
func (l *keyLocks) lockAsk(k key) {
	l.mu.Lock()
	s := l.state(k)
	for s.held {
		s.waiters++
		s.changed.Wait()
		s.waiters--
	}
	s.held, s.asking = true, true
	l.mu.Unlock()
}

// enter takes k when it is free and returns true; when it is held, it joins the holder
// as a guest and returns false. A holder lets k go with unlock, a guest with leave.
func (l *keyLocks) enter(k key) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.state(k)
	if !s.held {
		s.held = true
		return true
	}
	s.guests++
	return false
}

// leave ends a guest's stay; resolved, when not nil, is a resolution for the holder to
// send.
func (l *keyLocks) leave(k key, resolved *store.Record) {
	l.mu.Lock()
	s := l.m[k]
	if resolved != nil {
		s.deferred = append(s.deferred, *resolved)
	}
	s.guests--
	s.changed.Broadcast()
	l.mu.Unlock()
}

// beforeAsk is called by the holder of k about to send the ask of the request rev it
// has just recorded: it waits for the guests to leave and sends the resolutions they
// left of earlier requests of k (which may have ended, and made room for this one,
// while it was recording). Those of request rev itself wait for unlock: they follow
// the ask.
func (l *keyLocks) beforeAsk(k key, rev uint64) {
	l.mu.Lock()
	s := l.m[k]
	for {
		for s.guests > 0 {
			s.changed.Wait()
		}
		var stale []store.Record
		kept := s.deferred[:0]
		for _, r := range s.deferred {
			if r.Rev == rev {
				kept = append(kept, r)
			} else {
				stale = append(stale, r)
			}
		}
		s.deferred = kept
		if len(stale) == 0 {
			break
		}
		l.mu.Unlock()
		for _, r := range stale {
			l.publish(r)
		}
		l.mu.Lock()
	}
	l.mu.Unlock()
}

// unlock lets k go, once the guests have left and their resolutions have been sent
// with publish (outside the lock of the table, so publish may take its time).
func (l *keyLocks) unlock(k key) {
	l.mu.Lock()
	s := l.m[k]
	for {
		for s.guests > 0 {
			s.changed.Wait()
		}
		if len(s.deferred) == 0 && len(s.cancels) == 0 {
			break
		}
		recs, cancels := s.deferred, s.cancels
		s.deferred, s.cancels = nil, nil
		l.mu.Unlock()
		for _, r := range recs {
			l.publish(r)
		}
		for _, c := range cancels {
			l.cancel(c)
		}
		l.mu.Lock()
	}
	s.held, s.asking = false, false
	if s.waiters == 0 {
		// No waiter, no guest, no holder: nobody has s. It is let go, clean.
		delete(l.m, k)
		if len(l.free) < maxFreeStates {
			s.deferred, s.cancels = nil, nil
			l.free = append(l.free, s)
		}
	} else {
		s.changed.Broadcast()
	}
	l.mu.Unlock()
}
