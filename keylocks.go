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
//
// A caller whose context ends takes the key to decide, with no caller binding meanwhile,
// whether it is the last one waiting for its question (and so ends it as Cancelled). It
// does not wait for a caller that holds the key to record an ask, which may take as long
// as a shared store's Put: it leaves the decision with that holder (lockOrHandOff).
type keyLocks struct {
	mu sync.Mutex
	m  map[key]*keyState
	// free holds states let go, for state to use again: a key's lock costs no
	// allocation once a few have been made. Nothing refers to a state let go.
	free []*keyState
	// cancel, set once by New, is run by a holder for each cancellation handed to it.
	cancel func(cancelReq)
}

// cancelReq is a caller that stopped waiting while the key was held: the holder ends rec's
// question as Cancelled unless another caller waits for it by then.
type cancelReq struct {
	rec   Record
	cause error
}

// keyState is one key's lock; every field is guarded by keyLocks.mu.
type keyState struct {
	held     bool
	asking   bool     // the holder is recording (Put) and sending an ask
	waiters  int      // callers of lock waiting for the key
	guests   int      // ends running while someone else holds the key
	deferred []Record // resolutions the guests left, for the holder to send
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

// lockAsk is lock for a caller about to record and send an ask: a caller that cancels
// meanwhile hands its decision to it instead of waiting for its Put.
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
		if len(s.deferred) == 0 && len(s.cancels) == 0 {
			break
		}
		recs, cancels := s.deferred, s.cancels
		s.deferred, s.cancels = nil, nil
		l.mu.Unlock()
		for _, r := range recs {
			publish(r)
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
