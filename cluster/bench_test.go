package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// The benchmarks, side by side in one run:
//
//	go test -run '^$' -bench . -benchmem ./cluster
//
// BenchmarkRoundTrip: one question asked on a replica and answered by a device of another
// replica, until the call returns; the same through one process's dispatcher.
// BenchmarkFloor: what any design on JetStream pays for that: a KV create, an update on
// its revision, and the watch notification of the update.
// BenchmarkThroughput: round trips per second with three replicas and 1,000 sessions.
// BenchmarkPendingMemory: what a pending question costs a replica's memory and the
// servers' storage.

// benchCluster is three replicas on NATS storage of r copies.
func benchCluster(b *testing.B, copies int) []*replica {
	b.Helper()
	var servers string
	opts := &cluster.Options{Replicas: copies}
	if copies == 1 {
		servers = startNode(b).url()
	} else {
		servers = urls(startCluster(b, copies))
	}
	var rs []*replica
	for i := range 3 {
		rs = append(rs, newReplica(b, fmt.Sprintf("r%d", i+1), servers, opts, nil))
	}
	return rs
}

// answerAll answers every question d is shown, with "Yes", until ctx ends.
func answerAll(ctx context.Context, d *askusertest.Device) {
	for {
		ev, err := d.Recv(ctx)
		if err != nil {
			return
		}
		if ev.Type == wire.EventAsk {
			_ = d.Send(ctx, answerEvent(d.Session(), ev.RequestID(), "Yes", ""))
		}
	}
}

func BenchmarkRoundTrip(b *testing.B) {
	b.Run("single-process", func(b *testing.B) {
		devices := askusertest.NewTransport()
		d := askuser.New(devices, nil)
		defer d.Close()
		benchRoundTrips(b, []*askuser.Dispatcher{d}, []*askusertest.Transport{devices})
	})
	for _, copies := range []int{1, 3} {
		b.Run(fmt.Sprintf("cluster-R%d", copies), func(b *testing.B) {
			rs := benchCluster(b, copies)
			benchRoundTrips(b, []*askuser.Dispatcher{rs[0].d}, []*askusertest.Transport{rs[1].devices})
		})
	}
}

// benchRoundTrips asks on the first dispatcher and answers from a device of the first
// transport, one question at a time.
func benchRoundTrips(b *testing.B, ds []*askuser.Dispatcher, devices []*askusertest.Transport) {
	s := askuser.StringSession("bench")
	ctx, cancel := context.WithCancel(context.Background())
	dev := devices[0].Connect(s)
	var wg sync.WaitGroup
	wg.Go(func() { answerAll(ctx, dev) })
	defer func() {
		cancel()
		wg.Wait()
		dev.Close()
	}()
	args := json.RawMessage(deployArgs)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		res := ds[0].Dispatch(ctx, askuser.ToolCall{Session: s, ID: fmt.Sprintf("rt-%d-%d", b.N, i), Arguments: args})
		if res.Outcome != askuser.Answered {
			b.Fatalf("%+v", res)
		}
	}
}

// BenchmarkFloor is what one question's round trip costs JetStream at least: a KV
// Create, an Update on its revision (the compare-and-set of the answer), and a watcher
// seeing the update (how the asking replica learns of it).
func BenchmarkFloor(b *testing.B) {
	for _, copies := range []int{1, 3} {
		b.Run(fmt.Sprintf("R%d", copies), func(b *testing.B) {
			var servers string
			if copies == 1 {
				servers = startNode(b).url()
			} else {
				servers = urls(startCluster(b, copies))
			}
			nc := connect(b, servers)
			js, err := jetstream.New(nc)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "floor", Replicas: copies, LimitMarkerTTL: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			w, err := kv.WatchAll(ctx, jetstream.UpdatesOnly())
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = w.Stop() }()
			value := []byte(`{"session":"bench","ask":{"requestId":"x","questions":[{"question":"Deploy now?","header":"Deploy","options":[{"label":"Yes","description":"Ship it"},{"label":"No","description":"Wait"}],"multiSelect":false}]}}`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				key := fmt.Sprintf("k%d-%d", b.N, i)
				rev, err := kv.Create(ctx, key, value, jetstream.KeyTTL(time.Minute))
				if err != nil {
					b.Fatal(err)
				}
				end, err := kv.Update(ctx, key, value, rev)
				if err != nil {
					b.Fatal(err)
				}
				for e := range w.Updates() {
					if e != nil && e.Revision() == end {
						break
					}
				}
			}
		})
	}
}

// BenchmarkThroughput runs round trips concurrently over 1,000 sessions: each is asked
// on one replica and answered by a device on another. It reports round trips a second.
func BenchmarkThroughput(b *testing.B) {
	const sessions = 1000
	for _, copies := range []int{1, 3} {
		b.Run(fmt.Sprintf("cluster-R%d", copies), func(b *testing.B) {
			rs := benchCluster(b, copies)
			ctx, cancel := context.WithCancel(context.Background())
			var devs []*askusertest.Device
			var wg sync.WaitGroup
			for i := range sessions {
				d := rs[(i+1)%3].devices.Connect(askuser.IntSession(int64(i)))
				devs = append(devs, d)
				wg.Go(func() { answerAll(ctx, d) })
			}
			defer func() {
				cancel()
				wg.Wait()
				for _, d := range devs {
					d.Close()
				}
			}()
			args := json.RawMessage(deployArgs)
			var next atomic.Int64
			var failed atomic.Value
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var agents sync.WaitGroup
			for i := range sessions {
				agents.Go(func() {
					s := askuser.IntSession(int64(i))
					for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
						res := rs[i%3].d.Dispatch(ctx, askuser.ToolCall{Session: s, ID: fmt.Sprintf("tp-%d-%d", b.N, n), Arguments: args})
						if res.Outcome != askuser.Answered {
							failed.Store(res.Content)
						}
					}
				})
			}
			agents.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "roundtrips/s")
			if f := failed.Load(); f != nil {
				b.Fatalf("a call ended with %v", f)
			}
		})
	}
}

// BenchmarkPendingMemory records questions pending in the bucket and reports what each
// costs a replica's memory (the watch's copy, which every replica keeps) and the
// servers' storage (per copy).
func BenchmarkPendingMemory(b *testing.B) {
	const n = 10000
	node := startNode(b)
	r := newReplica(b, "mem", node.url(), &cluster.Options{Storage: jetstream.MemoryStorage}, nil)
	js, err := jetstream.New(connect(b, node.url()))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	type put struct {
		id  string
		rev uint64
	}
	for b.Loop() {
		b.StopTimer()
		s := askuser.StringSession(fmt.Sprintf("mem-%d", time.Now().UnixNano()))
		puts := make([]put, 0, n)
		for i := range n {
			puts = append(puts, put{id: fmt.Sprintf("call_%024d", i)})
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		for i := range puts {
			rec, _, err := r.store.Put(ctx, store.Record{Session: s, AskedAt: time.Now(), Ask: wire.AskData{
				RequestID: puts[i].id, ExpiresAt: time.Now().Add(5 * time.Minute),
				Questions: []askuser.Question{{Question: "Which framework should we use for the new module?", Header: "Framework", Options: []askuser.Option{
					{Label: "Vue 3 (Recommended)", Description: "Composition API + TypeScript, matches the existing stack"},
					{Label: "React", Description: "Larger ecosystem, but different from the current codebase"},
				}}},
			}})
			if err != nil {
				b.Fatal(err)
			}
			puts[i].rev = rec.Rev
		}
		b.StopTimer()
		waitFor(b, "the watch to see every question", func() bool { return len(r.tr.Pending(s)) == n })
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "replica-B/pending")
		if info, err := js.Stream(ctx, "KV_"+cluster.DefaultBucket); err == nil {
			b.ReportMetric(float64(info.CachedInfo().State.Bytes)/n, "storage-B/pending")
		}
		for _, p := range puts {
			_, _ = r.store.End(ctx, store.Record{Session: s, Ask: wire.AskData{RequestID: p.id}, Rev: p.rev, Outcome: askuser.Cancelled})
		}
		b.StartTimer()
	}
}
