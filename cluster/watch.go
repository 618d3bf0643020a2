package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The store's watch: one goroutine reads every change of the bucket, in the stream's
// order, and keeps what it has seen of the pending questions (the mirror). For each
// change it updates the mirror first, then hands the change on: to the Transport's relay
// as an ask or resolved event for the replica's devices, and, for an end, to the Watch
// callbacks. Mirror first, so that a device joining in between (which reads the mirror)
// sees the question either in its snapshot or in the event, or, for a resolution, is
// sent one for a question it never saw, which devices ignore: never an ask twice, never
// a lost one.
//
// The watch starts from a snapshot of the bucket (the last value of every key) and is
// started again from a fresh one when the connection to NATS comes back, when its
// consumer's heartbeats stop (the server that held it is gone, while the replica's own
// connection stays up), or when its audit finds it behind the stream's leader (see
// audit.go): the snapshot is compared with the mirror, and whatever changed meanwhile is
// handed on as above.

func (s *Store) loop(ready chan struct{}) {
	defer close(s.done)
	status := s.nc.StatusChanged(nats.CONNECTED)
	defer s.nc.RemoveStatusListener(status)
	// A new leader of the bucket's stream: the requests in flight go to it at once. A
	// watch that runs goes on: its consumer is on a server that is alive, or its
	// heartbeats stop (starting every replica's watch again here would place their new
	// consumers while the dead server may still be counted among the living); it asks the
	// leader about the questions it could not settle. A watch waiting to start again
	// starts at once: quorum is back.
	leader, err := s.nc.Subscribe("$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED."+s.stream, func(*nats.Msg) {
		s.log.Debug("cluster: the bucket's stream has a new leader")
		s.elected()
		signal(s.newLeader)
	})
	if err == nil {
		defer func() { _ = leader.Unsubscribe() }()
	}
	wait := 50 * time.Millisecond
	// Making a watch's consumer may wait for a server that has just died and is not yet
	// known to be gone (the consumer placed on it): the first two tries give up after half
	// a second, the next ones later, up to the request timeout; each is placed anew.
	firstMake := min(500*time.Millisecond, s.opts.RequestTimeout)
	try, failed := firstMake, 0
	for s.ctx.Err() == nil {
		err := s.watch(status, ready, try)
		if err == nil {
			wait, try, failed = 50*time.Millisecond, firstMake, 0
			continue
		}
		if s.ctx.Err() != nil {
			return
		}
		if errors.Is(err, errNotStarted) {
			if failed++; failed >= 2 {
				try = min(2*try, s.opts.RequestTimeout)
			}
		}
		s.log.Warn("cluster: watching the bucket; trying again", "err", err, "in", wait)
		select {
		case <-time.After(wait):
		case <-s.newLeader:
			wait, try, failed = 50*time.Millisecond, firstMake, 0
			continue
		case <-s.ctx.Done():
			return
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// kick makes the watch start again from a fresh snapshot.
func (s *Store) kick() { signal(s.restart) }

// signal sends on ch, of buffer 1, unless a signal is already waiting there.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// watch runs one watch of the bucket, whose consumer is made within try: its snapshot,
// then its changes, until it must be started again (nil) or fails.
func (s *Store) watch(status chan nats.Status, ready chan struct{}, try time.Duration) error {
	// Signals that came before this watch are covered by its snapshot.
	for drained := false; !drained; {
		select {
		case <-s.restart:
		case <-status:
		default:
			drained = true
		}
	}
	f, err := s.startWatch(try)
	if err != nil {
		return err
	}
	defer s.stopWatch(f)
	// A snapshot that stops coming (its consumer was on a server that went) is started
	// again.
	stalled := time.NewTimer(s.opts.RequestTimeout)
	defer stalled.Stop()
	var snap []entry
	a := &audit{doubts: make(map[string]uint64), done: make(chan auditResult, 1)}
	for done := f.initial == 0; !done; {
		select {
		case e := <-f.entries:
			snap = append(snap, e)
			a.seen = max(a.seen, e.rev)
			done = e.pending == 0 || uint64(len(snap)) >= f.initial
			stalled.Reset(s.opts.RequestTimeout)
		case err := <-f.lost:
			return err
		case <-stalled.C:
			return errSnapshotStalled
		case <-status:
			return nil
		case <-s.restart:
			return nil
		case <-s.ctx.Done():
			return nil
		}
	}
	s.reconcile(snap, a.doubts)
	if ready != nil {
		select {
		case <-ready:
		default:
			close(ready)
		}
	}
	if len(a.doubts) > 0 {
		s.startAudit(a)
	}
	tick := time.NewTicker(auditInterval)
	defer tick.Stop()
	for {
		select {
		case e := <-f.entries:
			s.apply(e)
			a.seen = max(a.seen, e.rev)
		case <-tick.C:
			s.startAudit(a)
		case <-s.newLeader:
			if len(a.doubts) > 0 {
				s.startAudit(a)
			}
		case r := <-a.done:
			if err := s.audited(a, r); err != nil {
				return err
			}
		case err := <-f.lost:
			return err
		case <-status:
			s.log.Debug("cluster: reconnected")
			return nil
		case <-s.restart:
			return nil
		case <-s.ctx.Done():
			return nil
		}
	}
}

// errSnapshotStalled is why a watch whose snapshot stopped coming is started again.
var errSnapshotStalled = errors.New("cluster: the bucket's snapshot stalled")

// watchHeartbeat is how often the server that holds a watch's consumer says it is there
// while nothing changes: the least nats.go allows. When two in a row do not come, the
// consumer is taken as lost with its server, and the watch starts again on a new one:
// about a second after a server dies under a watch whose own connection stays up.
const watchHeartbeat = 500 * time.Millisecond

// watchExpiry is how long each of a watch's pull requests waits for messages, and
// watchInactive how long a consumer of a watch that has stopped stays on the server.
const (
	watchExpiry   = 5 * time.Second
	watchInactive = 30 * time.Second
)

// entry is one message of the bucket's stream, as the watch reads it.
type entry struct {
	key     string
	value   []byte
	rev     uint64 // the message's stream sequence: the key's revision
	put     bool   // false: the key was removed (a TTL ran out), or deleted
	pending uint64 // how many messages of the watch were still to come after this one
}

// kvOperation is the header of nats.go's key-value deletes and purges.
const kvOperation = "KV-Operation"

// isPut reports whether a message of the bucket, by its headers, holds a record: not a
// delete, a purge, or the marker of a key whose TTL ran out.
func isPut(h nats.Header) bool {
	return h.Get(kvOperation) == "" && h.Get(jetstream.MarkerReasonHeader) == ""
}

// feed is one watch of the bucket: an ordered consumer of its stream that delivers the
// last message of every key (the snapshot), then every new one.
type feed struct {
	entries  chan entry
	lost     chan error    // buffer 1: the consumer is lost, and why
	done     chan struct{} // closed when the watch stops: frees a delivery in flight
	cc       jetstream.ConsumeContext
	initial  uint64 // how many messages the snapshot has
	consumer string // the consumer's name
	// starved, set by tests, drops the consumer's messages: a consumer that sends its
	// heartbeats and nothing else.
	starved atomic.Bool
}

// errNotStarted is a watch whose consumer could not be made.
var errNotStarted = errors.New("cluster: starting the watch")

// startWatch starts a watch of the whole bucket, its consumer made within try. It
// reports a lost consumer (missed heartbeats, the consumer deleted, a reset that
// failed) on f.lost: the watch is then started again, on a new consumer, from a fresh
// snapshot.
func (s *Store) startWatch(try time.Duration) (*feed, error) {
	ctx, cancel := context.WithTimeout(s.ctx, try)
	defer cancel()
	// A new leader: the loop makes it again at once (the try may be stuck on a server
	// that was not known to be gone).
	defer context.AfterFunc(s.leaderTerm(), cancel)()
	cons, err := s.js.OrderedConsumer(ctx, s.stream, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{s.subjects + ">"},
		DeliverPolicy:     jetstream.DeliverLastPerSubjectPolicy,
		InactiveThreshold: watchInactive,
		// nats.go would make a new consumer itself; the watch does, from a snapshot.
		MaxResetAttempts: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotStarted, err)
	}
	info := cons.CachedInfo()
	f := &feed{entries: make(chan entry, 256), lost: make(chan error, 1), done: make(chan struct{}), initial: info.NumPending, consumer: info.Name}
	deliver := func(m jetstream.Msg) {
		if f.starved.Load() {
			return
		}
		md, err := m.Metadata()
		if err != nil {
			f.fail(err)
			return
		}
		e := entry{key: strings.TrimPrefix(m.Subject(), s.subjects), value: m.Data(), rev: md.Sequence.Stream, pending: md.NumPending, put: isPut(m.Headers())}
		select {
		case f.entries <- e:
		case <-f.done:
		}
	}
	f.cc, err = cons.Consume(deliver, jetstream.PullHeartbeat(watchHeartbeat), jetstream.PullExpiry(watchExpiry),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) { f.fail(err) }))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotStarted, err)
	}
	s.mu.Lock()
	s.feed = f
	s.mu.Unlock()
	return f, nil
}

// fail reports that the feed's consumer is lost; the first report is kept.
func (f *feed) fail(err error) {
	select {
	case f.lost <- fmt.Errorf("cluster: the watch's consumer is lost: %w", err):
	default:
	}
}

// stopWatch stops f in the background, and Close waits for it: stopping waits for
// nats.go's own attempt at making a new consumer, should one be under way (up to 10 s,
// when the consumer is placed on a server that has just died).
func (s *Store) stopWatch(f *feed) {
	close(f.done)
	s.bg.Go(func() {
		f.cc.Stop()
		t := time.NewTimer(10 * time.Second)
		defer t.Stop()
		select {
		case <-f.cc.Closed():
		case <-t.C:
		}
	})
}

// change is what the watch hands on after updating the mirror: events for the relay and
// ended records for the Watch callbacks.
type change struct {
	events []wire.Event
	ended  []store.Record
}

// reconcile makes the mirror what the snapshot says, and hands on the differences;
// doubts gets the questions it cannot settle. Every message of a snapshot is committed,
// but the snapshot may come from a server still catching up (a watch's consumer need not
// be on the stream's leader): its messages are as new as the mirror's, or older, never
// ahead of the stream. So a key whose snapshot message is later than the mirror's
// question says that the question is over (its end, the key removed, or another question
// under it), and a pending record the mirror lacks is pending (its end, if it has one, is
// still to come, through this watch). A key whose snapshot message is older than the
// mirror's, or which has none, cannot be told: its question stays pending in the mirror,
// and in doubts, for the audit to ask the stream's leader (see audit.go). Nothing here
// waits for the network: a snapshot taken while the stream has no leader (quorum just
// back, a leader being elected) is taken in full.
func (s *Store) reconcile(snap []entry, doubts map[string]uint64) {
	slices.SortFunc(snap, func(a, b entry) int { return cmpUint(a.rev, b.rev) })
	last := make(map[string]entry, len(snap))
	now := make(map[string]store.Record, len(snap)) // the records that decode
	var ch change
	for _, e := range snap {
		last[e.key] = e
		if rec, ok := s.record(e); ok {
			now[e.key] = rec
			if rec.Outcome != 0 {
				ch.ended = append(ch.ended, rec)
			}
		}
	}
	// Only this goroutine changes the mirror.
	s.mu.Lock()
	s.restarts++
	var over []store.Record
	for key, m := range s.pending {
		switch e, ok := last[key]; {
		case ok && e.rev == lastRevision(m.rec): // still pending
		case ok && e.rev > lastRevision(m.rec) && updateOf(m, now[key]):
			m.rec = now[key]
		case ok && e.rev > lastRevision(m.rec):
			s.removeLocked(m)
			rec, _ := overBy(m, now[key]) // an end is in ch.ended already
			over = append(over, rec)
		default:
			doubts[key] = m.rec.Rev
		}
	}
	sortByRev(over)
	for _, rec := range over {
		ch.events = append(ch.events, resolvedEvent(rec))
	}
	added := 0
	for _, e := range snap {
		rec, ok := now[e.key]
		if !ok || rec.Outcome != 0 || s.pending[e.key] != nil {
			continue // ended, or held already (the snapshot's record, or a later one)
		}
		s.addLocked(e.key, rec)
		ch.events = append(ch.events, askEvent(rec))
		added++
	}
	s.log.Debug("cluster: snapshot", "n", s.restarts, "entries", len(snap), "over", len(over), "added", added, "doubts", len(doubts))
	s.handOnLocked(ch)
}

// record decodes e's record; false for a removal, or a record that does not decode.
func (s *Store) record(e entry) (store.Record, bool) {
	if !e.put {
		return store.Record{}, false
	}
	rec, _, err := decodeRecord(e.value, e.rev)
	if err != nil {
		s.log.Warn("cluster: skipping a record", "key", e.key, "err", err)
		return store.Record{}, false
	}
	return rec, true
}

// overBy returns how the mirror's question m ended, given the record of a later message
// of its key (zero when that message removed the key): that record, when it is m's end
// (and true), or else m's record timed out, unanswered (the key removed, or holding
// another question).
func overBy(m *mirrored, later store.Record) (store.Record, bool) {
	if later.Rev == m.rec.Rev && later.Outcome != 0 {
		return later, true
	}
	rec := m.rec
	rec.Outcome, rec.Answers = askuser.TimedOut, nil
	return rec, false
}

// updateOf reports whether later, the record of a later message of m's key, is m's
// question still pending, as an Update wrote it.
func updateOf(m *mirrored, later store.Record) bool {
	return later.Outcome == 0 && later.Rev == m.rec.Rev && later.Session == m.rec.Session && later.RequestID() == m.rec.RequestID()
}

// apply takes one change of the bucket.
func (s *Store) apply(e entry) {
	key := e.key
	var ch change
	if !e.put {
		// Removed: an ended record whose time was up, or a question nobody ended, not
		// even at its expiry (every replica gone for longer than Keep).
		s.mu.Lock()
		if m := s.pending[key]; m != nil {
			s.removeLocked(m)
			rec := m.rec
			rec.Outcome = askuser.TimedOut
			ch.events = append(ch.events, resolvedEvent(rec))
		}
		s.handOnLocked(ch)
		return
	}
	rec, _, err := decodeRecord(e.value, e.rev)
	if err != nil {
		s.log.Warn("cluster: skipping a record", "key", key, "err", err)
		return
	}
	s.mu.Lock()
	m := s.pending[key]
	if rec.Outcome == 0 {
		if m != nil && m.rec.Rev == rec.Rev {
			if lastRevision(rec) > lastRevision(m.rec) {
				m.rec = rec // an Update: the approvals so far, for Pending
			}
			s.mu.Unlock()
			return
		}
		if m != nil { // another question under the key: the old one is over
			s.removeLocked(m)
			old := m.rec
			old.Outcome = askuser.TimedOut
			ch.events = append(ch.events, resolvedEvent(old))
		}
		s.addLocked(key, rec)
		ch.events = append(ch.events, askEvent(rec))
	} else {
		if m != nil && m.rec.Rev == rec.Rev {
			s.removeLocked(m)
			ch.events = append(ch.events, resolvedEvent(rec))
		}
		ch.ended = append(ch.ended, rec)
	}
	s.handOnLocked(ch)
}

// handOnLocked unlocks s.mu and hands ch on: events to the relay, ends to the Watch
// callbacks, in order, from the watch goroutine.
func (s *Store) handOnLocked(ch change) {
	relay := s.relay
	var fs []func(store.Record)
	if len(ch.ended) > 0 {
		fs = make([]func(store.Record), 0, len(s.watchers))
		for w := range s.watchers {
			fs = append(fs, w.f)
		}
	}
	s.mu.Unlock()
	if relay != nil {
		for _, ev := range ch.events {
			relay(ev)
		}
	}
	for _, rec := range ch.ended {
		for _, f := range fs {
			f(rec)
		}
	}
}

func (s *Store) addLocked(key string, rec store.Record) {
	m := &mirrored{key: key, rec: rec}
	s.pending[key] = m
	byKey := s.sessions[rec.Session]
	if byKey == nil {
		byKey = make(map[string]*mirrored)
		s.sessions[rec.Session] = byKey
	}
	byKey[key] = m
	if s.opts.ExpireGrace >= 0 && !s.closed {
		m.expire = time.AfterFunc(s.expireAfter(rec), func() { s.expireQuestion(key, rec.Rev) })
	}
}

func (s *Store) removeLocked(m *mirrored) {
	delete(s.pending, m.key)
	if byKey := s.sessions[m.rec.Session]; byKey != nil {
		delete(byKey, m.key)
		if len(byKey) == 0 {
			delete(s.sessions, m.rec.Session)
		}
	}
	if m.expire != nil {
		m.expire.Stop()
	}
}

// expireAfter is when a replica ends rec as timed out if nobody has: ExpireGrace after
// its expiry, plus up to a quarter of it at random, so that the replicas seldom all try
// at once (one wins either way).
func (s *Store) expireAfter(rec store.Record) time.Duration {
	g := s.opts.ExpireGrace
	return time.Until(rec.ExpiresAt()) + g + rand.N(g/4+1)
}

// expireQuestion ends the pending question of key and rev as timed out, unless it has
// ended meanwhile. Every replica's watch then sees the end, tells its devices, and
// delivers it to any caller waiting for it. When NATS does not take the write, it tries
// again a little later.
func (s *Store) expireQuestion(key string, rev uint64) {
	s.mu.Lock()
	m := s.pending[key]
	if s.closed || m == nil || m.rec.Rev != rev {
		s.mu.Unlock()
		return
	}
	s.expiry.Add(1)
	defer s.expiry.Done()
	rec := m.rec
	s.mu.Unlock()
	rec.Outcome = askuser.TimedOut
	ok, err := s.End(s.ctx, rec)
	if ok || err == nil {
		return // ended, here or elsewhere: the watch will see it
	}
	s.mu.Lock()
	if m := s.pending[key]; !s.closed && m != nil && m.rec.Rev == rev {
		m.expire.Reset(time.Second + rand.N(time.Second))
	}
	s.mu.Unlock()
}

// pendingOf returns the pending questions of session the watch has seen, oldest first.
func (s *Store) pendingOf(session askuser.SessionID) []store.Record {
	s.mu.Lock()
	byKey := s.sessions[session]
	out := make([]store.Record, 0, len(byKey))
	for _, m := range byKey {
		out = append(out, m.rec)
	}
	s.mu.Unlock()
	sortByRev(out)
	return out
}

// setRelay sets where the watch sends question events; see [NewTransport]. It first
// gives f the ask of every request the watch has seen pending, oldest first, under s.mu,
// so that no later change the watch hands on comes before them. f runs under s.mu
// there, which is safe because the local transport is not bound to anything yet (its
// joins, which take its own lock and then s.mu through Pending, cannot run). It reports
// false, doing nothing, when a relay was set already.
func (s *Store) setRelay(f func(wire.Event)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.relay != nil {
		return false
	}
	s.relay = f
	recs := make([]store.Record, 0, len(s.pending))
	for _, m := range s.pending {
		recs = append(recs, m.rec)
	}
	sortByRev(recs)
	for _, rec := range recs {
		f(askEvent(rec))
	}
	return true
}

func askEvent(rec store.Record) wire.Event {
	ev, _ := rec.AskEvent()
	return ev
}

func resolvedEvent(rec store.Record) wire.Event {
	ev, _ := rec.ResolvedEvent() // an unknown outcome is told as undelivered
	return ev
}

func sortByRev(recs []store.Record) {
	slices.SortFunc(recs, func(a, b store.Record) int { return cmpUint(a.Rev, b.Rev) })
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// setRelayOff stops sending question events to the transport's relay.
func (s *Store) setRelayOff() {
	s.mu.Lock()
	s.relay = nil
	s.mu.Unlock()
}

// watched reports whether the watch has seen key pending.
func (s *Store) watched(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending[key] != nil
}
