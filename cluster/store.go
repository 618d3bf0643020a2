package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Defaults of [Options].
const (
	DefaultBucket         = "askuser"
	DefaultPrefix         = "askuser"
	DefaultKeep           = 15 * time.Minute
	DefaultExpireGrace    = 30 * time.Second
	DefaultRequestTimeout = 5 * time.Second
)

// Options configure a [Store]. A nil *Options means all defaults; the zero value of each
// field means its default. Every replica of a host must use the same Bucket, Prefix,
// Replicas, Storage and Keep.
type Options struct {
	// Bucket is the JetStream key-value bucket that holds the questions (its stream is
	// KV_<Bucket>). Default [DefaultBucket].
	Bucket string
	// Prefix begins the subjects the [Transport] publishes on. Default [DefaultPrefix].
	Prefix string
	// Replicas is how many NATS servers keep a copy of every record: 1, or 3 (or 5) in a
	// NATS cluster, where the bucket then outlives the loss of a server. Default 1.
	Replicas int
	// Storage is where the servers keep the records: [jetstream.FileStorage] (the zero
	// value) survives a restart of the servers, [jetstream.MemoryStorage] does not.
	Storage jetstream.StorageType
	// Keep is how long an ended question is kept, with its outcome and answers, so that a
	// run resumed with the same tool-call id gets the answer instead of asking again. It
	// must be at least the dispatchers' Timeout (see [askuser.Options]). A pending
	// question is dropped Keep after its expiry. Rounded up to whole seconds. Default
	// [DefaultKeep].
	Keep time.Duration
	// ExpireGrace is how long after a question's expiry a replica ends it as timed out,
	// when no dispatcher has (its replica is gone and its run was not resumed), so that
	// every device clears it. A dispatcher that waits for the question ends it itself at
	// its expiry; the grace covers clocks that disagree by less. Negative: never. Default
	// [DefaultExpireGrace].
	ExpireGrace time.Duration
	// RequestTimeout bounds each operation made without a deadline of its own, and each
	// device event a [Transport] hands its dispatcher. Within it, a request that NATS does
	// not answer is tried again with short timeouts (a request sent to a stream leader
	// that has just gone gets no answer), and at once when the stream elects a leader.
	// The followers of a stream whose leader crashed elect a new one 4 to 9 s later
	// (nats-server's Raft election timeout; longer on a loaded machine): with the
	// default, an operation caught by a long election fails with [ErrUnavailable]; 10 s
	// rides out most elections, and makes a refusal without quorum take as long.
	// Default [DefaultRequestTimeout].
	RequestTimeout time.Duration
	// Logger receives the store's warnings (a watch restarted, a record that does not
	// decode). Default: none.
	Logger *slog.Logger
	// GrantKeep is how long a grant of an "always allow" decision is kept after it was
	// made. Default [DefaultGrantKeep].
	GrantKeep time.Duration
}

// ErrUnavailable is wrapped by every error of a [Store] or [Transport] that comes from
// NATS not answering in time or refusing a request for want of a leader or a quorum:
// the same call may succeed later. A write refused with it may still be recorded (a
// request that timed out is not known to have failed): a device whose answer is refused
// with it may send it again, and is told by the question's resolution event if its
// first try won.
var ErrUnavailable = errors.New("cluster: the question store is unavailable; try again")

// Store is an [store.Store] on a NATS JetStream key-value bucket, shared by every
// replica of a host: each replica opens its own Store on the same bucket and gives it to
// its dispatcher as [askuser.Options.Store]. It is also the source of the question events
// a [Transport] delivers to the replica's devices.
//
// Each question set is one key, "<session>.<request id>" (both encoded; see the package
// documentation). Put is a KV Create, whose revision is the record's Rev; End is a
// compare-and-set on that revision, so that of all the Ends of a question, on every
// replica, exactly one succeeds; an ended record is kept for [Options.Keep] and then
// removed by the server. One watch of the whole bucket per Store feeds Watch, the
// Transport, and the expiry of questions nobody waits for.
//
// All methods may be called concurrently.
type Store struct {
	nc       *nats.Conn
	js       jetstream.JetStream
	kv       jetstream.KeyValue
	bucket   jetstream.Stream // the bucket's stream, for the watch's audit
	opts     Options
	stream   string // KV_<bucket>
	subjects string // "$KV.<bucket>.": a key's subject is subjects+key
	keepTTL  time.Duration
	log      *slog.Logger

	ctx       context.Context // ends the watch loop and the expiries
	cancel    context.CancelFunc
	done      chan struct{} // closed when the watch loop has returned
	restart   chan struct{} // buffer 1: start the watch again, from a fresh snapshot
	newLeader chan struct{} // buffer 1: the bucket's stream has elected a leader (see loop)
	expiry    sync.WaitGroup
	bg        sync.WaitGroup // watches being stopped, audits under way

	// term ends when the bucket's stream elects a leader, and is then replaced: see
	// retry. Guarded by lmu.
	lmu     sync.Mutex
	term    context.Context
	endTerm context.CancelFunc

	// mu guards what the watch has seen: the pending questions of every session, the
	// Watch callbacks and the relay. Written by the watch loop; read by the Transport.
	mu       sync.Mutex
	closed   bool
	pending  map[string]*mirrored
	sessions map[askuser.SessionID]map[string]*mirrored
	watchers map[*watcher]struct{}
	relay    func(wire.Event) // set once by the Transport
	restarts int              // how many snapshots the watch has taken, for tests
	feed     *feed            // the watch's current feed, for tests

	// grantMu guards grantBucket, the grants' bucket once opened (see grants.go).
	grantMu     sync.Mutex
	grantBucket jetstream.KeyValue
}

// mirrored is a pending question as the watch has seen it. expire ends it as timed out
// when nobody has, ExpireGrace after its expiry.
type mirrored struct {
	key    string
	rec    store.Record
	expire *time.Timer
}

// watcher is one [Store.Watch] callback; a pointer, to be removed by identity.
type watcher struct{ f func(store.Record) }

// NewStore opens the bucket (creating it, or updating its settings, as opts say) on the
// JetStream of nc, starts watching it, and returns once the store has read every pending
// question. nc stays the caller's: Close does not close it. NewStore fails when JetStream
// does not answer before ctx ends.
func NewStore(ctx context.Context, nc *nats.Conn, opts *Options) (*Store, error) {
	s := &Store{nc: nc}
	if opts != nil {
		s.opts = *opts
	}
	o := &s.opts
	if o.Bucket == "" {
		o.Bucket = DefaultBucket
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.Keep <= 0 {
		o.Keep = DefaultKeep
	}
	if o.ExpireGrace == 0 {
		o.ExpireGrace = DefaultExpireGrace
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.GrantKeep <= 0 {
		o.GrantKeep = DefaultGrantKeep
	}
	s.log = o.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.keepTTL = seconds(o.Keep)
	s.stream = "KV_" + o.Bucket
	s.subjects = "$KV." + o.Bucket + "."

	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(o.RequestTimeout))
	if err != nil {
		return nil, err
	}
	s.js = js
	s.term, s.endTerm = context.WithCancel(context.Background())
	// Every replica does this as it starts, several at once maybe: creating the stream,
	// or updating it to the same settings, changes nothing the second time.
	err = s.retry(ctx, func(ctx context.Context) error {
		var err error
		s.bucket, err = js.CreateOrUpdateStream(ctx, s.streamConfig())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: creating the bucket %q: %w", o.Bucket, err)
	}
	err = s.retry(ctx, func(ctx context.Context) error {
		s.kv, err = js.KeyValue(ctx, o.Bucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			return fmt.Errorf("%w: %w", errNotKnownYet, err)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: opening the bucket %q: %w", o.Bucket, err)
	}

	s.pending = make(map[string]*mirrored)
	s.sessions = make(map[askuser.SessionID]map[string]*mirrored)
	s.watchers = make(map[*watcher]struct{})
	s.restart = make(chan struct{}, 1)
	s.newLeader = make(chan struct{}, 1)
	s.done = make(chan struct{})
	s.ctx, s.cancel = context.WithCancel(context.Background())
	ready := make(chan struct{})
	go s.loop(ready)
	select {
	case <-ready:
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, fmt.Errorf("cluster: reading the bucket %q: %w", o.Bucket, context.Cause(ctx))
	}
}

// streamConfig is the bucket's stream, as nats.go makes a key-value bucket, with per-key
// TTLs and their markers, and with direct gets only on one replica: with several, a
// direct get may be served by a follower that has not yet applied the last write, and
// Get must see every End that has returned.
func (s *Store) streamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:                   s.stream,
		Description:            "askuser: pending and recently ended questions",
		Subjects:               []string{s.subjects + ">"},
		MaxMsgsPerSubject:      1,
		MaxBytes:               -1,
		MaxMsgs:                -1,
		MaxMsgSize:             -1,
		MaxConsumers:           -1,
		Storage:                s.opts.Storage,
		Replicas:               s.opts.Replicas,
		AllowRollup:            true,
		DenyDelete:             true,
		Duplicates:             2 * time.Minute,
		Discard:                jetstream.DiscardNew,
		AllowDirect:            s.opts.Replicas == 1,
		AllowMsgTTL:            true,
		SubjectDeleteMarkerTTL: s.keepTTL,
	}
}

// seconds rounds d up to whole seconds, at least one: the unit of JetStream's TTLs.
func seconds(d time.Duration) time.Duration {
	if d < time.Second {
		return time.Second
	}
	return (d + time.Second - 1).Truncate(time.Second)
}

// bounded returns ctx with the store's request timeout when it has no deadline.
func (s *Store) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.opts.RequestTimeout)
}

// errInFlight is a compare-and-set that JetStream could not decide because another write
// of the key was in flight: it is tried again.
var errInFlight = errors.New("cluster: another write of the question is in flight")

// errNotApplied is a question the store's watch has seen pending and the stream's leader
// does not have: a leader just elected that has not applied every write yet. It is read
// again, until the deadline.
var errNotApplied = errors.New("cluster: the stream's leader has not applied the question yet")

// errNotKnownYet is a bucket just made, by this replica or another started with it,
// that a server does not know of yet: it is asked again.
var errNotKnownYet = errors.New("cluster: the bucket is not known everywhere yet")

// transient reports whether err is NATS not answering in time, or refusing for want of
// a leader or a quorum: what a stream's change of leader causes, and what trying again
// may cure.
func transient(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrDisconnected) ||
		isUnavailableAPIError(err) || errors.Is(err, errInFlight) || errors.Is(err, errNotApplied) ||
		errors.Is(err, errNotKnownYet)
}

// unavailable wraps an error of NATS: ErrUnavailable when it is transient, so that the
// caller can tell that trying again may work.
func unavailable(what string, err error) error {
	if transient(err) || errors.Is(err, nats.ErrConnectionClosed) {
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, err)
	}
	return fmt.Errorf("cluster: %s: %w", what, err)
}

// Each try of a request has a timeout of its own, short at first (firstTry), doubling up
// to lastTry: a request sent to a stream leader that has just gone gets no answer, and
// waiting out the whole deadline for it would miss the next leader.
const (
	firstTry = 250 * time.Millisecond
	lastTry  = 2 * time.Second
)

// retry runs try until it succeeds, fails for good, or ctx ends. When the bucket's
// stream elects a leader, the try in flight gives up at once and the next goes to the new
// leader, instead of waiting out its timeout. A try that timed out or gave up may still
// have been written: the operations tried here recognise their own earlier write by its
// nonce.
func (s *Store) retry(ctx context.Context, try func(ctx context.Context) error) error {
	wait := firstTry
	for {
		term := s.leaderTerm()
		tctx, cancel := context.WithTimeout(ctx, wait)
		stop := context.AfterFunc(term, cancel)
		err := try(tctx)
		stop()
		cancel()
		switch {
		case err == nil || ctx.Err() != nil:
			return err
		case term.Err() != nil:
			wait = firstTry // a new leader: at once
			continue
		case !transient(err):
			return err
		}
		wait = min(2*wait, lastTry)
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

// leaderTerm returns a context that ends when the bucket's stream next elects a leader.
func (s *Store) leaderTerm() context.Context {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	return s.term
}

// elected ends the current leader term: the tries in flight give up, to go to the new
// leader.
func (s *Store) elected() {
	s.lmu.Lock()
	end := s.endTerm
	s.term, s.endTerm = context.WithCancel(context.Background())
	s.lmu.Unlock()
	end()
}

// isUnavailableAPIError reports whether err is JetStream saying it cannot serve the
// request now (HTTP-like code 503: no quorum, no leader, stream offline).
//
// It also takes a stream that cannot be placed now for want of running peers (10005, "no
// suitable peers for placement"): what a bucket made just after a server started, or
// while one is down, is told; the meta leader places it once the peer is known again.
func isUnavailableAPIError(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.Code == 503 || apiErr.ErrorCode == jsErrCodeNoPeers)
}

// jsErrCodeNoPeers is JetStream's error code for a stream or consumer that no set of
// running servers can hold now (JSClusterNoPeersErr).
const jsErrCodeNoPeers jetstream.ErrorCode = 10005

func isAPIError(err error, code jetstream.ErrorCode) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == code
}

// wrongRevision reports whether err is JetStream refusing a write because the key's last
// revision is not the one expected: a compare-and-set that lost.
func wrongRevision(err error) bool {
	return isAPIError(err, jetstream.JSErrCodeStreamWrongLastSequence) ||
		isAPIError(err, jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// Put records rec as pending with a KV Create, whose revision becomes rec.Rev. When the
// key exists (the question was asked before, and is pending or kept), Put returns that
// record and false. The key expires Keep after the question does.
func (s *Store) Put(ctx context.Context, rec store.Record) (store.Record, bool, error) {
	if rec.RequestID() == "" {
		return store.Record{}, false, errors.New("cluster: a record needs a request id")
	}
	if rec.Outcome != 0 {
		return store.Record{}, false, errors.New("cluster: Put of an ended record")
	}
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	key := recordKey(rec.Session, rec.RequestID())
	nonce := nuid.Next()
	val, err := encodeRecord(rec, nonce)
	if err != nil {
		return store.Record{}, false, err
	}
	ttl := seconds(time.Until(rec.ExpiresAt()) + s.opts.Keep)
	var out store.Record
	var created bool
	err = s.retry(ctx, func(ctx context.Context) error {
		rev, err := s.kv.Create(ctx, key, val, jetstream.KeyTTL(ttl))
		if err == nil {
			rec.Rev = rev
			out, created = rec, true
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return err
		}
		cur, curNonce, err := s.get(ctx, key)
		switch {
		case errors.Is(err, wire.ErrNotPending):
			return nats.ErrTimeout // removed between the two: create it again
		case err != nil:
			return err
		}
		// An earlier try of this Put that timed out may have been written after all.
		out, created = cur, curNonce == nonce && cur.Outcome == 0
		return nil
	})
	if err != nil {
		return store.Record{}, false, unavailable("recording the question", err)
	}
	if out.Session != rec.Session || out.RequestID() != rec.RequestID() {
		return store.Record{}, false, fmt.Errorf("cluster: the key %q holds another question (a hash collision)", key)
	}
	return out, created, nil
}

// Get returns the record of session and requestID, pending or ended and kept, read from
// the stream's leader.
func (s *Store) Get(ctx context.Context, session askuser.SessionID, requestID string) (store.Record, error) {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	var rec store.Record
	key := recordKey(session, requestID)
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		rec, _, err = s.get(ctx, key)
		if errors.Is(err, wire.ErrNotPending) && s.watched(key) {
			// The watch has seen it pending: a stream leader just elected may not have
			// applied every write yet.
			return errNotApplied
		}
		return err
	})
	if errors.Is(err, errNotApplied) {
		err = wire.ErrNotPending
	}
	if errors.Is(err, wire.ErrNotPending) {
		return store.Record{}, err
	}
	if err != nil {
		return store.Record{}, unavailable("reading the question", err)
	}
	if rec.Session != session || rec.RequestID() != requestID {
		return store.Record{}, wire.ErrNotPending // another id with the same hashed key
	}
	return rec, nil
}

// get reads key once, and returns its record and the nonce of the write that made it.
func (s *Store) get(ctx context.Context, key string) (store.Record, string, error) {
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return store.Record{}, "", wire.ErrNotPending
	}
	if err != nil {
		return store.Record{}, "", err
	}
	return decodeRecord(e.Value(), e.Revision())
}

// End writes rec, ended, over the pending record of revision rec.Rev, in one write that
// only succeeds while that revision is the key's last (a compare-and-set), and that the
// server removes Keep later. It reports false, with no error, when the question had
// already ended or is unknown.
func (s *Store) End(ctx context.Context, rec store.Record) (bool, error) {
	if rec.Rev == 0 || rec.Outcome == 0 {
		return false, nil
	}
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	nonce := nuid.Next()
	val, err := encodeRecord(rec, nonce)
	if err != nil {
		return false, err
	}
	key := recordKey(rec.Session, rec.RequestID())
	var won bool
	// The key's last revision is the request's own, or its last Update's.
	last := lastRevision(rec)
	err = s.retry(ctx, func(ctx context.Context) error {
		msg := &nats.Msg{Subject: s.subjects + key, Data: val, Header: nats.Header{}}
		_, err := s.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(last), jetstream.WithMsgTTL(s.keepTTL))
		if err == nil {
			won = true
			return nil
		}
		if !wrongRevision(err) {
			return err
		}
		// Lost, unless the winner is an earlier try of this End that timed out; or not
		// decided yet: JetStream refuses a compare-and-set, without deciding it, while
		// another write of the key is in flight, which may itself fail.
		cur, curNonce, err := s.get(ctx, key)
		switch {
		case errors.Is(err, wire.ErrNotPending) && s.watched(key):
			return errNotApplied
		case errors.Is(err, wire.ErrNotPending):
			won = false
			return nil
		case err != nil:
			return err
		case cur.Rev == rec.Rev && cur.Outcome == 0:
			last = lastRevision(cur) // updated meanwhile (or a write in flight): again
			return errInFlight
		}
		won = curNonce == nonce && cur.Rev == rec.Rev
		return nil
	})
	if errors.Is(err, errNotApplied) {
		return false, nil // gone, after all
	}
	if err != nil {
		return false, unavailable("ending the question", err)
	}
	return won, nil
}

// lastRevision is the revision of the entry that holds rec: its Put's, or its last
// Update's.
func lastRevision(rec store.Record) uint64 {
	if rec.Tally != nil && rec.Tally.Version != 0 {
		return rec.Tally.Version
	}
	return rec.Rev
}

// Update writes rec over the pending record of revision rec.Rev, in one write that only
// succeeds while the entry rec was read from is the key's last (a compare-and-set); the
// revision of the entry it makes is the new Tally.Version. It reports false, with no
// error, when the request has ended, is unknown, or was written meanwhile.
func (s *Store) Update(ctx context.Context, rec store.Record) (store.Record, bool, error) {
	if rec.Rev == 0 || rec.Tally == nil || rec.Outcome != 0 {
		return store.Record{}, false, nil
	}
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	nonce := nuid.Next()
	val, err := encodeRecord(rec, nonce)
	if err != nil {
		return store.Record{}, false, err
	}
	key := recordKey(rec.Session, rec.RequestID())
	ttl := seconds(time.Until(rec.ExpiresAt()) + s.opts.Keep)
	var out store.Record
	var won bool
	err = s.retry(ctx, func(ctx context.Context) error {
		msg := &nats.Msg{Subject: s.subjects + key, Data: val, Header: nats.Header{}}
		ack, err := s.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(lastRevision(rec)), jetstream.WithMsgTTL(ttl))
		if err == nil {
			t := *rec.Tally
			t.Version = ack.Sequence
			out, won = rec, true
			out.Tally = &t
			return nil
		}
		if !wrongRevision(err) {
			return err
		}
		// Lost, unless the winner is an earlier try of this Update that timed out.
		cur, curNonce, err := s.get(ctx, key)
		switch {
		case errors.Is(err, wire.ErrNotPending):
			won = false
			return nil
		case err != nil:
			return err
		case lastRevision(cur) == lastRevision(rec) && cur.Outcome == 0:
			return errInFlight // not decided yet: another write is in flight
		}
		out, won = cur, curNonce == nonce && cur.Rev == rec.Rev && cur.Outcome == 0
		return nil
	})
	if err != nil {
		return store.Record{}, false, unavailable("updating the question", err)
	}
	if !won {
		return store.Record{}, false, nil
	}
	return out, true, nil
}

// Pending lists the session's pending questions, read from the stream's leader (not
// from what the watch has seen), oldest first.
func (s *Store) Pending(ctx context.Context, session askuser.SessionID) ([]store.Record, error) {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	var out []store.Record
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		out, err = s.listPending(ctx, session)
		return err
	})
	if err != nil {
		return nil, unavailable("listing the questions", err)
	}
	return out, nil
}

// listPending reads the session's keys from the stream's leader (a stream's info is the
// leader's; a watch's consumer may be on a follower still catching up, which would miss
// the questions asked last), then each key's record from the leader.
func (s *Store) listPending(ctx context.Context, session askuser.SessionID) ([]store.Record, error) {
	st, err := s.js.Stream(ctx, s.stream)
	if err != nil {
		return nil, err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(s.subjects+sessionToken(session)+".*"))
	if err != nil {
		return nil, err
	}
	var out []store.Record
	for subject := range info.State.Subjects {
		rec, _, err := s.get(ctx, strings.TrimPrefix(subject, s.subjects))
		if errors.Is(err, wire.ErrNotPending) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		if rec.Outcome == 0 && rec.Session == session {
			out = append(out, rec)
		}
	}
	sortByRev(out)
	return out, nil
}

// Watch calls f with every record that ends, on any replica, from now until stop is
// called; whenever the store's watch starts again from a snapshot (its NATS connection
// back, its consumer lost with the server that held it, or found behind the stream's
// leader), also with every ended record still kept, so that ends missed meanwhile reach
// their waiters. f is called from the store's watch goroutine, one record at a time, and
// must return quickly.
func (s *Store) Watch(f func(store.Record)) (stop func()) {
	w := &watcher{f: f}
	s.mu.Lock()
	s.watchers[w] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.watchers, w)
		s.mu.Unlock()
	}
}

// Close stops the watch and the expiries and waits for them. It does not close the NATS
// connection, and changes nothing in the bucket: the questions stay for the other
// replicas. Close may be called more than once.
func (s *Store) Close() error {
	s.cancel()
	<-s.done
	s.mu.Lock()
	s.closed = true
	for _, m := range s.pending {
		m.expire.Stop()
	}
	s.mu.Unlock()
	s.expiry.Wait()
	s.bg.Wait()
	s.lmu.Lock()
	s.endTerm()
	s.lmu.Unlock()
	return nil
}
