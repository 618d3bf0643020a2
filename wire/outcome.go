package wire

import "fmt"

// Outcome is how a call ended. Its text form is the "outcome" of [ResolvedData].
type Outcome int

const (
	// Answered: a device sent a valid answer; the result is the answers JSON.
	Answered Outcome = iota + 1
	// Declined: a device declined to answer.
	Declined
	// TimedOut: nobody answered before the timeout.
	TimedOut
	// Cancelled: the session was cancelled, or the caller's context ended.
	Cancelled
	// Undelivered: no device was connected (with askuser.Options.FailWithoutDevice), or the
	// question could not be sent or recorded.
	Undelivered
	// Disconnected: the session's last device went away (with askuser.Options.FailOnDisconnect).
	Disconnected
	// Shutdown: the dispatcher was closed.
	Shutdown
	// Invalid: the call was refused before anything was asked (invalid arguments, or an id
	// no device could answer or that another question holds); no device was bothered.
	Invalid
	// Approved: the tool call may run as the model wrote it, approved by the person, by
	// a rule, or by a grant of an earlier "always" decision. Approvals only.
	Approved
	// Edited: the person edited the tool call's arguments; it may run with theirs.
	// Approvals only.
	Edited
	// Denied: the tool call must not run, denied by the person or by a rule. Approvals
	// only.
	Denied
)

// outcomeNames are the outcomes' names on the wire, in the order of the constants.
var outcomeNames = [...]string{"answered", "declined", "timeout", "cancelled", "undelivered", "disconnected", "shutdown", "invalid", "approved", "edited", "denied"}

// name returns o's name in ask_user_questions_resolved, or "" for an unknown outcome.
func (o Outcome) name() string {
	if o < Answered || o > Denied {
		return ""
	}
	return outcomeNames[o-Answered]
}

// approvalName returns o's name in tool_approval_resolved, or "" for an outcome that
// approvals do not have.
func (o Outcome) approvalName() string {
	switch o {
	case Answered, Declined, Invalid:
		return ""
	case TimedOut:
		return "timed_out"
	}
	return o.name()
}

// String returns the outcome's wire name in ask_user_questions_resolved: "answered",
// "declined", "timeout", "cancelled", "undelivered", "disconnected", "shutdown",
// "invalid", and for approvals "approved", "edited" and "denied". (In
// tool_approval_resolved, TimedOut is "timed_out".)
func (o Outcome) String() string {
	if n := o.name(); n != "" {
		return n
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// MarshalText encodes the outcome as its wire name.
func (o Outcome) MarshalText() ([]byte, error) {
	if n := o.name(); n != "" {
		return []byte(n), nil
	}
	return nil, fmt.Errorf("askuser: unknown outcome %d", int(o))
}

// UnmarshalText decodes a wire name.
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, n := range outcomeNames {
		if n == string(b) {
			*o = Answered + Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("askuser: unknown outcome %q", b)
}
