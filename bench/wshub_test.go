package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
)

const wsSessions = 1000

// BenchmarkWebSocket runs the whole stack over loopback: 1,000 sessions, each with an
// agent goroutine asking the typical question with Dispatcher.Dispatch again and again,
// and a device connected to a wshub.Hub with github.com/coder/websocket that answers every
// question as it arrives. One op is one round trip; rt/s is the throughput of all sessions
// together; p50-ms and p99-ms are the latencies of the round trips.
//
//   - saturated: every agent asks again as soon as it has its answer: rt/s is the capacity
//     of the machine. With 1,000 questions always in flight, latency is queueing (by
//     Little's law about 1000/(rt/s) seconds), not the cost of a round trip.
//   - rate=5k, rate=10k, rate=20k: the agents together ask 5,000, 10,000 or 20,000
//     questions a second, each agent every 200, 100 or 50 ms at its own phase; latency is taken from when a
//     question was due, not from when it was sent, so that falling behind shows in it.
//
// The devices run on the same cores as the server and take a share of them; they are
// kept lean (they read only the type and requestId and answer from a template), as the
// browsers they stand for run elsewhere. The hub's per-connection message rate limit is
// raised, since the devices answer as fast as they can; everything else is the default.
func BenchmarkWebSocket(b *testing.B) {
	b.Run("saturated", func(b *testing.B) { benchWebSocket(b, 0) })
	b.Run("rate=5k", func(b *testing.B) { benchWebSocket(b, 5_000) })
	b.Run("rate=10k", func(b *testing.B) { benchWebSocket(b, 10_000) })
	b.Run("rate=20k", func(b *testing.B) { benchWebSocket(b, 20_000) })
}

func benchWebSocket(b *testing.B, rate float64) {
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
	hub.Bind(d)
	srv := httptest.NewServer(hub)
	url := "ws" + strings.TrimPrefix(srv.URL, "http")

	var devices sync.WaitGroup
	for i := range wsSessions {
		c, _, err := websocket.Dial(ctx, fmt.Sprintf("%s/?s=%d", url, i+1), nil)
		if err != nil {
			b.Fatal(err)
		}
		devices.Go(func() { wsDevice(ctx, c, i+1) })
	}
	for i := range wsSessions {
		for !hub.Connected(askuser.IntSession(int64(i + 1))) {
			time.Sleep(time.Millisecond)
		}
	}
	defer func() {
		d.Close()
		hub.Close()
		srv.Close()
		cancel()
		devices.Wait()
	}()

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
	prefix := []byte(fmt.Sprintf(`{"type":%q,"sessionId":%d,"data":{"requestId":`, askuser.EventResult, session))
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
		if ev.Type != askuser.EventAsk {
			continue
		}
		out = append(strconv.AppendQuote(append(out[:0], prefix...), ev.Data.RequestID), suffix...)
		if err := c.Write(ctx, websocket.MessageText, out); err != nil {
			return
		}
	}
}
