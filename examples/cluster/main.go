// Command cluster is the askuser cluster demo: the web demo's page and scripted agent on
// several replicas that share their questions through NATS JetStream. A run started on
// one replica can be answered from a tab on another; a replica killed while its run
// waits resumes the run when it starts again and gets the answer given meanwhile.
//
//	go run ./examples/cluster            # an embedded NATS server and three replicas, then open the URLs it prints
//	go run ./examples/cluster -nodes 3   # the same on an embedded three-node NATS cluster, every record kept by all three
//
// Each replica as a process of its own, against one NATS server with JetStream:
//
//	nats-server -js &
//	go run ./examples/cluster -nats nats://127.0.0.1:4222 -addr 127.0.0.1:8081 -replica r1 &
//	go run ./examples/cluster -nats nats://127.0.0.1:4222 -addr 127.0.0.1:8083 -replica r3 &
//
// or with -nats left out and -data set, a first process starts the embedded server and
// prints its URL for the others. Open http://127.0.0.1:8081/?session=42, send a message,
// then open http://127.0.0.1:8083/?session=42 and answer there; kill the r1 process
// (kill -9) while a question waits, answer on r3, start r1 again: its run resumes with the
// answer.
//
// On three NATS servers, each a process of its own (so that one can be killed), with
// every record kept by all three:
//
//	for i in 1 2 3; do
//	  nats-server -js -n n$i -p 422$((i+1)) -sd /tmp/askuser-n$i --cluster_name askuser \
//	    -cluster nats://127.0.0.1:622$((i+1)) -routes nats://127.0.0.1:6222,nats://127.0.0.1:6223,nats://127.0.0.1:6224 &
//	done
//	go run ./examples/cluster -nats nats://127.0.0.1:4222,nats://127.0.0.1:4223,nats://127.0.0.1:4224 -copies 3
//
// It lets anyone act for any session named in the URL: it is a demo, not a deployment.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/askuser-go/askuser/examples/internal/demo"
	"github.com/askuser-go/askuser/examples/internal/metrics"

	"github.com/nats-io/nats-server/v2/server"
)

// config is what the command line says.
type config struct {
	natsURL  string // empty: start embedded servers
	natsAddr string // the first embedded server's address
	nodes    int    // how many embedded servers, routed together
	data     string
	addr     string // one replica, on this address
	name     string
	addrs    string // without addr: one replica on each
	copies   int    // 0: one per embedded server, up to 3; 1 with natsURL
	timeout  time.Duration
	verbose  bool
	notify   demo.NotifyFlags // shared by the replicas of this process: one secret
}

func main() {
	var c config
	flag.StringVar(&c.natsURL, "nats", "", "NATS server URL(s), comma-separated; empty starts embedded servers with JetStream")
	flag.StringVar(&c.natsAddr, "nats-addr", "127.0.0.1:4222", "address of the (first) embedded NATS server; the others take the next ports (port 0 picks free ports)")
	flag.IntVar(&c.nodes, "nodes", 1, "how many embedded NATS servers to start, routed into one cluster (3 for a cluster that outlives the loss of one)")
	flag.StringVar(&c.data, "data", "", "directory of the embedded servers' JetStream storage (default: a temporary one)")
	flag.StringVar(&c.addr, "addr", "", "run one replica, on this address")
	flag.StringVar(&c.name, "replica", "", "the replica's name, with -addr (default r1)")
	flag.StringVar(&c.addrs, "addrs", "127.0.0.1:8081,127.0.0.1:8082,127.0.0.1:8083", "without -addr: one replica on each of these addresses, named r1, r2, ...")
	flag.IntVar(&c.copies, "copies", 0, "how many NATS servers keep each record (3 on a NATS cluster); default: as many as -nodes, up to 3, or 1 with -nats")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Minute, "how long each question waits for an answer")
	flag.BoolVar(&c.verbose, "v", false, "log connections, requests and decisions to stderr")
	c.notify.Register(flag.CommandLine)
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	var logger *slog.Logger
	if c.verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	natsURL, copies := c.natsURL, c.copies
	if natsURL == "" {
		servers, err := startNATS(c.natsAddr, c.nodes, c.data)
		if err != nil {
			return err
		}
		defer func() {
			for _, ns := range servers {
				ns.Shutdown()
				ns.WaitForShutdown()
			}
		}()
		var us []string
		for _, ns := range servers {
			us = append(us, ns.ClientURL())
		}
		natsURL = strings.Join(us, ",")
		if copies == 0 {
			copies = min(len(servers), 3)
		}
		fmt.Printf("NATS with JetStream on %s\n", natsURL)
	}
	copies = max(copies, 1)
	type named struct{ name, addr string }
	var list []named
	if c.addr != "" {
		name := c.name
		if name == "" {
			name = "r1"
		}
		list = append(list, named{name, c.addr})
	} else {
		for i, a := range strings.Split(c.addrs, ",") {
			list = append(list, named{fmt.Sprintf("r%d", i+1), strings.TrimSpace(a)})
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, len(list))
	var closers []func()
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}()
	for _, n := range list {
		ln, err := net.Listen("tcp", n.addr)
		if err != nil {
			return err
		}
		ro := ReplicaOptions{Copies: copies, Timeout: c.timeout, Logger: logger}
		if ro.Links, ro.Notifier, err = c.notify.Make(ln.Addr().String(), os.Stderr); err != nil {
			ln.Close()
			return err
		}
		ro.NotifyAfter = c.notify.After
		if ro.Observer, ro.Metrics, err = metrics.New(); err != nil {
			ln.Close()
			return err
		}
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		r, err := NewReplica(sctx, natsURL, n.name, ro)
		cancel()
		if err != nil {
			ln.Close()
			return fmt.Errorf("replica %s: %w", n.name, err)
		}
		hs := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
		go func() { served <- hs.Serve(ln) }()
		closers = append(closers, func() {
			// WebSocket connections are hijacked, so Shutdown does not see them: close
			// the replica (its runs, its devices) first, then the HTTP server.
			r.Close()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = hs.Shutdown(sctx)
		})
		fmt.Printf("replica %s listening on http://%s/\n", n.name, ln.Addr())
	}
	select {
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-ctx.Done():
	}
	return nil
}

// startNATS starts n embedded NATS servers with JetStream, the first on addr and the
// others on the next ports, routed into one cluster when n > 1 (their routes on the
// client ports + 2000), and returns once JetStream has a leader.
func startNATS(addr string, n int, dir string) ([]*server.Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var p int
	if _, err := fmt.Sscan(port, &p); err != nil {
		return nil, fmt.Errorf("-nats-addr: %w", err)
	}
	n = max(n, 1)
	if dir == "" {
		if dir, err = os.MkdirTemp("", "askuser-cluster-"); err != nil {
			return nil, err
		}
	}
	if n == 1 {
		if p == 0 {
			p = -1 // a random port, in the server's terms
		}
		ns, err := startServer(&server.Options{ServerName: "askuser-demo", Host: host, Port: p, JetStream: true, StoreDir: dir, NoSigs: true})
		if err != nil {
			return nil, err
		}
		return []*server.Server{ns}, nil
	}
	clientPorts, routePorts := make([]int, n), make([]int, n)
	for i := range n {
		clientPorts[i], routePorts[i] = p+i, p+2000+i
		if p == 0 {
			if clientPorts[i], err = freePort(host); err == nil {
				routePorts[i], err = freePort(host)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	var routes []string
	for _, rp := range routePorts {
		routes = append(routes, "nats://"+net.JoinHostPort(host, fmt.Sprint(rp)))
	}
	var servers []*server.Server
	for i := range n {
		ns, err := startServer(&server.Options{
			ServerName: fmt.Sprintf("askuser-demo-n%d", i+1), Host: host, Port: clientPorts[i],
			JetStream: true, StoreDir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)), NoSigs: true,
			Cluster: server.ClusterOpts{Name: "askuser-demo", Host: host, Port: routePorts[i]},
			Routes:  server.RoutesFromStr(strings.Join(routes, ",")),
		})
		if err != nil {
			for _, s := range servers {
				s.Shutdown()
			}
			return nil, err
		}
		servers = append(servers, ns)
	}
	for deadline := time.Now().Add(30 * time.Second); !slices.ContainsFunc(servers, (*server.Server).JetStreamIsLeader); {
		if time.Now().After(deadline) {
			for _, s := range servers {
				s.Shutdown()
			}
			return nil, errors.New("the embedded NATS servers elected no JetStream leader")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return servers, nil
}

// startServer starts one embedded NATS server and waits until it takes connections.
func startServer(opts *server.Options) (*server.Server, error) {
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, err
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("the embedded NATS server did not start")
	}
	return ns, nil
}

// freePort returns a port free on host now.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
