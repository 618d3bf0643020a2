// Package natstest runs NATS servers with JetStream as processes of their own, so that a
// test can kill one with SIGKILL, as a crashed machine or an OOM kill would, and start it
// again on the same ports and storage. A server shut down in the test's own process hands
// its Raft leaderships over first; a killed one does not, and its peers wait out their
// election timeout, as they would in production.
//
// The processes are the test binary run again: call [RunIfNode] first in TestMain.
//
//	func TestMain(m *testing.M) {
//		natstest.RunIfNode()
//		os.Exit(m.Run())
//	}
//
//	func TestSomething(t *testing.T) {
//		nodes := natstest.StartCluster(t, 3) // three routed servers, R3 streams possible
//		nc, _ := nats.Connect(natstest.URLs(nodes...))
//		...
//		nodes[1].Kill()
//		nodes[1].Start()
//	}
//
// It is public, though only tests use it, for two reasons: the tests of other modules
// use it too (the examples' cluster tests kill a NATS node mid-run), which an internal
// package would not allow; and a host that runs askuser's cluster can test its own
// deployment the same way, against real servers. It imports testing and nats-server; a
// program that does not import it links neither.
package natstest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// envNode holds, in a node process, the node's spec in JSON.
const envNode = "ASKUSER_NATSTEST_NODE"

// Wait bounds every wait of this package (a server starting, a cluster becoming
// healthy, a leader being elected), so that a fault fails the test instead of hanging it.
const Wait = 60 * time.Second

// spec is what a node process needs to run its server.
type spec struct {
	Name        string   `json:"name"`
	Port        int      `json:"port"`
	HTTPPort    int      `json:"httpPort"`
	ClusterPort int      `json:"clusterPort,omitempty"`
	Routes      []string `json:"routes,omitempty"`
	Dir         string   `json:"dir"`
}

// RunIfNode runs a NATS server and exits, when the process was started by [StartCluster]
// as one of its nodes; otherwise it returns at once. Call it first in TestMain. A node
// process exits when its standard input closes, so that none outlives its test binary.
func RunIfNode() {
	raw := os.Getenv(envNode)
	if raw == "" {
		return
	}
	var sp spec
	if err := json.Unmarshal([]byte(raw), &sp); err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	opts := &server.Options{
		ServerName: sp.Name,
		Host:       "127.0.0.1",
		Port:       sp.Port,
		HTTPHost:   "127.0.0.1",
		HTTPPort:   sp.HTTPPort,
		JetStream:  true,
		StoreDir:   filepath.Join(sp.Dir, "jetstream"),
		LogFile:    filepath.Join(sp.Dir, "server.log"),
		NoSigs:     true,
	}
	if sp.ClusterPort != 0 {
		opts.Cluster = server.ClusterOpts{Name: "natstest", Host: "127.0.0.1", Port: sp.ClusterPort}
		opts.Routes = server.RoutesFromStr(strings.Join(sp.Routes, ","))
	}
	s, err := server.NewServer(opts)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	s.ConfigureLogger()
	s.Start()
	if !s.ReadyForConnections(Wait) {
		fmt.Println("error: the server did not start")
		os.Exit(2)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Shutdown()
	os.Exit(0)
}

// Node is one NATS server with JetStream in a process of its own. Its ports and its
// storage directory stay the same across [Node.Kill] and [Node.Start]. Its methods may
// be called from any goroutine, one at a time.
type Node struct {
	// Name is the server's name, as JetStream reports it (a stream's leader, say).
	Name string

	t    testing.TB
	spec spec

	mu     sync.Mutex
	cmd    *exec.Cmd      // nil while the node is down
	stdin  io.WriteCloser // closing it ends the process
	exited chan struct{}  // closed when cmd has exited
}

// StartCluster starts size servers routed to each other (one, alone, for size 1) and
// returns once JetStream is healthy on every one of them. The processes are killed
// when the test ends; when it has failed, the end of each server's log is logged.
// Should a server exit as it starts (a port taken by another program between
// [FreePorts] and the server's start, on a busy machine), the cluster is started again
// on other ports, up to three times.
func StartCluster(t testing.TB, size int) []*Node {
	t.Helper()
	const tries = 3
	for try := 1; ; try++ {
		nodes := newCluster(t, size)
		t.Cleanup(func() {
			for _, n := range nodes {
				n.Kill()
			}
			if t.Failed() {
				for _, n := range nodes {
					n.logTail(40)
				}
			}
		})
		var wg sync.WaitGroup
		errs := make([]error, size)
		for i, n := range nodes {
			wg.Go(func() { errs[i] = n.start() })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			if try < tries && errors.Is(err, errExited) {
				for _, n := range nodes {
					n.Kill()
				}
				continue
			}
			t.Error(err)
		}
		WaitHealthy(t, nodes...)
		return nodes
	}
}

// newCluster returns the nodes of a cluster of size, on ports free now, not started.
func newCluster(t testing.TB, size int) []*Node {
	ports := FreePorts(t, 3*size)
	var routes []string
	if size > 1 {
		for i := range size {
			routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[2*size+i]))
		}
	}
	nodes := make([]*Node, size)
	for i := range nodes {
		sp := spec{Name: fmt.Sprintf("n%d", i+1), Port: ports[i], HTTPPort: ports[size+i], Dir: t.TempDir()}
		if size > 1 {
			sp.ClusterPort, sp.Routes = ports[2*size+i], routes
		}
		nodes[i] = &Node{Name: sp.Name, t: t, spec: sp}
	}
	return nodes
}

// errExited is why a node did not start when its process exited as it started.
var errExited = errors.New("exited while starting")

// FreePorts returns n ports free on the loopback now, for servers a test starts.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// URL is the node's client URL.
func (n *Node) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.spec.Port) }

// URLs joins the nodes' client URLs with commas, as nats.Connect takes them.
func URLs(nodes ...*Node) string {
	us := make([]string, len(nodes))
	for i, n := range nodes {
		us[i] = n.URL()
	}
	return strings.Join(us, ",")
}

// Running reports whether the node's process is up.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd != nil
}

// Start starts the node's process again, after [Node.Kill], and returns once JetStream
// is healthy on it (it has caught up with its peers). It does nothing while the node
// runs.
func (n *Node) Start() {
	n.t.Helper()
	if n.Running() {
		return
	}
	n.launch()
	WaitHealthy(n.t, n)
}

// launch starts the process and waits until its server takes connections; a failure
// fails the test.
func (n *Node) launch() {
	if err := n.start(); err != nil {
		n.t.Error(err)
	}
}

// start starts the process and waits until its server takes connections.
func (n *Node) start() error {
	raw, _ := json.Marshal(n.spec)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envNode+"="+string(raw))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := os.OpenFile(filepath.Join(n.spec.Dir, "stderr.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer stderr.Close()
	cmd.Stderr = stderr // a race report in the server's code, say
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case ready <- sc.Text():
			default:
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	n.mu.Lock()
	n.cmd, n.stdin, n.exited = cmd, stdin, exited
	n.mu.Unlock()
	select {
	case line := <-ready:
		if line != "ready" {
			return fmt.Errorf("NATS node %s: %s", n.Name, line)
		}
		return nil
	case <-exited:
		return fmt.Errorf("NATS node %s %w", n.Name, errExited)
	case <-time.After(Wait):
		return fmt.Errorf("NATS node %s did not start", n.Name)
	}
}

// Kill kills the node's process with SIGKILL and waits for it to exit. Its storage
// stays, for [Node.Start]. Kill does nothing while the node is down.
func (n *Node) Kill() {
	n.mu.Lock()
	cmd, stdin, exited := n.cmd, n.stdin, n.exited
	n.cmd, n.stdin, n.exited = nil, nil, nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	_ = stdin.Close()
}

// WaitHealthy waits until JetStream is healthy on every node given (it has a meta
// leader, and its streams and consumers are current), failing t after [Wait].
func WaitHealthy(t testing.TB, nodes ...*Node) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(Wait)
	for _, n := range nodes {
		for {
			resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", n.spec.HTTPPort))
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("NATS node %s: JetStream not healthy after %v (%v)", n.Name, Wait, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// MetaLeader returns the node that leads the JetStream meta group, as the first running
// node that knows one reports it, waiting for one up to [Wait].
func MetaLeader(t testing.TB, nodes []*Node) *Node {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	var leader *Node
	waitFor(t, "a JetStream meta leader", func() bool {
		for _, n := range nodes {
			if !n.Running() {
				continue
			}
			resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/jsz", n.spec.HTTPPort))
			if err != nil {
				continue
			}
			var info server.JSInfo
			err = json.NewDecoder(resp.Body).Decode(&info)
			resp.Body.Close()
			if err == nil && info.Meta != nil {
				if leader = byName(nodes, info.Meta.Leader); leader != nil && leader.Running() {
					return true
				}
			}
		}
		return false
	})
	return leader
}

// StreamLeader returns the running node that leads stream, as the stream's info says
// through js, waiting for an election up to [Wait].
func StreamLeader(t testing.TB, nodes []*Node, js jetstream.JetStream, stream string) *Node {
	t.Helper()
	var leader *Node
	waitFor(t, "a leader of the stream "+stream, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		st, err := js.Stream(ctx, stream)
		if err != nil {
			return false
		}
		if c := st.CachedInfo().Cluster; c != nil {
			leader = byName(nodes, c.Leader)
		}
		return leader != nil && leader.Running()
	})
	return leader
}

// ConsumerLeader returns the node that holds the consumer of stream, as the consumer's
// info says through js, asked once: nil and an error when it cannot be told now.
func ConsumerLeader(nodes []*Node, js jetstream.JetStream, stream, consumer string) (*Node, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := js.Consumer(ctx, stream, consumer)
	if err != nil {
		return nil, err
	}
	if cl := c.CachedInfo().Cluster; cl != nil {
		if n := byName(nodes, cl.Leader); n != nil {
			return n, nil
		}
	}
	return nil, fmt.Errorf("natstest: the consumer %s has no leader among the nodes", consumer)
}

// LastSeq returns the last sequence of stream in the node's own copy of it, as the
// node's monitoring endpoint reports it: what the node has applied, which a follower
// may not have yet when a write has been committed by the others. False when the node
// holds no copy of stream or does not answer.
func (n *Node) LastSeq(stream string) (uint64, bool) {
	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/jsz?streams=true", n.spec.HTTPPort))
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var info server.JSInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return 0, false
	}
	for _, a := range info.AccountDetails {
		for _, st := range a.Streams {
			if st.Name == stream {
				return st.State.LastSeq, true
			}
		}
	}
	return 0, false
}

func byName(nodes []*Node, name string) *Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logTail logs the last lines of the node's server log and standard error.
func (n *Node) logTail(lines int) {
	for _, name := range []string{"server.log", "stderr.log"} {
		b, err := os.ReadFile(filepath.Join(n.spec.Dir, name))
		if errors.Is(err, os.ErrNotExist) || len(b) == 0 {
			continue
		}
		all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		n.t.Logf("NATS node %s, the end of its %s:\n%s", n.Name, name, strings.Join(all[max(0, len(all)-lines):], "\n"))
	}
}
