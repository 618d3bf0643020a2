package paneltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// The host's side of the adapters' gated tests: three tools of the host's, the Policy
// that gates them, and the tool function that runs them, recording what ran.

// The gated turn of the recorded exchanges: list_files runs without asking, write_file
// waits for the person (who edits its path), drop_table is denied by a rule.
const (
	// ListFilesOutput is what list_files returns.
	ListFilesOutput = `{"files":["index.tsx","profile.tsx","security.tsx"]}`
	// WriteFileEdit is the person's edit of the recorded write_file call: another path,
	// the same content.
	WriteFileEdit = `{"path":"web/src/pages/settings/index.tsx","content":"export default function Settings() {\n  return <SettingsLayout />;\n}\n"}`
	// WriteFileEdited is the tool result of the edited write_file call, byte for byte.
	WriteFileEdited = `{"notice": "The user edited the arguments of this tool call before it ran: it ran with the arguments given here, not with yours.", "arguments": {"path":"web/src/pages/settings/index.tsx","content":"export default function Settings() {\n  return <SettingsLayout />;\n}\n"}, "result": {"wrote":"web/src/pages/settings/index.tsx","bytes":68}}`
	// WriteFileDenied is the tool result of write_file when the person denies it with
	// the reason "Not now" ([Host.DenyOnceListed]).
	WriteFileDenied = `{"error": "The user denied this tool call; the tool did not run. Do not call it again unless the user asks you to.", "reason": "Not now"}`
	// DropTableDenied is the tool result of drop_table, denied by the Policy's rule.
	DropTableDenied = `{"error": "This tool call is not allowed here; the tool did not run. Do not call it again."}`
)

// writeFileSchema is write_file's arguments: a path and the content, nothing else.
const writeFileSchema = `{"type":"object","properties":{"path":{"type":"string","minLength":1},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`

// Policy gates the host's tools: drop_* is denied, write_file is asked about (an edit
// must satisfy its schema), list_files runs.
func Policy() *askuser.Policy {
	return &askuser.Policy{
		Deny:  []askuser.Rule{{Tool: "drop_*"}},
		Ask:   []askuser.Rule{{Tool: "write_file"}},
		Allow: []askuser.Rule{{Tool: "list_files"}},
		Tools: []askuser.Tool{{Name: "write_file", Description: "Writes a file of the repository", Schema: json.RawMessage(writeFileSchema)}},
	}
}

// Host runs the host's tools of the gated tests and records every call it ran. Its
// methods may be called concurrently.
type Host struct {
	listed chan struct{} // closed when list_files has first run
	once   sync.Once

	mu  sync.Mutex
	ran []askuser.ToolCall // guarded by mu
}

// NewHost returns a Host that has run nothing.
func NewHost() *Host { return &Host{listed: make(chan struct{})} }

// Run is the host's askuser.ToolFunc: list_files and write_file run, any other tool
// fails with an error.
func (h *Host) Run(_ context.Context, call askuser.ToolCall) (string, error) {
	h.mu.Lock()
	h.ran = append(h.ran, call)
	h.mu.Unlock()
	switch call.Name {
	case "list_files":
		h.once.Do(func() { close(h.listed) })
		return ListFilesOutput, nil
	case "write_file":
		var args struct{ Path, Content string }
		if err := json.Unmarshal(call.Arguments, &args); err != nil {
			return "", err
		}
		return fmt.Sprintf(`{"wrote":%q,"bytes":%d}`, args.Path, len(args.Content)), nil
	}
	return "", errors.New("no such tool: " + call.Name)
}

// Ran returns the calls run so far, in the order they ran.
func (h *Host) Ran() []askuser.ToolCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ran)
}

// EditOnceListed is a device's [Decide] that edits every approval to arguments, but
// only once list_files has run: a turn whose approval is decided shows that the call
// needing no approval ran while its sibling waited. It fails the test when list_files
// has not run within 10 seconds.
func (h *Host) EditOnceListed(t testing.TB, arguments string) Decide {
	return h.onceListed(t, Edit(arguments))
}

// DenyOnceListed is a device's [Decide] that denies every approval with the reason
// "Not now", but only once list_files has run, as [Host.EditOnceListed] edits.
func (h *Host) DenyOnceListed(t testing.TB) Decide {
	return h.onceListed(t, func(a wire.ApprovalData) *wire.ApprovalResultData {
		return &wire.ApprovalResultData{RequestID: a.RequestID, Decision: wire.DecisionDeny, Reason: "Not now", Digest: a.Digest}
	})
}

// onceListed is decide, once list_files has run.
func (h *Host) onceListed(t testing.TB, decide Decide) Decide {
	return func(a wire.ApprovalData) *wire.ApprovalResultData {
		select {
		case <-h.listed:
		case <-time.After(10 * time.Second):
			t.Errorf("approval %s: list_files did not run while it waited", a.RequestID)
		}
		return decide(a)
	}
}

// CheckGatedTurn checks what the host ran in the recorded gated turn: list_files with
// the model's arguments and write_file with the person's edit, each once and under its
// call id, and drop_table never; and that the device was shown one approval, write_file's.
func (h *Host) CheckGatedTurn(t testing.TB, approvals <-chan wire.ApprovalData, listID, writeID string) {
	t.Helper()
	h.checkTurn(t, approvals, listID, writeID, true)
}

// CheckDeniedTurn checks what the host ran in the recorded gated turn when the person
// denied write_file: list_files with the model's arguments, once and under its call id,
// and neither write_file nor drop_table; and that the device was shown one approval,
// write_file's.
func (h *Host) CheckDeniedTurn(t testing.TB, approvals <-chan wire.ApprovalData, listID, writeID string) {
	t.Helper()
	h.checkTurn(t, approvals, listID, writeID, false)
}

// checkTurn is [Host.CheckGatedTurn] when wrote, and [Host.CheckDeniedTurn] when not.
func (h *Host) checkTurn(t testing.TB, approvals <-chan wire.ApprovalData, listID, writeID string, wrote bool) {
	t.Helper()
	ran := map[string]askuser.ToolCall{}
	for _, c := range h.Ran() {
		ran[c.Name] = c
	}
	var listArgs any
	_ = json.Unmarshal(ran["list_files"].Arguments, &listArgs)
	want := 1
	if wrote {
		want = 2
	}
	if len(ran) != want || len(h.Ran()) != want || ran["list_files"].ID != listID || !reflect.DeepEqual(listArgs, map[string]any{"dir": "web/src/pages"}) ||
		wrote && (ran["write_file"].ID != writeID || string(ran["write_file"].Arguments) != WriteFileEdit) {
		var got []string
		for _, c := range h.Ran() {
			got = append(got, fmt.Sprintf("%s %s %s", c.Name, c.ID, c.Arguments))
		}
		if wrote {
			t.Errorf("the host's tools ran %q, want list_files as the model wrote it and write_file as the person edited it", got)
		} else {
			t.Errorf("the host's tools ran %q, want list_files as the model wrote it alone", got)
		}
	}
	select {
	case a := <-approvals:
		if a.RequestID != writeID || a.Tool != "write_file" {
			t.Errorf("the device was asked to approve %s %s, want write_file %s", a.Tool, a.RequestID, writeID)
		}
	default:
		t.Error("the device was asked to approve nothing")
	}
	select {
	case a, ok := <-approvals:
		if ok {
			t.Errorf("the device was also asked to approve %+v", a)
		}
	default:
	}
}

// GatedTurn is the person's side of the recorded gated turn: a dispatcher gating the
// host's tools by [Policy], asking a device of the session that answers questions with
// their first options and decides write_file's approval once list_files has run, with
// the edit to [WriteFileEdit] or a denial ([Host.DenyOnceListed]).
type GatedTurn struct {
	D    *askuser.Dispatcher
	Host *Host
	// Denied is whether the person denies write_file; Written is write_file's tool result
	// then: [WriteFileDenied], or [WriteFileEdited].
	Denied    bool
	Written   string
	approvals <-chan wire.ApprovalData
}

// NewGatedTurn returns the person's side of a gated turn for session, denying
// write_file when denied and editing it otherwise.
func NewGatedTurn(t testing.TB, session askuser.SessionID, denied bool) GatedTurn {
	t.Helper()
	g := GatedTurn{Host: NewHost(), Denied: denied, Written: WriteFileEdited}
	decide := g.Host.EditOnceListed(t, WriteFileEdit)
	if denied {
		decide, g.Written = g.Host.DenyOnceListed(t), WriteFileDenied
	}
	g.D, _, g.approvals = NewGated(t, session, &askuser.Options{Policy: Policy()}, Pick(), decide)
	return g
}

// Check checks what the host ran and what the device was shown:
// [Host.CheckDeniedTurn] when the person denied, [Host.CheckGatedTurn] otherwise.
func (g GatedTurn) Check(t testing.TB, listID, writeID string) {
	t.Helper()
	g.Host.checkTurn(t, g.approvals, listID, writeID, !g.Denied)
}

// EachDecision runs test as two subtests of t, each with a [GatedTurn] of session of
// its own: one whose write_file the person edits, one whose write_file the person denies.
func EachDecision(t *testing.T, session askuser.SessionID, test func(t *testing.T, g GatedTurn)) {
	for _, tc := range []struct {
		name   string
		denied bool
	}{{"edited", false}, {"denied by the person", true}} {
		t.Run(tc.name, func(t *testing.T) { test(t, NewGatedTurn(t, session, tc.denied)) })
	}
}
