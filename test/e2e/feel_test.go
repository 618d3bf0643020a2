package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
)

// How fast the panel feels, beside the least a page can do: BenchmarkFeel.

// feelQuestion is the question asked: one single-select question of three options, as a
// model writes it (bench's typicalArgs).
var feelQuestion = json.RawMessage(`{"questions":[{"question":"Which framework should we use for the new module?","header":"Framework","options":[{"label":"Vue 3 (Recommended)","description":"Composition API + TypeScript, matches existing stack"},{"label":"React","description":"Larger ecosystem but different from current codebase"},{"label":"Svelte","description":"Smallest bundles, least familiar to the team"}],"multiSelect":false}]}`)

// feelProbe runs first in both pages. It takes, on the page's clock (performance.now):
// frame, when the question's frame reaches the page's JavaScript (a message listener
// added before the page's own); inserted, when the question's element is in the page (a
// MutationObserver: the end of the script's work on the frame); raf and painted, the
// first and second requestAnimationFrame after that (painted: the frame after the one
// that painted it); click, the click's own timestamp, and clickJS, when its handling
// began; sent, when the answer's frame is handed to the socket.
const feelProbe = `(() => {
	let rec = {};
	let waiters = [];
	const Native = window.WebSocket;
	function Probed(url, protocols) {
		const ws = protocols === undefined ? new Native(url) : new Native(url, protocols);
		ws.addEventListener("message", (m) => {
			if (!rec.frame && typeof m.data === "string" && m.data.indexOf('"ask_user_questions"') >= 0) rec.frame = performance.now();
		});
		return ws;
	}
	Probed.prototype = Native.prototype;
	for (const k of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) Probed[k] = Native[k];
	window.WebSocket = Probed;
	const send = Native.prototype.send;
	Native.prototype.send = function (d) {
		if (typeof d === "string" && d.indexOf('"ask_user_questions_result"') >= 0) rec.sent = performance.now();
		return send.call(this, d);
	};
	window.addEventListener("click", (e) => { rec.click = e.timeStamp; rec.clickJS = performance.now(); }, true);
	window.feel = {
		watch(container, selector) {
			new MutationObserver(() => {
				if (rec.inserted || !rec.frame || !container.querySelector(selector)) return;
				rec.inserted = performance.now();
				requestAnimationFrame(() => {
					rec.raf = performance.now();
					requestAnimationFrame(() => {
						rec.painted = performance.now();
						waiters.forEach((f) => f());
						waiters = [];
					});
				});
			}).observe(container, {childList: true, subtree: true});
		},
		arm() { rec = {}; waiters = []; },
		painted() { return new Promise((r) => rec.painted ? r(rec) : waiters.push(() => r(rec))); },
		taken() { return rec; },
	};
})();`

// feelPanelPage is a host's page with the panel, as in docs/WEB.md.
const feelPanelPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>panel</title>
<link rel="stylesheet" href="/askuser/panel.css"><script src="/probe.js"></script></head>
<body><div id="q"></div><script src="/askuser/panel.js"></script><script>
feel.watch(document.getElementById("q"), '[data-testid="question"]');
window.ask = AskUser.connect({url: "/ws?s=1", container: document.getElementById("q")});
</script></body></html>`

// feelFloorPage is the least a page can do with the same frame: parse it, insert the
// question and a button, and on a click send the answer.
const feelFloorPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>floor</title>
<script src="/probe.js"></script></head><body><div id="q"></div><script>
const q = document.getElementById("q");
feel.watch(q, ".q");
window.ws = new WebSocket("ws://" + location.host + "/ws");
ws.onmessage = (m) => {
	const ev = JSON.parse(m.data);
	if (ev.type !== "ask_user_questions") return;
	const question = ev.data.questions[0];
	const box = document.createElement("div");
	box.className = "q";
	const p = document.createElement("p");
	p.textContent = question.question;
	const b = document.createElement("button");
	b.textContent = "Submit";
	b.onclick = () => {
		ws.send(JSON.stringify({type: "ask_user_questions_result", data: {requestId: ev.data.requestId,
			answers: [{question: question.question, selectedLabels: [question.options[0].label]}]}}));
		box.remove();
	};
	box.append(p, b);
	q.append(box);
};
</script></body></html>`

// feelRecord is what the probe took, in milliseconds of the page's clock.
type feelRecord struct {
	Frame    float64 `json:"frame"`
	Inserted float64 `json:"inserted"`
	Raf      float64 `json:"raf"`
	Painted  float64 `json:"painted"`
	Click    float64 `json:"click"`
	ClickJS  float64 `json:"clickJS"`
	Sent     float64 `json:"sent"`
}

// feelTab is one page of BenchmarkFeel and its side of the figures.
type feelTab struct {
	name   string
	ctx    context.Context
	origin float64 // the page's performance.timeOrigin
	offset float64 // the page's epoch milliseconds minus Go's, at the start
	drift  float64 // how much the offset moved by the end

	series map[string][]float64 // milliseconds, one a round, by name
}

// feelFixture is the browser, the hub and the floor's server, made once for every run of
// the benchmark function.
type feelFixture struct {
	err   error
	d     *askuser.Dispatcher
	panel *feelTab
	floor *feelTab
	// The floor's side: the frame the hub sends for the question, and the page's socket.
	frame []byte
	conns chan *websocket.Conn
	conn  *websocket.Conn
}

var (
	feelOnce sync.Once
	feel     feelFixture
)

func feelSetup() error {
	chrome, err := findChrome()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "askuser-feel-")
	if err != nil {
		return err
	}
	env.stop = append(env.stop, func() { _ = os.RemoveAll(dir) })
	browser, stop, err := startBrowser(chrome, dir)
	env.stop = append(env.stop, stop)
	if err != nil {
		return err
	}

	// The panel's side: the real hub and dispatcher, the panel's files, a host's page.
	hub := wshub.New(&wshub.Options{Authorize: func(r *http.Request) ([]askuser.SessionID, error) {
		n, err := strconv.ParseInt(r.URL.Query().Get("s"), 10, 64)
		return []askuser.SessionID{askuser.IntSession(n)}, err
	}})
	feel.d = askuser.New(hub, nil)
	page := func(html string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(html))
		}
	}
	probe := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		_, _ = w.Write([]byte(feelProbe))
	}
	mux := http.NewServeMux()
	mux.Handle("/askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	mux.Handle("/ws", hub)
	mux.HandleFunc("/probe.js", probe)
	mux.HandleFunc("/{$}", page(feelPanelPage))
	panelSrv := httptest.NewServer(mux)
	env.stop = append(env.stop, func() { feel.d.Close(); _ = hub.Close(); panelSrv.Close() })

	// The frame the hub sends for the question, taken by a device of another session.
	if feel.frame, err = hubFrame(panelSrv.URL); err != nil {
		return err
	}

	// The floor: a bare coder/websocket server that sends that frame and reads the answer.
	feel.conns = make(chan *websocket.Conn, 1)
	fmux := http.NewServeMux()
	fmux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err == nil {
			feel.conns <- c
		}
	})
	fmux.HandleFunc("/probe.js", probe)
	fmux.HandleFunc("/{$}", page(feelFloorPage))
	floorSrv := httptest.NewServer(fmux)
	env.stop = append(env.stop, floorSrv.Close)

	feel.panel = &feelTab{name: "panel"}
	feel.floor = &feelTab{name: "floor"}
	for _, ft := range []*feelTab{feel.panel, feel.floor} {
		ctx, cancel := chromedp.NewContext(browser)
		env.stop = append(env.stop, cancel)
		ft.ctx = ctx
		base := panelSrv.URL
		if ft == feel.floor {
			base = floorSrv.URL
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1100, 900), chromedp.Navigate(base+"/")); err != nil {
			return fmt.Errorf("opening the %s page: %w", ft.name, err)
		}
	}
	select {
	case feel.conn = <-feel.conns:
	case <-time.After(actionTimeout):
		return errors.New("the floor page did not connect")
	}
	for !hub.Connected(askuser.IntSession(1)) {
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// hubFrame returns the frame the hub sends a device for feelQuestion.
func hubFrame(base string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws?s=2", nil)
	if err != nil {
		return nil, err
	}
	defer c.CloseNow()
	done := make(chan askuser.Result, 1)
	go func() {
		done <- feel.d.Dispatch(ctx, askuser.ToolCall{Session: askuser.IntSession(2), Arguments: feelQuestion})
	}()
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return nil, err
		}
		var ev struct {
			Type string `json:"type"`
			Data struct {
				RequestID string `json:"requestId"`
			} `json:"data"`
		}
		if json.Unmarshal(msg, &ev) != nil || ev.Type != wire.EventAsk {
			continue
		}
		answer := fmt.Sprintf(`{"type":"ask_user_questions_result","data":{"requestId":%q,"answers":[{"question":"Which framework should we use for the new module?","selectedLabels":["React"]}]}}`, ev.Data.RequestID)
		if err := c.Write(ctx, websocket.MessageText, []byte(answer)); err != nil {
			return nil, err
		}
		if r := <-done; r.Outcome != askuser.Answered {
			return nil, fmt.Errorf("the hub's frame: the question was not answered: %v", r.Outcome)
		}
		return msg, nil
	}
}

// clock returns the page's epoch milliseconds minus Go's, from the exchange that took
// least of n.
func (ft *feelTab) clock(n int) (float64, error) {
	best, offset := math.Inf(1), 0.0
	for range n {
		before := time.Now()
		at, err := chromedp.Run(ft.ctx, chromedp.Evaluate[float64](`performance.timeOrigin + performance.now()`))
		after := time.Now()
		if err != nil {
			return 0, err
		}
		if rtt := float64(after.Sub(before).Microseconds()) / 1000; rtt < best {
			mid := before.Add(after.Sub(before) / 2)
			best, offset = rtt, at-float64(mid.UnixMicro())/1000
		}
	}
	return offset, nil
}

// round asks one question in ft's page and answers it with a click on its Submit:
// ask(ctx) is Dispatch or the floor's equivalent; choose picks an answer first when the
// page needs one.
func (ft *feelTab) round(b *testing.B, ask func() (time.Time, time.Time, error), choose string, submit string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(ft.ctx, actionTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`feel.arm()`)); err != nil {
		b.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the question comes to a page at rest
	type span struct {
		start, end time.Time
		err        error
	}
	asked := make(chan span, 1)
	go func() {
		s, e, err := ask()
		asked <- span{s, e, err}
	}()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[feelRecord](`feel.painted()`, chromedp.EvalAwaitPromise)); err != nil {
		b.Fatalf("%s: waiting for the question: %v", ft.name, err)
	}
	// The person reads, chooses, and moves to Submit: none of it measured.
	if choose != "" {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(choose))); err != nil {
			b.Fatalf("%s: choosing: %v", ft.name, err)
		}
	}
	time.Sleep(150 * time.Millisecond)
	at, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector(`+js(submit)+`).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`))
	if err != nil {
		b.Fatalf("%s: finding Submit: %v", ft.name, err)
	}
	for _, t := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
		if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: t, X: at[0], Y: at[1], Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1}); err != nil {
			b.Fatalf("%s: clicking Submit: %v", ft.name, err)
		}
	}
	var s span
	select {
	case s = <-asked:
	case <-ctx.Done():
		b.Fatalf("%s: the question did not end", ft.name)
	}
	if s.err != nil {
		b.Fatalf("%s: %v", ft.name, s.err)
	}
	rec, err := chromedp.Run(ctx, chromedp.Evaluate[feelRecord](`feel.taken()`))
	if err != nil {
		b.Fatal(err)
	}
	goms := func(t float64) float64 { return t + ft.origin - ft.offset } // a page time in Go's epoch milliseconds
	ms := func(t time.Time) float64 { return float64(t.UnixMicro()) / 1000 }
	for name, v := range map[string]float64{
		"screen":   goms(rec.Painted) - ms(s.start),
		"back":     ms(s.end) - goms(rec.Click),
		"to-js":    goms(rec.Frame) - ms(s.start),
		"script":   rec.Inserted - rec.Frame,
		"to-frame": rec.Raf - rec.Inserted,
		"frame":    rec.Painted - rec.Raf,
		"input":    rec.ClickJS - rec.Click,
		"click-js": rec.Sent - rec.ClickJS,
	} {
		ft.series[name] = append(ft.series[name], v)
	}
	// The page takes the question away before the next round.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.querySelector('[data-testid="panel"], .q')`, chromedp.WithPollingInterval(10*time.Millisecond))); err != nil {
		b.Fatalf("%s: the question stays: %v", ft.name, err)
	}
}

func percentile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[int(math.Round(p*float64(len(s)-1)))]
}

// BenchmarkFeel measures how fast the panel feels, beside a floor, in headless Chromium:
// one op is one question asked and answered in each of two pages, in turn (which goes
// first alternates), so that the load of a shared machine falls on both alike.
//
//   - panel: Dispatcher.Dispatch through a wshub.Hub in this process, to a host's page
//     with panel.js (docs/WEB.md's); the person chooses an option and clicks Submit.
//   - floor: a bare github.com/coder/websocket server sends the very frame the hub sends,
//     to a page that parses it and inserts the question and a button; a click sends the
//     answer, and reading it is the floor's "Dispatch returns".
//
// Each question comes to a page at rest (100 ms after the last), and the click comes
// 150 ms after the question is painted, where the pointer stays. Reported, p50 and p90
// for both, and the ratio of the p50s:
//
//   - screen: Dispatch called → the question painted: the second requestAnimationFrame
//     after its element is in the page (the frame after the one that painted it);
//   - back: the click on Submit (its event's timestamp) → Dispatch returns.
//
// The page's times are taken with performance.now and set on Go's clock by the offset of
// the quickest of 30 exchanges at the start; the drift by the end is logged, with the
// p50s of the parts: to-js (Dispatch → the frame at the page's JavaScript), script (→
// the question's element in the page), to-frame (→ the first requestAnimationFrame
// after), frame (→ the second), input (the click's timestamp → its event handled) and
// click-js (→ the answer handed to the socket). No figure is asserted.
//
//	go test -run '^$' -bench Feel -benchtime 200x ./test/e2e
func BenchmarkFeel(b *testing.B) {
	feelOnce.Do(func() { feel.err = feelSetup() })
	if feel.err != nil {
		b.Fatal(feel.err)
	}
	p, f := feel.panel, feel.floor
	for _, ft := range []*feelTab{p, f} {
		ft.series = map[string][]float64{}
		var err error
		if ft.origin, err = chromedp.Run(ft.ctx, chromedp.Evaluate[float64](`performance.timeOrigin`)); err != nil {
			b.Fatal(err)
		}
		if ft.offset, err = ft.clock(30); err != nil {
			b.Fatal(err)
		}
	}
	dispatch := func() (time.Time, time.Time, error) {
		start := time.Now()
		r := feel.d.Dispatch(context.Background(), askuser.ToolCall{Session: askuser.IntSession(1), Arguments: feelQuestion})
		end := time.Now()
		if r.Outcome != askuser.Answered {
			return start, end, fmt.Errorf("the question ended %v: %s", r.Outcome, r.Content)
		}
		return start, end, nil
	}
	floor := func() (time.Time, time.Time, error) {
		ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
		defer cancel()
		start := time.Now()
		if err := feel.conn.Write(ctx, websocket.MessageText, feel.frame); err != nil {
			return start, start, err
		}
		_, _, err := feel.conn.Read(ctx)
		return start, time.Now(), err
	}
	panelRound := func() {
		p.round(b, dispatch, `[data-testid="option"][data-index="1"]`, `[data-testid="submit"]`)
	}
	floorRound := func() { f.round(b, floor, "", ".q button") }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			panelRound()
			floorRound()
		} else {
			floorRound()
			panelRound()
		}
	}
	b.StopTimer()
	for _, ft := range []*feelTab{p, f} {
		end, err := ft.clock(30)
		if err != nil {
			b.Fatal(err)
		}
		ft.drift = end - ft.offset
	}
	report := func(name string, xs, floor []float64) {
		b.ReportMetric(percentile(xs, 0.5), name+"-p50-ms")
		b.ReportMetric(percentile(xs, 0.9), name+"-p90-ms")
		b.ReportMetric(percentile(floor, 0.5), "floor-"+name+"-p50-ms")
		b.ReportMetric(percentile(floor, 0.9), "floor-"+name+"-p90-ms")
		b.ReportMetric(percentile(xs, 0.5)/percentile(floor, 0.5), name+"-x")
	}
	for _, name := range []string{"screen", "back"} {
		report(name, p.series[name], f.series[name])
	}
	var parts strings.Builder
	for _, name := range []string{"to-js", "script", "to-frame", "frame", "input", "click-js"} {
		fmt.Fprintf(&parts, " %s %.1f/%.1f", name, percentile(p.series[name], 0.5), percentile(f.series[name], 0.5))
	}
	b.Logf("%d rounds; p50 ms, panel/floor:%s; clock offsets %.3f/%.3f ms, drift %.3f/%.3f ms",
		b.N, parts.String(), p.offset, f.offset, p.drift, f.drift)
}
