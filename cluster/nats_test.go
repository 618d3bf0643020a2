package cluster_test

import (
	"context"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/cluster/natstest"
	"github.com/askuser-go/askuser/store"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// failsafe bounds every wait of these tests so that a bug fails a test instead of
// hanging it; no test asserts how long anything takes.
const failsafe = 30 * time.Second

// node is one embedded NATS server with JetStream, on a port of its own and a temporary
// directory that outlives its restarts.
type node struct {
	t    testing.TB
	opts server.Options
	mu   sync.Mutex
	srv  *server.Server
}

// startNode starts a single NATS server with JetStream.
func startNode(t testing.TB) *node {
	t.Helper()
	n := &node{t: t, opts: server.Options{
		ServerName: "n0",
		Host:       "127.0.0.1",
		Port:       natstest.FreePorts(t, 1)[0],
		JetStream:  true,
		StoreDir:   t.TempDir(),
		NoLog:      true,
		NoSigs:     true,
	}}
	n.start()
	t.Cleanup(n.stop)
	return n
}

// startCluster starts size NATS servers with JetStream, routed to each other: a NATS
// cluster whose JetStream keeps R3 streams.
func startCluster(t testing.TB, size int) []*node {
	t.Helper()
	ports := natstest.FreePorts(t, 2*size)
	var routes []string
	for i := range size {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[size+i]))
	}
	nodes := make([]*node, size)
	for i := range size {
		nodes[i] = &node{t: t, opts: server.Options{
			ServerName: fmt.Sprintf("n%d", i),
			Host:       "127.0.0.1",
			Port:       ports[i],
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoLog:      true,
			NoSigs:     true,
			Cluster:    server.ClusterOpts{Name: "askuser-test", Host: "127.0.0.1", Port: ports[size+i]},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
		}}
	}
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(n.start)
		t.Cleanup(n.stop)
	}
	wg.Wait()
	waitFor(t, "a JetStream meta leader that knows every node", func() bool {
		for _, n := range nodes {
			if s := n.server(); s != nil && s.JetStreamIsLeader() && len(s.JetStreamClusterPeers()) == size {
				for _, n := range nodes {
					if !n.server().JetStreamIsCurrent() {
						return false
					}
				}
				return true
			}
		}
		return false
	})
	return nodes
}

func (n *node) start() {
	opts := n.opts // a fresh copy: the server keeps and changes its own
	opts.Routes = append([]*url.URL(nil), n.opts.Routes...)
	s, err := server.NewServer(&opts)
	if err != nil {
		n.t.Error(err)
		return
	}
	s.Start()
	if !s.ReadyForConnections(failsafe) {
		n.t.Errorf("NATS server %s did not start", n.opts.ServerName)
	}
	n.mu.Lock()
	n.srv = s
	n.mu.Unlock()
}

// stop shuts the server down, as a crash would for its clients (its files stay).
func (n *node) stop() {
	n.mu.Lock()
	s := n.srv
	n.srv = nil
	n.mu.Unlock()
	if s != nil {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

func (n *node) server() *server.Server {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.srv
}

func (n *node) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.opts.Port) }

func urls(nodes []*node) string {
	var us []string
	for _, n := range nodes {
		us = append(us, n.url())
	}
	return strings.Join(us, ",")
}

// connect opens a client connection to the servers that reconnects for ever, quickly;
// opts come after those defaults.
func connect(t testing.TB, servers string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	opts = append([]nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(20 * time.Millisecond), nats.ReconnectJitter(10*time.Millisecond, 10*time.Millisecond)}, opts...)
	nc, err := nats.Connect(servers, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// openStore opens a store on its own connection, made with natsOpts.
func openStore(t testing.TB, servers string, opts *cluster.Options, natsOpts ...nats.Option) *cluster.Store {
	t.Helper()
	nc := connect(t, servers, natsOpts...)
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	st, err := cluster.NewStore(ctx, nc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// replica is one replica of a host: its store, transport, dispatcher and in-process
// devices (an askusertest.Transport stands for its hub).
type replica struct {
	name    string
	store   *cluster.Store
	tr      *cluster.Transport
	d       *askuser.Dispatcher
	devices *askusertest.Transport
}

func newReplica(t testing.TB, name, servers string, sopts *cluster.Options, dopts *askuser.Options, natsOpts ...nats.Option) *replica {
	t.Helper()
	r := &replica{name: name, store: openStore(t, servers, sopts, natsOpts...), devices: askusertest.NewTransport()}
	tr, err := cluster.NewTransport(r.store, r.devices)
	if err != nil {
		t.Fatal(err)
	}
	r.tr = tr
	var o askuser.Options
	if dopts != nil {
		o = *dopts
	}
	o.Store = r.store
	r.d = askuser.New(tr, &o)
	r.devices.Bind(tr)
	t.Cleanup(r.close)
	return r
}

func (r *replica) close() {
	r.d.Close()
	r.tr.Close()
	r.devices.Close()
	r.store.Close()
}

// waitFor polls cond until it holds, failing t after failsafe.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(failsafe)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkLeaks fails t when goroutines of askuser, the cluster, nats.go, WebSocket or HTTP
// started during the test are still running once its cleanups have run. Register it
// first so that it runs last.
func checkLeaks(t testing.TB) {
	t.Helper()
	before, _ := liveGoroutines()
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, stacks := liveGoroutines()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("goroutine leak: %d before the test, %d after:\n\n%s", before, n, strings.Join(stacks, "\n\n"))
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

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
			continue
		}
		// The embedded NATS servers' own goroutines are theirs to end: a filestore's
		// flusher may outlive its server's shutdown by a moment.
		if strings.Contains(g, "nats-server/v2/server") && !strings.Contains(g, "askuser-go") {
			continue
		}
		for _, mark := range []string{"askuser-go", "nats-io/nats.go", "coder/websocket", "net/http"} {
			if strings.Contains(g, mark) {
				stacks = append(stacks, g)
				break
			}
		}
	}
	return len(stacks), stacks
}

// signalStore tells when each Put has returned: a call that joins a pending question
// waits for it from then on.
type signalStore struct {
	store.Store
	put chan struct{}
}

func newSignalStore(st store.Store) *signalStore {
	return &signalStore{Store: st, put: make(chan struct{}, 100)}
}

func (s *signalStore) Put(ctx context.Context, rec store.Record) (store.Record, bool, error) {
	r, created, err := s.Store.Put(ctx, rec)
	s.put <- struct{}{}
	return r, created, err
}

// joiner is a dispatcher of replica r's store for calls that join questions, and whose
// Puts can be waited for.
func joiner(t testing.TB, r *replica) (*askuser.Dispatcher, *signalStore) {
	sig := newSignalStore(r.store)
	d := askuser.New(askusertest.NewTransport(), &askuser.Options{Store: sig})
	t.Cleanup(func() { d.Close() })
	return d, sig
}
