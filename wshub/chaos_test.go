package wshub_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
)

// The chaos test drives the whole stack (dispatcher, registry, hub, real WebSocket
// connections) with seeded random interleavings of every way a request can end:
// question sets and approvals of tool calls, mixed in every session. The
// defaults suit CI; a soak is, for example:
//
//	go test -race -run TestChaos ./wshub -chaos.sessions 40 -chaos.asks 300 -timeout 60m
//
// The seed fixes every random decision of every actor; the scheduling of goroutines, and
// so the exact interleaving, is the machine's. A failure prints the seed to rerun with.
var (
	chaosSeed     = flag.Uint64("chaos.seed", 0, "seed of TestChaos (0: a new one)")
	chaosSessions = flag.Int("chaos.sessions", 6, "sessions of TestChaos")
	chaosDevices  = flag.Int("chaos.devices", 3, "devices per session of TestChaos")
	chaosAsks     = flag.Int("chaos.asks", 12, "questions asked per session of TestChaos")
)

const chaosTimeout = 300 * time.Millisecond

// The question set every chaos call asks: a single-select and a multi-select question.
const chaosArgs = `{"questions":[
	{"question":"Pick one?","header":"One","options":[{"label":"A","description":"a"},{"label":"B","description":"b"},{"label":"C","description":"c"}],"multiSelect":false},
	{"question":"Pick some?","header":"Some","options":[{"label":"X","description":"x"},{"label":"Y","description":"y"},{"label":"Z","description":"z"}],"multiSelect":true}]}`

// sendKind is what a device sent.
type sendKind int

const (
	sendValid   sendKind = iota // a valid answer, identified by its Other text (token)
	sendInvalid                 // an answer that breaks a rule
	sendDecline                 // a decline
	sendForeign                 // a valid answer for another session's question
)

// chaosApproval is the policy of the chaos run: delete_branch is asked about, with a
// schema that an edit must satisfy, and "always" is not offered.
var chaosApproval = &askuser.Policy{
	Ask:   []askuser.Rule{{Tool: "delete_branch", Decisions: []string{"approve", "deny", "edit"}}},
	Tools: []askuser.Tool{{Name: "delete_branch", Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}`)}},
}

// chaosSend records one message a device sent and how the server took it.
type chaosSend struct {
	session  string
	device   string
	request  string
	kind     sendKind
	decision string // for an approval: the decision sent
	token    string
	accepted bool   // no error came back before the sync acknowledgement
	code     string // the error code, when refused
}

// chaosCall records one call: an ask_user_questions call, or a gated tool call.
type chaosCall struct {
	session    string
	id         string
	start, end time.Time
	res        askuser.Result          // a question set's
	approval   *askuser.ApprovalResult // an approval's, or nil
}

// outcome is how the call ended.
func (c chaosCall) outcome() askuser.Outcome {
	if c.approval != nil {
		return c.approval.Outcome
	}
	return c.res.Outcome
}

type chaosLog struct {
	mu         sync.Mutex
	sends      []chaosSend
	calls      []chaosCall
	cancels    map[string][][2]time.Time // session → when CancelSession was called and returned
	live       []*chaosConn              // connections open at the end
	reconnects int
}

func (l *chaosLog) addSend(s chaosSend) {
	l.mu.Lock()
	l.sends = append(l.sends, s)
	l.mu.Unlock()
}

func TestChaos(t *testing.T) {
	checkLeaks(t)
	seed := *chaosSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("chaos seed %d (rerun with -chaos.seed %d)", seed, seed)
	defer func() {
		if t.Failed() {
			t.Logf("FAILED with chaos seed %d", seed)
		}
	}()

	hub := wshub.New(&wshub.Options{
		Authorize:            authorizeQuery,
		MaxMessagesPerSecond: 10000,
		// A sync message is acknowledged after every earlier message of the connection
		// has been handled, so a device knows whether its last message was refused.
		OnEvent: func(ctx context.Context, c *wshub.Conn, ev wire.Event) error {
			if ev.Type != "chaos_sync" {
				return wire.ErrUnsupportedEvent
			}
			return c.Send(ctx, wire.Event{Type: "chaos_ack", SessionID: ev.SessionID, Data: ev.Data})
		},
	})
	d := askuser.New(hub, &askuser.Options{Timeout: chaosTimeout, Policy: chaosApproval})
	srv := httptest.NewServer(hub)
	client := &http.Client{Transport: &http.Transport{}}
	defer func() {
		_ = hub.Close()
		d.Close()
		srv.Close()
		client.CloseIdleConnections()
	}()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws?session="

	log := &chaosLog{cancels: map[string][][2]time.Time{}}
	sessions := make([]string, *chaosSessions)
	for i := range sessions {
		sessions[i] = fmt.Sprintf("chaos-%d", i)
	}
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Minute)
	defer stop()

	var agents, actors sync.WaitGroup
	done := make(chan struct{})
	for si, session := range sessions {
		sid := askuser.StringSession(session)
		// The agent: asks one after another, sometimes two at once.
		agents.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(si)<<32))
			var wg sync.WaitGroup
			for a := 0; a < *chaosAsks; a++ {
				id := fmt.Sprintf("%s-a%d", session, a)
				approval := rng.IntN(3) == 0
				ask := func() {
					start := time.Now()
					c := chaosCall{session: session, id: id, start: start}
					if approval {
						r := d.Approve(ctx, askuser.ToolCall{Session: sid, ID: id, Name: "delete_branch", Arguments: json.RawMessage(`{"name":"` + id + `"}`)}, nil)
						c.approval = &r
					} else {
						c.res = d.Dispatch(ctx, askuser.ToolCall{Session: sid, ID: id, Name: askuser.ToolName, Arguments: json.RawMessage(chaosArgs)})
					}
					c.end = time.Now()
					log.mu.Lock()
					log.calls = append(log.calls, c)
					log.mu.Unlock()
				}
				if rng.IntN(4) == 0 {
					wg.Go(ask) // in parallel with the next one
				} else {
					ask()
				}
				time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
			}
			wg.Wait()
		})
		// The canceller: now and then cancels the whole session.
		actors.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(si)<<32|1))
			for {
				select {
				case <-done:
					return
				case <-time.After(time.Duration(50+rng.IntN(550)) * time.Millisecond):
				}
				before := time.Now()
				d.CancelSession(sid)
				log.mu.Lock()
				log.cancels[session] = append(log.cancels[session], [2]time.Time{before, time.Now()})
				log.mu.Unlock()
			}
		})
		// The devices.
		for di := range *chaosDevices {
			actors.Go(func() {
				rng := rand.New(rand.NewPCG(seed, uint64(si)<<32|uint64(di+2)))
				dev := &chaosDevice{t: t, name: fmt.Sprintf("%s/d%d", session, di), session: session, sessions: sessions, url: url + session, client: client, rng: rng, log: log}
				dev.run(ctx, done)
			})
		}
	}
	agents.Wait()
	close(done)
	actors.Wait()
	if ctx.Err() != nil {
		t.Fatal("the chaos run did not finish in time: an ask hung")
	}
	// Every call ended before the agents returned, and the resolved events were queued to
	// every connection before each call returned. One more sync per live connection
	// flushes them.
	for _, c := range log.live {
		c.sync(ctx)
	}
	checkChaos(t, d, sessions, log)
	for _, c := range log.live {
		c.close()
	}
}

// checkChaos checks the invariants over everything that happened.
func checkChaos(t *testing.T, d *askuser.Dispatcher, sessions []string, log *chaosLog) {
	t.Helper()
	byRequest := map[string][]chaosSend{}
	for _, s := range log.sends {
		byRequest[s.request] = append(byRequest[s.request], s)
		switch {
		case s.kind == sendForeign && s.accepted:
			t.Errorf("%s answered another session's question %s", s.device, s.request)
		case s.kind == sendForeign && s.code != "forbidden":
			t.Errorf("%s's answer to another session got %q, want forbidden", s.device, s.code)
		case s.kind == sendInvalid && s.accepted:
			t.Errorf("%s's invalid answer to %s was accepted", s.device, s.request)
		case s.kind == sendInvalid && s.code != "invalid_answer" && s.code != "not_pending":
			t.Errorf("%s's invalid answer to %s got %q", s.device, s.request, s.code)
		case (s.kind == sendValid || s.kind == sendDecline) && !s.accepted && s.code != "not_pending":
			t.Errorf("%s's valid message for %s was refused with %q", s.device, s.request, s.code)
		}
	}
	outcomes := map[askuser.Outcome]int{}
	seen := map[string]bool{}
	for _, c := range log.calls {
		if seen[c.id] {
			t.Errorf("%s returned twice", c.id)
		}
		seen[c.id] = true
		outcomes[c.outcome()]++
		var accepted []chaosSend
		for _, s := range byRequest[c.id] {
			if s.accepted && s.kind != sendForeign {
				accepted = append(accepted, s)
			}
		}
		if len(accepted) > 1 {
			t.Errorf("%s: %d messages accepted, want at most one: %+v", c.id, len(accepted), accepted)
			continue
		}
		if c.approval != nil {
			checkApprovalCall(t, c, accepted, log)
			continue
		}
		switch c.res.Outcome {
		case askuser.Answered:
			if len(accepted) != 1 || accepted[0].kind != sendValid {
				t.Errorf("%s answered, but the accepted messages were %+v", c.id, accepted)
				continue
			}
			if got := *c.res.Answers[0].CustomInput; got != accepted[0].token {
				t.Errorf("%s: the model got answer %q, but the accepted one was %q", c.id, got, accepted[0].token)
			}
		case askuser.Declined:
			if len(accepted) != 1 || accepted[0].kind != sendDecline {
				t.Errorf("%s declined, but the accepted messages were %+v", c.id, accepted)
			}
		case askuser.Cancelled:
			if len(accepted) != 0 || !slices.ContainsFunc(log.cancels[c.session], func(at [2]time.Time) bool { return !at[1].Before(c.start) && !at[0].After(c.end) }) {
				t.Errorf("%s cancelled without a cancel of its session during the call (accepted %+v)", c.id, accepted)
			}
		case askuser.TimedOut:
			if len(accepted) != 0 || c.end.Sub(c.start) < chaosTimeout {
				t.Errorf("%s timed out after %v with accepted messages %+v", c.id, c.end.Sub(c.start), accepted)
			}
		default:
			t.Errorf("%s ended as %v", c.id, c.res.Outcome)
		}
	}
	if want := len(sessions) * *chaosAsks; len(log.calls) != want {
		t.Errorf("%d calls returned, want %d", len(log.calls), want)
	}
	// Every connection open at the end saw every question it was shown end, the way the
	// model saw it end.
	results := map[string]askuser.Outcome{}
	for _, c := range log.calls {
		results[c.id] = c.outcome()
	}
	for _, c := range log.live {
		c.mu.Lock()
		for id := range c.asks {
			if got, ok := c.resolved[id]; !ok {
				t.Errorf("%s never saw %s end", c.dev.name, id)
			} else if got != results[id] {
				t.Errorf("%s saw %s end as %v, the model as %v", c.dev.name, id, got, results[id])
			}
		}
		c.mu.Unlock()
	}
	for _, s := range sessions {
		if len(d.Pending(askuser.StringSession(s))) > 0 {
			t.Errorf("session %s still has pending requests: %+v %+v", s, askusertest.Questions(d, askuser.StringSession(s)), askusertest.Approvals(d, askuser.StringSession(s)))
		}
	}
	kinds := map[string]int{}
	for _, s := range log.sends {
		k := [...]string{"valid", "invalid", "decline", "foreign"}[s.kind]
		if s.decision != "" {
			k = s.decision + " " + k
		}
		if s.accepted {
			k += " accepted"
		} else {
			k += " refused " + s.code
		}
		kinds[k]++
	}
	t.Logf("%d calls: %v; %d device messages: %v; %d reconnects", len(log.calls), outcomes, len(log.sends), kinds, log.reconnects)
}

// checkApprovalCall checks how a gated call ended against the decisions accepted for it.
func checkApprovalCall(t *testing.T, c chaosCall, accepted []chaosSend, log *chaosLog) {
	t.Helper()
	r := c.approval
	want := func(decision string) (chaosSend, bool) {
		if len(accepted) != 1 || accepted[0].decision != decision {
			t.Errorf("%s ended %v, but the accepted decisions were %+v", c.id, r.Outcome, accepted)
			return chaosSend{}, false
		}
		return accepted[0], true
	}
	switch r.Outcome {
	case askuser.Approved:
		if _, ok := want(wire.DecisionApprove); ok && string(r.Arguments) != `{"name":"`+c.id+`"}` {
			t.Errorf("%s approved to run with %s", c.id, r.Arguments)
		}
	case askuser.Edited:
		if s, ok := want(wire.DecisionEdit); ok && string(r.Arguments) != `{"name":"`+s.token+`"}` {
			t.Errorf("%s: the tool would run with %s, but the accepted edit was %q", c.id, r.Arguments, s.token)
		}
	case askuser.Denied:
		if s, ok := want(wire.DecisionDeny); ok && s.kind == sendValid && r.Decision.Reason != s.token {
			t.Errorf("%s denied with reason %q, but the accepted denial said %q", c.id, r.Decision.Reason, s.token)
		}
	case askuser.Cancelled:
		if len(accepted) != 0 || !slices.ContainsFunc(log.cancels[c.session], func(at [2]time.Time) bool { return !at[1].Before(c.start) && !at[0].After(c.end) }) {
			t.Errorf("%s cancelled without a cancel of its session during the call (accepted %+v)", c.id, accepted)
		}
	case askuser.TimedOut:
		if len(accepted) != 0 || c.end.Sub(c.start) < chaosTimeout {
			t.Errorf("%s timed out after %v with accepted decisions %+v", c.id, c.end.Sub(c.start), accepted)
		}
	default:
		t.Errorf("%s ended as %v", c.id, r.Outcome)
	}
}

// chaosDevice is one device: it connects, answers, declines, sends bad answers, tries
// other sessions' questions, disconnects and reconnects, at random.
type chaosDevice struct {
	t        *testing.T
	name     string
	session  string
	sessions []string
	url      string
	client   *http.Client
	rng      *rand.Rand
	log      *chaosLog
	n        int
}

func (dv *chaosDevice) run(ctx context.Context, done <-chan struct{}) {
	c := dv.connect(ctx)
	defer func() {
		if c != nil {
			dv.log.mu.Lock()
			dv.log.live = append(dv.log.live, c)
			dv.log.mu.Unlock()
		}
	}()
	for {
		select {
		case <-done:
			return
		case <-time.After(dv.pause()):
		}
		if c == nil {
			c = dv.connect(ctx)
			dv.log.mu.Lock()
			dv.log.reconnects++
			dv.log.mu.Unlock()
			continue
		}
		switch p := dv.rng.IntN(100); {
		case p < 5: // disconnect; reconnect on a later turn
			c.close()
			c = nil
		case p < 45:
			dv.act(ctx, c, sendValid, c.pick(dv.rng, false))
		case p < 55:
			dv.act(ctx, c, sendValid, c.pick(dv.rng, true)) // often a question already over
		case p < 65:
			dv.act(ctx, c, sendInvalid, c.pick(dv.rng, false))
		case p < 72:
			dv.act(ctx, c, sendDecline, c.pick(dv.rng, false))
		case p < 77:
			// Knowing another session's request ids (they are predictable here) must not help.
			other := dv.sessions[dv.rng.IntN(len(dv.sessions))]
			if other != dv.session {
				dv.act(ctx, c, sendForeign, fmt.Sprintf("%s-a%d", other, dv.rng.IntN(*chaosAsks)))
			}
		}
	}
}

// pause is how long the person takes before the next action: mostly quick, sometimes
// long enough for questions to time out.
func (dv *chaosDevice) pause() time.Duration {
	if dv.rng.IntN(5) == 0 {
		return time.Duration(100+dv.rng.IntN(400)) * time.Millisecond
	}
	return time.Duration(dv.rng.IntN(40)) * time.Millisecond
}

func (dv *chaosDevice) connect(ctx context.Context) *chaosConn {
	ws, _, err := websocket.Dial(ctx, dv.url, &websocket.DialOptions{HTTPClient: dv.client})
	if err != nil {
		dv.t.Errorf("%s: dial: %v", dv.name, err)
		return nil
	}
	ws.SetReadLimit(1 << 20)
	c := &chaosConn{dev: dv, ws: ws, asks: map[string]bool{}, resolved: map[string]askuser.Outcome{}, errors: map[string][]string{}, wake: make(chan struct{}, 1), readDone: make(chan struct{})}
	go c.read(ctx)
	return c
}

// act sends one message about request id and records how it was taken.
func (dv *chaosDevice) act(ctx context.Context, c *chaosConn, kind sendKind, id string) {
	if id == "" {
		return
	}
	dv.n++
	token := fmt.Sprintf("%s#%d", dv.name, dv.n)
	session := dv.session
	if kind == sendForeign {
		session = strings.TrimSuffix(id, id[strings.LastIndex(id, "-a"):])
	}
	if c.isApproval(id) {
		dv.decide(ctx, c, kind, id, session, token)
		return
	}
	data := wire.ResultData{RequestID: id}
	some := []string{"X", "Y", "Z"}[:1+dv.rng.IntN(3)]
	switch kind {
	case sendValid, sendForeign:
		data.Answers = []askuser.Answer{
			{Question: "Pick one?", SelectedLabels: []string{}, CustomInput: &token},
			{Question: "Pick some?", SelectedLabels: some},
		}
	case sendInvalid:
		switch dv.rng.IntN(4) {
		case 0:
			data.Answers = []askuser.Answer{{Question: "Pick one?", SelectedLabels: []string{"Nope"}}, {Question: "Pick some?", SelectedLabels: some}}
		case 1:
			data.Answers = []askuser.Answer{{Question: "Pick one?", SelectedLabels: []string{"A", "B"}}, {Question: "Pick some?", SelectedLabels: some}}
		case 2:
			data.Answers = []askuser.Answer{{Question: "Pick some?", SelectedLabels: some}}
		default:
			blank := "   "
			data.Answers = []askuser.Answer{{Question: "Pick one?", CustomInput: &blank}, {Question: "Pick some?", SelectedLabels: some}}
		}
	case sendDecline:
		data.Declined = true
	}
	raw, _ := json.Marshal(data)
	dv.send(ctx, c, wire.EventResult, session, raw, chaosSend{kind: kind, request: id, token: token})
}

// decide sends a decision on approval id: valid ones approve, deny with the token as
// the reason, or edit the name into the token; invalid ones break the schema or make a
// decision not offered; a decline is a denial without a reason.
func (dv *chaosDevice) decide(ctx context.Context, c *chaosConn, kind sendKind, id, session, token string) {
	data := wire.ApprovalResultData{RequestID: id}
	switch kind {
	case sendValid, sendForeign:
		switch dv.rng.IntN(3) {
		case 0:
			data.Decision = wire.DecisionApprove
		case 1:
			data.Decision, data.Reason = wire.DecisionDeny, token
		default:
			data.Decision, data.Arguments = wire.DecisionEdit, json.RawMessage(`{"name":"`+token+`"}`)
		}
	case sendInvalid:
		if dv.rng.IntN(2) == 0 {
			data.Decision, data.Arguments = wire.DecisionEdit, json.RawMessage(`{"name":""}`)
		} else {
			data.Decision = wire.DecisionAlways
		}
	case sendDecline:
		data.Decision = wire.DecisionDeny
	}
	raw, _ := json.Marshal(data)
	dv.send(ctx, c, wire.EventApprovalResult, session, raw, chaosSend{kind: kind, request: id, token: token, decision: data.Decision})
}

// send sends one message of type typ with data and records how it was taken.
func (dv *chaosDevice) send(ctx context.Context, c *chaosConn, typ, session string, data json.RawMessage, s chaosSend) {
	msg, _ := json.Marshal(wire.Event{Type: typ, SessionID: askuser.StringSession(session), Data: data})
	errsBefore := c.errorCount(s.request)
	if err := c.ws.Write(ctx, websocket.MessageText, msg); err != nil {
		dv.t.Errorf("%s: write: %v", dv.name, err)
		return
	}
	if !c.sync(ctx) {
		return
	}
	s.session, s.device, s.accepted = dv.session, dv.name, true
	if codes := c.errorsOf(s.request); len(codes) > errsBefore {
		s.accepted, s.code = false, codes[len(codes)-1]
	}
	dv.log.addSend(s)
}

// chaosConn is one connection of a device and what it received.
type chaosConn struct {
	dev      *chaosDevice
	ws       *websocket.Conn
	mu       sync.Mutex
	asks     map[string]bool // by request id: true for an approval
	resolved map[string]askuser.Outcome
	errors   map[string][]string
	acks     int
	syncs    int
	wake     chan struct{}
	readDone chan struct{}
}

func (c *chaosConn) read(ctx context.Context) {
	defer close(c.readDone)
	for {
		_, msg, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		ev, err := wire.ParseEvent(msg)
		if err != nil {
			c.dev.t.Errorf("%s: server sent a malformed event: %v", c.dev.name, err)
			return
		}
		c.mu.Lock()
		switch ev.Type {
		case wire.EventAsk:
			var a wire.AskData
			_ = json.Unmarshal(ev.Data, &a)
			c.asks[a.RequestID] = false
		case wire.EventApproval:
			var a wire.ApprovalData
			_ = json.Unmarshal(ev.Data, &a)
			c.asks[a.RequestID] = true
		case wire.EventResolved, wire.EventApprovalResolved:
			var r wire.ResolvedData
			if ev.Type == wire.EventApprovalResolved {
				var a wire.ApprovalResolvedData
				_ = json.Unmarshal(ev.Data, &a)
				r.RequestID, r.Outcome = a.RequestID, a.Outcome
			} else {
				_ = json.Unmarshal(ev.Data, &r)
			}
			if prev, dup := c.resolved[r.RequestID]; dup {
				c.dev.t.Errorf("%s: %s resolved twice (%v, %v)", c.dev.name, r.RequestID, prev, r.Outcome)
			}
			c.resolved[r.RequestID] = r.Outcome
		case wire.EventError:
			var e wire.ErrorData
			_ = json.Unmarshal(ev.Data, &e)
			c.errors[e.RequestID] = append(c.errors[e.RequestID], e.Code)
		case "chaos_ack":
			c.acks++
		}
		c.mu.Unlock()
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// sync sends a sync message and waits for its acknowledgement: every error for the
// messages sent before it has then arrived.
func (c *chaosConn) sync(ctx context.Context) bool {
	c.syncs++
	want := c.syncs
	if err := c.ws.Write(ctx, websocket.MessageText, []byte(`{"type":"chaos_sync","sessionId":"`+c.dev.session+`"}`)); err != nil {
		c.dev.t.Errorf("%s: sync: %v", c.dev.name, err)
		return false
	}
	deadline := time.After(failsafe)
	for {
		c.mu.Lock()
		got := c.acks
		c.mu.Unlock()
		if got >= want {
			return true
		}
		select {
		case <-c.wake:
		case <-c.readDone:
			c.dev.t.Errorf("%s: connection ended while waiting for a sync", c.dev.name)
			return false
		case <-deadline:
			c.dev.t.Errorf("%s: no sync acknowledgement", c.dev.name)
			return false
		}
	}
}

func (c *chaosConn) errorCount(id string) int { return len(c.errorsOf(id)) }

// isApproval reports whether id is an approval this connection was shown. An id of
// another session's, never shown, is taken for what its number says.
func (c *chaosConn) isApproval(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asks[id]
}

func (c *chaosConn) errorsOf(id string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.errors[id])
}

// pick returns a request id this connection was shown: one still open, or (over) one
// that has ended.
func (c *chaosConn) pick(rng *rand.Rand, over bool) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for id := range c.asks {
		if _, ended := c.resolved[id]; ended == over {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	slices.Sort(ids) // map order is random; the seed must decide
	return ids[rng.IntN(len(ids))]
}

func (c *chaosConn) close() {
	_ = c.ws.Close(websocket.StatusNormalClosure, "")
	<-c.readDone
}
