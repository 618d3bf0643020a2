package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
)

// BenchmarkCancelSession cancels one session of four pending questions while n others
// are pending, each in a session of its own. The n others are made pending once, outside
// the timer; the sessions to cancel are made pending with the timer stopped, 25 sessions
// (100 questions) at a time, so that between n and n+96 others are pending at each
// cancel. The cost should not depend on n. The 1M size needs -bench.full.
func BenchmarkCancelSession(b *testing.B) {
	req, _ := registryCase(b)
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("others=%s", count(n)), func(b *testing.B) {
			if n >= 1_000_000 {
				skipUnlessFull(b)
			}
			r := askuser.NewRegistry(0)
			defer r.Close()
			for i := range n {
				if _, _, err := r.Register(askuser.IntSession(int64(1_000_000+i)), "req-1", req, time.Time{}); err != nil {
					b.Fatal(err)
				}
			}
			// Victims are made pending in batches, with the timer stopped: stopping it
			// reads the memory statistics, which costs more than a cancel.
			const batch = 25
			victims := make([]askuser.SessionID, batch)
			for i := range victims {
				victims[i] = askuser.IntSession(int64(1 + i))
			}
			ids := []string{"req-1", "req-2", "req-3", "req-4"}
			cancelled := askuser.Resolution{Outcome: askuser.Cancelled, Err: askuser.ErrCancelled}
			next := batch
			b.ReportAllocs()
			for b.Loop() {
				if next == batch {
					b.StopTimer()
					for _, v := range victims {
						for _, id := range ids {
							if _, _, err := r.Register(v, id, req, time.Time{}); err != nil {
								b.Fatal(err)
							}
						}
					}
					next = 0
					b.StartTimer()
				}
				if got := r.CancelSession(victims[next], cancelled); got != len(ids) {
					b.Fatalf("cancelled %d", got)
				}
				next++
			}
			for _, v := range victims[next:] {
				r.CancelSession(v, cancelled)
			}
			if r.Len() != n {
				b.Fatalf("%d pending, want %d", r.Len(), n)
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
