package wire

import "time"

// EventInbox is sent by a transport to a device connected as a person (a connection its
// transport authenticated as a user), before any other event: who it is connected as, and
// the approvals decided lately that it may see. Its data is an [InboxData]. A client
// that does not know it ignores it, and shows every approval with its decision controls,
// as before.
const EventInbox = "inbox"

// InboxData is the data of an [EventInbox].
type InboxData struct {
	// User is the person the device is connected as, and Groups the groups they belong
	// to, as the transport authenticated them: a device decides an approval whose
	// [ApproversData] names the user or one of the groups (or names none), and shows the
	// others read-only.
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
	// Decided are the approvals of the person's sessions, and those routed to them, that
	// ended lately, newest first.
	Decided []InboxEntry `json:"decided"`
}

// The kinds of [InboxEntry]: its Kind.
const (
	InboxQuestion = "question"
	InboxApproval = "approval"
)

// InboxEntry is one request in a person's inbox: pending, or ended lately.
type InboxEntry struct {
	SessionID SessionID `json:"sessionId"`
	// SessionTitle is what the host calls the session (askuser.Options.SessionTitle).
	SessionTitle string `json:"sessionTitle,omitempty"`
	RequestID    string `json:"requestId"`
	// Kind is [InboxQuestion] or [InboxApproval].
	Kind string `json:"kind"`
	// What says what is asked in a few words: an approval's tool, a question set's first
	// header (or question).
	What    string    `json:"what"`
	AskedAt time.Time `json:"askedAt,omitzero"`
	// ExpiresAt is when a pending request times out.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// ReadOnly says that the person may see the pending approval but not decide it: its
	// approvers are others.
	ReadOnly bool `json:"readOnly,omitempty"`
	// Approvers are a pending approval's approvers and the approvals so far, as
	// [ApprovalData.Approvers].
	Approvers *ApproversData `json:"approvers,omitempty"`
	// Outcome is how an ended request ended, by its name on the wire (as in
	// tool_approval_resolved for an approval); By who decided, when a person did; At
	// when it ended.
	Outcome string    `json:"outcome,omitempty"`
	By      string    `json:"by,omitempty"`
	At      time.Time `json:"at,omitzero"`
}
