package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// The host's own tools of the demo, gated by a policy: list_files runs without asking,
// delete_branch waits for the person's approval, drop_database is never allowed (in the
// web demo, it waits for two DBAs instead: see peoplePolicy). A tool the demo does not
// have is asked about (the policy's default); allowed, nothing runs, and the result, the
// agent and the page all say so.

// Names of the demo's host tools.
const (
	toolListFiles    = "list_files"
	toolDeleteBranch = "delete_branch"
	toolDropDatabase = "drop_database"
)

// branchSchema is delete_branch's arguments: a non-empty name, and nothing else. An edit
// of the person's must satisfy it.
const branchSchema = `{"type":"object","properties":{"name":{"type":"string","minLength":1,"description":"the branch to delete"}},"required":["name"],"additionalProperties":false}`

// fileListing is what list_files returns, always: the demo has no repository.
const fileListing = `{"path":".","files":["README.md","go.mod","main.go","internal/","web/"],"branches":["main","feature/old-login"]}`

// toolPolicy is the demo's Policy: what runs, what is asked about, what never runs.
func toolPolicy() *askuser.Policy {
	return &askuser.Policy{
		Deny:  []askuser.Rule{{Tool: toolDropDatabase}},
		Ask:   []askuser.Rule{{Tool: toolDeleteBranch}},
		Allow: []askuser.Rule{{Tool: toolListFiles}},
		Tools: []askuser.Tool{
			{Name: toolListFiles, Description: "Lists the files and branches of the repository"},
			{Name: toolDeleteBranch, Description: "Deletes a git branch, locally and on the remote", Schema: json.RawMessage(branchSchema)},
			{Name: toolDropDatabase, Description: "Drops a database and everything in it"},
		},
		Reasons: []string{"Not now", "Wrong branch", "Keep it for the release"},
	}
}

// hasTool reports whether the demo has a tool of that name to run.
func hasTool(name string) bool {
	switch name {
	case toolListFiles, toolDeleteBranch, toolDropDatabase:
		return true
	}
	return false
}

// runTool runs a host tool with the arguments the gate let it run with, and returns its
// result and whether it failed (a tool it does not have fails: see hasTool).
func runTool(name string, arguments json.RawMessage) (string, bool) {
	switch name {
	case toolListFiles:
		return fileListing, false
	case toolDeleteBranch:
		var args struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(arguments, &args); err != nil || args.Name == "" {
			return `{"error": "delete_branch needs {\"name\": \"<branch>\"}"}`, true
		}
		return compactJSON(map[string]string{"deleted": args.Name}), false
	case toolDropDatabase:
		// Reached in the web demo once the DBAs have approved: it drops nothing real.
		var args struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(arguments, &args); err != nil || args.Name == "" {
			return `{"error": "drop_database needs {\"name\": \"<database>\"}"}`, true
		}
		return compactJSON(map[string]string{"dropped": args.Name}), false
	}
	return compactJSON(map[string]string{"error": "the demo has no tool named " + name + "; nothing ran"}), true
}

// compactJSON encodes v compactly, with <, > and & as themselves.
func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // maps of strings always encode
	}
	return strings.TrimSpace(buf.String())
}

// toolReaction is the agent's reading of how a host tool call went: what it says, a note
// for its summary when the person was asked, and whether the run goes on. failed is
// whether the tool, having run, failed; missing, that there was no tool to run. A
// decision made by someone other than requester (an approver) is told as theirs.
func toolReaction(name, requester string, r askuser.ApprovalResult, failed, missing bool) (say, note string, goOn bool) {
	if by := r.Decision.By; by != "" && by != requester && !missing {
		if say, note, ok := othersDecision(name, by, r, failed); ok {
			return say, note, true
		}
	}
	if missing && r.Allowed() {
		say = fmt.Sprintf("You allowed %s, but the demo has no tool of that name, so nothing ran; I will not try it again.", name)
		if r.Decision.Decision != "" {
			note = name + " → allowed, but there is no such tool; nothing ran"
		}
		return say, note, true
	}
	switch r.Outcome {
	case askuser.Approved:
		switch {
		case failed:
			say = fmt.Sprintf("%s ran but failed; see its result.", name)
		case r.Rule != "":
			say = fmt.Sprintf("%s ran without asking you: the rule %q allows it.", name, r.Rule)
		case r.Decision.Decision == wire.DecisionAlways:
			say = fmt.Sprintf("You allowed %s for the rest of this session; it ran.", name)
		case r.Grant != nil:
			say = fmt.Sprintf("%s ran without asking: you allowed it for this session.", name)
		default:
			say = fmt.Sprintf("You approved %s; it ran.", name)
		}
		if r.Decision.Decision != "" { // the person was asked
			note = name + " → approved, ran"
		}
		return say, note, true
	case askuser.Edited:
		return fmt.Sprintf("You edited the call: %s ran with your arguments, %s, not mine.", name, r.Arguments),
			fmt.Sprintf("%s → edited, ran with %s", name, r.Arguments), true
	case askuser.Denied:
		if r.Decision.Decision == "" {
			return fmt.Sprintf("%s is not allowed here (the rule %q denies it), so it did not run; I will not try it again.", name, r.Rule), "", true
		}
		say = fmt.Sprintf("You denied %s, so it did not run; I will not try it again.", name)
		note = name + " → denied"
		if reason := r.Decision.Reason; reason != "" {
			say += fmt.Sprintf(" Your reason: %q.", reason)
			note += fmt.Sprintf(" (%q)", reason)
		}
		return say, note, true
	case askuser.TimedOut:
		return fmt.Sprintf("No decision in time, so %s did not run. I will not retry it unless you ask.", name),
			name + " → no decision in time, did not run", true
	case askuser.Invalid:
		return "My call was invalid, so nobody was asked:\n- " + strings.Join(r.Problems, "\n- "), "", false
	case askuser.Cancelled:
		return "Run cancelled.", "", false
	}
	return "Stopping: " + r.Content(""), "", false
}

// othersDecision is toolReaction's reading of a call decided by someone other than the
// person of the run; ok is false for an outcome it leaves to toolReaction.
func othersDecision(name, by string, r askuser.ApprovalResult, failed bool) (say, note string, ok bool) {
	switch {
	case r.Outcome == askuser.Approved && !failed:
		return fmt.Sprintf("%s approved %s, the last approval it needed; it ran.", by, name), fmt.Sprintf("%s → approved by %s, ran", name, by), true
	case r.Outcome == askuser.Edited && !failed:
		return fmt.Sprintf("%s edited the call: %s ran with their arguments, %s, not mine.", by, name, r.Arguments),
			fmt.Sprintf("%s → edited by %s, ran with %s", name, by, r.Arguments), true
	case r.Outcome == askuser.Denied:
		say = fmt.Sprintf("%s denied %s, so it did not run; I will not try it again.", by, name)
		note = fmt.Sprintf("%s → denied by %s", name, by)
		if reason := r.Decision.Reason; reason != "" {
			say += fmt.Sprintf(" Their reason: %q.", reason)
			note += fmt.Sprintf(" (%q)", reason)
		}
		return say, note, true
	}
	return "", "", false
}

// toolSummary is the one-line summary of a host tool call's result, in English, as the
// tool_result event carries it beside the questions' (the page words its own).
func toolSummary(r askuser.ApprovalResult, failed, missing bool) string {
	if missing && r.Allowed() {
		return "Allowed, but there is no such tool: nothing ran"
	}
	switch r.Outcome {
	case askuser.Approved:
		switch {
		case failed:
			return "Ran, and failed"
		case r.Rule != "":
			return "Ran without asking: allowed by a rule"
		case r.Grant != nil && r.Decision.Decision == "":
			return "Ran without asking: allowed for this session"
		}
		return "Approved; ran"
	case askuser.Edited:
		return "Edited; ran with the person's arguments"
	case askuser.Denied:
		if r.Decision.Decision == "" {
			return "Not allowed: denied by a rule"
		}
		if r.Decision.Reason != "" {
			return "Denied: " + r.Decision.Reason
		}
		return "Denied"
	case askuser.TimedOut:
		return "No decision: timed out; did not run"
	case askuser.Invalid:
		return fmt.Sprintf("Invalid tool call (%d problems)", len(r.Problems))
	}
	return "Did not run: " + r.Outcome.String()
}
