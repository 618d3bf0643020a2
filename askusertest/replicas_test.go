package askusertest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// sharedStore is a Store that two dispatchers share in one process: records in a map,
// every End told to every Watch.
type sharedStore struct {
	mu       sync.Mutex
	rev      uint64
	recs     map[[2]string]store.Record // by session and request id
	watchers map[int]func(store.Record)
	next     int
}

func newSharedStore() *sharedStore {
	return &sharedStore{recs: make(map[[2]string]store.Record), watchers: make(map[int]func(store.Record))}
}

func storeKey(s askuser.SessionID, id string) [2]string { return [2]string{s.String(), id} }

func (s *sharedStore) Put(_ context.Context, rec store.Record) (store.Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := storeKey(rec.Session, rec.RequestID())
	if old, ok := s.recs[k]; ok {
		return old, false, nil
	}
	s.rev++
	rec.Rev = s.rev
	s.recs[k] = rec
	return rec, true, nil
}

func (s *sharedStore) Get(_ context.Context, session askuser.SessionID, id string) (store.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.recs[storeKey(session, id)]; ok {
		return rec, nil
	}
	return store.Record{}, wire.ErrNotPending
}

func (s *sharedStore) Update(_ context.Context, rec store.Record) (store.Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := storeKey(rec.Session, rec.RequestID())
	cur, ok := s.recs[k]
	if !ok || rec.Outcome != 0 || rec.Tally == nil || cur.Outcome != 0 || cur.Rev != rec.Rev || cur.Tally == nil || cur.Tally.Version != rec.Tally.Version {
		return store.Record{}, false, nil
	}
	s.rev++
	t := *rec.Tally
	t.Version = s.rev
	rec.Tally = &t
	s.recs[k] = rec
	return rec, true, nil
}

func (s *sharedStore) End(_ context.Context, rec store.Record) (bool, error) {
	s.mu.Lock()
	k := storeKey(rec.Session, rec.RequestID())
	cur, ok := s.recs[k]
	if !ok || cur.Rev != rec.Rev || cur.Outcome != 0 {
		s.mu.Unlock()
		return false, nil
	}
	s.recs[k] = rec
	var fs []func(store.Record)
	for _, f := range s.watchers {
		fs = append(fs, f)
	}
	s.mu.Unlock()
	for _, f := range fs {
		f(rec)
	}
	return true, nil
}

func (s *sharedStore) Pending(_ context.Context, session askuser.SessionID) ([]store.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.Record
	for _, rec := range s.recs {
		if rec.Session == session && rec.Outcome == 0 {
			out = append(out, rec)
		}
	}
	return out, nil
}

func (s *sharedStore) Watch(f func(store.Record)) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.next
	s.next++
	s.watchers[n] = f
	return func() {
		s.mu.Lock()
		delete(s.watchers, n)
		s.mu.Unlock()
	}
}

// spanning is a transport that spans two replicas in one process: what either
// dispatcher sends reaches the devices of both.
type spanning struct{ locals []*Transport }

// Bind binds the replica's own devices' transport, the first.
func (s spanning) Bind(in wire.Inbound) { s.locals[0].Bind(in) }

func (s spanning) Send(ctx context.Context, ev wire.Event) error {
	for _, t := range s.locals {
		if err := t.Send(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// replicas returns two dispatchers on one shared store, each with its own devices'
// transport, and each sending through span(own, other).
func replicas(t *testing.T, span func(own, other *Transport) wire.Transport) (Replica, Replica) {
	st := newSharedStore()
	la, lb := NewTransport(), NewTransport()
	a := askuser.New(span(la, lb), &askuser.Options{Store: st})
	b := askuser.New(span(lb, la), &askuser.Options{Store: st})
	t.Cleanup(func() {
		a.Close()
		b.Close()
		la.Close()
		lb.Close()
	})
	return Replica{a, la}, Replica{b, lb}
}

// TestReplicasWithASpanningTransport: replicas whose transport reaches the devices of
// both keep every promise of TestReplicas.
func TestReplicasWithASpanningTransport(t *testing.T) {
	TestReplicas(t, func(t *testing.T) (Replica, Replica) {
		return replicas(t, func(own, other *Transport) wire.Transport { return spanning{[]*Transport{own, other}} })
	})
}

// TestReplicasWithLocalTransports: a transport of each replica's own devices alone does
// not do for a shared store, and the check says why.
func TestReplicasWithLocalTransports(t *testing.T) {
	a, b := replicas(t, func(own, _ *Transport) wire.Transport { return own })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := checkReplicas(ctx, a, b, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "a device of the other replica was not sent ask_user_questions") {
		t.Fatalf("checkReplicas = %v; want the other replica's device not shown the question", err)
	}
}
