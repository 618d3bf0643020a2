package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
	"github.com/nats-io/nats.go"
)

// The chaos test drives three replicas (each a store, transport, dispatcher and
// WebSocket hub served over HTTP) on a three-node NATS cluster with R3 storage, with
// seeded random interleavings of every way a question can end, while devices connect to
// random replicas and move between them, replicas are restarted (their runs resumed
// elsewhere with the same tool-call ids), and NATS nodes are killed and brought back.
// The defaults suit CI; a soak is, for example:
//
//	go test -race -run TestClusterChaos ./cluster -chaos.sessions 12 -chaos.asks 60 -timeout 60m
//
// The seed fixes every random decision of every actor; the scheduling of goroutines and
// of the NATS servers, and so the exact interleaving, is the machine's. A failure prints
// the seed to rerun with.
var (
	chaosSeed     = flag.Uint64("chaos.seed", 0, "seed of TestClusterChaos (0: a new one)")
	chaosSessions = flag.Int("chaos.sessions", 4, "sessions of TestClusterChaos")
	chaosDevices  = flag.Int("chaos.devices", 3, "devices per session of TestClusterChaos")
	chaosAsks     = flag.Int("chaos.asks", 16, "questions asked per session of TestClusterChaos")
)

const chaosTimeout = 1500 * time.Millisecond

const chaosArgs = `{"questions":[
	{"question":"Pick one?","header":"One","options":[{"label":"A","description":"a"},{"label":"B","description":"b"},{"label":"C","description":"c"}],"multiSelect":false},
	{"question":"Pick some?","header":"Some","options":[{"label":"X","description":"x"},{"label":"Y","description":"y"},{"label":"Z","description":"z"}],"multiSelect":true}]}`

type sendKind int

const (
	sendValid sendKind = iota
	sendInvalid
	sendDecline
)

// verdict is how the replica took a device's message.
type verdict int

const (
	accepted    verdict = iota
	refused             // with code
	unavailable         // refused for want of NATS: may have been written all the same
	unknown             // the connection ended before the verdict came
)

type chaosSend struct {
	device, request, token string
	kind                   sendKind
	verdict                verdict
	code                   string
}

type chaosCall struct {
	session, id string
	start, end  time.Time
	res         askuser.Result
	resumes     int
}

type chaosLog struct {
	mu      sync.Mutex
	sends   []chaosSend
	calls   []chaosCall
	cancels map[string][][2]time.Time
	live    []*chaosConn
	conns   []*chaosConn
	events  map[string]int
}

func (l *chaosLog) count(what string) {
	l.mu.Lock()
	l.events[what]++
	l.mu.Unlock()
}

// chaosReplica is one replica, restarted now and then on the same address.
type chaosReplica struct {
	t       *testing.T
	name    string
	servers string
	srv     *httptest.Server

	mu    sync.Mutex
	nc    *nats.Conn
	store *cluster.Store
	tr    *cluster.Transport
	d     *askuser.Dispatcher
	hub   *wshub.Hub
}

func (r *chaosReplica) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	hub := r.hub
	r.mu.Unlock()
	if hub == nil {
		http.Error(w, "restarting", http.StatusServiceUnavailable)
		return
	}
	hub.ServeHTTP(w, req)
}

func (r *chaosReplica) start() error {
	nc, err := nats.Connect(r.servers, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	st, err := cluster.NewStore(ctx, nc, &cluster.Options{Replicas: 3, ExpireGrace: 300 * time.Millisecond, RequestTimeout: 3 * time.Second})
	if err != nil {
		nc.Close()
		return err
	}
	hub := wshub.New(&wshub.Options{
		Authorize: func(req *http.Request) ([]askuser.SessionID, error) {
			return []askuser.SessionID{askuser.StringSession(req.URL.Query().Get("session"))}, nil
		},
		MaxMessagesPerSecond: 10000,
		OnEvent: func(ctx context.Context, c *wshub.Conn, ev wire.Event) error {
			if ev.Type != "chaos_sync" {
				return wire.ErrUnsupportedEvent
			}
			return c.Send(ctx, wire.Event{Type: "chaos_ack", SessionID: ev.SessionID, Data: ev.Data})
		},
	})
	tr, err := cluster.NewTransport(st, hub)
	if err != nil {
		st.Close()
		nc.Close()
		return err
	}
	d := askuser.New(tr, &askuser.Options{Store: st, Timeout: chaosTimeout})
	hub.Bind(tr)
	r.mu.Lock()
	r.nc, r.store, r.tr, r.d, r.hub = nc, st, tr, d, hub
	r.mu.Unlock()
	return nil
}

// stop closes the replica as a deploy would: its waiting calls return as shut down, its
// devices are disconnected, its questions stay in the bucket.
func (r *chaosReplica) stop() {
	r.mu.Lock()
	nc, st, tr, d, hub := r.nc, r.store, r.tr, r.d, r.hub
	r.nc, r.store, r.tr, r.d, r.hub = nil, nil, nil, nil, nil
	r.mu.Unlock()
	if d == nil {
		return
	}
	d.Close()
	_ = hub.Close()
	_ = tr.Close()
	_ = st.Close()
	nc.Close()
}

func (r *chaosReplica) dispatcher() *askuser.Dispatcher {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.d
}

func TestClusterChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster")
	}
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
	nodes := startCluster(t, 3)
	replicas := make([]*chaosReplica, 3)
	client := &http.Client{Transport: &http.Transport{}}
	for i := range replicas {
		order := []*node{nodes[i], nodes[(i+1)%3], nodes[(i+2)%3]}
		r := &chaosReplica{t: t, name: fmt.Sprintf("r%d", i+1), servers: urls(order)}
		r.srv = httptest.NewServer(r)
		if err := r.start(); err != nil {
			t.Fatal(err)
		}
		replicas[i] = r
	}
	defer func() {
		for _, r := range replicas {
			r.stop()
			r.srv.Close()
		}
		client.CloseIdleConnections()
	}()

	log := &chaosLog{cancels: map[string][][2]time.Time{}, events: map[string]int{}}
	sessions := make([]string, *chaosSessions)
	for i := range sessions {
		sessions[i] = fmt.Sprintf("chaos-%d", i)
	}
	ctx, stop := context.WithTimeout(context.Background(), 20*time.Minute)
	defer stop()
	var agents, actors sync.WaitGroup
	done := make(chan struct{})
	for si, session := range sessions {
		sid := askuser.StringSession(session)
		agents.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(si)<<32))
			var wg sync.WaitGroup
			for a := 0; a < *chaosAsks; a++ {
				id := fmt.Sprintf("%s-a%d", session, a)
				ask := func(rng *rand.Rand) {
					c := chaosCall{session: session, id: id, start: time.Now()}
					for {
						d := replicas[rng.IntN(3)].dispatcher()
						if d == nil {
							time.Sleep(20 * time.Millisecond)
							continue
						}
						c.res = d.Dispatch(ctx, askuser.ToolCall{Session: sid, ID: id, Name: askuser.ToolName, Arguments: json.RawMessage(chaosArgs)})
						// The replica was restarted, or NATS did not take the question:
						// the host's run resumes the call, with the same id, anywhere.
						if c.res.Outcome == askuser.Shutdown || c.res.Outcome == askuser.Undelivered && errors.Is(c.res.Err, cluster.ErrUnavailable) {
							c.resumes++
							if ctx.Err() != nil {
								break
							}
							time.Sleep(10 * time.Millisecond)
							continue
						}
						break
					}
					c.end = time.Now()
					log.mu.Lock()
					log.calls = append(log.calls, c)
					log.mu.Unlock()
				}
				if rng.IntN(4) == 0 {
					r := rand.New(rand.NewPCG(seed, uint64(si)<<32|uint64(a)<<8|7))
					wg.Go(func() { ask(r) })
				} else {
					ask(rng)
				}
				time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
			}
			wg.Wait()
		})
		actors.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(si)<<32|1))
			for {
				select {
				case <-done:
					return
				case <-time.After(time.Duration(500+rng.IntN(2000)) * time.Millisecond):
				}
				d := replicas[rng.IntN(3)].dispatcher()
				if d == nil {
					continue
				}
				before := time.Now()
				d.CancelSession(sid)
				log.mu.Lock()
				log.cancels[session] = append(log.cancels[session], [2]time.Time{before, time.Now()})
				log.mu.Unlock()
			}
		})
		for di := range *chaosDevices {
			actors.Go(func() {
				rng := rand.New(rand.NewPCG(seed, uint64(si)<<32|uint64(di+2)))
				dev := &chaosDevice{t: t, name: fmt.Sprintf("%s/d%d", session, di), session: session, replicas: replicas, client: client, rng: rng, log: log}
				dev.run(ctx, done)
			})
		}
	}
	// The operator: restarts a replica, or a NATS node, now and then; one at a time.
	actors.Go(func() {
		rng := rand.New(rand.NewPCG(seed, 1<<62))
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(700+rng.IntN(1500)) * time.Millisecond):
			}
			if rng.IntN(2) == 0 {
				r := replicas[rng.IntN(3)]
				r.stop()
				log.count("replica restarts")
				time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
				for r.start() != nil {
					time.Sleep(100 * time.Millisecond)
				}
			} else {
				n := nodes[rng.IntN(3)]
				n.stop()
				log.count("NATS node restarts")
				time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
				n.start()
			}
		}
	})
	agents.Wait()
	close(done)
	actors.Wait()
	if ctx.Err() != nil {
		t.Fatal("the chaos run did not finish in time: a call hung")
	}
	// Every call has ended; the resolutions reach every device through the replicas'
	// watches, a moment later.
	waitFor(t, "every live device told of every end", func() bool {
		for _, c := range log.live {
			if !c.allResolved() {
				return false
			}
		}
		return true
	})
	checkClusterChaos(t, replicas[0].dispatcher(), sessions, log)
	for _, c := range log.live {
		c.close()
	}
}

func checkClusterChaos(t *testing.T, d *askuser.Dispatcher, sessions []string, log *chaosLog) {
	t.Helper()
	byRequest := map[string][]chaosSend{}
	for _, s := range log.sends {
		byRequest[s.request] = append(byRequest[s.request], s)
		switch {
		case s.kind == sendInvalid && s.verdict == accepted:
			t.Errorf("%s's invalid answer to %s was accepted", s.device, s.request)
		case s.verdict == refused && s.kind == sendInvalid && s.code != "invalid_answer" && s.code != "not_pending":
			t.Errorf("%s's invalid answer to %s got %q", s.device, s.request, s.code)
		case s.verdict == refused && s.kind != sendInvalid && s.code != "not_pending":
			t.Errorf("%s's message for %s was refused with %q", s.device, s.request, s.code)
		}
	}
	results := map[string]askuser.Outcome{}
	outcomes := map[askuser.Outcome]int{}
	resumes := 0
	for _, c := range log.calls {
		if _, dup := results[c.id]; dup {
			t.Errorf("%s returned twice", c.id)
		}
		results[c.id] = c.res.Outcome
		outcomes[c.res.Outcome]++
		resumes += c.resumes
		var sure, maybe []chaosSend
		for _, s := range byRequest[c.id] {
			switch {
			case s.kind == sendInvalid:
			case s.verdict == accepted:
				sure = append(sure, s)
				maybe = append(maybe, s)
			case s.verdict == unavailable || s.verdict == unknown:
				maybe = append(maybe, s)
			}
		}
		if len(sure) > 1 {
			t.Errorf("%s: %d messages accepted, want at most one: %+v", c.id, len(sure), sure)
			continue
		}
		took := func(kind sendKind, token string) bool {
			if len(sure) == 1 {
				return sure[0].kind == kind && (kind != sendValid || sure[0].token == token)
			}
			return slices.ContainsFunc(maybe, func(s chaosSend) bool { return s.kind == kind && (kind != sendValid || s.token == token) })
		}
		switch c.res.Outcome {
		case askuser.Answered:
			if got := *c.res.Answers[0].CustomInput; !took(sendValid, got) {
				t.Errorf("%s: the model got answer %q; the devices' messages were %+v", c.id, got, byRequest[c.id])
			}
		case askuser.Declined:
			if !took(sendDecline, "") {
				t.Errorf("%s declined; the devices' messages were %+v", c.id, byRequest[c.id])
			}
		case askuser.Cancelled:
			if len(sure) != 0 || !slices.ContainsFunc(log.cancels[c.session], func(at [2]time.Time) bool { return !at[1].Before(c.start) && !at[0].After(c.end) }) {
				t.Errorf("%s cancelled without a cancel of its session during the call (accepted %+v)", c.id, sure)
			}
		case askuser.TimedOut:
			if len(sure) != 0 || c.end.Sub(c.start) < chaosTimeout {
				t.Errorf("%s timed out after %v with accepted messages %+v", c.id, c.end.Sub(c.start), sure)
			}
		default:
			t.Errorf("%s ended as %v: %v", c.id, c.res.Outcome, c.res.Err)
		}
	}
	if want := len(sessions) * *chaosAsks; len(log.calls) != want {
		t.Errorf("%d calls returned, want %d", len(log.calls), want)
	}
	for _, c := range log.conns {
		c.mu.Lock()
		for id, n := range c.asks {
			if n > 1 {
				t.Errorf("%s was shown %s %d times on one connection", c.name, id, n)
			}
		}
		c.mu.Unlock()
	}
	for _, c := range log.live {
		c.mu.Lock()
		for id := range c.asks {
			if got := c.resolved[id]; got != results[id] {
				t.Errorf("%s saw %s end as %v, the model as %v", c.name, id, got, results[id])
			}
		}
		c.mu.Unlock()
	}
	for _, s := range sessions {
		for _, p := range askusertest.Questions(d, askuser.StringSession(s)) {
			i := slices.IndexFunc(log.calls, func(c chaosCall) bool { return c.id == p.RequestID })
			var c chaosCall
			if i >= 0 {
				c = log.calls[i]
			}
			t.Errorf("%s is still pending (expiring at %v, now %v); its call: %+v", p.RequestID, p.ExpiresAt, time.Now(), c)
		}
	}
	kinds := map[string]int{}
	for _, s := range log.sends {
		k := [...]string{"valid", "invalid", "decline"}[s.kind] + " " + [...]string{"accepted", "refused " + s.code, "unavailable", "unknown"}[s.verdict]
		kinds[k]++
	}
	t.Logf("%d calls: %v, %d resumed; %d device messages: %v; %v", len(log.calls), outcomes, resumes, len(log.sends), kinds, log.events)
}

// chaosDevice is one device: it connects to a random replica, answers, declines, sends
// bad answers, disconnects and reconnects elsewhere, at random.
type chaosDevice struct {
	t        *testing.T
	name     string
	session  string
	replicas []*chaosReplica
	client   *http.Client
	rng      *rand.Rand
	log      *chaosLog
	n        int
}

func (dv *chaosDevice) run(ctx context.Context, done <-chan struct{}) {
	var c *chaosConn
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
			if c != nil && c.ended() {
				c.close()
				c = nil
			}
			if c == nil {
				// End connected, so that the end is checked against what the model got.
				c = dv.connect(ctx)
				if c == nil {
					time.Sleep(50 * time.Millisecond)
					continue
				}
			}
			return
		case <-time.After(dv.pause()):
		}
		if c != nil && c.ended() { // its replica was restarted
			c.close()
			c = nil
		}
		if c == nil {
			c = dv.connect(ctx)
			continue
		}
		switch p := dv.rng.IntN(100); {
		case p < 5:
			c.close()
			c = nil
		case p < 50:
			dv.act(ctx, c, sendValid, c.pick(dv.rng, false))
		case p < 58:
			dv.act(ctx, c, sendValid, c.pick(dv.rng, true))
		case p < 68:
			dv.act(ctx, c, sendInvalid, c.pick(dv.rng, false))
		case p < 75:
			dv.act(ctx, c, sendDecline, c.pick(dv.rng, false))
		}
	}
}

func (dv *chaosDevice) pause() time.Duration {
	if dv.rng.IntN(4) == 0 { // away for a while: questions time out
		return time.Duration(500+dv.rng.IntN(2500)) * time.Millisecond
	}
	return time.Duration(dv.rng.IntN(80)) * time.Millisecond
}

// connect connects to a random replica; nil when it is restarting.
func (dv *chaosDevice) connect(ctx context.Context) *chaosConn {
	r := dv.replicas[dv.rng.IntN(len(dv.replicas))]
	url := "ws" + strings.TrimPrefix(r.srv.URL, "http") + "/ws?session=" + dv.session
	dctx, cancel := context.WithTimeout(ctx, failsafe)
	defer cancel()
	ws, _, err := websocket.Dial(dctx, url, &websocket.DialOptions{HTTPClient: dv.client})
	if err != nil {
		return nil
	}
	ws.SetReadLimit(1 << 20)
	c := &chaosConn{name: dv.name + "@" + r.name, session: dv.session, t: dv.t, ws: ws, asks: map[string]int{}, resolved: map[string]askuser.Outcome{}, errors: map[string][]wire.ErrorData{}, wake: make(chan struct{}, 1), readDone: make(chan struct{})}
	go c.read(ctx)
	dv.log.mu.Lock()
	dv.log.conns = append(dv.log.conns, c)
	dv.log.mu.Unlock()
	return c
}

// act sends one message about request id and records how it was taken.
func (dv *chaosDevice) act(ctx context.Context, c *chaosConn, kind sendKind, id string) {
	if id == "" {
		return
	}
	dv.n++
	token := fmt.Sprintf("%s#%d", dv.name, dv.n)
	data := wire.ResultData{RequestID: id}
	some := []string{"X", "Y", "Z"}[:1+dv.rng.IntN(3)]
	switch kind {
	case sendValid:
		data.Answers = []askuser.Answer{{Question: "Pick one?", SelectedLabels: []string{}, CustomInput: &token}, {Question: "Pick some?", SelectedLabels: some}}
	case sendInvalid:
		data.Answers = []askuser.Answer{{Question: "Pick one?", SelectedLabels: []string{"Nope"}}, {Question: "Pick some?", SelectedLabels: some}}
	case sendDecline:
		data.Declined = true
	}
	raw, _ := json.Marshal(data)
	msg, _ := json.Marshal(wire.Event{Type: wire.EventResult, SessionID: askuser.StringSession(dv.session), Data: raw})
	before := len(c.errorsOf(id))
	s := chaosSend{device: c.name, request: id, kind: kind, token: token, verdict: unknown}
	if err := c.ws.Write(ctx, websocket.MessageText, msg); err == nil && c.sync(ctx) {
		s.verdict = accepted
		if errs := c.errorsOf(id); len(errs) > before {
			e := errs[len(errs)-1]
			s.verdict, s.code = refused, e.Code
			if strings.Contains(e.Message, "try again") {
				s.verdict = unavailable
			}
		}
	}
	dv.log.mu.Lock()
	dv.log.sends = append(dv.log.sends, s)
	dv.log.mu.Unlock()
}

// chaosConn is one connection of a device and what it received.
type chaosConn struct {
	t        *testing.T
	name     string
	session  string
	ws       *websocket.Conn
	mu       sync.Mutex
	asks     map[string]int
	resolved map[string]askuser.Outcome
	errors   map[string][]wire.ErrorData
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
			c.t.Errorf("%s: a replica sent a malformed event: %v", c.name, err)
			return
		}
		c.mu.Lock()
		switch ev.Type {
		case wire.EventAsk:
			c.asks[ev.RequestID()]++
		case wire.EventResolved:
			var r wire.ResolvedData
			_ = json.Unmarshal(ev.Data, &r)
			if prev, dup := c.resolved[r.RequestID]; dup {
				c.t.Errorf("%s: %s resolved twice (%v, %v)", c.name, r.RequestID, prev, r.Outcome)
			}
			c.resolved[r.RequestID] = r.Outcome
		case wire.EventError:
			var e wire.ErrorData
			_ = json.Unmarshal(ev.Data, &e)
			c.errors[e.RequestID] = append(c.errors[e.RequestID], e)
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
// messages sent before it has then arrived. False when the connection ended first.
func (c *chaosConn) sync(ctx context.Context) bool {
	c.syncs++
	want := c.syncs
	if err := c.ws.Write(ctx, websocket.MessageText, []byte(`{"type":"chaos_sync","sessionId":"`+c.session+`"}`)); err != nil {
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
			return false
		case <-deadline:
			c.t.Errorf("%s: no sync acknowledgement", c.name)
			return false
		}
	}
}

func (c *chaosConn) errorsOf(id string) []wire.ErrorData {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.errors[id])
}

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
	slices.Sort(ids)
	return ids[rng.IntN(len(ids))]
}

// allResolved reports whether every question shown has been resolved.
func (c *chaosConn) allResolved() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.asks {
		if _, ok := c.resolved[id]; !ok {
			return false
		}
	}
	return true
}

func (c *chaosConn) ended() bool {
	select {
	case <-c.readDone:
		return true
	default:
		return false
	}
}

func (c *chaosConn) close() {
	_ = c.ws.Close(websocket.StatusNormalClosure, "")
	<-c.readDone
}
