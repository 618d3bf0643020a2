package askuser

import "sync"

// keyLocks orders the events of each question key: the ask of a question is recorded
// and sent while its key is held, and so is the resolution of every question of that
// key, so that no device is told of a question's end before its ask, nor of an ask of an
// id before the resolution of that id's previous question.
//
// An end never waits for the key. When it is held (by a caller sending the ask, say,
// whose transport may be the very one that ends the question from inside Send), the
// end joins the holder as a guest: it records the end in the store at once and leaves
// the resolution with the holder, who sends it before letting the key go. Unrelated
// keys never wait for each other; a key's state is dropped when nobody uses it.
type keyLocks struct {
	mu sync.Mutex
	m  map[key]*keyState
}

// keyState is one key's lock; every field is guarded by keyLocks.mu.
type keyState struct {
	held     bool
	waiters  int      // callers of lock waiting for the key
	guests   int      // ends running while someone else holds the key
	deferred []Record // resolutions the guests left, for the holder to send
	changed  sync.Cond
}

// state returns k's state, made if need be; l.mu is held.
func (l *keyLocks) state(k key) *keyState {
	if l.m == nil {
		l.m = make(map[key]*keyState)
	}
	s := l.m[k]
	if s == nil {
		s = &keyState{}
		s.changed.L = &l.mu
		l.m[k] = s
	}
	return s
}

// lock takes k, waiting until it is free.
func (l *keyLocks) lock(k key) {
	l.mu.Lock()
	s := l.state(k)
	for s.held {
		s.waiters++
		s.changed.Wait()
		s.waiters--
	}
	s.held = true
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
func (l *keyLocks) leave(k key, resolved *Record) {
	l.mu.Lock()
	s := l.m[k]
	if resolved != nil {
		s.deferred = append(s.deferred, *resolved)
	}
	s.guests--
	s.changed.Broadcast()
	l.mu.Unlock()
}

// beforeAsk is called by the holder of k about to send the ask of the question rev it
// has just recorded: it waits for the guests to leave and sends the resolutions they
// left of earlier questions of k (which may have ended, and made room for this one,
// while it was recording). Those of question rev itself wait for unlock: they follow
// the ask.
func (l *keyLocks) beforeAsk(k key, rev uint64, publish func(Record)) {
	l.mu.Lock()
	s := l.m[k]
	for {
		for s.guests > 0 {
			s.changed.Wait()
		}
		var stale []Record
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
			publish(r)
		}
		l.mu.Lock()
	}
	l.mu.Unlock()
}

// unlock lets k go, once the guests have left and their resolutions have been sent
// with publish (outside the lock of the table, so publish may take its time).
func (l *keyLocks) unlock(k key, publish func(Record)) {
	l.mu.Lock()
	s := l.m[k]
	for {
		for s.guests > 0 {
			s.changed.Wait()
		}
		if len(s.deferred) == 0 {
			break
		}
		recs := s.deferred
		s.deferred = nil
		l.mu.Unlock()
		for _, r := range recs {
			publish(r)
		}
		l.mu.Lock()
	}
	s.held = false
	if s.waiters == 0 {
		delete(l.m, k)
	} else {
		s.changed.Broadcast()
	}
	l.mu.Unlock()
}
