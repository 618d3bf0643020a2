package wshub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
)

// failsafe bounds every wait of these tests so that a bug fails a test instead of
// hanging it; no test asserts how long anything takes.
const failsafe = 10 * time.Second

// checkLeaks fails t when goroutines of the network, HTTP, WebSocket or askuser code
// started during the test are still running once its cleanups have run (those of the
// testing and fuzzing machinery are not counted). Register it first so that it runs last.
func checkLeaks(t testing.TB) {
	t.Helper()
	before, _ := liveGoroutines()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n, stacks := liveGoroutines()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("goroutine leak: %d before the test, %d after:\n\n%s", before, n, strings.Join(stacks, "\n\n"))
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// liveGoroutines counts the goroutines whose stacks run code that this package's tests
// start, and returns those stacks.
func liveGoroutines() (int, []string) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var stacks []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "checkLeaks") || strings.Contains(g, "liveGoroutines") {
			continue // the test's own goroutine
		}
		for _, mark := range []string{"askuser", "coder/websocket", "net/http", "internal/poll", "net."} {
			if strings.Contains(g, mark) {
				stacks = append(stacks, g)
				break
			}
		}
	}
	return len(stacks), stacks
}

// env is a hub served over real HTTP with a real dispatcher bound to it.
type env struct {
	t      testing.TB
	hub    *wshub.Hub
	d      *askuser.Dispatcher
	srv    *httptest.Server
	client *http.Client

	connected    chan *wshub.Conn
	disconnected chan *wshub.Conn
}

// authorizeQuery grants the comma-separated sessions of the "session" query parameter,
// parsed as a host would parse ids from a URL; "deny" or nothing is refused.
func authorizeQuery(r *http.Request) ([]askuser.SessionID, error) {
	q := r.URL.Query().Get("session")
	if q == "" || q == "deny" {
		return nil, errors.New("not logged in")
	}
	var out []askuser.SessionID
	for _, s := range strings.Split(q, ",") {
		out = append(out, wire.ParseSessionID(s))
	}
	return out, nil
}

func newEnv(t testing.TB, hopts *wshub.Options, dopts *askuser.Options) *env {
	t.Helper()
	checkLeaks(t)
	e := &env{
		t:            t,
		connected:    make(chan *wshub.Conn, 64),
		disconnected: make(chan *wshub.Conn, 64),
	}
	var o wshub.Options
	if hopts != nil {
		o = *hopts
	}
	if o.Authorize == nil && o.Authenticate == nil {
		o.Authorize = authorizeQuery
	}
	o.OnConnect = func(c *wshub.Conn) { e.connected <- c }
	o.OnDisconnect = func(c *wshub.Conn, err error) {
		if err == nil {
			t.Error("OnDisconnect got a nil error")
		}
		e.disconnected <- c
	}
	e.hub = wshub.New(&o)
	e.d = askuser.New(e.hub, dopts)
	e.srv = httptest.NewServer(e.hub)
	e.client = &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		if err := e.hub.Close(); err != nil {
			t.Errorf("hub.Close: %v", err)
		}
		e.d.Close()
		e.srv.Close()
		e.client.CloseIdleConnections()
	})
	return e
}

func (e *env) url(query string) string {
	return "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/ws?" + query
}

// device is a test client: it reads every event into a channel, unless stalled.
type device struct {
	t       testing.TB
	ws      *websocket.Conn
	events  chan wire.Event
	done    chan struct{}
	err     error // why reading ended; set before done is closed
	started bool
}

type dialOpt func(*websocket.DialOptions)

func (e *env) dial(session string, opts ...dialOpt) *device {
	e.t.Helper()
	dv := e.dialStalled(session, opts...)
	dv.start()
	return dv
}

// dialStalled connects a device that reads nothing until start is called.
func (e *env) dialStalled(session string, opts ...dialOpt) *device {
	e.t.Helper()
	do := &websocket.DialOptions{HTTPClient: e.client}
	for _, f := range opts {
		f(do)
	}
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, e.url("session="+session), do)
	if err != nil {
		e.t.Fatalf("dial session %s: %v", session, err)
	}
	if resp.Body != nil {
		resp.Body.Close()
	}
	select {
	case <-e.connected:
	case <-time.After(failsafe):
		e.t.Fatal("OnConnect was not called")
	}
	ws.SetReadLimit(-1)
	dv := &device{t: e.t, ws: ws, events: make(chan wire.Event, 4096), done: make(chan struct{})}
	e.t.Cleanup(func() {
		ws.CloseNow()
		if dv.started {
			<-dv.done
		}
	})
	return dv
}

func (dv *device) start() {
	dv.started = true
	go func() {
		defer close(dv.done)
		defer close(dv.events)
		for {
			_, msg, err := dv.ws.Read(context.Background())
			if err != nil {
				dv.err = err
				return
			}
			ev, err := wire.ParseEvent(msg)
			if err != nil {
				dv.t.Errorf("device got a malformed event %q: %v", msg, err)
				continue
			}
			dv.events <- ev
		}
	}()
}

// next returns the device's next event, which must be of type typ.
func (dv *device) next(typ string) wire.Event {
	dv.t.Helper()
	select {
	case ev, ok := <-dv.events:
		if !ok {
			dv.t.Fatalf("connection ended while waiting for %s: %v", typ, dv.err)
		}
		if ev.Type != typ {
			dv.t.Fatalf("got event %s %s, want %s", ev.Type, ev.Data, typ)
		}
		return ev
	case <-time.After(failsafe):
		dv.t.Fatalf("no %s event", typ)
	}
	return wire.Event{}
}

// ended waits until the server ends the connection and returns the read error.
func (dv *device) ended() error {
	dv.t.Helper()
	for {
		select {
		case _, ok := <-dv.events:
			if !ok {
				return dv.err
			}
		case <-time.After(failsafe):
			dv.t.Fatal("the connection was not closed")
			return nil
		}
	}
}

func (dv *device) sendRaw(msg string) {
	dv.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	if err := dv.ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		dv.t.Fatalf("write: %v", err)
	}
}

func (dv *device) send(v any) {
	dv.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		dv.t.Fatal(err)
	}
	dv.sendRaw(string(b))
}

// answer sends a valid answer, "Yes", to the question asked by ask, for session sid (a
// JSON value; nil leaves sessionId out).
func (dv *device) answer(sid any, requestID string) {
	dv.t.Helper()
	dv.send(resultMsg(sid, wire.ResultData{RequestID: requestID, Answers: yes()}))
}

func resultMsg(sid any, data wire.ResultData) map[string]any {
	m := map[string]any{"type": wire.EventResult, "data": data}
	if sid != nil {
		m["sessionId"] = sid
	}
	return m
}

const questionText = "Deploy to production now?"

func request() *askuser.Request {
	return &askuser.Request{Questions: []askuser.Question{{
		Question: questionText,
		Header:   "Deploy",
		Options: []askuser.Option{
			{Label: "Yes", Description: "Deploy now"},
			{Label: "No", Description: "Wait"},
		},
	}}}
}

func yes() []askuser.Answer {
	return []askuser.Answer{{Question: questionText, SelectedLabels: []string{"Yes"}}}
}

// ask asks the question in session s with request id id and returns where the result goes.
func (e *env) ask(s askuser.SessionID, id string) <-chan askuser.Result {
	ch := make(chan askuser.Result, 1)
	go func() { ch <- askusertest.Ask(context.Background(), e.d, s, id, request()) }()
	return ch
}

func (e *env) result(ch <-chan askuser.Result) askuser.Result {
	e.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(failsafe):
		e.t.Fatal("the ask did not end")
	}
	return askuser.Result{}
}

func (e *env) waitDisconnect() *wshub.Conn {
	e.t.Helper()
	select {
	case c := <-e.disconnected:
		return c
	case <-time.After(failsafe):
		e.t.Fatal("OnDisconnect was not called")
	}
	return nil
}

func decode[T any](t testing.TB, ev wire.Event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(ev.Data, &v); err != nil {
		t.Fatalf("decoding %s data %s: %v", ev.Type, ev.Data, err)
	}
	return v
}

func expectError(t testing.TB, ev wire.Event, code, requestID string) wire.ErrorData {
	t.Helper()
	data := decode[wire.ErrorData](t, ev)
	if data.Code != code || data.RequestID != requestID {
		t.Fatalf("error event %s: want code %q requestId %q", ev.Data, code, requestID)
	}
	return data
}

func TestFirstAnswerWins(t *testing.T) {
	e := newEnv(t, nil, nil)
	s := askuser.IntSession(7)
	phone, laptop := e.dial("7"), e.dial("7")
	res := e.ask(s, "req-1")

	for _, dv := range []*device{phone, laptop} {
		ev := dv.next(wire.EventAsk)
		if ev.SessionID != s {
			t.Fatalf("ask for session %v, want %v", ev.SessionID, s)
		}
		if a := decode[wire.AskData](t, ev); a.RequestID != "req-1" || len(a.Questions) != 1 {
			t.Fatalf("ask data %s", ev.Data)
		}
	}
	phone.answer(7, "req-1")
	r := e.result(res)
	if r.Outcome != askuser.Answered || r.Content != `{"answers":[{"question":"Deploy to production now?","selectedLabels":["Yes"],"customInput":null}]}` {
		t.Fatalf("result %+v", r)
	}
	for _, dv := range []*device{phone, laptop} {
		rd := decode[wire.ResolvedData](t, dv.next(wire.EventResolved))
		if rd.RequestID != "req-1" || rd.Outcome != askuser.Answered {
			t.Fatalf("resolved %+v", rd)
		}
	}
	laptop.answer(7, "req-1") // too late
	ev := laptop.next(wire.EventError)
	if ev.SessionID != s {
		t.Fatalf("error event for session %v", ev.SessionID)
	}
	expectError(t, ev, "not_pending", "req-1")
}

func TestLateDeviceIsShownPending(t *testing.T) {
	asked := make(chan observe.Observation, 1)
	e := newEnv(t, nil, &askuser.Options{Observer: observe.Hooks{OnAsk: func(a observe.Observation) { asked <- a }}})
	s := askuser.StringSession("chat-9")
	res := e.ask(s, "req-late")
	<-asked // sent while no device was connected

	dv := e.dial("chat-9")
	ev := dv.next(wire.EventAsk)
	if a := decode[wire.AskData](t, ev); a.RequestID != "req-late" || ev.SessionID != s || a.ExpiresAt.IsZero() {
		t.Fatalf("replayed ask %s for %v", ev.Data, ev.SessionID)
	}
	dv.answer(nil, "req-late") // no sessionId: the connection's only session
	if r := e.result(res); r.Outcome != askuser.Answered {
		t.Fatalf("result %+v", r)
	}
	dv.next(wire.EventResolved)

	// A device that connects after the end is shown nothing of it.
	late := e.dial("chat-9")
	if len(e.d.Pending(s)) > 0 {
		t.Fatal("still waiting")
	}
	res = e.ask(s, "req-2")
	if a := decode[wire.AskData](t, late.next(wire.EventAsk)); a.RequestID != "req-2" {
		t.Fatalf("ask %+v", a)
	}
	e.d.CancelSession(s)
	if r := e.result(res); r.Outcome != askuser.Cancelled {
		t.Fatalf("result %+v", r)
	}
}

func TestOtherSessionCannotAnswer(t *testing.T) {
	e := newEnv(t, nil, nil)
	a, b := askuser.IntSession(1), askuser.IntSession(2)
	devA, devB := e.dial("1"), e.dial("2")
	res := e.ask(a, "req-A")
	devA.next(wire.EventAsk)

	// B knows A's session and request id and writes them, as a number and as a string.
	for _, sid := range []any{1, "1"} {
		devB.answer(sid, "req-A")
		ev := devB.next(wire.EventError)
		expectError(t, ev, "forbidden", "req-A")
	}
	devB.send(resultMsg(1, wire.ResultData{RequestID: "req-A", Declined: true}))
	expectError(t, devB.next(wire.EventError), "forbidden", "req-A")
	// Without a sessionId it acts for its own session, where req-A is not pending.
	devB.answer(nil, "req-A")
	ev := devB.next(wire.EventError)
	if ev.SessionID != b {
		t.Fatalf("error for session %v", ev.SessionID)
	}
	expectError(t, ev, "not_pending", "req-A")

	if !(len(e.d.Pending(a)) > 0) {
		t.Fatal("A's question did not stay open")
	}
	devA.answer(1, "req-A")
	if r := e.result(res); r.Outcome != askuser.Answered {
		t.Fatalf("result %+v", r)
	}
	// A saw no trace of B's attempts: its next event is its own resolution.
	devA.next(wire.EventResolved)
}

// TestSessionIDTypeMatters: the hub authorizes an event's session as the protocol
// defines sessions, so the number 42 is not the string session "42"; the refusal says why.
func TestSessionIDTypeMatters(t *testing.T) {
	e := newEnv(t, &wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) {
		return []askuser.SessionID{askuser.StringSession("42")}, nil
	}}, nil)
	s := askuser.StringSession("42")
	dv := e.dial("ignored")
	res := e.ask(s, "req-1")
	dv.next(wire.EventAsk)
	dv.answer(42, "req-1") // the number 42 for the string session "42"
	data := expectError(t, dv.next(wire.EventError), "forbidden", "req-1")
	if !strings.Contains(data.Message, `sessionId 42 is a number; this connection's session is the string "42"`) {
		t.Fatalf("message %q does not say why", data.Message)
	}
	dv.answer("42", "req-1")
	if r := e.result(res); r.Outcome != askuser.Answered {
		t.Fatalf("result %+v", r)
	}
}

func TestSeveralSessionsOnOneConnection(t *testing.T) {
	asked := make(chan observe.Observation, 2)
	e := newEnv(t, nil, &askuser.Options{Observer: observe.Hooks{OnAsk: func(a observe.Observation) { asked <- a }}})
	s1, s2 := askuser.IntSession(1), askuser.IntSession(2)
	res1 := e.ask(s1, "req-1")
	<-asked
	dv := e.dial("1,2")
	dv.next(wire.EventAsk) // req-1 replayed
	res2 := e.ask(s2, "req-2")
	if ev := dv.next(wire.EventAsk); ev.SessionID != s2 {
		t.Fatalf("ask for %v", ev.SessionID)
	}
	dv.answer(nil, "req-2")
	expectError(t, dv.next(wire.EventError), "malformed_event", "req-2")
	dv.answer(2, "req-2")
	if r := e.result(res2); r.Outcome != askuser.Answered {
		t.Fatalf("result %+v", r)
	}
	dv.next(wire.EventResolved)
	dv.answer(1, "req-1")
	if r := e.result(res1); r.Outcome != askuser.Answered {
		t.Fatalf("result %+v", r)
	}
}

func TestAuthorizeRefused(t *testing.T) {
	e := newEnv(t, nil, nil)
	for _, session := range []string{"deny", ""} {
		ctx, cancel := context.WithTimeout(context.Background(), failsafe)
		ws, resp, err := websocket.Dial(ctx, e.url("session="+session), &websocket.DialOptions{HTTPClient: e.client})
		cancel()
		if err == nil {
			ws.CloseNow()
			t.Fatalf("session %q: upgraded", session)
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("session %q: response %v, want 403", session, resp)
		}
	}
	empty := newEnv(t, &wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) {
		return nil, nil // no session: refused as well
	}}, nil)
	_, resp, err := websocket.Dial(context.Background(), empty.url(""), &websocket.DialOptions{HTTPClient: empty.client})
	if err == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("empty grant: err %v, response %v", err, resp)
	}
	select {
	case <-e.connected:
		t.Fatal("a refused request was connected")
	case <-empty.connected:
		t.Fatal("a refused request was connected")
	default:
	}
}

func TestReadLimit(t *testing.T) {
	e := newEnv(t, &wshub.Options{ReadLimit: 1024}, nil)
	s := askuser.IntSession(5)
	big, small := e.dial("5"), e.dial("5")
	big.sendRaw(`{"type":"user_message","data":"` + strings.Repeat("x", 2000) + `"}`)
	if err := big.ended(); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("closed with %v, want StatusMessageTooBig", err)
	}
	e.waitDisconnect()

	res := e.ask(s, "req-1")
	small.next(wire.EventAsk)
	small.answer(5, "req-1")
	if r := e.result(res); r.Outcome != askuser.Answered {
		t.Fatalf("result %+v", r)
	}
}

func TestStalledDeviceIsDropped(t *testing.T) {
	e := newEnv(t, &wshub.Options{QueueSize: 4, WriteTimeout: 500 * time.Millisecond}, nil)
	s := askuser.IntSession(3)
	stalled := e.dialStalled("3") // reads nothing: the kernel's buffers fill, then its queue
	healthy := e.dial("3")

	payload := json.RawMessage(`"` + strings.Repeat("p", 64<<10) + `"`)
	dropped := false
	i := 0
	for ; i < 4000 && !dropped; i++ {
		// Send never waits for the stalled device; the healthy one gets every event.
		if err := e.hub.Send(context.Background(), wire.Event{Type: "bulk", SessionID: s, Data: payload}); err != nil {
			t.Fatal(err)
		}
		healthy.next("bulk")
		select {
		case <-e.disconnected:
			dropped = true
		default:
		}
	}
	if !dropped {
		t.Fatal("the stalled device was never dropped")
	}
	t.Logf("dropped after %d events", i)
	if !e.hub.Connected(s) {
		t.Fatal("the session lost its healthy device")
	}
	res := e.ask(s, "req-1")
	healthy.next(wire.EventAsk)
	healthy.answer(3, "req-1")
	if r := e.result(res); r.Outcome != askuser.Answered {
		t.Fatalf("result %+v", r)
	}
	stalled.start()
	stalled.ended()
}

func TestFloodLimit(t *testing.T) {
	e := newEnv(t, &wshub.Options{MaxMessagesPerSecond: 1}, nil) // a burst of 2
	flooder, other := e.dial("4"), e.dial("4")
	for range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), failsafe)
		err := flooder.ws.Write(ctx, websocket.MessageText, []byte(`{"type":"user_message"}`))
		cancel()
		if err != nil {
			break // closed under us
		}
	}
	if err := flooder.ended(); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %v, want StatusPolicyViolation", err)
	}
	res := e.ask(askuser.IntSession(4), "req-1")
	other.next(wire.EventAsk)
	other.answer(4, "req-1")
	if r := e.result(res); r.Outcome != askuser.Answered {
		t.Fatalf("result %+v", r)
	}
}

func TestDecline(t *testing.T) {
	e := newEnv(t, nil, nil)
	s := askuser.IntSession(8)
	phone, laptop := e.dial("8"), e.dial("8")
	res := e.ask(s, "req-1")
	phone.next(wire.EventAsk)
	laptop.next(wire.EventAsk)
	laptop.send(resultMsg(8, wire.ResultData{RequestID: "req-1", Declined: true}))
	r := e.result(res)
	if r.Outcome != askuser.Declined || r.Content != `{"error": "User declined to answer"}` {
		t.Fatalf("result %+v", r)
	}
	for _, dv := range []*device{phone, laptop} {
		if rd := decode[wire.ResolvedData](t, dv.next(wire.EventResolved)); rd.Outcome != askuser.Declined {
			t.Fatalf("resolved %+v", rd)
		}
	}
}

func TestDisconnectedWhenLastDeviceGoes(t *testing.T) {
	e := newEnv(t, nil, &askuser.Options{FailOnDisconnect: true})
	s := askuser.IntSession(9)
	phone, laptop := e.dial("9"), e.dial("9,9") // a session granted twice counts once
	res := e.ask(s, "req-1")
	phone.next(wire.EventAsk)
	laptop.next(wire.EventAsk)

	phone.ws.Close(websocket.StatusNormalClosure, "")
	gone := e.waitDisconnect()
	if err := gone.Send(context.Background(), wire.Event{Type: "note", SessionID: s}); !errors.Is(err, wshub.ErrConnClosed) {
		t.Fatalf("Send on a closed connection: %v", err)
	}
	if !(len(e.d.Pending(s)) > 0) || !e.hub.Connected(s) {
		t.Fatal("the question ended while a device was still connected")
	}
	laptop.ws.Close(websocket.StatusNormalClosure, "")
	r := e.result(res)
	if r.Outcome != askuser.Disconnected || r.Content != `{"error": "User disconnected before answering"}` {
		t.Fatalf("result %+v", r)
	}
	if e.hub.Connected(s) {
		t.Fatal("still connected")
	}
}

func TestClose(t *testing.T) {
	e := newEnv(t, nil, nil)
	devs := []*device{e.dial("1"), e.dial("1"), e.dial("2,3")}
	res := e.ask(askuser.IntSession(1), "req-1")
	for _, dv := range devs[:2] {
		dv.next(wire.EventAsk)
	}
	// The usual shutdown: the dispatcher first, whose resolutions still reach the devices.
	e.d.Close()
	if r := e.result(res); r.Outcome != askuser.Shutdown {
		t.Fatalf("result %+v", r)
	}
	if err := e.hub.Close(); err != nil {
		t.Fatal(err)
	}
	for _, dv := range devs[:2] {
		if rd := decode[wire.ResolvedData](t, dv.next(wire.EventResolved)); rd.Outcome != askuser.Shutdown {
			t.Fatalf("resolved %+v", rd)
		}
	}
	for _, dv := range devs {
		if err := dv.ended(); websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Fatalf("closed with %v, want StatusGoingAway", err)
		}
	}
	for range devs {
		e.waitDisconnect()
	}
	if err := e.hub.Send(context.Background(), wire.Event{Type: "x", SessionID: askuser.IntSession(1)}); !errors.Is(err, wire.ErrTransportClosed) {
		t.Fatalf("Send after Close: %v", err)
	}
	if e.hub.Connected(askuser.IntSession(1)) {
		t.Fatal("connected after Close")
	}
	d2 := askuser.New(e.hub, nil)
	if r := askusertest.Ask(context.Background(), d2, askuser.IntSession(1), "", request()); r.Outcome != askuser.Undelivered {
		t.Fatalf("ask through a closed hub: %+v", r)
	}
	_, resp, err := websocket.Dial(context.Background(), e.url("session=1"), &websocket.DialOptions{HTTPClient: e.client})
	if err == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("dial after Close: %v %v", err, resp)
	}
	if err := e.hub.Close(); err != nil {
		t.Fatal(err)
	}
}

// badInputs are inbound messages a device may send by mistake or on purpose, each with
// the error the device must get back. A question "req-1" is pending in session 6.
var badInputs = []struct {
	name, msg, code, requestID string
}{
	{"not JSON", `hello`, "malformed_event", ""},
	{"array", `[1,2]`, "malformed_event", ""},
	{"null", `null`, "malformed_event", ""},
	{"number", `12`, "malformed_event", ""},
	{"empty object", `{}`, "malformed_event", ""},
	{"unknown field", `{"type":"x","extra":1}`, "malformed_event", ""},
	{"two values", `{"type":"x"}{"type":"y"}`, "malformed_event", ""},
	{"fractional session", `{"type":"ask_user_questions_result","sessionId":6.5}`, "malformed_event", ""},
	{"object session", `{"type":"ask_user_questions_result","sessionId":{"id":6}}`, "malformed_event", ""},
	{"invalid UTF-8", "{\"type\":\"\xff\xfe\"}", "unsupported_event", ""},
	{"no data", `{"type":"ask_user_questions_result","sessionId":6}`, "malformed_event", ""},
	{"data not an object", `{"type":"ask_user_questions_result","data":[]}`, "malformed_event", ""},
	{"no request id", `{"type":"ask_user_questions_result","data":{"answers":[]}}`, "malformed_event", ""},
	{"unknown request", `{"type":"ask_user_questions_result","data":{"requestId":"nope","answers":[]}}`, "not_pending", "nope"},
	{"answer and decline", `{"type":"ask_user_questions_result","data":{"requestId":"req-1","declined":true,"answers":[{"question":"q","selectedLabels":[]}]}}`, "malformed_event", "req-1"},
	{"unknown label", `{"type":"ask_user_questions_result","data":{"requestId":"req-1","answers":[{"question":"Deploy to production now?","selectedLabels":["Maybe"],"customInput":null}]}}`, "invalid_answer", "req-1"},
	{"no answers", `{"type":"ask_user_questions_result","data":{"requestId":"req-1"}}`, "invalid_answer", "req-1"},
	{"unsupported type", `{"type":"user_message","data":{"text":"hi"}}`, "unsupported_event", ""},
	{"huge type", `{"type":"` + strings.Repeat("é", 5000) + `"}`, "unsupported_event", ""},
	{"foreign session", `{"type":"user_message","sessionId":"other"}`, "forbidden", ""},
}

func TestBadInput(t *testing.T) {
	// Refusals cost more of the rate limit than accepted events; this test sends many in
	// a burst on purpose, so it raises the limit (TestCostlyRefusals checks the cost).
	e := newEnv(t, &wshub.Options{MaxMessagesPerSecond: 1000}, nil)
	dv := e.dial("6")
	res := e.ask(askuser.IntSession(6), "req-1")
	dv.next(wire.EventAsk)

	for _, tt := range badInputs {
		dv.sendRaw(tt.msg)
		ev := dv.next(wire.EventError)
		data := decode[wire.ErrorData](t, ev)
		if data.Code != tt.code || data.RequestID != tt.requestID {
			t.Fatalf("%s: got %s, want code %q requestId %q", tt.name, ev.Data, tt.code, tt.requestID)
		}
		if data.Message == "" || len(data.Message) > 2000 {
			t.Fatalf("%s: message %q", tt.name, data.Message)
		}
		if tt.code == "invalid_answer" && len(data.Problems) == 0 {
			t.Fatalf("%s: no problems listed", tt.name)
		}
	}
	// Through all of it the connection stayed up and the question open.
	dv.answer(6, "req-1")
	if r := e.result(res); r.Outcome != askuser.Answered {
		t.Fatalf("result %+v", r)
	}
}

// TestBinaryMessageIsRefused: events are JSON text; a binary message ends the connection
// with a close status that says so, and the hub does not take it as an event.
func TestBinaryMessageIsRefused(t *testing.T) {
	e := newEnv(t, nil, nil)
	dv := e.dial("6")
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	if err := dv.ws.Write(ctx, websocket.MessageBinary, []byte(`{"type":"ask_user_questions_result","data":{"requestId":"x","declined":true}}`)); err != nil {
		t.Fatal(err)
	}
	err := dv.ended()
	if websocket.CloseStatus(err) != websocket.StatusUnsupportedData {
		t.Fatalf("connection ended with %v, want StatusUnsupportedData", err)
	}
	e.waitDisconnect()
}

// FuzzInbound sends arbitrary messages through a real connection: each must be answered
// with exactly one error event (nothing is pending, so nothing can be accepted), and
// neither the hub nor the connection may fail.
func FuzzInbound(f *testing.F) {
	for _, tt := range badInputs {
		f.Add([]byte(tt.msg))
	}
	f.Add([]byte(`{"type":"ask_user_questions_result","sessionId":6,"data":{"requestId":"req-1","answers":[{"question":"Deploy to production now?","selectedLabels":["Yes"],"customInput":null}]}}`))
	e := newEnv(f, &wshub.Options{MaxMessagesPerSecond: 1 << 30}, nil)
	dv := e.dial("6")
	f.Fuzz(func(t *testing.T, msg []byte) {
		if len(msg) > wshub.DefaultReadLimit {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), failsafe)
		defer cancel()
		if err := dv.ws.Write(ctx, websocket.MessageText, msg); err != nil {
			t.Fatalf("write: %v", err)
		}
		select {
		case ev, ok := <-dv.events:
			if !ok {
				t.Fatalf("connection ended: %v", dv.err)
			}
			if ev.Type != wire.EventError {
				t.Fatalf("got %s %s", ev.Type, ev.Data)
			}
		case <-time.After(failsafe):
			t.Fatal("no reply")
		}
	})
}

func TestOnEvent(t *testing.T) {
	type got struct {
		ev       wire.Event
		sessions []askuser.SessionID
	}
	calls := make(chan got, 8)
	e := newEnv(t, &wshub.Options{OnEvent: func(ctx context.Context, c *wshub.Conn, ev wire.Event) error {
		calls <- got{ev, c.Sessions()}
		if ev.Type == "cancel" {
			return errors.New("nothing to cancel")
		}
		reply, _ := wire.NewEvent("assistant_message", ev.SessionID, map[string]string{"text": "echo"})
		return c.Send(ctx, reply)
	}}, nil)
	dv, other := e.dial("11"), e.dial("11")

	dv.sendRaw(`{"type":"user_message","sessionId":11,"data":{"text":"hi"}}`)
	g := <-calls
	if g.ev.Type != "user_message" || g.ev.SessionID != askuser.IntSession(11) || string(g.ev.Data) != `{"text":"hi"}` {
		t.Fatalf("OnEvent got %+v", g.ev)
	}
	if len(g.sessions) != 1 || g.sessions[0] != askuser.IntSession(11) {
		t.Fatalf("Sessions() = %v", g.sessions)
	}
	if ev := dv.next("assistant_message"); ev.SessionID != askuser.IntSession(11) {
		t.Fatalf("reply %+v", ev)
	}

	dv.sendRaw(`{"type":"cancel","data":{"requestId":"req-9"}}`)
	<-calls
	data := expectError(t, dv.next(wire.EventError), "internal", "req-9")
	if !strings.Contains(data.Message, "nothing to cancel") {
		t.Fatalf("message %q", data.Message)
	}

	dv.sendRaw(`{"type":"user_message","sessionId":12}`)
	expectError(t, dv.next(wire.EventError), "forbidden", "")
	select {
	case g := <-calls:
		t.Fatalf("OnEvent called for a foreign session: %+v", g.ev)
	default:
	}

	// The other device of the session saw none of that: Conn.Send is for one connection.
	res := e.ask(askuser.IntSession(11), "req-1")
	other.next(wire.EventAsk)
	dv.next(wire.EventAsk)
	other.answer(11, "req-1")
	e.result(res)
}

func TestKeepalive(t *testing.T) {
	e := newEnv(t, &wshub.Options{PingInterval: 5 * time.Millisecond, WriteTimeout: 2 * time.Second}, nil)
	var pings atomic.Int32
	enough := make(chan struct{})
	var once sync.Once
	dv := e.dial("1", func(o *websocket.DialOptions) {
		o.OnPingReceived = func(context.Context, []byte) bool {
			if pings.Add(1) >= 3 {
				once.Do(func() { close(enough) })
			}
			return true
		}
	})
	select {
	case <-enough:
	case <-time.After(failsafe):
		t.Fatal("no pings")
	}
	res := e.ask(askuser.IntSession(1), "req-1")
	dv.next(wire.EventAsk)
	dv.answer(1, "req-1")
	if r := e.result(res); r.Outcome != askuser.Answered {
		t.Fatalf("result %+v", r)
	}

}

func TestDeviceWithoutPongIsDropped(t *testing.T) {
	e := newEnv(t, &wshub.Options{PingInterval: 5 * time.Millisecond, WriteTimeout: 50 * time.Millisecond}, nil)
	mute := e.dial("2", func(o *websocket.DialOptions) {
		o.OnPingReceived = func(context.Context, []byte) bool { return false }
	})
	mute.ended()
	if c := e.waitDisconnect(); c.Sessions()[0] != askuser.IntSession(2) {
		t.Fatalf("dropped %v", c.Sessions())
	}
}

func TestSendIsOnePerSession(t *testing.T) {
	e := newEnv(t, nil, nil)
	a, b := e.dial("1"), e.dial("2")
	for i := range 3 {
		ev, _ := wire.NewEvent("note", askuser.IntSession(1), map[string]int{"n": i})
		if err := e.hub.Send(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.hub.Send(context.Background(), wire.Event{Type: "note", SessionID: askuser.IntSession(99)}); err != nil {
		t.Fatalf("send to a session without device: %v", err)
	}
	for i := range 3 {
		if got := decode[map[string]int](t, a.next("note")); got["n"] != i {
			t.Fatalf("event %d out of order: %v", i, got)
		}
	}
	ev, _ := wire.NewEvent("note", askuser.IntSession(2), "<b>&</b>")
	e.hub.Send(context.Background(), ev)
	if got := b.next("note"); string(got.Data) != `"<b>&</b>"` {
		t.Fatalf("data %s", got.Data)
	}
}

func TestNotBound(t *testing.T) {
	checkLeaks(t)
	hub := wshub.New(&wshub.Options{Authorize: authorizeQuery})
	defer hub.Close()
	rec := httptest.NewRecorder()
	hub.ServeHTTP(rec, httptest.NewRequest("GET", "/ws?session=1", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d", rec.Code)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("New without Authorize did not panic")
		}
	}()
	wshub.New(&wshub.Options{})
}

func TestPanelHandler(t *testing.T) {
	checkLeaks(t)
	mux := http.NewServeMux()
	mux.Handle("/askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	get := func(method, path string, hdr ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s: no nosniff", method, path)
		}
		return rec
	}
	for _, f := range []struct{ path, ctype string }{
		{"/askuser/panel.js", "text/javascript; charset=utf-8"},
		{"/askuser/panel.css", "text/css; charset=utf-8"},
		{"/askuser/approvals.css", "text/css; charset=utf-8"},
	} {
		rec := get("GET", f.path)
		if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
			t.Fatalf("%s: %d, %d bytes", f.path, rec.Code, rec.Body.Len())
		}
		if got := rec.Header().Get("Content-Type"); got != f.ctype {
			t.Errorf("%s: Content-Type %q, want %q", f.path, got, f.ctype)
		}
		etag := rec.Header().Get("ETag")
		if etag == "" || rec.Header().Get("Cache-Control") == "" {
			t.Errorf("%s: no cache headers: %v", f.path, rec.Header())
		}
		if rec := get("GET", f.path, "If-None-Match", etag); rec.Code != http.StatusNotModified {
			t.Errorf("%s: revalidation got %d", f.path, rec.Code)
		}
		if rec := get("HEAD", f.path); rec.Code != http.StatusOK || rec.Body.Len() != 0 {
			t.Errorf("HEAD %s: %d", f.path, rec.Code)
		}
	}
	for _, path := range []string{"/askuser/", "/askuser/missing.js", "/askuser/panel", "/askuser/panel/panel.js",
		"/askuser/js/wire.js", "/askuser/js/wrapper.js", "/askuser/js/"} {
		if rec := get("GET", path); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
	}
	// Unmounted, with a path that climbs out: still only the panel's own files.
	for _, path := range []string{"../hub.go", "/../panel.go", "..", ""} {
		req := httptest.NewRequest("GET", "/", nil)
		req.URL.Path = path
		rec := httptest.NewRecorder()
		wshub.PanelHandler().ServeHTTP(rec, req)
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %q: %d, want 404", path, rec.Code)
		}
	}
	if rec := get("POST", "/askuser/panel.js"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}

// ExampleNew wires a hub to a dispatcher and serves it with the browser panel.
func ExampleNew() {
	hub := wshub.New(&wshub.Options{
		Authorize: func(r *http.Request) ([]askuser.SessionID, error) {
			// A real host checks the request's credentials here.
			return []askuser.SessionID{wire.ParseSessionID(r.URL.Query().Get("session"))}, nil
		},
	})
	d := askuser.New(hub, nil)

	mux := http.NewServeMux()
	mux.Handle("/ws", hub)
	mux.Handle("/askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer hub.Close()
	defer d.Close()

	fmt.Println(hub.Connected(askuser.IntSession(1)))
	// Output: false
}
