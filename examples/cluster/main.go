// Command cluster is the askuser cluster demo: the web demo's page and scripted agent on
// several replicas that share their questions through NATS JetStream. A run started on
// one replica can be answered from a tab on another; a replica killed while its run
// waits resumes the run when it starts again and gets the answer given meanwhile.
//
//	go run ./examples/cluster     # an embedded NATS server and three replicas, then open the URLs it prints
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
	"strings"
	"syscall"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/nats-io/nats-server/v2/server"
)

func main() {
	natsURL := flag.String("nats", "", "NATS server URL(s), comma-separated; empty starts an embedded server with JetStream")
	natsAddr := flag.String("nats-addr", "127.0.0.1:4222", "address of the embedded NATS server (port 0 picks a free port)")
	data := flag.String("data", "", "directory of the embedded server's JetStream storage (default: a temporary one)")
	addr := flag.String("addr", "", "run one replica, on this address")
	name := flag.String("replica", "", "the replica's name, with -addr (default r1)")
	addrs := flag.String("addrs", "127.0.0.1:8081,127.0.0.1:8082,127.0.0.1:8083", "without -addr: one replica on each of these addresses, named r1, r2, ...")
	copies := flag.Int("copies", 1, "how many NATS servers keep each record (3 on a NATS cluster)")
	timeout := flag.Duration("timeout", askuser.DefaultTimeout, "how long each question waits for an answer")
	verbose := flag.Bool("v", false, "log connections")
	flag.Parse()
	if err := run(*natsURL, *natsAddr, *data, *addr, *name, *addrs, *copies, *timeout, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(natsURL, natsAddr, data, addr, name, addrs string, copies int, timeout time.Duration, verbose bool) error {
	var logger *slog.Logger
	if verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if natsURL == "" {
		ns, err := startNATS(natsAddr, data)
		if err != nil {
			return err
		}
		defer func() {
			ns.Shutdown()
			ns.WaitForShutdown()
		}()
		natsURL = ns.ClientURL()
		fmt.Printf("NATS with JetStream on %s\n", natsURL)
	}
	type named struct{ name, addr string }
	var list []named
	if addr != "" {
		if name == "" {
			name = "r1"
		}
		list = append(list, named{name, addr})
	} else {
		for i, a := range strings.Split(addrs, ",") {
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
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		r, err := NewReplica(sctx, natsURL, n.name, ReplicaOptions{Copies: copies, Timeout: timeout, Logger: logger})
		cancel()
		if err != nil {
			return fmt.Errorf("replica %s: %w", n.name, err)
		}
		ln, err := net.Listen("tcp", n.addr)
		if err != nil {
			r.Close()
			return err
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

// startNATS starts an embedded NATS server with JetStream.
func startNATS(addr, dir string) (*server.Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var p int
	if _, err := fmt.Sscan(port, &p); err != nil {
		return nil, fmt.Errorf("-nats-addr: %w", err)
	}
	if p == 0 {
		p = -1 // a random port, in the server's terms
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "askuser-cluster-"); err != nil {
			return nil, err
		}
	}
	ns, err := server.NewServer(&server.Options{ServerName: "askuser-demo", Host: host, Port: p, JetStream: true, StoreDir: dir, NoSigs: true})
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
