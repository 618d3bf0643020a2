package askmcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askmcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const frameworkArgs = `{"questions":[{"question":"Which framework should we use?","header":"Framework",
	"options":[{"label":"Vue 3 (Recommended)","description":"Matches the existing stack"},
	           {"label":"React","description":"Larger ecosystem"}],"multiSelect":false}]}`

const twoArgs = `{"questions":[
	{"question":"Which framework should we use?","header":"Framework","options":[
		{"label":"Vue 3","description":"Matches the stack"},{"label":"React","description":"Ecosystem"}],"multiSelect":false},
	{"question":"Which checks should run?","header":"Checks","options":[
		{"label":"Lint","description":"Style"},{"label":"Tests","description":"Behaviour"},{"label":"Bench","description":"Speed"}],"multiSelect":true}]}`

// mcpSession is the default session of a call over a transport without session ids.
var mcpSession = askuser.StringSession("mcp")

// server is an MCP server serving ask_user_questions through a dispatcher whose
// devices the test plays.
type server struct {
	d       *askuser.Dispatcher
	devices *devices
	mcp     *mcp.Server
}

func newServer(t *testing.T, opts *askmcp.ToolOptions) *server {
	t.Helper()
	s := &server{devices: newDevices(), mcp: mcp.NewServer(impl, nil)}
	s.d = askuser.New(s.devices, nil)
	t.Cleanup(func() { s.d.Close() })
	askmcp.AddTool(s.mcp, s.d, opts)
	return s
}

// client connects a go-sdk client with the given options to s over in-memory
// transports.
func (s *server) client(t *testing.T, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.mcp.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(impl, opts).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs
}

func callParams(args string, callID string) *mcp.CallToolParams {
	p := &mcp.CallToolParams{Name: askuser.ToolName, Arguments: json.RawMessage(args)}
	if callID != "" {
		p.Meta = mcp.Meta{askmcp.MetaToolCallID: callID}
	}
	return p
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content %+v", res.Content)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// formAnswer is a client's elicitation handler that answers the form with content.
func formAnswer(content map[string]any) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: askmcp.ActionAccept, Content: content}, nil
	}
}

// TestToolClientAnswers: on 2025-11-25 the calling client is asked by elicitation
// inside the call, beside the devices; its answer is the tool result, the devices see
// the question end as answered, and the call's tool-call id is the request id.
func TestToolClientAnswers(t *testing.T) {
	s := newServer(t, nil)
	var form *mcp.ElicitParams
	cs := s.client(t, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		form = req.Params
		return &mcp.ElicitResult{Action: askmcp.ActionAccept, Content: map[string]any{
			"q1": "React", "q2": []any{"Lint", "Tests"}, "q2_other": "Fuzz",
		}}, nil
	}}, "2025-11-25")
	res, err := cs.CallTool(t.Context(), callParams(twoArgs, "call_42"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"answers":[{"question":"Which framework should we use?","selectedLabels":["React"],"customInput":null},` +
		`{"question":"Which checks should run?","selectedLabels":["Lint","Tests"],"customInput":"Fuzz"}]}`
	if res.IsError || text(t, res) != want {
		t.Fatalf("result %v %q", res.IsError, text(t, res))
	}
	var wantStructured any
	_ = json.Unmarshal([]byte(want), &wantStructured)
	if !reflect.DeepEqual(res.StructuredContent, wantStructured) {
		t.Fatalf("structured content %v", res.StructuredContent)
	}
	a, n := s.devices.ask(t, 0)
	if a.RequestID != "call_42" {
		t.Fatalf("request id %q, want the tool-call id", a.RequestID)
	}
	if r, _ := s.devices.resolved(t, n); r.Outcome != askuser.Answered {
		t.Fatalf("resolved %+v", r)
	}
	// The form: one property per question and one for its "Other".
	props := form.RequestedSchema.(map[string]any)["properties"].(map[string]any)
	if len(props) != 4 || props["q1"].(map[string]any)["oneOf"] == nil || props["q2"].(map[string]any)["type"] != "array" {
		t.Fatalf("form %+v", props)
	}
}

// TestToolClientAnswersFreeText: a question without options nor header (as Unity's
// AskUser writes them) is one free-text property of the form, titled by the question;
// its text is the answer.
func TestToolClientAnswersFreeText(t *testing.T) {
	s := newServer(t, nil)
	var form *mcp.ElicitParams
	cs := s.client(t, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		form = req.Params
		return &mcp.ElicitResult{Action: askmcp.ActionAccept, Content: map[string]any{"q1_other": "Pixel art"}}, nil
	}}, "2025-11-25")
	res, err := cs.CallTool(t.Context(), callParams(`{"questions":[{"question":"What art style?","type":"text","placeholder":"Flat icons"}]}`, "call_43"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"answers":[{"question":"What art style?","selectedLabels":[],"customInput":"Pixel art"}]}`; res.IsError || text(t, res) != want {
		t.Fatalf("result %v %q", res.IsError, text(t, res))
	}
	props := form.RequestedSchema.(map[string]any)["properties"].(map[string]any)
	p, _ := props["q1_other"].(map[string]any)
	if len(props) != 1 || p["type"] != "string" || p["title"] != "What art style?" || p["description"] != "What art style? (for example: Flat icons)" {
		t.Fatalf("form %+v", props)
	}
}

// TestToolDeviceAnswersFirst: a device answers while the client's elicitation is open;
// the elicitation is cancelled (its handler's context ends) and the device's answer is
// the tool result.
func TestToolDeviceAnswersFirst(t *testing.T) {
	s := newServer(t, nil)
	started, cancelled := make(chan struct{}), make(chan struct{})
	cs := s.client(t, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	}}, "2025-11-25")
	go func() {
		a, _ := s.devices.ask(t, 0)
		<-started // the person answers on a device while the client's form is open
		_ = answer(t, s.d, mcpSession, a.RequestID, pick(a.Questions[0].Question, "React"))
	}()
	res, err := cs.CallTool(t.Context(), callParams(frameworkArgs, ""))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(text(t, res), `"selectedLabels":["React"]`) {
		t.Fatalf("result %q", text(t, res))
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the client's elicitation was not cancelled")
	}
}

// TestToolClientEndings: the client's decline declines; its cancel cancels the call,
// and the devices see the question end that way.
func TestToolClientEndings(t *testing.T) {
	for _, c := range []struct {
		action  string
		content string
		outcome askuser.Outcome
	}{
		{askmcp.ActionDecline, `{"error": "User declined to answer"}`, askuser.Declined},
		{askmcp.ActionCancel, `{"error": "Session cancelled"}`, askuser.Cancelled},
	} {
		t.Run(c.action, func(t *testing.T) {
			s := newServer(t, nil)
			cs := s.client(t, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: c.action}, nil
			}}, "2025-11-25")
			res, err := cs.CallTool(t.Context(), callParams(frameworkArgs, "id-1"))
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || text(t, res) != c.content {
				t.Fatalf("result %v %q", res.IsError, text(t, res))
			}
			if r, _ := s.devices.resolved(t, 0); r.Outcome != c.outcome || r.RequestID != "id-1" {
				t.Fatalf("resolved %+v", r)
			}
		})
	}
}

// TestToolClientAnswerRefused: a form answer askuser refuses (a single-select question
// with both a choice and text) is asked again with the problem in the message; the
// question stays open meanwhile.
func TestToolClientAnswerRefused(t *testing.T) {
	s := newServer(t, nil)
	var rounds atomic.Int32
	var second string
	cs := s.client(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if rounds.Add(1) == 1 {
			return &mcp.ElicitResult{Action: askmcp.ActionAccept, Content: map[string]any{"q1": "React", "q1_other": "Svelte"}}, nil
		}
		second = req.Params.Message
		return &mcp.ElicitResult{Action: askmcp.ActionAccept, Content: map[string]any{"q1_other": "Svelte"}}, nil
	}}, "2025-11-25")
	res, err := cs.CallTool(t.Context(), callParams(frameworkArgs, ""))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(text(t, res), `"selectedLabels":[],"customInput":"Svelte"`) {
		t.Fatalf("result %q", text(t, res))
	}
	if !strings.HasPrefix(second, "Please fix your answer: answers[0]") {
		t.Fatalf("second form's message %q", second)
	}
}

// TestToolInvalidArguments: the model's invalid arguments get askuser's error result at
// once, listing the problems; nobody is asked.
func TestToolInvalidArguments(t *testing.T) {
	s := newServer(t, nil)
	cs := s.client(t, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		t.Error("the client was asked")
		return nil, errors.New("no")
	}}, "2025-11-25")
	res, err := cs.CallTool(t.Context(), callParams(`{"questions":[{"question":"Pick?","header":"A header far too long","options":[{"label":"Other"}],"multiSelect":false}]}`, ""))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(t, res), `"problems": ["questions[0].options[0].label: \"Other\" duplicates the \"Other\" choice every client adds with a text box; remove this option"`) {
		t.Fatalf("result %q", text(t, res))
	}
	if s.devices.count() != 0 {
		t.Fatal("a device was asked")
	}
}

// idleTimeout is a client's request timeout that progress resets, as the TypeScript
// SDK's resetTimeoutOnProgress does: it cancels ctx when no progress notification has
// come for d. It returns the context and a function for the client's
// ProgressNotificationHandler to call.
func idleTimeout(ctx context.Context, d time.Duration) (context.Context, func(), func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	var fired atomic.Bool
	timer := time.AfterFunc(d, func() { fired.Store(true); cancel() })
	return ctx, func() { timer.Reset(d) }, fired.Load
}

// TestToolKeepsCallAlive: a client that cannot elicit waits on the devices; with a
// request timeout reset on progress, shorter than the person's answer takes, the call
// gets the answer because the tool sends progress while it waits. Without progress,
// the same timeout fires: the test would catch a tool that stopped sending it.
func TestToolKeepsCallAlive(t *testing.T) {
	for _, c := range []struct {
		name     string
		interval time.Duration
		wantLive bool
	}{{"progress", 20 * time.Millisecond, true}, {"no progress", -1, false}} {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, &askmcp.ToolOptions{ProgressInterval: c.interval})
			var mu sync.Mutex
			reset := func() {}
			progress := 0
			cs := s.client(t, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				progress++
				reset()
				mu.Unlock()
			}}, "2025-11-25")
			ctx, r, fired := idleTimeout(t.Context(), 250*time.Millisecond)
			mu.Lock()
			reset = r
			mu.Unlock()
			go func() {
				a, _ := s.devices.ask(t, 0)
				time.Sleep(750 * time.Millisecond) // three timeouts' worth: the person thinks
				_ = answer(t, s.d, mcpSession, a.RequestID, pick(a.Questions[0].Question, "React"))
			}()
			p := callParams(frameworkArgs, "")
			p.SetProgressToken("tok-1")
			res, err := cs.CallTool(ctx, p)
			if !c.wantLive {
				if err == nil || !fired() {
					t.Fatalf("the timeout did not fire without progress: %v", err)
				}
				return
			}
			if err != nil || fired() {
				t.Fatalf("the call timed out despite progress: %v", err)
			}
			if res.IsError || !strings.Contains(text(t, res), `"React"`) {
				t.Fatalf("result %q", text(t, res))
			}
			mu.Lock()
			defer mu.Unlock()
			if progress < 2 {
				t.Fatalf("%d progress notifications", progress)
			}
		})
	}
}

// TestToolInputRequests: on 2026-07-28 the call returns an input request at once; the
// go-sdk client fulfils it with its elicitation handler and calls again; the devices
// are not asked, since nothing waits on the server between rounds.
func TestToolInputRequests(t *testing.T) {
	s := newServer(t, nil)
	var asked atomic.Int32
	cs := s.client(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: askmcp.ActionAccept, Content: map[string]any{"q1": "Vue 3 (Recommended)"}}, nil
	}}, "2026-07-28")
	res, err := cs.CallTool(t.Context(), callParams(frameworkArgs, "call_7"))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(text(t, res), `"selectedLabels":["Vue 3 (Recommended)"]`) {
		t.Fatalf("result %q", text(t, res))
	}
	if asked.Load() != 1 || s.devices.count() != 0 {
		t.Fatalf("client asked %d times, devices sent %d events", asked.Load(), s.devices.count())
	}
}

// TestToolInputRequestsAcrossReplicas: a retry with the response and the state may
// reach another replica: one with the same state key finishes the call; one with
// another key, or a state for other arguments, refuses it. A refused answer starts
// another round with the problem in the form's message.
func TestToolInputRequestsAcrossReplicas(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	a := newServer(t, &askmcp.ToolOptions{StateKey: key})
	b := newServer(t, &askmcp.ToolOptions{StateKey: key})
	other := newServer(t, &askmcp.ToolOptions{StateKey: []byte("another key, another deployment")})
	manual := &mcp.ClientOptions{
		ElicitationHandler: formAnswer(nil),
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	}
	ca, cb, co := a.client(t, manual, "2026-07-28"), b.client(t, manual, "2026-07-28"), other.client(t, manual, "2026-07-28")

	first, err := ca.CallTool(t.Context(), callParams(frameworkArgs, ""))
	if err != nil {
		t.Fatal(err)
	}
	if !first.NeedsInput() || first.RequestState == "" {
		t.Fatalf("first round: %+v", first)
	}
	retry := func(cs *mcp.ClientSession, args string, content map[string]any, state string) (*mcp.CallToolResult, error) {
		p := callParams(args, "")
		p.InputResponses = mcp.InputResponseMap{askuser.ToolName: &mcp.ElicitResult{Action: askmcp.ActionAccept, Content: content}}
		p.RequestState = state
		return cs.CallTool(t.Context(), p)
	}
	if _, err := retry(co, frameworkArgs, map[string]any{"q1": "React"}, first.RequestState); err == nil {
		t.Fatal("a replica with another key took the state")
	}
	if _, err := retry(cb, twoArgs, map[string]any{"q1": "React"}, first.RequestState); err == nil {
		t.Fatal("the state was taken for other arguments")
	}
	// Two choices... for a single-select question: refused, asked again.
	again, err := retry(cb, frameworkArgs, map[string]any{"q1": "React", "q1_other": "Svelte"}, first.RequestState)
	if err != nil {
		t.Fatal(err)
	}
	if !again.NeedsInput() || again.RequestState == first.RequestState {
		t.Fatalf("refused answer: %+v", again)
	}
	form := again.InputRequests[askuser.ToolName].(*mcp.ElicitParams)
	if !strings.HasPrefix(form.Message, "Please fix your answer: ") {
		t.Fatalf("second round's message %q", form.Message)
	}
	done, err := retry(ca, frameworkArgs, map[string]any{"q1": "React"}, again.RequestState)
	if err != nil {
		t.Fatal(err)
	}
	if done.NeedsInput() || done.IsError || !strings.Contains(text(t, done), `"selectedLabels":["React"]`) {
		t.Fatalf("last round: %+v", done)
	}
	for _, s := range []*server{a, b, other} {
		if s.devices.count() != 0 {
			t.Fatal("a device was asked")
		}
	}
}

// TestToolOverStreamableHTTP: the tool behind go-sdk's streamable HTTP handler, with a
// client that elicits and one that cannot (answered on a device of the MCP session's
// own id). 2026-07-28 needs the handler's stateless mode in go-sdk v1.8.0; there two
// replicas take the requests in turn, so the retry of each call reaches the replica
// that did not ask: the signed request state is all they share.
func TestToolOverStreamableHTTP(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	for _, c := range []struct {
		version string
		elicit  bool
	}{{"2025-11-25", true}, {"2025-11-25", false}, {"2026-07-28", true}} {
		t.Run(c.version+map[bool]string{true: "-elicit", false: "-devices"}[c.elicit], func(t *testing.T) {
			stateless := c.version >= "2026-07-28"
			var replicas []http.Handler
			var servers []*server
			for range 2 {
				s := newServer(t, &askmcp.ToolOptions{StateKey: key})
				servers = append(servers, s)
				replicas = append(replicas, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
					&mcp.StreamableHTTPOptions{Stateless: stateless}))
			}
			var turn atomic.Int32
			var served [2]atomic.Int32
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := 0
				if stateless {
					i = int(turn.Add(1) % 2)
				}
				served[i].Add(1)
				replicas[i].ServeHTTP(w, r)
			}))
			defer hs.Close()
			opts := &mcp.ClientOptions{}
			if c.elicit {
				opts.ElicitationHandler = formAnswer(map[string]any{"q1": "React"})
			}
			cs, err := mcp.NewClient(impl, opts).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: c.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != c.version {
				t.Fatalf("negotiated %s", got)
			}
			if !c.elicit {
				go func() {
					a, _ := servers[0].devices.ask(t, 0)
					if err := answer(t, servers[0].d, askuser.StringSession(cs.ID()), a.RequestID, pick(a.Questions[0].Question, "React")); err != nil {
						t.Error(err)
					}
				}()
			}
			for range 2 {
				res, err := cs.CallTool(t.Context(), callParams(frameworkArgs, ""))
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError || !strings.Contains(text(t, res), `"selectedLabels":["React"]`) {
					t.Fatalf("result %q", text(t, res))
				}
				if !c.elicit {
					break
				}
			}
			if stateless && (served[0].Load() == 0 || served[1].Load() == 0) {
				t.Fatalf("requests served: %d and %d", served[0].Load(), served[1].Load())
			}
		})
	}
}
