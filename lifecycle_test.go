package askuser

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// The waiter table, and the pending-request machinery alone (the default store and the
// waiter table), driven as the dispatcher drives them but without a transport,
// arguments to parse or events to encode, beside the least such a table can be. The names of BenchmarkRegistry's cases
// are those of the registry that these replaced, so that benchstat sets them side by side.

// benchFull enables the largest sizes (one million pending questions), which take seconds
// of setup and several hundred MB each; CI runs without it.
var benchFull = flag.Bool("bench.full", false, "run the largest benchmark sizes too")

// pendingTable is the memory store and the waiter table, as the dispatcher uses them.
type pendingTable struct {
	store *memStore
	calls *calls
}

func newPendingTable() *pendingTable { return &pendingTable{store: newMemStore(), calls: newCalls()} }

// register records a question and a caller waiting for it (Dispatcher.ask's part).
func (r *pendingTable) register(session SessionID, id string, req *Request, expires time.Time) (*waiter, store.Record) {
	w, _ := r.calls.add(key{session, id})
	rec, _, err := r.store.Put(context.Background(), store.Record{Session: session, Ask: wire.AskData{RequestID: id, Questions: req.Questions, ExpiresAt: expires}})
	if err != nil {
		panic(err)
	}
	r.calls.settled()
	r.calls.bind(w, rec.Rev)
	return w, rec
}

// answer checks answers and ends the question with them (Dispatcher.HandleEvent's part).
func (r *pendingTable) answer(session SessionID, id string, answers []Answer) error {
	rec, err := r.store.Get(context.Background(), session, id)
	if err != nil {
		return err
	}
	canonical, problems := checkAnswers(rec.Ask.Questions, answers, 0)
	if problems != nil {
		return &wire.AnswerError{RequestID: id, Problems: problems}
	}
	rec.Outcome, rec.Answers = Answered, canonical
	if ok, _ := r.store.End(context.Background(), rec); !ok {
		return wire.ErrNotPending
	}
	r.calls.deliver(rec, nil)
	return nil
}

// wait waits for the question to end or expire (Dispatcher.wait's part).
func (r *pendingTable) wait(w *waiter, rec store.Record) store.Record {
	if rec.Ask.ExpiresAt.IsZero() {
		return w.wait().record(rec)
	}
	t := time.NewTimer(time.Until(rec.Ask.ExpiresAt))
	defer t.Stop()
	select {
	case <-w.done:
		return w.end.record(rec)
	case <-t.C:
		return store.Record{Outcome: TimedOut}
	}
}

// cancelSession ends the session's questions (Dispatcher.CancelSession's part).
func (r *pendingTable) cancelSession(session SessionID) int {
	recs, _ := r.store.Pending(context.Background(), session)
	n := 0
	for _, rec := range recs {
		rec.Outcome = Cancelled
		if ok, _ := r.store.End(context.Background(), rec); ok {
			r.calls.deliver(rec, nil)
			n++
		}
	}
	return n
}

// floor is the least a table of pending calls can be: a map under a mutex and a channel
// with a buffer of one per call (the pattern of sourcegraph/jsonrpc2 and nats.go). It
// validates nothing, tracks no session, and has no timeout or cancel.
type floor struct {
	mu      sync.Mutex
	pending map[key]chan []Answer
}

func newFloor() *floor { return &floor{pending: make(map[key]chan []Answer)} }

func (f *floor) register(session SessionID, id string) chan []Answer {
	ch := make(chan []Answer, 1)
	f.mu.Lock()
	f.pending[key{session, id}] = ch
	f.mu.Unlock()
	return ch
}

func (f *floor) answer(session SessionID, id string, a []Answer) bool {
	k := key{session, id}
	f.mu.Lock()
	ch, ok := f.pending[k]
	delete(f.pending, k)
	f.mu.Unlock()
	if ok {
		ch <- a
	}
	return ok
}

func (f *floor) wait(ch chan []Answer, expiry time.Duration) []Answer {
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

// benchCase is one typical question and a valid answer to it.
func benchCase(b *testing.B) (*Request, []Answer) {
	req, err := ParseArguments([]byte(`{"questions":[{"question":"Which framework should we use for the new module?","header":"Framework","options":[{"label":"Vue 3 (Recommended)","description":"Composition API + TypeScript, matches existing stack"},{"label":"React","description":"Larger ecosystem but different from current codebase"},{"label":"Svelte","description":"Smallest bundles, least familiar to the team"}],"multiSelect":false}]}`))
	if err != nil {
		b.Fatal(err)
	}
	q := req.Questions[0]
	return req, []Answer{{Question: q.Question, SelectedLabels: []string{q.Options[0].Label}}}
}

// BenchmarkRegistry is the store and the call table, beside the floor, in the same shapes:
//
//   - serial: register, answer, wait, in one goroutine;
//   - handoff: the waiter registers and blocks, another goroutine answers (two goroutine
//     wake-ups per question, as in real use), without and with a timeout;
//   - parallel: serial on every P at once, each goroutine with its own session.
//
// They do more than the floor: they check the answer against the question, keep a
// per-session index for cancel, and settle answers against timeouts once.
func BenchmarkRegistry(b *testing.B) {
	req, answers := benchCase(b)
	session := IntSession(7)

	b.Run("serial/askuser", func(b *testing.B) {
		r := newPendingTable()
		b.ReportAllocs()
		for b.Loop() {
			w, rec := r.register(session, "req-1", req, time.Time{})
			if err := r.answer(session, "req-1", answers); err != nil {
				b.Fatal(err)
			}
			if got := r.wait(w, rec); got.Outcome != Answered {
				b.Fatal(got.Outcome)
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

	for _, expiry := range []time.Duration{0, defaultTimeout} {
		name := "handoff"
		if expiry > 0 {
			name = "handoff-timeout"
		}
		b.Run(name+"/askuser", func(b *testing.B) {
			r := newPendingTable()
			ids := make(chan string, 1)
			go func() {
				for id := range ids {
					if err := r.answer(session, id, answers); err != nil {
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
				w, rec := r.register(session, "req-1", req, exp)
				ids <- "req-1"
				if got := r.wait(w, rec); got.Outcome != Answered {
					b.Fatal(got.Outcome)
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
		r := newPendingTable()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			s := IntSession(1000 + next.Add(1))
			for pb.Next() {
				w, rec := r.register(s, "req-1", req, time.Time{})
				if err := r.answer(s, "req-1", answers); err != nil {
					panic(err)
				}
				if got := r.wait(w, rec); got.Outcome != Answered {
					panic(got.Outcome)
				}
			}
		})
	})
	b.Run("parallel/floor", func(b *testing.B) {
		f := newFloor()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			s := IntSession(1000 + next.Add(1))
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

// BenchmarkCancelSession is the cost of cancelling one session of 4 pending questions
// while n others (one per session) are pending. Victims are made pending 25 sessions at a
// time, so that between n and n+96 others are pending at each cancel. The cost should not
// depend on n. The 1M size needs -bench.full.
func BenchmarkCancelSession(b *testing.B) {
	req, _ := benchCase(b)
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("others=%s", count(n)), func(b *testing.B) {
			if n >= 1_000_000 && !*benchFull {
				b.Skip("largest size: run with -bench.full")
			}
			r := newPendingTable()
			for i := range n {
				r.register(IntSession(int64(1_000_000+i)), "req-1", req, time.Time{})
			}
			// Victims are made pending in batches, with the timer stopped: stopping it
			// reads the memory statistics, which costs more than a cancel.
			const batch = 25
			victims := make([]SessionID, batch)
			for i := range victims {
				victims[i] = IntSession(int64(1 + i))
			}
			ids := []string{"req-1", "req-2", "req-3", "req-4"}
			next := batch
			b.ReportAllocs()
			for b.Loop() {
				if next == batch {
					b.StopTimer()
					for _, v := range victims {
						for _, id := range ids {
							r.register(v, id, req, time.Time{})
						}
					}
					next = 0
					b.StartTimer()
				}
				if got := r.cancelSession(victims[next]); got != len(ids) {
					b.Fatalf("cancelled %d", got)
				}
				next++
			}
			for _, v := range victims[next:] {
				r.cancelSession(v)
			}
			if r.store.len() != n {
				b.Fatalf("%d pending, want %d", r.store.len(), n)
			}
		})
	}
}

// count writes 1000 as 1k and 1000000 as 1M.
func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1_000 && n%1_000 == 0:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return fmt.Sprint(n)
}

// BenchmarkStoreMemory makes 100k questions pending, one per session, and reports the live
// heap they hold (B/pending), the difference of runtime.MemStats.HeapAlloc after a
// collection, and with a waiter each, the goroutine stacks too (stack-B/pending). Counted:
// the store's and the table's bookkeeping, and each question's request id and session id;
// not counted: the *Request, one shared by all, which is the caller's.
//
//   - registry: recorded only, nobody waiting (as a shared store holds the questions of
//     other replicas);
//   - registry+waiter: a goroutine per question waiting with the default 5-minute timeout
//     (a timer each).
func BenchmarkStoreMemory(b *testing.B) {
	const n = 100_000
	req, _ := benchCase(b)
	heapAndStack := func() (uint64, uint64) {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, m.StackInuse
	}
	id := func(i int) string { return fmt.Sprintf("%08d-0000-4000-8000-%012d", i%100_000_000, i) }

	b.Run("registry", func(b *testing.B) {
		var perQ float64
		for b.Loop() {
			b.StopTimer()
			heap0, _ := heapAndStack()
			b.StartTimer()
			s := newMemStore()
			for i := range n {
				if _, _, err := s.Put(context.Background(), store.Record{Session: IntSession(int64(1_000_000 + i)), Ask: wire.AskData{RequestID: id(i), Questions: req.Questions}}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			heap1, _ := heapAndStack()
			perQ = (float64(heap1) - float64(heap0)) / n
			runtime.KeepAlive(s)
			b.StartTimer()
		}
		b.ReportMetric(perQ, "B/pending")
	})

	b.Run("registry+waiter", func(b *testing.B) {
		var perQ, stackPerQ float64
		for b.Loop() {
			b.StopTimer()
			heap0, stack0 := heapAndStack()
			b.StartTimer()
			r := newPendingTable()
			var started, done sync.WaitGroup
			started.Add(n)
			done.Add(n)
			for i := range n {
				w, rec := r.register(IntSession(int64(1_000_000+i)), id(i), req, time.Now().Add(defaultTimeout))
				go func() {
					defer done.Done()
					started.Done()
					r.wait(w, rec)
				}()
			}
			started.Wait()
			b.StopTimer()
			time.Sleep(50 * time.Millisecond) // let the last goroutines reach their select
			heap1, stack1 := heapAndStack()
			perQ = (float64(heap1) - float64(heap0)) / n
			stackPerQ = (float64(stack1) - float64(stack0)) / n
			r.calls.close(Shutdown)
			done.Wait()
			runtime.KeepAlive(r)
			b.StartTimer()
		}
		b.ReportMetric(perQ, "B/pending")
		b.ReportMetric(stackPerQ, "stack-B/pending")
	})
}

// TestCallsDeliverTheRightQuestion: a caller registers before its question is recorded,
// so an end of an older question of the same id can reach it first; only the end of its
// own question is delivered to it, whether it comes before or after the caller knows
// which question that is.
func TestCallsDeliverTheRightQuestion(t *testing.T) {
	c := newCalls()
	k := key{IntSession(1), "call_0"}
	old := store.Record{Session: k.session, Ask: wire.AskData{RequestID: k.id}, Rev: 1, Outcome: TimedOut}
	mine := store.Record{Session: k.session, Ask: wire.AskData{RequestID: k.id}, Rev: 2, Outcome: Answered}

	// The end of the old question, then of this caller's, both before bind.
	w, ok := c.add(k)
	if !ok {
		t.Fatal("add refused")
	}
	c.settled()
	if n := c.deliver(old, nil); n != 0 {
		t.Fatalf("the old end was delivered to %d callers", n)
	}
	c.deliver(mine, nil)
	c.bind(w, 2)
	if got := w.wait().record(store.Record{}); got.Rev != 2 || got.Outcome != Answered {
		t.Fatalf("got %+v, want the caller's own question", got)
	}

	// After bind: the old end is not for it; its own is.
	w, _ = c.add(k)
	c.settled()
	c.bind(w, 3)
	if n := c.deliver(old, nil); n != 0 {
		t.Fatal("an old end reached a bound caller")
	}
	three := mine
	three.Rev = 3
	if n := c.deliver(three, nil); n != 1 {
		t.Fatalf("delivered to %d", n)
	}
	if got := w.wait().record(store.Record{}); got.Rev != 3 {
		t.Fatalf("got rev %d", got.Rev)
	}
	if len(c.m) != 0 {
		t.Fatalf("the table keeps %d keys", len(c.m))
	}

	// Close ends every wait, and refuses new callers.
	w, _ = c.add(k)
	c.settled()
	c.close(Shutdown)
	if got := w.wait().record(store.Record{}); got.Outcome != Shutdown {
		t.Fatalf("got %v at close", got.Outcome)
	}
	if _, ok := c.add(k); ok {
		t.Fatal("a closed table took a caller")
	}
}
