package askuser

import (
	"context"
	"sync"
)

// memoryStore is the default [Store]: the pending question sets of one dispatcher, in
// memory. An ended question set is forgotten at once, so a request id can be asked again
// as soon as its question has ended.
type memoryStore struct {
	mu       sync.Mutex
	closed   bool // Put fails with ErrClosed
	rev      uint64
	pending  map[key]*memRecord
	sessions map[SessionID]memList // by value: a session's first question allocates nothing more
}

// key is a struct, not a joined string: session ids may contain any character.
type key struct {
	session SessionID
	id      string
}

// memRecord is a pending record in its session's list, oldest first: cancelling a
// session costs what that session holds, and its questions list in the order asked.
type memRecord struct {
	rec        Record
	prev, next *memRecord
}

type memList struct {
	first, last *memRecord
	n           int
}

func newMemoryStore() *memoryStore {
	return &memoryStore{pending: make(map[key]*memRecord), sessions: make(map[SessionID]memList)}
}

func (s *memoryStore) Put(_ context.Context, rec Record) (Record, bool, error) {
	k := key{rec.Session, rec.Ask.RequestID}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Record{}, false, ErrClosed
	}
	if m, ok := s.pending[k]; ok {
		return m.rec, false, nil
	}
	s.rev++
	rec.Rev = s.rev
	m := &memRecord{rec: rec}
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

func (s *memoryStore) Get(_ context.Context, session SessionID, id string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.pending[key{session, id}]; ok {
		return m.rec, nil
	}
	return Record{}, ErrNotPending
}

func (s *memoryStore) End(_ context.Context, rec Record) (bool, error) {
	k := key{rec.Session, rec.Ask.RequestID}
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
	return true, nil
}

func (s *memoryStore) Pending(_ context.Context, session SessionID) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingLocked(session), nil
}

func (s *memoryStore) pendingLocked(session SessionID) []Record {
	l, ok := s.sessions[session]
	if !ok {
		return nil
	}
	out := make([]Record, 0, l.n)
	for m := l.first; m != nil; m = m.next {
		out = append(out, m.rec)
	}
	return out
}

// Watch never calls f: only its own dispatcher ends its questions.
func (s *memoryStore) Watch(func(Record)) (stop func()) { return func() {} }

// waiting reports whether the session has a pending question, without listing them.
func (s *memoryStore) waiting(session SessionID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sessions[session]
	return ok
}

// close makes later Puts fail with ErrClosed and returns every pending record, for the
// dispatcher's Close to end.
func (s *memoryStore) close() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	out := make([]Record, 0, len(s.pending))
	for session := range s.sessions {
		out = append(out, s.pendingLocked(session)...)
	}
	return out
}

// len returns the number of pending questions.
func (s *memoryStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}
