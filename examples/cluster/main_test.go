package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/askuser-go/askuser/cluster/natstest"
	"github.com/askuser-go/askuser/examples/internal/browsertest"
	"github.com/askuser-go/askuser/examples/internal/demo"
	"github.com/askuser-go/askuser/wire"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
	"github.com/nats-io/nats-server/v2/server"
)

// failsafe bounds every wait, so that a bug fails a test instead of hanging it.
const failsafe = 30 * time.Second

// envReplica makes the test binary run one replica, as the command does with -addr:
// the durable-run test kills it with SIGKILL and starts it again.
const envReplica = "ASKUSER_CLUSTER_DEMO_REPLICA" // "name addr natsURL"

func TestMain(m *testing.M) {
	natstest.RunIfNode() // a NATS node of nodes_test.go
	if spec := os.Getenv(envReplica); spec != "" {
		f := strings.Fields(spec)
		if err := run(config{natsURL: f[2], addr: f[1], name: f[0], copies: 1, timeout: time.Minute}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func startTestNATS(t *testing.T) *server.Server {
	t.Helper()
	servers, err := startNATS("127.0.0.1:0", 1, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ns := servers[0]
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return ns
}

// startReplica runs a replica in this process, served by httptest.
func startReplica(t *testing.T, natsURL, name string) *httptest.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	r, err := NewReplica(ctx, natsURL, name, ReplicaOptions{Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(func() {
		r.Close()
		srv.Close()
	})
	return srv
}

// A run started from a tab on replica 1 is answered from a tab on replica 3, in headless
// Chromium; each page says which replica it is on. Chromium is required: without it the
// test fails.
func TestBrowserAnswersOnAnotherReplica(t *testing.T) {
	browser := browsertest.Browser(t)
	ns := startTestNATS(t)
	r1 := startReplica(t, ns.ClientURL(), "r1")
	startReplica(t, ns.ClientURL(), "r2")
	r3 := startReplica(t, ns.ClientURL(), "r3")

	session := fmt.Sprint(time.Now().UnixNano() % 1_000_000_000)

	tabA, cancelA := chromedp.NewContext(browser)
	defer cancelA()
	tabB, cancelB := chromedp.NewContext(browser)
	defer cancelB()
	// A tab is opened by its first action, and closed when that action's context ends:
	// open each with its own context, before any action with a timeout.
	for _, tab := range []context.Context{tabA, tabB} {
		if err := chromedp.Do(tab); err != nil {
			t.Fatal(err)
		}
	}
	do := func(tab context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, failsafe)
		defer cancel()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	do(tabA, "opening a tab on replica 1", chromedp.Navigate(r1.URL+"/?session="+session), chromedp.WaitVisible(css(`#conn[data-state="open"]`)))
	if got := get(t, tabA, chromedp.Evaluate[string](`document.getElementById("replica").textContent`)); got != "Replica r1" {
		t.Fatalf("the page on replica 1 says %q", got)
	}
	// The page's own title and notice, not the plain demo's.
	if got := get(t, tabA, chromedp.Evaluate[string](`document.querySelector("h1").textContent + " | " + document.title`)); got != "askuser cluster demo | askuser cluster demo" {
		t.Errorf("the header and the title are %q", got)
	}
	if got := get(t, tabA, chromedp.Evaluate[string](`document.querySelector(".notice").textContent`)); !strings.HasSuffix(got, "Open it on another replica's port to answer from another replica.") {
		t.Errorf("the notice is %q", got)
	}
	do(tabA, "starting a run", chromedp.SetValue(css("#message"), "/single"), chromedp.Click(css("#send")), chromedp.WaitVisible(css(`[data-testid="panel"]`)))
	requestID := get(t, tabA, chromedp.AttributeValue(css(`[data-testid="panel"]`), "data-request-id")).Value
	panel := `[data-testid="panel"][data-request-id="` + requestID + `"]`
	do(tabB, "opening a tab on replica 3", chromedp.Navigate(r3.URL+"/?session="+session), chromedp.WaitVisible(css(panel)))
	if got := get(t, tabB, chromedp.Evaluate[string](`document.getElementById("replica").textContent`)); got != "Replica r3" {
		t.Fatalf("the page on replica 3 says %q", got)
	}
	do(tabB, "answering on replica 3",
		chromedp.Click(css(panel+` [data-testid="question"][data-index="0"] [data-testid="option"][data-index="1"]`)),
		chromedp.Click(css(panel+` [data-testid="submit"]`)))
	card := `[data-tool-call-id="` + requestID + `"][data-outcome="answered"]`
	do(tabA, "the run on replica 1 getting the answer", chromedp.WaitVisible(css(card)))
	content := get(t, tabA, chromedp.Evaluate[string](`document.querySelector('`+card+` pre.json:last-of-type').textContent`))
	if !strings.Contains(content, `"selectedLabels":["React"]`) {
		t.Fatalf("the tool result on replica 1 is %s", content)
	}
	do(tabB, "the other tab showing the run's result", chromedp.WaitVisible(css(card)))
}

// get runs one action in tab and returns its value.
func get[T any](t *testing.T, tab context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, failsafe)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// device is a WebSocket client of the demo, reading its events.
type device struct {
	t      *testing.T
	ws     *websocket.Conn
	events chan wire.Event
}

func dial(t *testing.T, url, session string) *device {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1)+"/ws?session="+session, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(1 << 20)
	d := &device{t: t, ws: ws, events: make(chan wire.Event, 1000)}
	go func() {
		defer close(d.events)
		for {
			_, msg, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			if ev, err := wire.ParseEvent(msg); err == nil {
				d.events <- ev
			}
		}
	}()
	t.Cleanup(func() { _ = ws.CloseNow() })
	return d
}

// next returns the next event for which ok holds.
func (d *device) next(what string, ok func(wire.Event) bool) wire.Event {
	d.t.Helper()
	timeout := time.After(failsafe)
	for {
		select {
		case ev, open := <-d.events:
			if !open {
				d.t.Fatalf("the connection ended while waiting for %s", what)
			}
			if ok(ev) {
				return ev
			}
		case <-timeout:
			d.t.Fatalf("no %s", what)
		}
	}
}

func (d *device) send(v any) {
	d.t.Helper()
	b, _ := json.Marshal(v)
	if err := d.ws.Write(context.Background(), websocket.MessageText, b); err != nil {
		d.t.Fatal(err)
	}
}

func field(ev wire.Event, name string) string {
	var m map[string]any
	_ = json.Unmarshal(ev.Data, &m)
	if v, ok := m[name].(string); ok {
		return v
	}
	return ""
}

// The durable pattern: replica 1, a process of its own, is killed with SIGKILL while
// its run waits for an answer; the question is answered on replica 3; replica 1, started
// again, resumes its run with the same tool-call id and gets that answer at once.
func TestKilledReplicaResumesItsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a replica process")
	}
	ns := startTestNATS(t)
	r3 := startReplica(t, ns.ClientURL(), "r3")
	addr := freeAddr(t)
	startProcess := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envReplica+"=r1 "+addr+" "+ns.ClientURL())
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on") {
				break
			}
		}
		go func() {
			for sc.Scan() {
			}
		}()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		return cmd
	}
	r1 := startProcess()
	session := "durable-" + fmt.Sprint(time.Now().UnixNano())
	a := dial(t, "http://"+addr, session)
	a.send(map[string]any{"type": demo.EventUserMessage, "data": map[string]any{"text": "/single"}})
	ask := a.next("the question", func(ev wire.Event) bool { return ev.Type == wire.EventAsk })
	id := ask.RequestID()

	if err := r1.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = r1.Wait()
	b := dial(t, r3.URL, session)
	b.next("the question on replica 3", func(ev wire.Event) bool { return ev.Type == wire.EventAsk && ev.RequestID() == id })
	b.send(map[string]any{"type": wire.EventResult, "data": map[string]any{"requestId": id, "answers": []any{
		map[string]any{"question": "Which framework should we use for the new module?", "selectedLabels": []string{"Svelte"}, "customInput": nil},
	}}})
	b.next("the question's end", func(ev wire.Event) bool { return ev.Type == wire.EventResolved && ev.RequestID() == id })

	startProcess()
	b.next("the resumed run's message", func(ev wire.Event) bool {
		return ev.Type == demo.EventAgentMessage && strings.Contains(field(ev, "text"), "Resumed on replica r1")
	})
	res := b.next("the tool result", func(ev wire.Event) bool { return ev.Type == demo.EventToolResult })
	if field(res, "requestId") != id || !strings.Contains(field(res, "content"), `"selectedLabels":["Svelte"]`) {
		t.Fatalf("the resumed run's result: %s", res.Data)
	}
	b.next("the run's end", func(ev wire.Event) bool {
		return ev.Type == demo.EventStatus && strings.Contains(string(ev.Data), `"state":"idle"`)
	})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(nil)
	addr := srv.Listener.Addr().String()
	srv.Close()
	return addr
}

// The demo's host tools across replicas: list_files runs without asking; delete_branch,
// called by a run on replica 1, waits for approval on every replica's devices and is
// edited from replica 2, and the tool runs with the person's arguments; drop_database
// never runs and nobody is asked.
func TestHostToolsAcrossReplicas(t *testing.T) {
	ns := startTestNATS(t)
	r1 := startReplica(t, ns.ClientURL(), "r1")
	r2 := startReplica(t, ns.ClientURL(), "r2")
	session := "tools-" + fmt.Sprint(time.Now().UnixNano())
	a := dial(t, r1.URL, session)
	b := dial(t, r2.URL, session)
	idle := func(ev wire.Event) bool {
		return ev.Type == demo.EventStatus && strings.Contains(string(ev.Data), `"state":"idle"`)
	}
	result := func(d *device) wire.Event {
		return d.next("the tool result", func(ev wire.Event) bool { return ev.Type == demo.EventToolResult })
	}

	a.send(map[string]any{"type": demo.EventUserMessage, "data": map[string]any{"text": "/tool list_files {}"}})
	if res := result(a); field(res, "outcome") != "approved" || !strings.Contains(field(res, "content"), `"branches"`) {
		t.Fatalf("list_files: %s", res.Data)
	}
	a.next("the run's end", idle)

	a.send(map[string]any{"type": demo.EventUserMessage, "data": map[string]any{"text": `/tool delete_branch {"name":"old"}`}})
	card := b.next("the approval on replica 2", func(ev wire.Event) bool { return ev.Type == wire.EventApproval })
	a.next("the approval on replica 1", func(ev wire.Event) bool { return ev.Type == wire.EventApproval })
	b.send(map[string]any{"type": wire.EventApprovalResult, "data": map[string]any{
		"requestId": card.RequestID(), "decision": wire.DecisionEdit, "arguments": map[string]string{"name": "older"},
	}})
	res := result(a)
	if field(res, "requestId") != card.RequestID() || field(res, "outcome") != "edited" || !strings.Contains(field(res, "content"), `{"deleted":"older"}`) {
		t.Fatalf("delete_branch: %s", res.Data)
	}
	a.next("the run's end", idle)

	a.send(map[string]any{"type": demo.EventUserMessage, "data": map[string]any{"text": `/tool drop_database {"name":"prod"}`}})
	res = a.next("drop_database's result, or a card", func(ev wire.Event) bool {
		return ev.Type == demo.EventToolResult || ev.Type == wire.EventApproval
	})
	if res.Type != demo.EventToolResult || field(res, "outcome") != "denied" {
		t.Fatalf("drop_database: %s %s", res.Type, res.Data)
	}
}
