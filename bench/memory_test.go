package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
)

const pendingN = 100_000

// heapAndStack returns the live heap and the goroutine stacks in use, after a collection.
func heapAndStack() (heap, stack uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.StackInuse
}

// requestID returns a distinct 36-character request id, the length of a UUID.
func requestID(i int) string { return fmt.Sprintf("%08d-0000-4000-8000-%012d", i%100_000_000, i) }

// BenchmarkPendingMemory makes 100k questions pending, one per session, and reports the
// live heap they hold (B/pending), measured as the difference of runtime.MemStats.HeapAlloc
// after a collection, and for the variants with a goroutine per question, the goroutine
// stacks too (stack-B/pending). What is counted: the registry's bookkeeping, each
// question's request id and session id (made inside the measurement); not counted in the
// registry variants: the *Request, one shared by all, which is the caller's.
//
//   - registry: Register only, nobody waiting (a durable or cluster layer may hold
//     questions that way);
//   - registry+waiter: a goroutine per question blocked in Registry.Wait with the default
//     5-minute timeout (a timer each);
//   - dispatcher: a goroutine per question blocked in Dispatcher.Dispatch with the typical
//     arguments, each parsed into its own Request: everything a real pending call holds.
//
// ns/op is the time to make all 100k pending and is not a target.
func BenchmarkPendingMemory(b *testing.B) {
	req, _ := registryCase(b)

	b.Run("registry", func(b *testing.B) {
		var perQ float64
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			heap0, _ := heapAndStack()
			b.StartTimer()
			r := askuser.NewRegistry(0)
			for i := range pendingN {
				if _, _, err := r.Register(askuser.IntSession(int64(1_000_000+i)), requestID(i), req, time.Time{}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			heap1, _ := heapAndStack()
			perQ = (float64(heap1) - float64(heap0)) / pendingN
			r.Close()
			runtime.KeepAlive(r)
			b.StartTimer()
		}
		b.ReportMetric(perQ, "B/pending")
	})

	b.Run("registry+waiter", func(b *testing.B) {
		var perQ, stackPerQ float64
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			heap0, stack0 := heapAndStack()
			b.StartTimer()
			r := askuser.NewRegistry(0)
			var started, done sync.WaitGroup
			started.Add(pendingN)
			done.Add(pendingN)
			ctx := context.Background()
			for i := range pendingN {
				e, _, err := r.Register(askuser.IntSession(int64(1_000_000+i)), requestID(i), req, time.Now().Add(askuser.DefaultTimeout))
				if err != nil {
					b.Fatal(err)
				}
				go func() {
					defer done.Done()
					started.Done()
					r.Wait(ctx, e)
				}()
			}
			started.Wait()
			b.StopTimer()
			time.Sleep(50 * time.Millisecond) // let the last goroutines reach their select
			heap1, stack1 := heapAndStack()
			perQ = (float64(heap1) - float64(heap0)) / pendingN
			stackPerQ = (float64(stack1) - float64(stack0)) / pendingN
			r.Close()
			done.Wait()
			runtime.KeepAlive(r)
			b.StartTimer()
		}
		b.ReportMetric(perQ, "B/pending")
		b.ReportMetric(stackPerQ, "stack-B/pending")
	})

	b.Run("dispatcher", func(b *testing.B) {
		var perQ, stackPerQ float64
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			heap0, stack0 := heapAndStack()
			b.StartTimer()
			var asked atomic.Int64
			allAsked := make(chan struct{})
			mt := askuser.NewMemoryTransport() // no device: the ask goes nowhere and waits
			d := askuser.New(mt, &askuser.Options{OnAsk: func(askuser.Asked) {
				if asked.Add(1) == pendingN {
					close(allAsked)
				}
			}})
			mt.Bind(d)
			var done sync.WaitGroup
			done.Add(pendingN)
			ctx := context.Background()
			for i := range pendingN {
				call := askuser.ToolCall{Session: askuser.IntSession(int64(1_000_000 + i)), ID: requestID(i), Arguments: typicalArgs}
				go func() {
					defer done.Done()
					d.Dispatch(ctx, call)
				}()
			}
			<-allAsked
			b.StopTimer()
			time.Sleep(50 * time.Millisecond)
			heap1, stack1 := heapAndStack()
			perQ = (float64(heap1) - float64(heap0)) / pendingN
			stackPerQ = (float64(stack1) - float64(stack0)) / pendingN
			d.Close()
			done.Wait()
			runtime.KeepAlive(d)
			b.StartTimer()
		}
		b.ReportMetric(perQ, "B/pending")
		b.ReportMetric(stackPerQ, "stack-B/pending")
	})
}
