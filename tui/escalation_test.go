package tui

import (
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// TestProgressNamesEscalated: a tool_approval_progress that names the approvers (an
// escalation step fired) changes whom the card says it waits for; one without names
// keeps them.
func TestProgressNamesEscalated(t *testing.T) {
	a := newApproval(askuser.StringSession("ops"), wire.ApprovalData{RequestID: "drop1", Tool: "drop_database", Arguments: []byte(`{}`),
		Decisions: []string{wire.DecisionApprove, wire.DecisionDeny}, Approvers: &wire.ApproversData{Names: []string{"dba"}, Quorum: 2}})
	a.progress(wire.ApprovalProgressData{RequestID: "drop1", Approved: []string{"alice"}})
	if got, want := a.waitingLine(), "Waiting for 1 more approval from dba: alice approved."; got != want {
		t.Fatalf("after an approval: %q, want %q", got, want)
	}
	a.progress(wire.ApprovalProgressData{RequestID: "drop1", Approved: []string{"alice"}, Names: []string{"dba", "lead"}})
	if got, want := a.waitingLine(), "Waiting for 1 more approval from dba, lead: alice approved."; got != want {
		t.Fatalf("after the step: %q, want %q", got, want)
	}
}
