package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/cluster/natstest"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// endsBound is how long after a question ends every device of every replica may still
// show it, once NATS has its quorum: the bound docs/CLUSTER.md states, with room for a
// loaded machine.
const endsBound = 20 * time.Second

// hubReplica is a replica whose devices are WebSocket connections to its hub.
type hubReplica struct {
	name  string
	store *cluster.Store
	tr    *cluster.Transport
	d     *askuser.Dispatcher
	hub   *wshub.Hub
	srv   *httptest.Server
}

func newHubReplica(t testing.TB, name, servers string, sopts *cluster.Options, natsOpts ...nats.Option) *hubReplica {
	t.Helper()
	r := &hubReplica{name: name, store: openStore(t, servers, sopts, natsOpts...)}
	r.hub = wshub.New(&wshub.Options{Authorize: func(req *http.Request) ([]askuser.SessionID, error) {
		return []askuser.SessionID{askuser.StringSession(req.URL.Query().Get("session"))}, nil
	}})
	tr, err := cluster.NewTransport(r.store, r.hub)
	if err != nil {
		t.Fatal(err)
	}
	r.tr = tr
	r.d = askuser.New(tr, &askuser.Options{Store: r.store})
	r.hub.Bind(tr)
	r.srv = httptest.NewServer(r.hub)
	t.Cleanup(func() {
		r.d.Close()
		_ = r.hub.Close()
		r.srv.Close()
		_ = r.tr.Close()
		_ = r.store.Close()
	})
	return r
}

// dispatch asks the deploy question as id in session; the result comes on the channel.
func (r *hubReplica) dispatch(session askuser.SessionID, id string) chan askuser.Result {
	ch := make(chan askuser.Result, 1)
	go func() {
		ch <- r.d.Dispatch(context.Background(), askuser.ToolCall{Session: session, ID: id, Name: askuser.ToolName, Arguments: json.RawMessage(deployArgs)})
	}()
	return ch
}

// answer hands the replica a device's answer, as its hub does with a device's message,
// and returns the verdict.
func (r *hubReplica) answer(session askuser.SessionID, id, label string) error {
	return r.tr.HandleEvent(context.Background(), answerEvent(session, id, label, ""))
}

// panel is a device's page on one replica: a WebSocket connection that shows the asks it
// is sent until they are resolved, and that connects again when its connection is cut
// (as the panel's page does), showing then what the replica sends it on joining.
type panel struct {
	name string
	url  string

	mu      sync.Mutex
	showing map[string]bool      // what the page shows now
	told    map[string]time.Time // when the page stopped showing each question
	conns   int
	stop    context.CancelFunc
	done    chan struct{}
}

func openPanel(t testing.TB, r *hubReplica, session string) *panel {
	ctx, cancel := context.WithCancel(context.Background())
	p := &panel{name: session + "@" + r.name, url: "ws" + strings.TrimPrefix(r.srv.URL, "http") + "/?session=" + session,
		showing: map[string]bool{}, told: map[string]time.Time{}, stop: cancel, done: make(chan struct{})}
	joined := make(chan struct{})
	go p.run(ctx, joined)
	select {
	case <-joined:
	case <-time.After(failsafe):
		t.Fatalf("%s never connected", p.name)
	}
	t.Cleanup(p.close)
	return p
}

func (p *panel) run(ctx context.Context, joined chan struct{}) {
	defer close(p.done)
	for ctx.Err() == nil {
		ws, _, err := websocket.Dial(ctx, p.url, nil)
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		ws.SetReadLimit(1 << 20)
		p.mu.Lock()
		p.conns++
		for id := range p.showing { // a page loaded again shows what it is sent
			p.untell(id)
		}
		p.mu.Unlock()
		if joined != nil {
			close(joined)
			joined = nil
		}
		for {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				break
			}
			ev, err := wire.ParseEvent(msg)
			if err != nil {
				continue
			}
			p.mu.Lock()
			switch ev.Type {
			case wire.EventAsk:
				p.showing[ev.RequestID()] = true
				delete(p.told, ev.RequestID())
			case wire.EventResolved:
				var rd wire.ResolvedData
				_ = json.Unmarshal(ev.Data, &rd)
				p.untell(rd.RequestID)
			}
			p.mu.Unlock()
		}
		_ = ws.CloseNow()
	}
}

// untell stops showing id. p.mu is held.
func (p *panel) untell(id string) {
	if p.showing[id] {
		delete(p.showing, id)
		if _, ok := p.told[id]; !ok {
			p.told[id] = time.Now()
		}
	}
}

func (p *panel) shows(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.showing[id]
}

// toldAt returns when the page stopped showing id, if it has.
func (p *panel) toldAt(id string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.told[id]
	return at, ok && !p.showing[id]
}

func (p *panel) close() {
	p.stop()
	<-p.done
}

// busy keeps n goroutines of the test's process spinning until the test ends: the
// replicas then run on a machine loaded as a busy host is (beside the NATS processes,
// which the spinning takes cores from too).
func busy(t testing.TB, n int) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			x := 0
			for !stop.Load() {
				for i := range 100000 {
					x += i
				}
			}
			_ = x
		})
	}
	t.Cleanup(func() {
		stop.Store(true)
		wg.Wait()
	})
}

// storeLog is what the replicas' stores log, at debug level, with the test's own notes
// between; the test logs it when it fails.
type storeLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func storeLogs(t testing.TB) *storeLog {
	l := &storeLog{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the stores' log:\n%s", l.String())
		}
	})
	return l
}

func (l *storeLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *storeLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// options returns base with a logger that writes to l, naming the replica.
func (l *storeLog) options(base cluster.Options, replica string) *cluster.Options {
	base.Logger = slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", replica)
	return &base
}

// note adds a line of the test's own to the log.
func (l *storeLog) note(format string, args ...any) {
	fmt.Fprintf(l, "time=%s test: %s\n", time.Now().UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
}

// Quorum is lost twice in a row, with devices of every session on every replica: two of
// the three NATS nodes are killed, first leaving the stream's leader, then a follower;
// each time an answer sent meanwhile is refused as unavailable, the nodes are started
// again, and the same answer is taken. A third question is answered after both outages.
// Every call gets its answer, and every device on every replica stops showing every
// question within endsBound of its end; each run logs how long after. Each run is a
// fresh cluster; -crash.runs repeats it, and -crash.busy loads the machine.
func testQuorumLostTwice(t *testing.T) {
	t.Parallel()
	busy(t, *crashBusy)
	var late []time.Duration
	for run := 0; run < *crashRuns && !t.Failed(); run++ {
		t.Run(fmt.Sprintf("run %d", run+1), func(t *testing.T) { late = append(late, quorumLostTwice(t)...) })
	}
	t.Logf("quorum lost twice: devices told of the ends after the answer was taken: %s", summaryOf(late, "devices' ends"))
}

// quorumLostTwice runs the scenario of testQuorumLostTwice once, and returns how long
// after each end each device stopped showing its question.
func quorumLostTwice(t *testing.T) []time.Duration {
	nodes := natstest.StartCluster(t, 3)
	js := controlJS(t, nodes)
	logs := storeLogs(t)
	base := cluster.Options{Replicas: 3, RequestTimeout: 2 * time.Second}
	openStore(t, natstest.URLs(nodes...), &base) // the bucket, to find its leader
	var rs []*hubReplica
	for i := range 3 {
		name := fmt.Sprintf("r%d", i+1)
		rs = append(rs, newHubReplica(t, name, preferring(nodes, i), logs.options(base, name), inOrder...))
	}
	const sessions = 3
	ids := make([]string, sessions)
	ss := make([]askuser.SessionID, sessions)
	calls := make([]chan askuser.Result, sessions)
	var panels [sessions][]*panel
	for si := range sessions {
		ids[si] = fmt.Sprintf("q%d", si)
		name := fmt.Sprintf("quorum-%d", si)
		ss[si] = askuser.StringSession(name)
		for _, r := range rs {
			panels[si] = append(panels[si], openPanel(t, r, name))
		}
	}
	for si := range sessions {
		calls[si] = rs[si].dispatch(ss[si], ids[si])
	}
	for si := range sessions {
		for _, p := range panels[si] {
			waitFor(t, p.name+" shown "+ids[si], func() bool {
				select {
				case res := <-calls[si]: // NATS did not take the question in time: resumed
					if !unavailableAsk(res) {
						t.Fatalf("%s ended before it was shown: %+v", ids[si], res)
					}
					calls[si] = rs[si].dispatch(ss[si], ids[si])
				default:
				}
				return p.shows(ids[si])
			})
		}
	}
	endedAt := make([]time.Time, sessions)
	// takeAnswer sends session si's answer from a device on replica ri until it is
	// taken, or found taken already (a refused try committed after all).
	takeAnswer := func(si, ri int) {
		t.Helper()
		deadline := time.Now().Add(failsafe)
		for {
			err := rs[ri].answer(ss[si], ids[si], "Yes")
			if err == nil || errors.Is(err, wire.ErrNotPending) {
				endedAt[si] = time.Now()
				logs.note("%s ended (%v)", ids[si], err)
				return
			}
			if !errors.Is(err, cluster.ErrUnavailable) || time.Now().After(deadline) {
				t.Fatalf("%s with quorum back: %v", ids[si], err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// toldOf waits until every device of session si stops showing its question, each
	// within endsBound of the end.
	var late []time.Duration
	toldOf := func(si int) {
		t.Helper()
		deadline := time.Now().Add(endsBound + failsafe)
		for _, p := range panels[si] {
			for {
				if at, ok := p.toldAt(ids[si]); ok {
					d := max(0, at.Sub(endedAt[si]))
					late = append(late, d)
					if d > endsBound {
						t.Errorf("%s was told of the end of %s %v after it, more than %v", p.name, ids[si], d, endsBound)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s still shows %s, %v after it ended", p.name, ids[si], time.Since(endedAt[si]).Round(time.Millisecond))
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	for round, survivorLeads := range []bool{true, false} {
		leader := natstest.StreamLeader(t, nodes, js, bucketStream)
		survivor := leader
		if !survivorLeads {
			survivor = nodes[(slices.Index(nodes, leader)+1)%3]
		}
		for _, n := range nodes {
			if n != survivor {
				n.Kill()
			}
		}
		logs.note("round %d: killed all but %s (the stream's leader: %v)", round+1, survivor.Name, survivorLeads)
		ri := (round + 1) % 3
		if err := rs[ri].answer(ss[round], ids[round], "Yes"); !errors.Is(err, cluster.ErrUnavailable) {
			t.Fatalf("round %d: without quorum the answer got %v", round+1, err)
		}
		for _, n := range nodes {
			n.Start()
		}
		logs.note("round %d: every node started again", round+1)
		takeAnswer(round, ri)
		toldOf(round)
	}
	takeAnswer(2, 0)
	toldOf(2)
	for si, ch := range calls {
		res := result(t, ch)
		for unavailableAsk(res) { // its Put timed out, written all the same: resumed, it has the answer
			res = result(t, rs[si].dispatch(ss[si], ids[si]))
		}
		if res.Outcome != askuser.Answered || res.Answers[0].SelectedLabels[0] != "Yes" {
			t.Fatalf("%s: the model got %+v", ids[si], res)
		}
	}
	for si := range sessions {
		for _, r := range rs {
			if p := r.tr.Pending(ss[si]); len(p) != 0 {
				t.Errorf("%s still holds %s pending", r.name, ids[si])
			}
		}
	}
	snaps := make([]int, len(rs))
	for i, r := range rs {
		snaps[i] = r.store.Snapshots()
	}
	t.Logf("devices told of the ends after the answer was taken: %s; snapshots taken by each replica's watch: %v", summaryOf(late, "devices' ends"), snaps)
	if len(late) > 0 && slices.Max(late) > 2*time.Second && !t.Failed() {
		t.Logf("a device told late; the stores' log:\n%s", logs)
	}
	return late
}

// streamPeers returns the nodes that hold a copy of the bucket's stream, its leader first.
func streamPeers(t testing.TB, nodes []*natstest.Node, js jetstream.JetStream) []*natstest.Node {
	t.Helper()
	var peers []*natstest.Node
	waitFor(t, "the stream's peers", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		st, err := js.Stream(ctx, bucketStream)
		if err != nil {
			return false
		}
		c := st.CachedInfo().Cluster
		if c == nil || c.Leader == "" || len(c.Replicas) != 2 {
			return false
		}
		peers = []*natstest.Node{byName(nodes, c.Leader)}
		for _, p := range c.Replicas {
			peers = append(peers, byName(nodes, p.Name))
		}
		return !slices.Contains(peers, nil)
	})
	return peers
}

func byName(nodes []*natstest.Node, name string) *natstest.Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// A replica's watch starts again while the bucket's stream has no leader, after a
// question it shows was answered: on a cluster of five NATS nodes, the replica's only
// server (one without a copy of the stream) is killed, the question is answered on
// another replica, and two of the stream's three copies are killed (its leader among
// them); the replica's server comes back, and the replica's watch starts again on the
// one copy left, whose snapshot has the answer. Its device is told of the end then,
// without waiting for a leader, and nothing is left pending once the copies are back.
func testWatchWithoutLeader(t *testing.T) {
	t.Parallel()
	nodes := natstest.StartCluster(t, 5)
	js := controlJS(t, nodes)
	logs := storeLogs(t)
	base := cluster.Options{Replicas: 3, RequestTimeout: time.Second}
	openStore(t, natstest.URLs(nodes...), &base) // the bucket, to find its copies
	peers := streamPeers(t, nodes, js)
	var outside []*natstest.Node
	for _, n := range nodes {
		if !slices.Contains(peers, n) {
			outside = append(outside, n)
		}
	}
	lone := outside[0]
	// r1 knows only lone; r2 only servers that stay up.
	r1 := newHubReplica(t, "r1", lone.URL(), logs.options(base, "r1"), append(crashConn, nats.IgnoreDiscoveredServers())...)
	r2 := newHubReplica(t, "r2", natstest.URLs(outside[1], peers[2]), logs.options(base, "r2"), inOrder...)
	const session = "leaderless"
	s := askuser.StringSession(session)
	p1, p2 := openPanel(t, r1, session), openPanel(t, r2, session)
	ch := r2.dispatch(s, "q")
	for _, p := range []*panel{p1, p2} {
		waitFor(t, p.name+" shown q", func() bool { return p.shows("q") })
	}
	lone.Kill()
	if err := r2.answer(s, "q", "Yes"); err != nil {
		t.Fatal(err)
	}
	if res := result(t, ch); res.Outcome != askuser.Answered {
		t.Fatalf("the call got %+v", res)
	}
	// The answer is committed on two copies; the one that stays must have it too.
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	st, err := js.Stream(ctx, bucketStream)
	if err != nil {
		t.Fatal(err)
	}
	end := st.CachedInfo().State.LastSeq
	waitFor(t, "the answer on "+peers[2].Name, func() bool {
		seq, ok := peers[2].LastSeq(bucketStream)
		return ok && seq >= end
	})
	before := r1.store.Snapshots()
	peers[0].Kill()
	peers[1].Kill()
	lone.Start()
	waitFor(t, "r1's watch started again", func() bool { return r1.store.Snapshots() > before })
	restarted := time.Now()
	waitFor(t, "r1's device told of the end", func() bool {
		_, told := p1.toldAt("q")
		return told
	})
	t.Logf("r1's device was told of the end %v after its watch started again, the stream without a leader", time.Since(restarted).Round(time.Millisecond))
	peers[0].Start()
	peers[1].Start()
	natstest.StreamLeader(t, nodes, js, bucketStream)
	for _, r := range []*hubReplica{r1, r2} {
		waitFor(t, r.name+" holding nothing pending", func() bool { return len(r.tr.Pending(s)) == 0 })
	}
	if _, told := p2.toldAt("q"); !told {
		t.Errorf("r2's device still shows q")
	}
}
