// Command terminal is a scripted agent (no model needed) whose questions the person
// answers in this terminal or in a browser, whichever comes first: the terminal is one
// device of the session and each browser tab another. Its last step calls a tool of the
// host's, delete_branch, that waits for the person's approval.
//
//	cd examples/terminal && go run .
//	go run ./examples/terminal -accessible     # plain prompts for screen readers
//
// It serves the askuser WebSocket hub, the browser panel and a small page on a local
// port and prints the page's address; the terminal device connects to that same hub
// over a real WebSocket. Every connection acts for session 1: it is an example, not a
// deployment. After each call it prints the tool result, and after the last it exits.
package main

import (
	"context"
	"embed"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/tui"
	"github.com/askuser-go/askuser/wshub"
)

//go:embed page
var page embed.FS

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to serve the browser panel on (port 0 picks a free one)")
	timeout := flag.Duration("timeout", 5*time.Minute, "how long each question or approval waits for the person")
	accessible := flag.Bool("accessible", os.Getenv("ACCESSIBLE") != "", "plain line prompts for screen readers (also set by ACCESSIBLE=1)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *timeout, *accessible); err != nil {
		fmt.Fprintln(os.Stderr, "terminal:", err)
		os.Exit(1)
	}
}

// session is the one session of this example.
var session = askuser.IntSession(1)

func run(ctx context.Context, addr string, timeout time.Duration, accessible bool) error {
	// The host: a dispatcher whose transport is the WebSocket hub.
	hub := wshub.New(&wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) {
		return []askuser.SessionID{session}, nil // anyone: an example, not a deployment
	}})
	d := askuser.New(hub, &askuser.Options{Timeout: timeout, Policy: policy})
	files, _ := fs.Sub(page, "page")
	mux := http.NewServeMux()
	mux.Handle("GET /ws", hub)
	mux.Handle("GET /askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	mux.Handle("GET /", http.FileServerFS(files))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		d.Close()       // ends any question still waiting, telling every device
		_ = hub.Close() // then the connections
		_ = srv.Close()
	}()
	fmt.Printf("Browser panel: http://%s/ (answer there or here; the first answer wins)\n", ln.Addr())

	// The terminal device, on the same hub as any browser. Its context is not the
	// signal's: on Ctrl-C or SIGTERM the agent's call ends first, and the terminal
	// closes its form with a note, as every other device does, before it stops.
	devCtx, stopDevice := context.WithCancel(context.Background())
	conn, err := tui.Dial(devCtx, "ws://"+ln.Addr().String()+"/ws", nil)
	if err != nil {
		stopDevice()
		return err
	}
	done := make(chan string, 16) // request ids the terminal is done with
	deviceDone := make(chan struct{})
	go func() {
		defer close(deviceDone)
		err := tui.Run(devCtx, conn, &tui.Options{Accessible: accessible, OnEnd: func(id string) {
			select {
			case done <- id:
			default:
			}
		}})
		if devCtx.Err() == nil {
			// No terminal to draw on, or its input ended: the browser can still answer.
			fmt.Fprintf(os.Stderr, "the terminal device stopped (%v); answer in the browser\n", err)
		}
	}()
	defer func() {
		stopDevice()
		<-deviceDone
		_ = conn.Close()
	}()
	// settled waits until the terminal has printed how call id ended, so that the
	// agent's next line follows that note; not longer than a moment, should the
	// terminal device be gone.
	settled := func(id string) {
		timeout := time.After(2 * time.Second)
		for {
			select {
			case got := <-done:
				if got == id {
					return
				}
			case <-deviceDone:
				return
			case <-timeout:
				return
			}
		}
	}

	// The agent: each call blocks until a device answers, declines or decides, or time
	// runs out.
	for i, step := range script {
		fmt.Printf("\nagent: %s\n", step.say)
		id := fmt.Sprintf("call_%d", i+1)
		call := askuser.ToolCall{Session: session, ID: id, Name: askuser.ToolName, Arguments: json.RawMessage(step.arguments)}
		var outcome askuser.Outcome
		var content string
		if step.tool == "" {
			res := d.Dispatch(ctx, call)
			outcome, content = res.Outcome, res.Content
		} else {
			// The host's own tool: it runs only once the person approves, with the
			// arguments as approved (the model's, or the person's edit).
			call.Name = step.tool
			r := d.Approve(ctx, call, nil)
			out := ""
			if r.Allowed() {
				out = deleteBranch(r.Arguments)
			}
			outcome, content = r.Outcome, r.Content(out)
		}
		settled(id)
		if ctx.Err() != nil {
			fmt.Println("\nagent: stopped; the request was cancelled.")
			return nil
		}
		fmt.Printf("tool result (%s): %s\n", outcome, content)
	}
	fmt.Println("\nagent: that is all; thank you.")
	return nil
}
