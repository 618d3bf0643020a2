package askuser

import "sync"

// calls is the dispatcher's table of the callers waiting for their question to end, in
// the shape of nats.go's respMap: a map under a mutex, and a channel with a buffer of one
// per waiter. Whoever learns that a question ended (the dispatcher that ended it, or the
// store's Watch for an end elsewhere) removes that question's waiters under the lock,
// then delivers the record to each without blocking. It holds no store state and no
// ordering of events: only who waits for what.
type calls struct {
	mu     sync.Mutex
	m      map[key][]*waiter
	closed bool
}

// waiter is one caller waiting. key is set at creation; rev and early are written under
// calls.mu; ch receives exactly one end, sent by whoever removed the waiter from the
// table with an end to deliver.
type waiter struct {
	key key
	// rev is the Rev of the question waited for, once the store has said it (bind);
	// until then it is 0, and ends of the key are kept in early, since one of them may be
	// that of the question the store is recording for this caller right now.
	rev   uint64
	early []end
	ch    chan end
}

// end is how a question ended, as delivered to a waiter: its record, and the error of
// the end when this dispatcher ended it (a cause besides the outcome's sentinel).
type end struct {
	rec Record
	err error
}

func newCalls() *calls { return &calls{m: make(map[key][]*waiter)} }

// add registers a caller of key before its question is recorded, so that no end of it
// can be missed; false once the table is closed.
func (c *calls) add(k key) (*waiter, bool) {
	w := &waiter{key: k, ch: make(chan end, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, false
	}
	c.m[k] = append(c.m[k], w)
	return w, true
}

// bind sets the question w waits for. An end of it seen meanwhile is delivered now.
func (c *calls) bind(w *waiter, rev uint64) {
	c.mu.Lock()
	early := w.early
	w.rev, w.early = rev, nil
	var found *end
	for i := range early {
		if early[i].rec.Rev == rev {
			found = &early[i]
		}
	}
	if found != nil && c.removeLocked(w) {
		c.mu.Unlock()
		w.ch <- *found
		return
	}
	c.mu.Unlock()
}

// deliver gives rec, an ended question, and err, the error of its end when this
// dispatcher ended it, to its waiters, and returns how many.
func (c *calls) deliver(rec Record, err error) int {
	k := key{rec.Session, rec.Ask.RequestID}
	c.mu.Lock()
	ws := c.m[k]
	var ended []*waiter
	kept := ws[:0]
	for _, w := range ws {
		switch w.rev {
		case rec.Rev:
			ended = append(ended, w)
		case 0:
			w.early = append(w.early, end{rec, err})
			kept = append(kept, w)
		default:
			kept = append(kept, w)
		}
	}
	clear(ws[len(kept):])
	if len(kept) == 0 {
		delete(c.m, k)
	} else {
		c.m[k] = kept
	}
	c.mu.Unlock()
	for _, w := range ended {
		w.ch <- end{rec, err}
	}
	return len(ended)
}

// remove takes w out of the table and reports whether it was still there: false means a
// record has been, or is being, delivered to it.
func (c *calls) remove(w *waiter) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.removeLocked(w)
}

func (c *calls) removeLocked(w *waiter) bool {
	ws := c.m[w.key]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			if len(ws) == 0 {
				delete(c.m, w.key)
			} else {
				c.m[w.key] = ws
			}
			return true
		}
	}
	return false
}

// alone reports whether w is the only caller in the table waiting for its question.
func (c *calls) alone(w *waiter) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, x := range c.m[w.key] {
		if x != w && (x.rev == w.rev || x.rev == 0) {
			return false
		}
	}
	return true
}

// close makes add fail from then on and, unless last is nil, ends every wait with the
// record last makes of it.
func (c *calls) close(last func(*waiter) Record) {
	c.mu.Lock()
	c.closed = true
	if last == nil {
		c.mu.Unlock()
		return
	}
	all := c.m
	c.m = make(map[key][]*waiter)
	c.mu.Unlock()
	for _, ws := range all {
		for _, w := range ws {
			w.ch <- end{rec: last(w)}
		}
	}
}
