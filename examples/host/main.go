// Command host is a host of its own tools, wired as an application wires askuser: a
// Policy gates its tools, Dispatcher.RunTools puts the gate (and ask_user_questions) in
// front of its tool dispatcher, the notify package's signed webhook reaches the person
// when no device shows a request, and the answer and action links of the webhook's
// notices are served beside the panel. A scripted agent stands in for the model: it
// lists the files (a rule allows it), asks which branch to delete, calls delete_branch
// (which waits for your approval: approve, deny, or edit the arguments), then
// drop_database (which a rule denies), and prints each tool result.
//
//	go run ./examples/host                   # then open http://127.0.0.1:8090/
//	ASKUSER_SECRET=$(openssl rand -hex 32) go run ./examples/host -public-url https://agent.example.com
//
// Close the page while delete_branch waits: after -notify-after, the webhook is posted
// (to this program's own /hook, which checks its signature and prints its links, unless
// -webhook points elsewhere); open the approve link to decide from any browser.
//
// Everything it uses is in askuser's own module: the core package, wshub (with the
// panel) and notify. tui, cluster and the LLM SDK adapters are modules of their own.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wshub"
)

// session is the one person's session. A real host has one per conversation, and its
// Authenticate says which of them a request may act for.
var session = askuser.StringSession("me")

// branchSchema is delete_branch's arguments. The person's edit must satisfy it: the
// server refuses any other, in words such as "name: must not be empty".
const branchSchema = `{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}`

// policy gates the host's tools: the first rule that matches decides, Deny before Ask
// before Allow, and a call no rule matches is asked about (the zero Default).
var policy = &askuser.Policy{
	Deny:  []askuser.Rule{{Tool: "drop_*"}},
	Ask:   []askuser.Rule{{Tool: "delete_branch"}},
	Allow: []askuser.Rule{{Tool: "list_files"}},
	Tools: []askuser.Tool{
		{Name: "delete_branch", Description: "Deletes a git branch", Schema: json.RawMessage(branchSchema)},
	},
	Reasons: []string{"Not now", "Wrong branch"},
}

// config is what main reads from its flags and environment.
type config struct {
	PublicURL   string        // where people reach this server; the links start with it
	Webhook     string        // where notices are posted; "" for this server's own /hook
	Secret      []byte        // signs the webhook and the links
	NotifyAfter time.Duration // how long a request waits unseen before its notice
	Out         io.Writer     // where the agent, the audit and the hook print
}

// host is the server: the dispatcher, the hub, and the handler that serves them.
type host struct {
	d       *askuser.Dispatcher
	hub     *wshub.Hub
	handler http.Handler
	// tools is the host's tool dispatcher behind the gate: what the agent loop calls
	// for every tool call of the model, ask_user_questions included.
	tools askuser.ToolFunc
}

func newHost(cfg config) (*host, error) {
	if len(cfg.Secret) < 32 {
		// notify.Links makes no link with a shorter secret (the notices would go without
		// them) and takes none (every link would be a 404); say so now instead.
		return nil, fmt.Errorf("the secret has %d bytes; it needs at least 32", len(cfg.Secret))
	}
	// BaseURL is where the link handler is mounted below: a link is BaseURL + "/a/..."
	// or "/x/...", so the two must match. Every replica of a host uses the same secret
	// and BaseURL, so that a link made on one works on all.
	links := &notify.Links{Secrets: [][]byte{cfg.Secret}, BaseURL: cfg.PublicURL + "/askuser/links"}
	webhook := cfg.Webhook
	if webhook == "" {
		webhook = cfg.PublicURL + "/hook"
	}
	hub := wshub.New(&wshub.Options{
		// Your login check goes here: which sessions may this request act for, and who is
		// it (recorded as who decided)? Set Authenticate, or Authorize when you need no
		// name: exactly one of the two.
		Authenticate: func(r *http.Request) (wshub.Access, error) {
			return wshub.Access{User: "you", Sessions: []askuser.SessionID{session}}, nil
		},
		// The same Links as the webhook's: the hub checks the links' tokens.
		Links: links,
	})
	d := askuser.New(hub, &askuser.Options{
		Policy: policy,
		// Links is optional: without it the notices carry no url and no actions, only what
		// is waiting (a chat message that says "open the app", say).
		Notifier:    &notify.Webhook{URL: webhook, Secret: cfg.Secret, Links: links},
		NotifyAfter: cfg.NotifyAfter,
		Observer: observe.Hooks{OnAudit: func(a observe.Audit) {
			fmt.Fprintf(cfg.Out, "audit: %s %s %s by %q%s\n", a.Tool, a.Arguments, a.Outcome, a.By, map[string]string{"link": " via a link"}[a.Via])
		}},
	})
	mux := http.NewServeMux()
	mux.Handle("/ws", hub)
	mux.Handle("/askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	// The links' pages, where links.BaseURL points. More specific than /askuser/, so the
	// mux sends them here; GET shows a page, POST is an action link's confirmed decision.
	mux.Handle("/askuser/links/", http.StripPrefix("/askuser/links", hub.LinkHandler()))
	mux.Handle("POST /hook", hookReceiver(cfg.Secret, cfg.Out))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, page) })
	return &host{d: d, hub: hub, handler: mux, tools: oneAtATime(d, runTool(cfg.Out))}, nil
}

// page is the person's page: the panel, connected to the hub.
const page = `<!doctype html><meta charset="utf-8"><title>host</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/askuser/panel.css"><script src="/askuser/panel.js"></script>
<div id="questions"></div>
<script>AskUser.connect({url: "/ws", container: document.getElementById("questions")});</script>`

// runTool is the host's own tool dispatcher. RunTools calls it only for a call that may run,
// and with the arguments it may run with: when the person edited them, call.Arguments
// are the person's, not the model's.
func runTool(out io.Writer) askuser.ToolFunc {
	return func(ctx context.Context, call askuser.ToolCall) (string, error) {
		switch call.Name {
		case "list_files":
			return `{"files":["README.md","main.go"]}`, nil
		case "delete_branch":
			var args struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(call.Arguments, &args); err != nil {
				return "", err
			}
			fmt.Fprintf(out, "tool: deleting branch %s\n", args.Name)
			b, _ := json.Marshal(map[string]string{"deleted": args.Name})
			return string(b), nil
		}
		return "", fmt.Errorf("no tool named %s", call.Name)
	}
}

// hookReceiver is the other end of the webhook, as a chat bridge or push relay would
// have it: it checks the signature over the exact body before reading it, then passes
// the notice on (here, it prints it).
func hookReceiver(secret []byte, out io.Writer) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			http.Error(w, "unreadable", http.StatusBadRequest)
			return
		}
		if err := notify.Verify(secret, r.Header.Get(notify.SignatureHeader), body, time.Now(), 5*time.Minute); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var n notify.Body
		if err := json.Unmarshal(body, &n); err != nil {
			http.Error(w, "not a notice", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "notice: %s is waiting for you: %s\n", n.Title, n.URL)
		for _, a := range n.Actions {
			fmt.Fprintf(out, "notice: to %s: %s\n", a.Decision, a.URL)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// agent stands in for the model and its loop: it makes the model's tool calls one by
// one through tools, and prints each result.
func agent(ctx context.Context, tools askuser.ToolFunc, out io.Writer) error {
	call := func(id, name, arguments string) (string, error) {
		// Name routes the call: RunTools sends ToolName ("ask_user_questions") to the
		// dispatcher and every other name through the policy's gate to runTool. A call
		// without a name is refused as invalid ("the tool call has no tool name").
		res, err := tools(ctx, askuser.ToolCall{Session: session, ID: id, Name: name, Arguments: json.RawMessage(arguments)})
		// res is the tool result for the model either way; err marks it as an error result
		// (is_error) when the call did not run or its tool failed.
		fmt.Fprintf(out, "agent: %s → %s (error: %v)\n", name, res, err != nil)
		return res, ctx.Err()
	}
	if _, err := call("call_1", "list_files", `{}`); err != nil {
		return err
	}
	res, err := call("call_2", askuser.ToolName, `{"questions":[{"question":"Which branch should I delete?","header":"Branch",
		"options":[{"label":"feature/old-login","description":"merged a month ago"},{"label":"feature/spike","description":"never merged"}],
		"multiSelect":false}]}`)
	if err != nil {
		return err
	}
	var answered struct {
		Answers []struct {
			SelectedLabels []string `json:"selectedLabels"`
			CustomInput    *string  `json:"customInput"`
		} `json:"answers"`
	}
	branch := "feature/old-login"
	if json.Unmarshal([]byte(res), &answered) == nil && len(answered.Answers) == 1 {
		if a := answered.Answers[0]; a.CustomInput != nil {
			branch = *a.CustomInput
		} else if len(a.SelectedLabels) == 1 {
			branch = a.SelectedLabels[0]
		}
	}
	b, _ := json.Marshal(map[string]string{"name": branch})
	if _, err := call("call_3", "delete_branch", string(b)); err != nil {
		return err
	}
	_, err = call("call_4", "drop_database", `{"name":"production"}`)
	return err
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "address to listen on")
	publicURL := flag.String("public-url", "", "where people reach this server, the links' start (default: http://ADDR)")
	webhook := flag.String("webhook", "", "where to post notices (default: this server's own /hook)")
	notifyAfter := flag.Duration("notify-after", 10*time.Second, "how long a request waits unseen before its notice")
	flag.Parse()
	if err := run(*addr, *publicURL, *webhook, *notifyAfter); err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(1)
	}
}

func run(addr, publicURL, webhook string, notifyAfter time.Duration) error {
	// The secret signs the webhook and the links; share it with the webhook's receiver
	// and every replica. A random one works for one process: its links die with it.
	secret := []byte(os.Getenv("ASKUSER_SECRET"))
	if len(secret) == 0 {
		secret = []byte(rand.Text() + rand.Text()) // 52 characters of 5 bits each
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if publicURL == "" {
		publicURL = "http://" + ln.Addr().String()
	}
	h, err := newHost(config{PublicURL: strings.TrimSuffix(publicURL, "/"), Webhook: webhook, Secret: secret, NotifyAfter: notifyAfter, Out: os.Stdout})
	if err != nil {
		return err
	}
	// Deferred calls run last first: the dispatcher closes first, ending what is pending
	// as Shutdown and telling every device through the hub, which is still open; then
	// the hub closes its connections. The HTTP server goes after both: Shutdown does not
	// wait for WebSocket connections (they are hijacked), so it must not come first.
	srv := &http.Server{Handler: h.handler, ReadHeaderTimeout: 10 * time.Second}
	defer srv.Shutdown(context.Background())
	defer h.hub.Close()
	defer h.d.Close()
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "host:", err)
		}
	}()
	fmt.Printf("open http://%s/ to answer and decide\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := agent(ctx, h.tools, os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	fmt.Println("the agent is done; Ctrl+C ends the server")
	<-ctx.Done()
	return nil
}

// oneAtATime is the host's tool dispatcher behind the gate, for an agent loop that runs
// one call at a time: the call runs as [askuser.Dispatcher.RunTools] runs each call of a
// turn, and its tool result and error come back.
func oneAtATime(d *askuser.Dispatcher, run askuser.ToolFunc) askuser.ToolFunc {
	return func(ctx context.Context, call askuser.ToolCall) (string, error) {
		o := d.RunTools(ctx, []askuser.ToolCall{call}, run)[0]
		return o.Content, o.Err
	}
}
