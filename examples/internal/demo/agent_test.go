package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/wire"
)

// rig is an agent on a real dispatcher over the in-memory transport, with one device.
type rig struct {
	a   *agent
	d   *askuser.Dispatcher
	tr  *askusertest.Transport
	dev *askusertest.Device
}

func newRig(t *testing.T, timeout time.Duration) *rig {
	t.Helper()
	tr := askusertest.NewTransport()
	d := askuser.New(tr, &askuser.Options{Timeout: timeout, Policy: toolPolicy()})
	session := askuser.IntSession(7)
	dev := tr.Connect(session)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var closed atomic.Bool
	spawn := func(f func()) bool {
		if closed.Load() {
			return false
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
		return true
	}
	a := newAgent(ctx, spawn, session, d, func(ev wire.Event) error {
		return tr.Send(context.Background(), ev)
	})
	var n atomic.Int64
	a.newCallID = func() string { return fmt.Sprintf("call_%d", n.Add(1)) }
	t.Cleanup(func() {
		closed.Store(true)
		cancel()
		d.Close()
		wg.Wait()
		_ = tr.Close()
	})
	return &rig{a: a, d: d, tr: tr, dev: dev}
}

// next returns the next event of type typ the device gets, skipping others.
func (r *rig) next(t *testing.T, typ string) wire.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var skipped []string
	for {
		ev, err := r.dev.Recv(ctx)
		if err != nil {
			t.Fatalf("waiting for a %s event: %v (skipped %v)", typ, err, skipped)
		}
		if ev.Type == typ {
			return ev
		}
		skipped = append(skipped, ev.Type)
	}
}

// data decodes an event's data into a map.
func data(t *testing.T, ev wire.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ev.Data, &m); err != nil {
		t.Fatalf("%s data %s: %v", ev.Type, ev.Data, err)
	}
	return m
}

// nextSaying returns the next agent_message whose text contains sub.
func (r *rig) nextSaying(t *testing.T, sub string) string {
	t.Helper()
	for {
		text := data(t, r.next(t, EventAgentMessage))["text"].(string)
		if strings.Contains(text, sub) {
			return text
		}
	}
}

func (r *rig) answer(t *testing.T, requestID string, answers ...askuser.Answer) {
	t.Helper()
	ev, err := wire.NewEvent(wire.EventResult, r.dev.Session(), wire.ResultData{RequestID: requestID, Answers: answers})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.dev.Send(context.Background(), ev); err != nil {
		t.Fatalf("answer refused: %v", err)
	}
}

func (r *rig) decline(t *testing.T, requestID string) {
	t.Helper()
	ev, _ := wire.NewEvent(wire.EventResult, r.dev.Session(), wire.ResultData{RequestID: requestID, Declined: true})
	if err := r.dev.Send(context.Background(), ev); err != nil {
		t.Fatalf("decline refused: %v", err)
	}
}

func (r *rig) ask(t *testing.T) wire.AskData {
	t.Helper()
	var a wire.AskData
	if err := json.Unmarshal(r.next(t, wire.EventAsk).Data, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func (r *rig) result(t *testing.T) map[string]any {
	t.Helper()
	return data(t, r.next(t, EventToolResult))
}

func text(s string) *string { return &s }

func TestTourAsksEveryKindAndReportsExactResults(t *testing.T) {
	r := newRig(t, time.Minute)
	if err := r.a.message("Let's build the dashboard"); err != nil {
		t.Fatal(err)
	}

	// 1: single-select. The tool call and the ask share the model's tool-call id.
	var call struct {
		RequestID string          `json:"requestId"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(r.next(t, EventToolCall).Data, &call); err != nil {
		t.Fatal(err)
	}
	if call.RequestID != "call_1" || call.Name != askuser.ToolName {
		t.Fatalf("tool_call = %+v", call)
	}
	if string(call.Arguments) != string(stepSingle.arguments) {
		t.Fatalf("tool_call arguments = %s, want %s", call.Arguments, stepSingle.arguments)
	}
	a := r.ask(t)
	if a.RequestID != "call_1" || len(a.Questions) != 1 || a.Questions[0].MultiSelect {
		t.Fatalf("first ask = %+v", a)
	}
	r.answer(t, a.RequestID, askuser.Answer{Question: a.Questions[0].Question, SelectedLabels: []string{"React"}})
	res := r.result(t)
	want := `{"answers":[{"question":"Which framework should we use for the new module?","selectedLabels":["React"],"customInput":null}]}`
	if res["content"] != want || res["requestId"] != "call_1" || res["outcome"] != "answered" || res["isError"] != false {
		t.Fatalf("tool_result = %v\nwant content %s", res, want)
	}

	// 2: multi-select, with Other beside two options.
	a = r.ask(t)
	if a.RequestID != "call_2" || !a.Questions[0].MultiSelect {
		t.Fatalf("second ask = %+v", a)
	}
	r.answer(t, a.RequestID, askuser.Answer{Question: a.Questions[0].Question, SelectedLabels: []string{"Dark mode", "Offline mode"}, CustomInput: text("Audit log")})
	res = r.result(t)
	want = `{"answers":[{"question":"Which features should the first release include?","selectedLabels":["Dark mode","Offline mode"],"customInput":"Audit log"}]}`
	if res["content"] != want {
		t.Fatalf("multi content = %v, want %s", res["content"], want)
	}

	// 3: previews on a single-select question.
	a = r.ask(t)
	for i, o := range a.Questions[0].Options {
		if o.Preview == "" {
			t.Fatalf("option %d of the preview question has no preview", i)
		}
	}
	r.answer(t, a.RequestID, askuser.Answer{Question: a.Questions[0].Question, CustomInput: text("Something else")})
	res = r.result(t)
	want = `{"answers":[{"question":"Which layout should the dashboard use?","selectedLabels":[],"customInput":"Something else"}]}`
	if res["content"] != want {
		t.Fatalf("preview content = %v, want %s", res["content"], want)
	}

	// 4: several questions in one call, answered together.
	a = r.ask(t)
	if len(a.Questions) != 3 {
		t.Fatalf("fourth ask has %d questions, want 3", len(a.Questions))
	}
	r.answer(t, a.RequestID,
		askuser.Answer{Question: a.Questions[0].Question, SelectedLabels: []string{"SQLite"}},
		askuser.Answer{Question: a.Questions[1].Question, SelectedLabels: []string{"Unit tests", "End-to-end tests"}},
		askuser.Answer{Question: a.Questions[2].Question, SelectedLabels: []string{"Single VM"}},
	)
	res = r.result(t)
	if res["summary"] != "Answered 3 questions" {
		t.Fatalf("summary = %v", res["summary"])
	}

	// 5: list_files, which a rule allows: it runs without asking.
	if res = r.result(t); res["content"] != fileListing || res["outcome"] != "approved" || res["rule"] != toolListFiles || res["isError"] != false {
		t.Fatalf("list_files result = %v", res)
	}
	// 6: delete_branch waits for the person's approval, and runs when approved.
	ap := r.approval(t)
	if ap.Tool != toolDeleteBranch || string(ap.Arguments) != `{"name":"feature/old-login"}` || ap.RequestID != "call_6" {
		t.Fatalf("approval = %+v", ap)
	}
	r.decide(t, wire.ApprovalResultData{RequestID: ap.RequestID, Decision: wire.DecisionApprove, Digest: ap.Digest})
	if res = r.result(t); res["content"] != `{"deleted":"feature/old-login"}` || res["outcome"] != "approved" || res["isError"] != false {
		t.Fatalf("delete_branch result = %v", res)
	}
	r.nextSaying(t, "You approved delete_branch; it ran.")
	plan := r.nextSaying(t, "Here is the plan")
	for _, sub := range []string{"Framework → React", `Features → Dark mode, Offline mode, Other: "Audit log"`, `Layout → Other: "Something else"`, "Database → SQLite", "Testing → Unit tests, End-to-end tests", "Deploy → Single VM", "delete_branch → approved, ran"} {
		if !strings.Contains(plan, sub) {
			t.Errorf("plan %q lacks %q", plan, sub)
		}
	}
	if st := data(t, r.next(t, EventStatus)); st["state"] != "idle" {
		t.Fatalf("status after the run = %v", st)
	}
}

func TestMessagesDuringARunAreQueuedAndReadAfter(t *testing.T) {
	r := newRig(t, time.Minute)
	if err := r.a.message("/single"); err != nil {
		t.Fatal(err)
	}
	a := r.ask(t)
	if !(len(r.d.Pending(r.dev.Session())) > 0) {
		t.Fatal("the dispatcher does not report the session waiting")
	}
	if err := r.a.message("/multi"); err != nil {
		t.Fatal(err)
	}
	for {
		um := data(t, r.next(t, EventUserMessage))
		if um["text"] == "/multi" {
			if um["queued"] != true {
				t.Fatalf("a message sent while waiting was not queued: %v", um)
			}
			break
		}
	}
	if st := data(t, r.next(t, EventStatus)); st["state"] != "waiting" || st["queued"] != float64(1) {
		t.Fatalf("status after queueing = %v, want waiting with 1 queued", st)
	}
	if state, queued := r.a.status(); state != "waiting" || queued != 1 {
		t.Fatalf("agent status = %s, %d", state, queued)
	}
	// Nothing of the queued message happens until the question is answered.
	r.answer(t, a.RequestID, askuser.Answer{Question: a.Questions[0].Question, SelectedLabels: []string{"Svelte"}})
	r.result(t)
	r.nextSaying(t, `while I was busy: "/multi"`)
	if next := r.ask(t); next.Questions[0].Header != "Features" {
		t.Fatalf("after the queue, asked %q, want the Features question", next.Questions[0].Header)
	}
}

func TestCancelEndsTheQuestionAndDropsTheQueue(t *testing.T) {
	r := newRig(t, time.Minute)
	if err := r.a.message("/single"); err != nil {
		t.Fatal(err)
	}
	a := r.ask(t)
	if err := r.a.message("later"); err != nil {
		t.Fatal(err)
	}
	r.a.cancel()
	// The run and cancel speak concurrently: gather everything until the agent is idle.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var said []string
	var res map[string]any
	var resolved *wire.ResolvedData
	for {
		ev, err := r.dev.Recv(ctx)
		if err != nil {
			t.Fatalf("after cancel: %v (said %q)", err, said)
		}
		if ev.Type == EventAgentMessage {
			said = append(said, data(t, ev)["text"].(string))
		}
		if ev.Type == EventToolResult {
			res = data(t, ev)
		}
		if ev.Type == wire.EventResolved {
			resolved = new(wire.ResolvedData)
			if err := json.Unmarshal(ev.Data, resolved); err != nil {
				t.Fatal(err)
			}
		}
		if ev.Type == EventStatus && data(t, ev)["state"] == "idle" {
			break
		}
	}
	if res["content"] != `{"error": "Session cancelled"}` || res["outcome"] != "cancelled" || res["requestId"] != a.RequestID {
		t.Fatalf("tool_result after cancel = %v", res)
	}
	if resolved == nil || resolved.Outcome != askuser.Cancelled || resolved.RequestID != a.RequestID {
		t.Fatalf("resolved = %+v", resolved)
	}
	all := strings.Join(said, "|")
	if !strings.Contains(all, "1 queued message(s) dropped") || !strings.Contains(all, "Run cancelled.") {
		t.Fatalf("agent said %q", said)
	}
	if len(r.d.Pending(r.dev.Session())) > 0 {
		t.Fatal("still waiting after cancel")
	}
	// The next message starts a fresh run.
	if err := r.a.message("/multi"); err != nil {
		t.Fatal(err)
	}
	if next := r.ask(t); next.Questions[0].Header != "Features" {
		t.Fatalf("after cancel, asked %q", next.Questions[0].Header)
	}
}

func TestCancelWithNothingRunning(t *testing.T) {
	r := newRig(t, time.Minute)
	r.a.cancel()
	r.nextSaying(t, "Nothing to cancel.")
}

func TestAskCommandPassesArgumentsUntouched(t *testing.T) {
	r := newRig(t, time.Minute)
	args := `{"questions":[{"question":"Tea or coffee?","header":"Drink","multiSelect":false,"options":[{"label":"Tea","description":"<b>leaves</b>"},{"label":"Coffee","description":"beans"}]}],"metadata":{"source":"test"}}`
	if err := r.a.message("/ask " + args); err != nil {
		t.Fatal(err)
	}
	call := r.next(t, EventToolCall)
	var d struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(call.Data, &d); err != nil {
		t.Fatal(err)
	}
	if string(d.Arguments) != args {
		t.Fatalf("tool_call arguments = %s, want %s", d.Arguments, args)
	}
	a := r.ask(t)
	if string(a.Metadata) != `{"source":"test"}` || a.Questions[0].Options[0].Description != "<b>leaves</b>" {
		t.Fatalf("ask = %+v", a)
	}
	r.decline(t, a.RequestID)
	if res := r.result(t); res["content"] != `{"error": "User declined to answer"}` || res["isError"] != true {
		t.Fatalf("declined result = %v", res)
	}
}

func TestAskCommandWithInvalidArguments(t *testing.T) {
	r := newRig(t, time.Minute)
	if err := r.a.message(`/ask {"questions": [`); err != nil {
		t.Fatal(err)
	}
	call := data(t, r.next(t, EventToolCall))
	if call["arguments"] != `{"questions": [` {
		t.Fatalf("invalid JSON arguments shown as %#v, want the string as written", call["arguments"])
	}
	res := r.result(t)
	if res["outcome"] != "invalid" || !strings.HasPrefix(res["content"].(string), `{"error"`) {
		t.Fatalf("result = %v", res)
	}
	r.nextSaying(t, "My call was invalid")
}

func TestTimeoutGoesOnWithTheRecommendation(t *testing.T) {
	r := newRig(t, 20*time.Millisecond)
	if err := r.a.message("/single"); err != nil {
		t.Fatal(err)
	}
	if res := r.result(t); res["content"] != `{"error": "User did not respond within timeout"}` || res["outcome"] != "timeout" {
		t.Fatalf("result = %v", res)
	}
	r.nextSaying(t, "No answer in time")
}

func TestMessageRefusals(t *testing.T) {
	r := newRig(t, time.Minute)
	if err := r.a.message("   "); err == nil {
		t.Error("an empty message was taken")
	}
	if err := r.a.message(strings.Repeat("x", maxMessageBytes+1)); err == nil {
		t.Error("an oversized message was taken")
	}
	if err := r.a.message("/single"); err != nil {
		t.Fatal(err)
	}
	r.ask(t)
	for i := range maxQueue {
		if err := r.a.message(fmt.Sprintf("queued %d", i)); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if err := r.a.message("one too many"); err == nil {
		t.Error("the queue grew past its bound")
	}
}

func TestReplayIsTheHistoryInOrder(t *testing.T) {
	r := newRig(t, time.Minute)
	if err := r.a.message("/single"); err != nil {
		t.Fatal(err)
	}
	r.ask(t)
	var got wire.Event
	if err := r.a.replay(func(ev wire.Event) error { got = ev; return nil }); err != nil {
		t.Fatal(err)
	}
	var h struct {
		Events []wire.Event `json:"events"`
	}
	if got.Type != EventHistory || json.Unmarshal(got.Data, &h) != nil {
		t.Fatalf("replay sent %s %s", got.Type, got.Data)
	}
	var types []string
	last := 0.0
	for _, ev := range h.Events {
		seq := data(t, ev)["seq"].(float64)
		if seq <= last {
			t.Fatalf("history out of order: seq %v after %v", seq, last)
		}
		last = seq
		types = append(types, ev.Type)
	}
	joined := strings.Join(types, ",")
	if !strings.HasPrefix(joined, "user_message,") || !strings.Contains(joined, "tool_call") || strings.Contains(joined, wire.EventAsk) {
		t.Fatalf("history types = %s", joined)
	}
}

func TestPlanFor(t *testing.T) {
	for _, tc := range []struct {
		text   string
		steps  int
		header string // of the first step's first question
		outro  bool
	}{
		{"hello", 6, "Framework", true},
		{"/single", 1, "Framework", false},
		{"/multi", 1, "Features", false},
		{"/preview", 1, "Layout", false},
		{"/several", 1, "Database", false},
		{"  /preview  ", 1, "Layout", false},
		{"/help", 0, "", false},
		{"/asking questions", 6, "Framework", true},
	} {
		p := planFor(tc.text)
		if len(p.steps) != tc.steps || p.outro != tc.outro {
			t.Errorf("planFor(%q): %d steps, outro %v", tc.text, len(p.steps), p.outro)
			continue
		}
		if tc.steps > 0 {
			req, err := askuser.ParseArguments(p.steps[0].arguments)
			if err != nil {
				t.Errorf("planFor(%q): invalid arguments: %v", tc.text, err)
				continue
			}
			if req.Questions[0].Header != tc.header {
				t.Errorf("planFor(%q): first header %q, want %q", tc.text, req.Questions[0].Header, tc.header)
			}
		}
	}
	p := planFor("/ask\n{\"questions\": []}")
	if len(p.steps) != 1 || string(p.steps[0].arguments) != `{"questions": []}` {
		t.Errorf("planFor(/ask on two lines) = %+v", p)
	}
	for _, s := range tour {
		if s.tool != "" {
			continue
		}
		if _, err := askuser.ParseArguments(s.arguments); err != nil {
			t.Errorf("tour step %q: %v", s.say, err)
		}
	}
}

// TestHistoryIsBounded: however much a session publishes, the history a connecting
// device is sent stays within maxHistoryBytes (and maxHistory events), is built once for
// every device until the next event, and keeps the newest events.
func TestHistoryIsBounded(t *testing.T) {
	r := newRig(t, time.Minute)
	big := strings.Repeat("x", 40<<10)
	for i := range 50 {
		r.a.say(fmt.Sprintf("%d %s", i, big))
	}
	for range 400 {
		r.a.say("short")
	}
	r.a.say("newest " + big)
	var first, second wire.Event
	if err := r.a.replay(func(ev wire.Event) error { first = ev; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.a.replay(func(ev wire.Event) error { second = ev; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(first.Data) > maxHistoryBytes+maxHistory+16 {
		t.Fatalf("history of %d bytes, bound %d", len(first.Data), maxHistoryBytes)
	}
	if &first.Data[0] != &second.Data[0] {
		t.Error("the history was built again for a second device with nothing new")
	}
	var h struct {
		Events []wire.Event `json:"events"`
	}
	if err := json.Unmarshal(first.Data, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Events) > maxHistory {
		t.Fatalf("%d events kept, bound %d", len(h.Events), maxHistory)
	}
	if last := data(t, h.Events[len(h.Events)-1])["text"].(string); !strings.HasPrefix(last, "newest ") {
		t.Fatalf("the newest event is not kept last: %.20s", last)
	}
	r.a.say("one more")
	var third wire.Event
	_ = r.a.replay(func(ev wire.Event) error { third = ev; return nil })
	if !strings.Contains(string(third.Data), "one more") {
		t.Error("a new event did not make it into the history")
	}
	// An event bigger than the whole budget is sent but not kept.
	r.a.say(strings.Repeat("y", maxHistoryBytes))
	var fourth wire.Event
	_ = r.a.replay(func(ev wire.Event) error { fourth = ev; return nil })
	if strings.Contains(string(fourth.Data), "yyyy") {
		t.Error("an event over the budget was kept")
	}
}
