package askeino

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// What the interrupting tools keep between an interrupted run and the resumed one: the
// request a first run started, asked with a context of its own so that it outlives the
// run, until a resumed call takes its result.

type askKey struct {
	session askuser.SessionID
	id      string
}

// started is one request started by an interrupted call. res is written once, before
// done is closed.
type started[R any] struct {
	done chan struct{}
	res  R
}

// startedSet holds the requests started by interrupted calls, by session and request
// id, each until the call that takes its result. The zero value is empty and ready.
type startedSet[R any] struct {
	mu sync.Mutex
	m  map[askKey]*started[R] // guarded by mu
}

// start runs ask in a goroutine of its own unless the set already holds k's request,
// and returns the request.
func (s *startedSet[R]) start(k askKey, ask func() R) *started[R] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.m[k]; a != nil {
		return a
	}
	if s.m == nil {
		s.m = map[askKey]*started[R]{}
	}
	a := &started[R]{done: make(chan struct{})}
	s.m[k] = a
	go func() {
		a.res = ask()
		close(a.done)
	}()
	return a
}

// take returns an ended request's result and forgets the request.
func (s *startedSet[R]) take(k askKey, a *started[R]) R {
	s.mu.Lock()
	if s.m[k] == a {
		delete(s.m, k)
	}
	s.mu.Unlock()
	return a.res
}

// deliver gives the dispatcher an event from the host as a device's (answers, or a
// decision). The request is registered by the call that start runs, and may not be
// yet: ErrNotPending is tried again until that call has returned (done closed).
func deliver(ctx context.Context, d *askuser.Dispatcher, ev wire.Event, done <-chan struct{}) error {
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := d.Deliver(ctx, ev)
		if !errors.Is(err, wire.ErrNotPending) {
			return err
		}
		select {
		case <-done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}
