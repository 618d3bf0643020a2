package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/askuser-go/askuser"
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
// started again from a fresh one when the connection to NATS comes back, or when its
// consumer's heartbeats stop (the server that held it is gone, while the replica's own
// connection stays up): the snapshot is compared with the mirror, and whatever changed
// meanwhile is handed on as above.

func (s *Store) loop(ready chan struct{}) {
	defer close(s.done)
	status := s.nc.StatusChanged(nats.CONNECTED)
	defer s.nc.RemoveStatusListener(status)
	// A new leader of the bucket's stream: the requests in flight go to it at once. The
	// watch goes on: its consumer is on a server that is alive, or its heartbeats stop.
	// (Starting every replica's watch again here would place their new consumers while
	// the dead server may still be counted among the living.)
	leader, err := s.nc.Subscribe("$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED."+s.stream, func(*nats.Msg) {
		s.log.Debug("cluster: the bucket's stream has a new leader")
		s.elected()
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
		case <-s.ctx.Done():
			return
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// kick makes the watch start again from a fresh snapshot.
func (s *Store) kick() {
	select {
	case s.restart <- struct{}{}:
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
	for done := f.initial == 0; !done; {
		select {
		case e := <-f.entries:
			snap = append(snap, e)
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
	s.reconcile(snap)
	if ready != nil {
		select {
		case <-ready:
		default:
			close(ready)
		}
	}
	for {
		select {
		case e := <-f.entries:
			s.apply(e)
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

// feed is one watch of the bucket: an ordered consumer of its stream that delivers the
// last message of every key (the snapshot), then every new one.
type feed struct {
	entries  chan entry
	lost     chan error    // buffer 1: the consumer is lost, and why
	done     chan struct{} // closed when the watch stops: frees a delivery in flight
	cc       jetstream.ConsumeContext
	initial  uint64 // how many messages the snapshot has
	consumer string // the consumer's name
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
		md, err := m.Metadata()
		if err != nil {
			f.fail(err)
			return
		}
		h := m.Headers()
		e := entry{key: strings.TrimPrefix(m.Subject(), s.subjects), value: m.Data(), rev: md.Sequence.Stream, pending: md.NumPending,
			put: h.Get(kvOperation) == "" && h.Get(jetstream.MarkerReasonHeader) == ""}
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
	s.consumer = f.consumer
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
	events []askuser.Event
	ended  []askuser.Record
}

// reconcile makes the mirror what the snapshot says, and hands on the differences. A
// snapshot may come from a server that is still catching up (a watch's consumer need not
// be on the stream's leader): after a restart, whatever it says changed is checked with
// the leader first, and a question that cannot be checked stays as it was.
func (s *Store) reconcile(snap []entry) {
	slices.SortFunc(snap, func(a, b entry) int { return cmpUint(a.rev, b.rev) })
	now := make(map[string]askuser.Record, len(snap))
	var ch change
	for _, e := range snap {
		if !e.put {
			continue
		}
		rec, _, err := decodeRecord(e.value, e.rev)
		if err != nil {
			s.log.Warn("cluster: skipping a record", "key", e.key, "err", err)
			continue
		}
		now[e.key] = rec
		if rec.Outcome != 0 {
			ch.ended = append(ch.ended, rec)
		}
	}
	// Only this goroutine changes the mirror: what is read here holds until the end.
	s.mu.Lock()
	first := s.restarts == 0
	s.restarts++
	var gone []*mirrored
	for _, m := range s.pending {
		if rec, ok := now[m.key]; !ok || rec.Rev != m.rec.Rev || rec.Outcome != 0 {
			gone = append(gone, m)
		}
	}
	var added []string
	for _, e := range snap {
		if rec, ok := now[e.key]; ok && rec.Outcome == 0 && s.pending[e.key] == nil {
			added = append(added, e.key)
		}
	}
	s.mu.Unlock()
	s.log.Debug("cluster: snapshot", "n", s.restarts, "entries", len(snap), "gone", len(gone), "added", len(added))

	var ends []askuser.Record // of the questions gone, in order
	for _, m := range gone {
		rec, ok := now[m.key]
		if !first {
			cur, err := s.current(m.key)
			switch {
			case err != nil:
				continue // cannot tell: left as it is
			case cur.Rev == m.rec.Rev && cur.Outcome == 0:
				continue // still pending: the snapshot was behind
			}
			rec, ok = cur, cur.Rev != 0
		}
		if !ok || rec.Rev != m.rec.Rev || rec.Outcome == 0 {
			// Ended and already gone, or gone unanswered: over, in any case.
			rec = m.rec
			rec.Outcome, rec.Answers = askuser.TimedOut, nil
		} else if !first {
			ch.ended = append(ch.ended, rec)
		}
		ends = append(ends, rec)
	}
	var asks []askuser.Record
	for _, key := range added {
		rec := now[key]
		if !first {
			cur, err := s.current(key)
			if err != nil || cur.Rev != rec.Rev || cur.Outcome != 0 {
				continue // ended meanwhile (its end will come), or cannot tell
			}
		}
		asks = append(asks, rec)
	}
	s.mu.Lock()
	for _, rec := range ends {
		if m := s.pending[recordKey(rec.Session, rec.RequestID())]; m != nil {
			s.removeLocked(m)
		}
		ch.events = append(ch.events, resolvedEvent(rec))
	}
	for _, rec := range asks {
		s.addLocked(recordKey(rec.Session, rec.RequestID()), rec)
		ch.events = append(ch.events, askEvent(rec))
	}
	s.handOnLocked(ch)
}

// current reads key from the stream's leader: its record, or a zero record when it has
// none; an error when the leader cannot be asked.
func (s *Store) current(key string) (askuser.Record, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.RequestTimeout)
	defer cancel()
	var rec askuser.Record
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		rec, _, err = s.get(ctx, key)
		return err
	})
	if errors.Is(err, askuser.ErrNotPending) {
		return askuser.Record{}, nil
	}
	return rec, err
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
	var fs []func(askuser.Record)
	if len(ch.ended) > 0 {
		fs = make([]func(askuser.Record), 0, len(s.watchers))
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

func (s *Store) addLocked(key string, rec askuser.Record) {
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
func (s *Store) expireAfter(rec askuser.Record) time.Duration {
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
func (s *Store) pendingOf(session askuser.SessionID) []askuser.Record {
	s.mu.Lock()
	byKey := s.sessions[session]
	out := make([]askuser.Record, 0, len(byKey))
	for _, m := range byKey {
		out = append(out, m.rec)
	}
	s.mu.Unlock()
	sortByRev(out)
	return out
}

// setRelay sets where the watch sends question events; see [NewTransport].
func (s *Store) setRelay(f func(askuser.Event)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.relay != nil {
		return false
	}
	s.relay = f
	return true
}

func askEvent(rec askuser.Record) askuser.Event {
	ev, _ := rec.AskEvent()
	return ev
}

func resolvedEvent(rec askuser.Record) askuser.Event {
	ev, _ := rec.ResolvedEvent() // an unknown outcome is told as undelivered
	return ev
}

func sortByRev(recs []askuser.Record) {
	slices.SortFunc(recs, func(a, b askuser.Record) int { return cmpUint(a.Rev, b.Rev) })
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
