package demo

import (
	"encoding/json"

	"github.com/askuser-go/askuser"
)

// The scripted agent's script, for demos that run it their own way (examples/cluster
// keeps its runs in NATS, so that they outlive a replica).

// Plan is what the scripted agent does for a message: what it says first, its calls,
// and whether it ends with a summary of the notes its reactions made.
type Plan struct {
	Intro string
	Steps []Step
	Outro bool
}

// Step is one call: what the agent says first (may be empty), the tool it calls ("" for
// ask_user_questions, else one of the host tools the demo's policy gates: see
// [ToolPolicy]), and the arguments it emits, as a model would. A step made with others
// as one turn of parallel calls (/parallel) comes as steps one after another.
type Step struct {
	Say       string
	Tool      string
	Arguments json.RawMessage
}

// PlanFor returns the plan for a person's message: its calls, in order. It is
// deterministic: a run resumed with the same message makes the same calls.
func PlanFor(text string) Plan {
	p := planFor(text)
	out := Plan{Intro: p.intro, Outro: p.outro}
	var add func(s step)
	add = func(s step) {
		out.Steps = append(out.Steps, Step{Say: s.say, Tool: s.tool, Arguments: s.arguments})
		for _, w := range s.with {
			add(w)
		}
	}
	for _, s := range p.steps {
		add(s)
	}
	return out
}

// ToolPolicy returns the policy that gates the demo's host tools: list_files runs,
// delete_branch is asked about, drop_database never runs, any other is asked about.
func ToolPolicy() *askuser.Policy { return toolPolicy() }

// CallTool is the host's side of a host tool call the gate has decided: when it may run,
// the tool runs with the arguments it may run with. It returns the tool_result event's
// data (the result the model reads, and what the transcript shows of it) and the
// agent's reading of it: what it says, a note for its summary, and whether the run goes
// on.
func CallTool(id, name string, r askuser.ApprovalResult) (data map[string]any, say, note string, goOn bool) {
	return callTool(id, name, "", r)
}

// callTool is CallTool for a call of requester's agent: a decision of someone else's is
// told as theirs.
func callTool(id, name, requester string, r askuser.ApprovalResult) (data map[string]any, say, note string, goOn bool) {
	content, failed, missing := r.Content(""), false, !hasTool(name)
	if r.Allowed() {
		var out string
		out, failed = runTool(name, r.Arguments)
		content = r.Content(out)
	}
	data = map[string]any{
		"requestId": id,
		"content":   content,
		"outcome":   r.Outcome.String(),
		"isError":   !r.Allowed() || failed,
		"summary":   toolSummary(r, failed, missing),
	}
	if missing && r.Allowed() {
		data["noSuchTool"] = true
	}
	if r.Rule != "" {
		data["rule"] = r.Rule
	}
	if r.Grant != nil && r.Decision.Decision == "" {
		data["grant"] = r.Grant.Covers
	}
	say, note, goOn = toolReaction(name, requester, r, failed, missing)
	return data, say, note, goOn
}

// Reaction is the agent's reading of a call's result: what it says, a note for its
// summary (empty when none), and whether the run goes on. req is the call's request
// (nil when its arguments were invalid).
func Reaction(res askuser.Result, req *askuser.Request) (say, note string, goOn bool) {
	return reaction(res, req)
}
