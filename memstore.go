package askuser

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// memStore is the default [store.Store], used when [Options.Store] is nil, and a [store.GrantStore]:
// the pending requests of one dispatcher, in memory, and the grants of its sessions. An
// ended request is forgotten at once (Lookup alone still finds it, for a while), so a
// request id can be used again as soon as its request has ended; grants are kept until
// revoked.
type memStore struct {
	mu       sync.Mutex
	closed   bool // Put fails with ErrClosed
	rev      uint64
	pending  map[key]*entry
	sessions map[SessionID]entryList     // by value: a session's first question allocates nothing more
	grants   map[SessionID][]store.Grant // oldest first
	// recent holds the requests ended lately, until they would have expired, for
	// Lookup (a link's page says how its request ended): at most maxRecent, the oldest
	// dropped first. Each keeps the entry it had while pending. ring holds their keys in
	// the order they ended, oldest at head once it is full.
	recent map[key]*entry
	ring   []recentKey
	head   int
}

// recentKey names one ended request in the order they ended; a key asked again is in
// the ring once per request.
type recentKey struct {
	k   key
	rev uint64
}

// maxRecent bounds the ended requests the store keeps for Lookup.
const maxRecent = 4096

// entry is a pending record in its session's list, oldest first: cancelling a
// session costs what that session holds, and its questions list in the order asked.
type entry struct {
	rec        store.Record
	prev, next *entry
}

type entryList struct {
	first, last *entry
	n           int
}

func newMemStore() *memStore {
	return &memStore{pending: make(map[key]*entry), sessions: make(map[SessionID]entryList)}
}

func (s *memStore) Put(_ context.Context, rec store.Record) (store.Record, bool, error) {
	k := key{rec.Session, rec.RequestID()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.Record{}, false, ErrClosed
	}
	if m, ok := s.pending[k]; ok {
		return m.rec, false, nil
	}
	s.rev++
	rec.Rev = s.rev
	m := &entry{rec: rec}
	s.pending[k] = m
	l := s.sessions[rec.Session]
	if l.last == nil {
		l.first = m
	} else {
		l.last.next, m.prev = m, l.last
	}
	l.last = m
	l.n++
	s.sessions[rec.Session] = l
	return rec, true, nil
}

func (s *memStore) Get(_ context.Context, session SessionID, id string) (store.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.pending[key{session, id}]; ok {
		return m.rec, nil
	}
	return store.Record{}, wire.ErrNotPending
}

func (s *memStore) Update(_ context.Context, rec store.Record) (store.Record, bool, error) {
	k := key{rec.Session, rec.RequestID()}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.pending[k]
	if !ok || rec.Outcome != 0 || rec.Tally == nil || m.rec.Rev != rec.Rev || m.rec.Tally == nil || m.rec.Tally.Version != rec.Tally.Version {
		return store.Record{}, false, nil
	}
	s.rev++
	t := *rec.Tally
	t.Version = s.rev
	rec.Tally = &t
	m.rec = rec
	return rec, true, nil
}

func (s *memStore) End(_ context.Context, rec store.Record) (bool, error) {
	k := key{rec.Session, rec.RequestID()}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.pending[k]
	if !ok || m.rec.Rev != rec.Rev {
		return false, nil
	}
	delete(s.pending, k)
	l := s.sessions[k.session]
	if m.prev != nil {
		m.prev.next = m.next
	} else {
		l.first = m.next
	}
	if m.next != nil {
		m.next.prev = m.prev
	} else {
		l.last = m.prev
	}
	m.prev, m.next = nil, nil
	if l.n--; l.n == 0 {
		delete(s.sessions, k.session)
	} else {
		s.sessions[k.session] = l
	}
	s.keepRecent(k, m, rec)
	return true, nil
}

// keepRecent keeps m, whose request has just ended as rec, for Lookup, in place of the
// oldest ended request once maxRecent are kept. s.mu is held. It allocates nothing once
// the ring is full: the entry is the one the request had while pending.
func (s *memStore) keepRecent(k key, m *entry, rec store.Record) {
	if s.recent == nil {
		s.recent = make(map[key]*entry)
	}
	m.rec = rec
	if len(s.ring) < maxRecent {
		s.ring = append(s.ring, recentKey{k, rec.Rev})
	} else {
		old := s.ring[s.head]
		if e := s.recent[old.k]; e != nil && e.rec.Rev == old.rev {
			delete(s.recent, old.k)
		}
		s.ring[s.head] = recentKey{k, rec.Rev}
		s.head = (s.head + 1) % maxRecent
	}
	s.recent[k] = m
}

// lookup returns the request of session and id, pending or ended lately.
func (s *memStore) lookup(session SessionID, id string) (store.Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{session, id}
	if m, ok := s.pending[k]; ok {
		return m.rec, true
	}
	m, ok := s.recent[k]
	if !ok || !m.rec.ExpiresAt().After(time.Now()) {
		return store.Record{}, false
	}
	return m.rec, true
}

func (s *memStore) Pending(_ context.Context, session SessionID) ([]store.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingLocked(session), nil
}

func (s *memStore) pendingLocked(session SessionID) []store.Record {
	l, ok := s.sessions[session]
	if !ok {
		return nil
	}
	out := make([]store.Record, 0, l.n)
	for m := l.first; m != nil; m = m.next {
		out = append(out, m.rec)
	}
	return out
}

// PutGrant keeps g, in place of a grant of the same session and ID.
func (s *memStore) PutGrant(_ context.Context, g store.Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grants == nil {
		s.grants = make(map[SessionID][]store.Grant)
	}
	list := s.grants[g.Session]
	for i := range list {
		if list[i].ID == g.ID {
			list[i] = g
			return nil
		}
	}
	s.grants[g.Session] = append(list, g)
	return nil
}

// Grants returns a copy of the session's grants, oldest first.
func (s *memStore) Grants(_ context.Context, session SessionID) ([]store.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.grants[session]), nil
}

// RevokeGrant removes the session's grant id.
func (s *memStore) RevokeGrant(_ context.Context, session SessionID, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.grants[session]
	i := slices.IndexFunc(list, func(g store.Grant) bool { return g.ID == id })
	if i < 0 {
		return false, nil
	}
	if list = slices.Delete(list, i, i+1); len(list) == 0 {
		delete(s.grants, session)
	} else {
		s.grants[session] = list
	}
	return true, nil
}

// Watch never calls f: only its own dispatcher ends its questions.
func (s *memStore) Watch(func(store.Record)) (stop func()) { return func() {} }

// waiting reports whether the session has a pending question, without listing them.
func (s *memStore) waiting(session SessionID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sessions[session]
	return ok
}

// close makes later Puts fail with ErrClosed and returns every pending record, for the
// dispatcher's Close to end.
func (s *memStore) close() []store.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	out := make([]store.Record, 0, len(s.pending))
	for session := range s.sessions {
		out = append(out, s.pendingLocked(session)...)
	}
	return out
}
