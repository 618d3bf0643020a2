package bench

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
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

// BenchmarkPendingMemory makes 100k questions pending, one per session, each a goroutine
// blocked in Dispatcher.Dispatch with the typical arguments, each parsed into its own
// Request: everything a real pending call holds. It reports the live heap they hold
// (B/pending), measured as the difference of runtime.MemStats.HeapAlloc after a
// collection, and the goroutine stacks (stack-B/pending). The store's part alone is
// measured in the root package (BenchmarkStoreMemory). ns/op is the time to make all
// 100k pending and is not a target.
func BenchmarkPendingMemory(b *testing.B) {
	b.Run("dispatcher", func(b *testing.B) {
		benchPending(b, func() wire.Transport { return askusertest.NewTransport() }) // no device: the ask goes nowhere and waits
	})
	// The same with a wshub.Hub as the transport, no device connected: one that
	// authorizes sessions, and one that knows people (Authenticate), which keeps an inbox
	// entry of each pending request.
	b.Run("hub-authorize", func(b *testing.B) {
		benchPending(b, func() wire.Transport {
			return wshub.New(&wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) { return nil, nil }})
		})
	})
	b.Run("hub-authenticate", func(b *testing.B) {
		benchPending(b, func() wire.Transport {
			return wshub.New(&wshub.Options{Authenticate: func(*http.Request) (wshub.Access, error) { return wshub.Access{}, nil }})
		})
	})
}

func benchPending(b *testing.B, transport func() wire.Transport) {
	var perQ, stackPerQ float64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		heap0, stack0 := heapAndStack()
		b.StartTimer()
		var asked atomic.Int64
		allAsked := make(chan struct{})
		d := askuser.New(transport(), &askuser.Options{Observer: observe.Hooks{OnAsk: func(observe.Observation) {
			if asked.Add(1) == pendingN {
				close(allAsked)
			}
		}}})
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
}
