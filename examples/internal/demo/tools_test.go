package demo

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/wire"
)

// approval returns the data of the next tool_approval the device is shown.
func (r *rig) approval(t *testing.T) wire.ApprovalData {
	t.Helper()
	var a wire.ApprovalData
	if err := json.Unmarshal(r.next(t, wire.EventApproval).Data, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// decide sends a decision from the device; a refusal fails the test.
func (r *rig) decide(t *testing.T, data wire.ApprovalResultData) {
	t.Helper()
	ev, err := wire.NewEvent(wire.EventApprovalResult, r.dev.Session(), data)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.dev.Send(context.Background(), ev); err != nil {
		t.Fatalf("decision refused: %v", err)
	}
}

// toolCall returns the data of the next tool_call.
func (r *rig) toolCall(t *testing.T) map[string]any {
	t.Helper()
	return data(t, r.next(t, EventToolCall))
}

func TestToolPlan(t *testing.T) {
	for _, tc := range []struct {
		text, tool, arguments string
		steps                 int
	}{
		{`/tool delete_branch {"name":"x"}`, "delete_branch", `{"name":"x"}`, 1},
		{"/tool  list_files   {}  ", "list_files", "{}", 1},
		{"/tool delete_branch {bad json", "delete_branch", "{bad json", 1},
		{"/tool send_email\n{\"to\": \"a@b\",\n \"x\": 1}", "send_email", "{\"to\": \"a@b\",\n \"x\": 1}", 1},
		{"/tool list_files", "list_files", "", 1},
		{`/tool ask_user_questions {"questions": []}`, "", `{"questions": []}`, 1},
		{"/tool", "", "", 0},
		{"/tools are fun", "", "", 6}, // not the command: the tour
	} {
		p := planFor(tc.text)
		if len(p.steps) != tc.steps {
			t.Errorf("planFor(%q): %d steps, want %d", tc.text, len(p.steps), tc.steps)
			continue
		}
		if tc.steps == 1 && (p.steps[0].tool != tc.tool || string(p.steps[0].arguments) != tc.arguments) {
			t.Errorf("planFor(%q) = tool %q, arguments %q; want %q, %q", tc.text, p.steps[0].tool, p.steps[0].arguments, tc.tool, tc.arguments)
		}
	}
	if p := planFor("/tool"); !strings.Contains(p.intro, "Usage: /tool NAME JSON") {
		t.Errorf("/tool alone says %q", p.intro)
	}
	if !strings.Contains(planFor("/help").intro, "/tool NAME JSON") {
		t.Error("/help does not document /tool")
	}
}

// TestPlanForLeavesOutHostTools: the exported plan, which examples/cluster runs without a
// policy, has only the tour's questions, and says so for /tool.
func TestPlanForHasHostTools(t *testing.T) {
	p := PlanFor("hello")
	if !p.Outro {
		t.Fatalf("PlanFor(hello) has no outro")
	}
	var tools []string
	questions := 0
	for _, s := range p.Steps {
		if s.Tool != "" {
			tools = append(tools, s.Tool+" "+string(s.Arguments))
			continue
		}
		questions++
		if _, err := askuser.ParseArguments(s.Arguments); err != nil {
			t.Errorf("step %q is not a question set: %v", s.Say, err)
		}
	}
	if questions != 4 || strings.Join(tools, "; ") != `list_files {}; delete_branch {"name":"feature/old-login"}` {
		t.Fatalf("PlanFor(hello): %d question sets, tools %q", questions, tools)
	}
	if p := PlanFor(`/tool list_files {}`); len(p.Steps) != 1 || p.Steps[0].Tool != toolListFiles {
		t.Errorf("PlanFor(/tool) = %+v", p)
	}
	if p := PlanFor(`/tool ask_user_questions {"questions": []}`); len(p.Steps) != 1 || p.Steps[0].Tool != "" {
		t.Errorf("PlanFor(/tool ask_user_questions) = %+v", p)
	}
	if p := PlanFor(`/parallel`); len(p.Steps) != 2 || p.Steps[0].Tool != "" || p.Steps[1].Tool != toolDeleteBranch {
		t.Errorf("PlanFor(/parallel) = %+v", p)
	}
}

func TestRunTool(t *testing.T) {
	for _, tc := range []struct {
		name, arguments, want string
		failed                bool
	}{
		{toolListFiles, `{}`, fileListing, false},
		{toolDeleteBranch, `{"name":"feature/x"}`, `{"deleted":"feature/x"}`, false},
		{toolDeleteBranch, `{"name":"a<b>&c"}`, `{"deleted":"a<b>&c"}`, false},
		{toolDeleteBranch, `{}`, `{"error": "delete_branch needs {\"name\": \"<branch>\"}"}`, true},
		{toolDropDatabase, `{"name":"x"}`, `{"dropped":"x"}`, false},
		{toolDropDatabase, `{"db":"x"}`, `{"error": "drop_database needs {\"name\": \"<database>\"}"}`, true},
		{"send_email", `{}`, `{"error":"the demo has no tool named send_email; nothing ran"}`, true},
	} {
		got, failed := runTool(tc.name, json.RawMessage(tc.arguments))
		if got != tc.want || failed != tc.failed {
			t.Errorf("runTool(%s, %s) = %s, %v; want %s, %v", tc.name, tc.arguments, got, failed, tc.want, tc.failed)
		}
	}
	if !json.Valid([]byte(fileListing)) {
		t.Error("the file listing is not JSON")
	}
}

// TestHostToolsThroughThePolicy drives /tool through the real dispatcher: what is
// allowed runs at once, what is denied never reaches a device, and what is asked about
// runs as the person decided, and the model reads exactly the library's result.
func TestHostToolsThroughThePolicy(t *testing.T) {
	r := newRig(t, time.Minute)
	say := func(text string) {
		t.Helper()
		if err := r.a.message(text); err != nil {
			t.Fatal(err)
		}
	}

	say("/tool list_files {}")
	if call := r.toolCall(t); call["name"] != toolListFiles || mustMarshal(t, call["arguments"]) != `{}` {
		t.Fatalf("tool_call = %v", call)
	}
	if res := r.result(t); res["content"] != fileListing || res["outcome"] != "approved" || res["isError"] != false ||
		res["rule"] != toolListFiles || res["summary"] != "Ran without asking: allowed by a rule" {
		t.Fatalf("list_files = %v", res)
	}
	r.nextSaying(t, `the rule "list_files" allows it`)

	say(`/tool drop_database {"name":"x"}`)
	if res := r.result(t); res["content"] != `{"error": "This tool call is not allowed here; the tool did not run. Do not call it again."}` ||
		res["outcome"] != "denied" || res["isError"] != true || res["rule"] != toolDropDatabase {
		t.Fatalf("drop_database = %v", res)
	}
	r.nextSaying(t, "drop_database is not allowed here")

	// Denied by the person, with a reason.
	say(`/tool delete_branch {"name":"main"}`)
	a := r.approval(t)
	if a.Description != "Deletes a git branch, locally and on the remote" || string(a.ArgumentsSchema) != branchSchema ||
		strings.Join(a.Decisions, ",") != "approve,deny,edit,always" || a.Always != "every call of delete_branch in this session" ||
		strings.Join(a.Reasons, "|") != "Not now|Wrong branch|Keep it for the release" {
		t.Fatalf("approval = %+v", a)
	}
	r.decide(t, wire.ApprovalResultData{RequestID: a.RequestID, Decision: wire.DecisionDeny, Reason: "Wrong branch", Digest: a.Digest})
	if res := r.result(t); res["content"] != `{"error": "The user denied this tool call; the tool did not run. Do not call it again unless the user asks you to.", "reason": "Wrong branch"}` ||
		res["outcome"] != "denied" || res["isError"] != true || res["summary"] != "Denied: Wrong branch" {
		t.Fatalf("denied = %v", res)
	}
	r.nextSaying(t, `Your reason: "Wrong branch"`)

	// Edited: the tool runs with the person's arguments, and the model is told.
	say(`/tool delete_branch {"name":"feature/a"}`)
	a = r.approval(t)
	r.decide(t, wire.ApprovalResultData{RequestID: a.RequestID, Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"name": "feature/b"}`)})
	if res := r.result(t); res["content"] != `{"notice": "The user edited the arguments of this tool call before it ran: it ran with the arguments given here, not with yours.", "arguments": {"name":"feature/b"}, "result": {"deleted":"feature/b"}}` ||
		res["outcome"] != "edited" || res["isError"] != false {
		t.Fatalf("edited = %v", res)
	}

	// Always: this call runs, and the next one of the tool without asking.
	say(`/tool delete_branch {"name":"feature/c"}`)
	a = r.approval(t)
	r.decide(t, wire.ApprovalResultData{RequestID: a.RequestID, Decision: wire.DecisionAlways})
	if res := r.result(t); res["content"] != `{"deleted":"feature/c"}` || res["outcome"] != "approved" {
		t.Fatalf("always = %v", res)
	}
	r.nextSaying(t, "You allowed delete_branch for the rest of this session")
	say(`/tool delete_branch {"name":"feature/d"}`)
	if res := r.result(t); res["content"] != `{"deleted":"feature/d"}` || res["grant"] != "every call of delete_branch in this session" ||
		res["summary"] != "Ran without asking: allowed for this session" {
		t.Fatalf("after always = %v", res)
	}
	if pending := askusertest.Approvals(r.d, r.dev.Session()); len(pending) != 0 {
		t.Fatalf("the call the grant covers was asked about: %+v", pending)
	}

	// Arguments that are not JSON: asked about as text, to deny or edit; an unknown tool,
	// approved, runs nothing, and the result, the summary and the agent all say so.
	say("/tool delete_branch {bad json")
	if call := r.toolCall(t); call["arguments"] != "{bad json" {
		t.Fatalf("tool_call arguments = %#v", call["arguments"])
	}
	a = r.approval(t)
	if !a.ArgumentsInvalid || string(a.Arguments) != `"{bad json"` || strings.Join(a.Decisions, ",") != "deny,edit" {
		t.Fatalf("invalid approval = %+v", a)
	}
	r.decide(t, wire.ApprovalResultData{RequestID: a.RequestID, Decision: wire.DecisionDeny})
	r.result(t)
	say(`/tool send_email {"to":"a@example.com"}`)
	a = r.approval(t)
	r.decide(t, wire.ApprovalResultData{RequestID: a.RequestID, Decision: wire.DecisionApprove})
	if res := r.result(t); res["content"] != `{"error":"the demo has no tool named send_email; nothing ran"}` || res["isError"] != true ||
		res["noSuchTool"] != true || res["summary"] != "Allowed, but there is no such tool: nothing ran" {
		t.Fatalf("unknown tool = %v", res)
	}
	r.nextSaying(t, "You allowed send_email, but the demo has no tool of that name, so nothing ran")
}

func TestHostToolTimesOut(t *testing.T) {
	r := newRig(t, 20*time.Millisecond)
	if err := r.a.message(`/tool delete_branch {"name":"x"}`); err != nil {
		t.Fatal(err)
	}
	if res := r.result(t); res["outcome"] != "timeout" || !strings.Contains(res["content"].(string), "did not decide on this tool call before the timeout") {
		t.Fatalf("result = %v", res)
	}
	r.nextSaying(t, "No decision in time, so delete_branch did not run")
}

// TestServerSaysTheAgentWaitsForAnApproval: the status turns to waiting when a host tool
// call waits for the person, as the dispatcher's transport sends the approval.
func TestServerSaysTheAgentWaitsForAnApproval(t *testing.T) {
	_, hs := newTestServer(t, nil)
	d := dial(t, hs, "11")
	d.send(`{"type":"user_message","data":{"text":"/tool delete_branch {\"name\":\"x\"}"}}`)
	d.next(wire.EventApproval)
	for {
		var st struct {
			Data struct {
				State string `json:"state"`
			} `json:"data"`
		}
		if err := json.Unmarshal(d.next(EventStatus), &st); err != nil {
			t.Fatal(err)
		}
		if st.Data.State == "waiting" {
			break
		}
	}
	d.send(`{"type":"cancel"}`)
	if msg := d.next(wire.EventApprovalResolved); !strings.Contains(string(msg), `"outcome":"cancelled"`) {
		t.Fatalf("resolved = %s", msg)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParallelCalls: /parallel makes a question and a host tool call at once: both are
// published, then both wait together, and the agent reads both once both have ended,
// the question's first, whichever ended first.
func TestParallelCalls(t *testing.T) {
	r := newRig(t, time.Minute)
	if err := r.a.message("/parallel"); err != nil {
		t.Fatal(err)
	}
	first, second := r.toolCall(t), r.toolCall(t)
	if first["name"] != askuser.ToolName || second["name"] != toolDeleteBranch {
		t.Fatalf("tool calls %v, %v", first["name"], second["name"])
	}
	// The two asks go out at once, in either order.
	var q wire.AskData
	var a wire.ApprovalData
	for q.RequestID == "" || a.RequestID == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ev, err := r.dev.Recv(ctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for the ask and the approval: %v", err)
		}
		switch ev.Type {
		case wire.EventAsk:
			err = json.Unmarshal(ev.Data, &q)
		case wire.EventApproval:
			err = json.Unmarshal(ev.Data, &a)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if q.RequestID != first["requestId"] || a.RequestID != second["requestId"] {
		t.Fatalf("ids: ask %s, approval %s; calls %v, %v", q.RequestID, a.RequestID, first["requestId"], second["requestId"])
	}
	r.decide(t, wire.ApprovalResultData{RequestID: a.RequestID, Decision: wire.DecisionApprove})
	if res := r.result(t); res["requestId"] != a.RequestID || res["content"] != `{"deleted":"feature/old-login"}` {
		t.Fatalf("first result = %v", res)
	}
	r.answer(t, q.RequestID, askuser.Answer{Question: q.Questions[0].Question, SelectedLabels: []string{"React"}})
	if res := r.result(t); res["requestId"] != q.RequestID {
		t.Fatalf("second result = %v", res)
	}
	said := []string{data(t, r.next(t, EventAgentMessage))["text"].(string), data(t, r.next(t, EventAgentMessage))["text"].(string)}
	if !strings.HasPrefix(said[0], "Noted: Framework → React") || said[1] != "You approved delete_branch; it ran." {
		t.Fatalf("the agent said %q", said)
	}
}
