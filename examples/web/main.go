// Command web is the askuser demo: a chat page where a scripted agent asks its questions
// through a real askuser.Dispatcher, and calls host tools that its askuser.Policy gates
// (delete_branch waits for the person's approval); a WebSocket hub (wshub) carries both
// to every open tab of the session, and the browser panel (wshub/panel) shows them.
//
//	go run ./examples/web                 # then open http://127.0.0.1:8080/
//	go run ./examples/web -addr 127.0.0.1:0 -timeout 1m
//	go run ./examples/web -notify-webhook http://127.0.0.1:9999/hook -notify-after 5s
//
// Each page is one person's: the developer's at /, and /?as=alice, /?as=bob (the DBAs)
// and /?as=lead, each with a session of its own. The developer's /drop calls
// drop_database, which two DBAs must approve: it comes to their pages, and, once it has
// waited -escalate-after (30 s), to the lead's too (docs/APPROVALS.md).
//
// With -notify-webhook, a request that waits unseen for -notify-after is posted there,
// signed, with its answer link (and an approval's action links), each logged to stderr
// (docs/NOTIFY.md). It serves no metrics, so that it is built from askuser alone
// and starts in seconds from a fresh clone; examples/cluster serves the same demo with its
// metrics at /metrics (docs/OBSERVABILITY.md).
//
// It prints "listening on http://HOST:PORT/" once it accepts connections. The page
// explains its commands (/help). It lets anyone act for any session named in the URL:
// it is a demo, not a deployment.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/askuser-go/askuser/examples/internal/demo"
)

// The page: index.html here, the script and styles shared with the other demos.
//
//go:embed index.html
var page embed.FS

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on (port 0 picks a free port)")
	timeout := flag.Duration("timeout", 5*time.Minute, "how long each question or approval waits for the person")
	csp := flag.Bool("csp", true, "serve the page with a strict Content-Security-Policy")
	verbose := flag.Bool("v", false, "log connections, requests and decisions to stderr")
	escalateAfter := flag.Duration("escalate-after", 30*time.Second, "how long a drop_database waits for the DBAs before it reaches the lead too")
	var nf demo.NotifyFlags
	nf.Register(flag.CommandLine)
	flag.Parse()
	if err := run(*addr, *timeout, *escalateAfter, *csp, *verbose, &nf); err != nil {
		fmt.Fprintln(os.Stderr, "web:", err)
		os.Exit(1)
	}
}

func run(addr string, timeout, escalateAfter time.Duration, csp, verbose bool, nf *demo.NotifyFlags) error {
	var logger *slog.Logger
	if verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	opts := &demo.Options{Page: demo.PageWith(page), Timeout: timeout, EscalateAfter: escalateAfter, NoCSP: !csp, Logger: logger}
	if err := nf.Apply(opts, ln.Addr().String(), os.Stderr); err != nil {
		return err
	}
	srv, err := demo.New(opts)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Printf("listening on http://%s/\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case err := <-served:
		_ = srv.Close()
		return err
	case <-ctx.Done():
	}
	// WebSocket connections are hijacked, so Shutdown does not see them: close the demo
	// (its runs, questions and connections) first, then the HTTP server.
	_ = srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
