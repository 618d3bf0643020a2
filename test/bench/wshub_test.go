package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
)

const wsSessions = 1000

// wsLoads are the loads BenchmarkWebSocket and BenchmarkWebSocketSharedProcess offer; a rate
// of 0 means saturated.
var wsLoads = []struct {
	name string
	rate float64
}{{"saturated", 0}, {"rate=5k", 5_000}, {"rate=10k", 10_000}, {"rate=20k", 20_000}}

// BenchmarkWebSocket runs the whole stack over loopback: 1,000 sessions, each with an
// agent goroutine asking the typical question with Dispatcher.Dispatch again and again,
// and a device connected to a wshub.Hub with github.com/coder/websocket that answers every
// question as it arrives. One op is one round trip; rt/s is the throughput of all sessions
// together; p50-ms and p99-ms are the latencies of the round trips, taken by the agents.
//
//   - saturated: every agent asks again as soon as it has its answer: rt/s is the capacity
//     of the machine. With 1,000 questions always in flight, latency is queueing (by
//     Little's law about 1000/(rt/s) seconds), not the cost of a round trip.
//   - rate=5k, rate=10k, rate=20k: the agents together ask 5,000, 10,000 or 20,000
//     questions a second, each agent every 200, 100 or 50 ms at its own phase; latency is
//     taken from when a question was due, not from when it was sent, so that falling
//     behind shows in it.
//
// The 1,000 devices run in a process of their own (this test binary again, running
// TestLoadClients), as the browsers they stand for run elsewhere: the benchmark's process
// holds only the hub, the dispatcher and the agents, so its heap, its garbage collector
// and its B/op and allocs/op are the server's alone. The two processes still share the
// machine's cores. The devices are kept lean (they read only the type and requestId and
// answer from a template). The hub's per-connection message rate limit is raised, since
// the devices answer as fast as they can; everything else is the default.
func BenchmarkWebSocket(b *testing.B) {
	for _, l := range wsLoads {
		b.Run(l.name, func(b *testing.B) { benchWebSocket(b, l.rate, true) })
	}
}

// BenchmarkWebSocketSharedProcess is BenchmarkWebSocket with the 1,000 devices in the
// benchmark's own process: they share the server's heap and garbage collector, and their
// allocations count in B/op and allocs/op. It is the setup of the earlier figures.
func BenchmarkWebSocketSharedProcess(b *testing.B) {
	for _, l := range wsLoads {
		b.Run(l.name, func(b *testing.B) { benchWebSocket(b, l.rate, false) })
	}
}

func benchWebSocket(b *testing.B, rate float64, separate bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hub := wshub.New(&wshub.Options{
		Authorize: func(r *http.Request) ([]askuser.SessionID, error) {
			n, err := strconv.ParseInt(r.URL.Query().Get("s"), 10, 64)
			if err != nil {
				return nil, err
			}
			return []askuser.SessionID{askuser.IntSession(n)}, nil
		},
		MaxMessagesPerSecond: 1 << 20,
	})
	d := askuser.New(hub, nil)
	srv := httptest.NewServer(hub)
	url := "ws" + strings.TrimPrefix(srv.URL, "http")

	var stopDevices func() // ends the devices and waits for them; after hub.Close
	var devicesGone <-chan struct{}
	if separate {
		stopDevices, devicesGone = startClientProcess(b, ctx, url)
	} else {
		var devices sync.WaitGroup
		for i := range wsSessions {
			c, _, err := websocket.Dial(ctx, fmt.Sprintf("%s/?s=%d", url, i+1), nil)
			if err != nil {
				b.Fatal(err)
			}
			devices.Go(func() { wsDevice(ctx, c, i+1) })
		}
		stopDevices = func() { cancel(); devices.Wait() }
	}
	defer func() {
		d.Close()
		hub.Close()
		srv.Close()
		stopDevices()
	}()
	for i := range wsSessions {
		for !hub.Connected(askuser.IntSession(int64(i + 1))) {
			select {
			case <-devicesGone:
				b.Fatal("the client process ended before every device connected")
			case <-time.After(time.Millisecond):
			}
		}
	}

	// Warm up: one round trip per session first, so that what is measured is the steady
	// state, not each connection's and goroutine's first use (buffers, stack growth).
	var warm sync.WaitGroup
	for i := range wsSessions {
		warm.Go(func() {
			res := d.Dispatch(ctx, askuser.ToolCall{Session: askuser.IntSession(int64(i + 1)), Arguments: typicalArgs})
			if res.Outcome != askuser.Answered {
				panic(res.Content)
			}
		})
	}
	warm.Wait()

	// Each agent takes round trips from a shared count until b.N are done.
	var tickets atomic.Int64
	latencies := make([][]time.Duration, wsSessions)
	var agents sync.WaitGroup
	var failed atomic.Value
	period := time.Duration(float64(wsSessions) / rate * float64(time.Second))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range wsSessions {
		session := askuser.IntSession(int64(i + 1))
		due := start.Add(period * time.Duration(i) / wsSessions)
		agents.Go(func() {
			for tickets.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if rate > 0 {
					time.Sleep(time.Until(due))
					t0 = due
					due = due.Add(period)
				}
				res := d.Dispatch(ctx, askuser.ToolCall{Session: session, Arguments: typicalArgs})
				latencies[i] = append(latencies[i], time.Since(t0))
				if res.Outcome != askuser.Answered {
					failed.Store(fmt.Errorf("session %v: %v: %s", session, res.Outcome, res.Content))
					return
				}
			}
		})
	}
	agents.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	all := slices.Concat(latencies...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rt/s")
	b.ReportMetric(percentile(all, 0.50).Seconds()*1e3, "p50-ms")
	b.ReportMetric(percentile(all, 0.99).Seconds()*1e3, "p99-ms")
}

// wsClientsEnv carries the hub's URL to the client process; when it is set, this test
// binary is that process.
const wsClientsEnv = "ASKUSER_BENCH_WS_CLIENTS"

// startClientProcess runs the 1,000 devices in a child process connected to url, and
// returns a function that ends them and waits for the child, and a channel closed when
// the child has exited. The child also ends when its standard input closes, so that it
// never outlives the benchmark, and is killed if it has not ended 10 seconds after stop.
func startClientProcess(b *testing.B, ctx context.Context, url string) (stop func(), gone <-chan struct{}) {
	ctx, kill := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLoadClients$", "-test.count=1")
	cmd.Env = append(os.Environ(), wsClientsEnv+"="+url)
	cmd.Stdout = io.Discard
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(done)
	}()
	return func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			kill()
			<-done
		}
		kill()
		if waitErr != nil {
			b.Errorf("client process: %v", waitErr)
		}
	}, done
}

// TestLoadClients is the client process of BenchmarkWebSocket: it connects wsSessions
// devices to the hub named by $ASKUSER_BENCH_WS_CLIENTS and answers their questions until
// the hub closes the connections or standard input closes. Without the variable it is
// skipped.
func TestLoadClients(t *testing.T) {
	url := os.Getenv(wsClientsEnv)
	if url == "" {
		t.Skip("the client process of BenchmarkWebSocket; run by it")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	var devices sync.WaitGroup
	defer devices.Wait()
	for i := range wsSessions {
		c, _, err := websocket.Dial(ctx, fmt.Sprintf("%s/?s=%d", url, i+1), nil)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		devices.Go(func() { wsDevice(ctx, c, i+1) })
	}
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// wsDevice answers every question sent to the connection with the first option of the
// typical question, as a browser panel would after a click, until the connection ends.
func wsDevice(ctx context.Context, c *websocket.Conn, session int) {
	defer c.CloseNow()
	prefix := []byte(fmt.Sprintf(`{"type":%q,"sessionId":%d,"data":{"requestId":`, wire.EventResult, session))
	suffix := []byte(`,"answers":[{"question":"Which framework should we use for the new module?","selectedLabels":["Vue 3 (Recommended)"],"customInput":null}]}}`)
	var out []byte
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return
		}
		var ev struct {
			Type string `json:"type"`
			Data struct {
				RequestID string `json:"requestId"`
			} `json:"data"`
		}
		if err := json.Unmarshal(msg, &ev); err != nil {
			panic(err)
		}
		if ev.Type != wire.EventAsk {
			continue
		}
		out = append(strconv.AppendQuote(append(out[:0], prefix...), ev.Data.RequestID), suffix...)
		if err := c.Write(ctx, websocket.MessageText, out); err != nil {
			return
		}
	}
}
