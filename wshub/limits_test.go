package wshub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
)

// The attacks of an outside review, each with the limit that now holds.

// amplifyingAnswer is an answer to req-1 (session 6) naming as many empty labels as fit
// the default read limit (about 21,800). Validated label by label, with every problem
// listed twice, such an answer once got a reply of 3.2 MB.
func amplifyingAnswer() string {
	head := `{"type":"ask_user_questions_result","data":{"requestId":"req-1","answers":[{"question":"` + questionText + `","selectedLabels":[`
	tail := `""],"customInput":null}]}}`
	n := (wshub.DefaultReadLimit - len(head) - len(tail)) / 3
	return head + strings.Repeat(`"",`, n) + tail
}

// maxReplyBytes is the most a refusal may weigh on the wire, whatever was sent.
const maxReplyBytes = 4 << 10

func TestRefusalReplyIsSmall(t *testing.T) {
	e := newEnv(t, &wshub.Options{MaxMessagesPerSecond: 1000}, nil)
	dv := e.dial("6")
	res := e.ask(askuser.IntSession(6), "req-1")
	dv.next(wire.EventAsk)

	wrongAnswers := strings.TrimSuffix(strings.Repeat(`{"question":"`+strings.Repeat(`\u0001`, 80)+`","selectedLabels":[],"customInput":null},`, 100), ",")
	for _, msg := range []string{
		amplifyingAnswer(),
		`{"type":"ask_user_questions_result","data":{"requestId":"req-1","answers":[` + wrongAnswers + `]}}`,
		`{"type":"` + strings.Repeat("\u2028", 20000) + `"}`,
		`{"type":"ask_user_questions_result","data":{"requestId":"` + strings.Repeat(`\u0001`, 1600) + `","declined":true}}`,
	} {
		if len(msg) > wshub.DefaultReadLimit {
			t.Fatalf("test message of %d bytes is over the read limit", len(msg))
		}
		dv.sendRaw(msg)
		ev := dv.next(wire.EventError)
		encoded, err := ev.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if len(encoded) > maxReplyBytes {
			t.Fatalf("a %d-byte message got a reply of %d bytes", len(msg), len(encoded))
		}
		data := decode[wire.ErrorData](t, ev)
		for _, p := range data.Problems {
			if strings.Contains(data.Message, p) {
				t.Fatalf("problem %q said twice, in the message too", p)
			}
		}
		t.Logf("%d bytes in, %d bytes back: %s", len(msg), len(encoded), truncateForLog(data.Message))
	}
	dv.answer(6, "req-1")
	if r := e.result(res); r.Outcome != askuser.Answered {
		t.Fatalf("result %+v", r)
	}
}

func truncateForLog(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// TestCostlyRefusals: a refused message costs more of the rate limit the bigger it is, so
// a device that keeps the hub parsing big messages for nothing is cut off quickly, while
// the same number of small accepted-sized messages would not be.
func TestCostlyRefusals(t *testing.T) {
	e := newEnv(t, &wshub.Options{MaxMessagesPerSecond: 10}, nil) // a burst of 20
	attacker, other := e.dial("6"), e.dial("6")
	res := e.ask(askuser.IntSession(6), "req-1")
	attacker.next(wire.EventAsk)
	other.next(wire.EventAsk)
	sent := 0
	for ; sent < 20; sent++ {
		ctx, cancel := context.WithTimeout(context.Background(), failsafe)
		err := attacker.ws.Write(ctx, websocket.MessageText, []byte(amplifyingAnswer()))
		cancel()
		if err != nil {
			break
		}
		if _, ok := <-attacker.events; !ok {
			break
		}
	}
	if err := attacker.ended(); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %v, want StatusPolicyViolation", err)
	}
	if sent > 3 {
		t.Fatalf("%d refused 64 KiB messages were read before the limit, want at most 3", sent)
	}
	other.answer(6, "req-1")
	if r := e.result(res); r.Outcome != askuser.Answered {
		t.Fatalf("result %+v", r)
	}
}

// TestPingFlood: pings count against the rate limit like messages.
func TestPingFlood(t *testing.T) {
	e := newEnv(t, &wshub.Options{MaxMessagesPerSecond: 10, PingInterval: -1}, nil)
	dv := e.dial("6")
	pongs := 0
	for range 200 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := dv.ws.Ping(ctx)
		cancel()
		if err != nil {
			break
		}
		pongs++
	}
	if pongs >= 200 {
		t.Fatal("200 pings were all answered")
	}
	if err := dv.ended(); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %v, want StatusPolicyViolation", err)
	}
	t.Logf("%d pings answered before the limit", pongs)
}

// TestOriginCheckedBeforeAuthorize: a page of another site gets 403 without the host's
// authentication ever running on its request.
func TestOriginCheckedBeforeAuthorize(t *testing.T) {
	var calls atomic.Int32
	e := newEnv(t, &wshub.Options{
		OriginPatterns: []string{"app.example.com"},
		Authorize: func(r *http.Request) ([]askuser.SessionID, error) {
			calls.Add(1)
			return authorizeQuery(r)
		},
	}, nil)
	for _, origin := range []string{"https://evil.example", "null", "http://app.example.com.evil.example"} {
		ctx, cancel := context.WithTimeout(context.Background(), failsafe)
		_, resp, err := websocket.Dial(ctx, e.url("session=6"), &websocket.DialOptions{HTTPClient: e.client, HTTPHeader: http.Header{"Origin": {origin}}})
		cancel()
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("origin %q: err %v, response %v; want 403", origin, err, resp)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("Authorize ran %d times for refused origins", n)
	}
	e.dial("6", func(o *websocket.DialOptions) { o.HTTPHeader = http.Header{"Origin": {"https://APP.example.com"}} })
	if n := calls.Load(); n != 1 {
		t.Fatalf("Authorize ran %d times for one allowed origin", n)
	}
}

// TestJoinWithManyPending: a device joins a session with 1,000 pending questions (more
// than the queue holds) while more are being asked, and gets every one exactly once.
func TestJoinWithManyPending(t *testing.T) {
	const pending, more = 1000, 100
	e := newEnv(t, nil, nil)
	s := askuser.IntSession(9)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	ask := func(i int) {
		wg.Go(func() { askusertest.Ask(ctx, e.d, s, fmt.Sprintf("q%04d", i), request()) })
	}
	for i := range pending {
		ask(i)
	}
	deadline := time.Now().Add(failsafe)
	for len(askusertest.Questions(e.d, s)) < pending {
		if time.Now().After(deadline) {
			t.Fatal("the questions were not all asked")
		}
		time.Sleep(5 * time.Millisecond)
	}
	dv := e.dialStalled("9")
	for i := pending; i < pending+more; i++ { // asked while the device joins and reads
		ask(i)
	}
	dv.start()
	seen := map[string]bool{}
	for len(seen) < pending+more {
		a := decode[wire.AskData](t, dv.next(wire.EventAsk))
		if seen[a.RequestID] {
			t.Fatalf("question %s shown twice", a.RequestID)
		}
		seen[a.RequestID] = true
	}
	dv.answer(9, "q0500")
	if ev := dv.next(wire.EventResolved); decode[wire.ResolvedData](t, ev).RequestID != "q0500" {
		t.Fatalf("resolved %s", ev.Data)
	}
	cancel()
	wg.Wait()
	// Every question ended; the device hears each end once, and no ask again.
	ends := 0
	for ends < pending+more-1 {
		ev := dv.next(wire.EventResolved)
		_ = ev
		ends++
	}
}

// TestQueueBoundedInBytes: a device that reads nothing is dropped once what waits for it
// passes QueueBytes, long before QueueSize messages.
func TestQueueBoundedInBytes(t *testing.T) {
	e := newEnv(t, &wshub.Options{QueueSize: 1 << 20, QueueBytes: 256 << 10, WriteTimeout: time.Minute}, nil)
	s := askuser.IntSession(3)
	stalled := e.dialStalled("3")
	payload := json.RawMessage(`"` + strings.Repeat("p", 32<<10) + `"`)
	i := 0
	for ; i < 4000; i++ {
		if err := e.hub.Send(context.Background(), wire.Event{Type: "bulk", SessionID: s, Data: payload}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-e.disconnected:
			t.Logf("dropped after %d events of 32 KiB", i+1)
			stalled.start()
			stalled.ended()
			return
		default:
		}
		time.Sleep(100 * time.Microsecond) // let the writer fill the kernel's buffers
	}
	t.Fatal("the stalled device was never dropped")
}

// countingInbound counts the events a hub hands its Inbound.
type countingInbound struct {
	wire.Inbound
	n atomic.Int64
}

// countingHub is a hub whose dispatcher's events go through a countingInbound.
type countingHub struct {
	*wshub.Hub
	counter *countingInbound
}

func (h countingHub) Bind(in wire.Inbound) {
	h.counter.Inbound = in
	h.Hub.Bind(h.counter)
}

func (c *countingInbound) HandleEvent(ctx context.Context, ev wire.Event) error {
	c.n.Add(1)
	return c.Inbound.HandleEvent(ctx, ev)
}

// BenchmarkNonReadingAttacker measures what the amplification attack of the review costs
// the host now: a device that never reads sends the biggest refused answer it can, as
// fast as it can, until the hub cuts it off. Each iteration is one whole attack, on a hub
// with the default options; it reports the refused answers the dispatcher was handed
// before the cut, and the host's peak heap growth during the attack
// (runtime.MemStats.HeapInuse, sampled every millisecond).
func BenchmarkNonReadingAttacker(b *testing.B) {
	msg := []byte(amplifyingAnswer())
	var handled, peak float64
	for b.Loop() {
		e := newEnv(b, nil, nil)
		counter := &countingInbound{}
		e.d.Close()
		e.d = askuser.New(countingHub{e.hub, counter}, nil) // its events counted on their way in
		res := e.ask(askuser.IntSession(6), "req-1")
		attacker := e.dialStalled("6") // reads nothing, ever
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		stop := make(chan struct{})
		peakCh := make(chan uint64)
		go func() {
			var m runtime.MemStats
			high := base.HeapInuse
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					peakCh <- high
					return
				case <-t.C:
					runtime.ReadMemStats(&m)
					high = max(high, m.HeapInuse)
				}
			}
		}()
		cut := false
		for range 100000 {
			ctx, cancel := context.WithTimeout(context.Background(), failsafe)
			err := attacker.ws.Write(ctx, websocket.MessageText, msg)
			cancel()
			if err != nil {
				break
			}
			select {
			case <-e.disconnected:
				cut = true
			default:
			}
			if cut {
				break
			}
		}
		if !cut {
			e.waitDisconnect()
		}
		close(stop)
		high := <-peakCh
		handled += float64(counter.n.Load())
		peak = max(peak, float64(high-base.HeapInuse)/(1<<20))
		e.d.Close()
		e.result(res)
	}
	b.ReportMetric(handled/float64(b.N), "refusals-before-cut")
	b.ReportMetric(peak, "peak-heap-MiB")
}

// BenchmarkJoinWith1000Pending measures joining a session with 1,000 pending questions:
// from the dial to the last of the 1,000 asks read by the device, over a real WebSocket.
func BenchmarkJoinWith1000Pending(b *testing.B) {
	e := newEnv(b, nil, nil)
	s := askuser.IntSession(9)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 1000 {
		wg.Go(func() { askusertest.Ask(ctx, e.d, s, fmt.Sprintf("q%04d", i), request()) })
	}
	for len(askusertest.Questions(e.d, s)) < 1000 {
		time.Sleep(5 * time.Millisecond)
	}
	b.ResetTimer()
	for b.Loop() {
		dv := e.dial("9")
		for range 1000 {
			dv.next(wire.EventAsk)
		}
		dv.ws.CloseNow()
		<-dv.done
		e.waitDisconnect()
	}
	b.StopTimer()
	cancel()
	wg.Wait()
}
