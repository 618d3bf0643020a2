package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
)

// floor is the least a registry of pending calls can be: a map under a mutex and a
// channel with a buffer of one per call (the pattern of sourcegraph/jsonrpc2 and nats.go).
// It validates nothing, tracks no session, and has no timeout or cancel.
type floor struct {
	mu      sync.Mutex
	pending map[floorKey]chan []askuser.Answer
}

type floorKey struct {
	session askuser.SessionID
	id      string
}

func newFloor() *floor { return &floor{pending: make(map[floorKey]chan []askuser.Answer)} }

func (f *floor) register(session askuser.SessionID, id string) chan []askuser.Answer {
	ch := make(chan []askuser.Answer, 1)
	f.mu.Lock()
	f.pending[floorKey{session, id}] = ch
	f.mu.Unlock()
	return ch
}

func (f *floor) answer(session askuser.SessionID, id string, a []askuser.Answer) bool {
	k := floorKey{session, id}
	f.mu.Lock()
	ch, ok := f.pending[k]
	delete(f.pending, k)
	f.mu.Unlock()
	if ok {
		ch <- a
	}
	return ok
}

func (f *floor) wait(ch chan []askuser.Answer, expiry time.Duration) []askuser.Answer {
	if expiry == 0 {
		return <-ch
	}
	t := time.NewTimer(expiry)
	defer t.Stop()
	select {
	case a := <-ch:
		return a
	case <-t.C:
		return nil
	}
}

// registryCase is one question and a valid answer to it.
func registryCase(b *testing.B) (*askuser.Request, []askuser.Answer) {
	req, err := askuser.ParseArguments(typicalArgs)
	if err != nil {
		b.Fatal(err)
	}
	q := req.Questions[0]
	return req, []askuser.Answer{{Question: q.Question, SelectedLabels: []string{q.Options[0].Label}}}
}

// BenchmarkRegistry is the registry alone, beside the floor in the same shapes:
//
//   - serial: register, answer, wait, in one goroutine;
//   - handoff: the waiter registers and blocks in Wait, another goroutine answers (two
//     goroutine wake-ups per question, as in real use), without and with a timeout;
//   - parallel: serial on every P at once, each goroutine with its own session.
//
// The registry does more than the floor: it checks the answer against the question, keeps
// a per-session index for cancel, and settles answers against timeouts once.
func BenchmarkRegistry(b *testing.B) {
	req, answers := registryCase(b)
	session := askuser.IntSession(7)

	b.Run("serial/askuser", func(b *testing.B) {
		r := askuser.NewRegistry(0)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			e, _, err := r.Register(session, "req-1", req, time.Time{})
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Answer(session, "req-1", answers); err != nil {
				b.Fatal(err)
			}
			if res := r.Wait(ctx, e); res.Outcome != askuser.Answered {
				b.Fatal(res.Outcome)
			}
		}
	})
	b.Run("serial/floor", func(b *testing.B) {
		f := newFloor()
		b.ReportAllocs()
		for b.Loop() {
			ch := f.register(session, "req-1")
			if !f.answer(session, "req-1", answers) {
				b.Fatal("not pending")
			}
			if f.wait(ch, 0) == nil {
				b.Fatal("no answer")
			}
		}
	})

	for _, expiry := range []time.Duration{0, askuser.DefaultTimeout} {
		name := "handoff"
		if expiry > 0 {
			name = "handoff-timeout"
		}
		b.Run(name+"/askuser", func(b *testing.B) {
			r := askuser.NewRegistry(0)
			ctx := context.Background()
			ids := make(chan string, 1)
			go func() {
				for id := range ids {
					if err := r.Answer(session, id, answers); err != nil {
						panic(err)
					}
				}
			}()
			defer close(ids)
			b.ReportAllocs()
			for b.Loop() {
				var exp time.Time
				if expiry > 0 {
					exp = time.Now().Add(expiry)
				}
				e, _, err := r.Register(session, "req-1", req, exp)
				if err != nil {
					b.Fatal(err)
				}
				ids <- "req-1"
				if res := r.Wait(ctx, e); res.Outcome != askuser.Answered {
					b.Fatal(res.Outcome)
				}
			}
		})
		b.Run(name+"/floor", func(b *testing.B) {
			f := newFloor()
			ids := make(chan string, 1)
			go func() {
				for id := range ids {
					if !f.answer(session, id, answers) {
						panic("not pending")
					}
				}
			}()
			defer close(ids)
			b.ReportAllocs()
			for b.Loop() {
				ch := f.register(session, "req-1")
				ids <- "req-1"
				if f.wait(ch, expiry) == nil {
					b.Fatal("no answer")
				}
			}
		})
	}

	var next atomic.Int64
	b.Run("parallel/askuser", func(b *testing.B) {
		r := askuser.NewRegistry(0)
		ctx := context.Background()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			s := askuser.IntSession(1000 + next.Add(1))
			for pb.Next() {
				e, _, err := r.Register(s, "req-1", req, time.Time{})
				if err != nil {
					panic(err)
				}
				if err := r.Answer(s, "req-1", answers); err != nil {
					panic(err)
				}
				if res := r.Wait(ctx, e); res.Outcome != askuser.Answered {
					panic(res.Outcome)
				}
			}
		})
	})
	b.Run("parallel/floor", func(b *testing.B) {
		f := newFloor()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			s := askuser.IntSession(1000 + next.Add(1))
			for pb.Next() {
				ch := f.register(s, "req-1")
				if !f.answer(s, "req-1", answers) {
					panic("not pending")
				}
				if f.wait(ch, 0) == nil {
					panic("no answer")
				}
			}
		})
	})
}
