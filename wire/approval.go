package wire

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/askuser-go/askuser/internal/jsonx"
)

// Event types of approvals.
const (
	// EventApproval is sent to every device of a session when a tool call waits for the
	// person's approval, and to a device that connects while it waits. Its data is an
	// [ApprovalData].
	EventApproval = "tool_approval"
	// EventApprovalResult is sent by a device to decide an approval. Its data is an
	// [ApprovalResultData].
	EventApprovalResult = "tool_approval_result"
	// EventApprovalResolved is sent to every device of a session when an approval ends,
	// however it ends. Its data is an [ApprovalResolvedData].
	EventApprovalResolved = "tool_approval_resolved"
	// EventApprovalProgress is sent to every device of a session when an approval that
	// needs several approvals (see [ApproversData.Quorum]) records one and stays pending.
	// Its data is an [ApprovalProgressData].
	EventApprovalProgress = "tool_approval_progress"
)

// The decisions a person can make on an approval: the values of
// [ApprovalResultData.Decision] and of [ApprovalData.Decisions].
const (
	// DecisionApprove runs the tool call as the model wrote it.
	DecisionApprove = "approve"
	// DecisionDeny refuses it, with an optional reason.
	DecisionDeny = "deny"
	// DecisionEdit runs it with the arguments the person wrote instead.
	DecisionEdit = "edit"
	// DecisionAlways runs it, and the later calls of the session that its grant covers
	// (see [ApprovalData.Always]) without asking.
	DecisionAlways = "always"
)

// ApprovalData is the data of an [EventApproval]: one tool call waiting for the person.
type ApprovalData struct {
	RequestID string `json:"requestId"`
	// Tool is the name of the tool the model called.
	Tool string `json:"tool"`
	// Arguments are the arguments the model wrote, as a JSON value. When what the model
	// wrote is not JSON, Arguments is a JSON string holding it, and ArgumentsInvalid is
	// set.
	Arguments json.RawMessage `json:"arguments"`
	// ArgumentsInvalid says that the model's arguments are not valid JSON: the call can
	// only be denied, or edited into valid arguments.
	ArgumentsInvalid bool `json:"argumentsInvalid,omitempty"`
	// Description is the host's description of the tool, or of the rule that asks.
	Description string `json:"description,omitempty"`
	// Decisions lists the decisions this approval takes, in the order to show them:
	// some of "approve", "deny", "edit" and "always".
	Decisions []string `json:"decisions"`
	// ArgumentsSchema is the tool's JSON Schema for its arguments, when the host gave
	// one: an edit must satisfy it.
	ArgumentsSchema json.RawMessage `json:"argumentsSchema,omitempty"`
	// Always says, in words, what an "always" decision grants (which later calls of the
	// session then run without asking); empty when "always" is not offered.
	Always string `json:"always,omitempty"`
	// Reasons are the host's preset reasons for a denial, to pick from.
	Reasons []string `json:"reasons,omitempty"`
	// Source says whose tool it is when the tool is not the host's own (an MCP
	// server's): nil for the host's own tools.
	Source *ToolSource `json:"source,omitempty"`
	// Scope is the name of the rule that narrows what "always" grants (askuser.Rule.Always),
	// kept with the approval so that whichever dispatcher records the decision makes the
	// same grant. It is not sent to devices.
	Scope string `json:"-"`
	// Digest names this approval exactly (its session, id, tool, arguments and expiry).
	// A device that sends it back with its decision is sure to decide this very call: a
	// decision whose digest names another is refused as not pending.
	Digest string `json:"digest"`
	// ExpiresAt is when the approval times out, so that a device can show a countdown.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// Approvers says who may decide, when the host named them, and how many must
	// approve; nil when anyone of the session decides, the first decision ending it.
	Approvers *ApproversData `json:"approvers,omitempty"`
	// AskedAt is when the approval was asked, and SessionTitle what the host calls its
	// session (askuser.Options.SessionTitle): what a person's inbox lists it by.
	AskedAt      time.Time `json:"askedAt,omitzero"`
	SessionTitle string    `json:"sessionTitle,omitempty"`
}

// ApproversData is who may decide an approval, how many must approve it, and who has.
type ApproversData struct {
	// Names are the approvers as the host named them: its users, then its groups. Empty
	// when anyone of the session may decide (a quorum of different people, say). A
	// device whose person is not among them shows the approval read-only; a decision
	// from them is refused with the code "not_approver".
	Names []string `json:"names,omitempty"`
	// Quorum is how many approvals from different people the call needs; 0 means one.
	Quorum int `json:"quorum,omitempty"`
	// Approved names who has approved so far, on these arguments, in order; an edit
	// starts it again. Only approvals that count are listed.
	Approved []string `json:"approved,omitempty"`
	// Users and Groups are Names apart: the people who may decide, and the groups whose
	// members may, escalation steps fired included. A device connected as a person
	// (see [InboxData]) shows the decision controls when its person is among Users or
	// in one of Groups, and the approval read-only otherwise. A transport also gives
	// the approval to these people's devices, whatever their sessions.
	Users  []string `json:"users,omitempty"`
	Groups []string `json:"groups,omitempty"`
}

// ApprovalProgressData is the data of an [EventApprovalProgress]: an approval recorded
// one more approval, or an edit, or an escalation step, and waits for more.
type ApprovalProgressData struct {
	RequestID string `json:"requestId"`
	// Approved names who has approved so far, as [ApproversData.Approved].
	Approved []string `json:"approved"`
	// Digest is the approval's digest now: it changes when an edit changed the
	// arguments, and a decision must then carry the new one.
	Digest string `json:"digest"`
	// Arguments are the arguments now waiting for approvals, given when an edit changed
	// them; absent otherwise.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Names are the approvers now, as [ApproversData.Names], given when an escalation
	// step added people who may decide too, with Users and Groups; absent otherwise.
	Names  []string `json:"names,omitempty"`
	Users  []string `json:"users,omitempty"`
	Groups []string `json:"groups,omitempty"`
}

// ToolSource says whose tool an approval is for when the tool is not the host's own: an
// MCP server's, say. Devices show it on the approval card, so that the person knows whose
// tool it is. The title and the hints are the server's word on its own tool, and are
// shown as such.
type ToolSource struct {
	// Server is the name of the server the tool comes from, as the host knows it.
	Server string `json:"server"`
	// Trusted says that the host marks the server as trusted, so that the server's hints
	// decide which of its calls are asked about.
	Trusted bool `json:"trusted,omitempty"`
	// Title is the tool's title for people, as the server gives it.
	Title string `json:"title,omitempty"`
	// Hints are what the server says of the tool, each true or false, by the names of
	// MCP's tool annotations without "Hint": "readOnly", "destructive", "idempotent"
	// and "openWorld". A hint the server did not give is absent; nil when it gave none.
	Hints map[string]bool `json:"hints,omitempty"`
}

// ApprovalResultData is the data of an [EventApprovalResult]: a device's decision.
type ApprovalResultData struct {
	RequestID string `json:"requestId"`
	// Decision is one of the approval's [ApprovalData.Decisions].
	Decision string `json:"decision"`
	// Reason is the person's reason for a denial, typed or picked from the presets.
	Reason string `json:"reason,omitempty"`
	// Arguments are the person's arguments, given only with "edit".
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Digest, when given, must be the approval's [ApprovalData.Digest].
	Digest string `json:"digest,omitempty"`
}

// ApprovalResolvedData is the data of an [EventApprovalResolved].
type ApprovalResolvedData struct {
	RequestID string `json:"requestId"`
	// Outcome is how the approval ended. On the wire: "approved", "edited", "denied",
	// "timed_out", "cancelled", "shutdown", "undelivered" or "disconnected".
	Outcome Outcome `json:"outcome"`
	// Grant says what an "always" decision granted; the outcome is then [Approved].
	Grant string `json:"grant,omitempty"`
	// Reason is the person's reason for a denial.
	Reason string `json:"reason,omitempty"`
	// Arguments are the arguments the tool runs with, when the person edited them.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// By is who decided, when a person did and the transport named them; At is when the
	// approval ended.
	By string    `json:"by,omitempty"`
	At time.Time `json:"at,omitzero"`
}

// approvalResolvedWire is ApprovalResolvedData as it is on the wire, the outcome by its
// name in tool_approval_resolved.
type approvalResolvedWire struct {
	RequestID string          `json:"requestId"`
	Outcome   string          `json:"outcome"`
	Grant     string          `json:"grant,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	By        string          `json:"by,omitempty"`
	At        time.Time       `json:"at,omitzero"`
}

// MarshalJSON encodes r with the outcome's name in tool_approval_resolved, which for
// [TimedOut] is "timed_out"; an outcome that approvals do not have is an error.
func (r ApprovalResolvedData) MarshalJSON() ([]byte, error) {
	name := r.Outcome.approvalName()
	if name == "" {
		return nil, fmt.Errorf("outcome: %v is not an outcome of an approval", r.Outcome)
	}
	return jsonx.Marshal(approvalResolvedWire{RequestID: r.RequestID, Outcome: name, Grant: r.Grant, Reason: r.Reason, Arguments: r.Arguments, By: r.By, At: r.At})
}

// UnmarshalJSON decodes r, reading the outcome by its name in tool_approval_resolved.
func (r *ApprovalResolvedData) UnmarshalJSON(b []byte) error {
	var w approvalResolvedWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	for o := Answered; o <= Denied; o++ {
		if name := o.approvalName(); name != "" && name == w.Outcome {
			*r = ApprovalResolvedData{RequestID: w.RequestID, Outcome: o, Grant: w.Grant, Reason: w.Reason, Arguments: w.Arguments, By: w.By, At: w.At}
			return nil
		}
	}
	return fmt.Errorf("askuser: unknown approval outcome %q", w.Outcome)
}
