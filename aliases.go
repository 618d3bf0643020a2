package askuser

import (
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// The types a host builds and reads, defined with the wire protocol (package wire) and
// named here too, so that a host needs no other package to ask and to read answers.
type (
	// SessionID identifies a session: a conversation whose devices all see its
	// requests. See [wire.SessionID].
	SessionID = wire.SessionID
	// Question is one question of a call. See [wire.Question].
	Question = wire.Question
	// Option is one choice of a [Question]. See [wire.Option].
	Option = wire.Option
	// Answer is the person's answer to one question. See [wire.Answer].
	Answer = wire.Answer
	// Outcome is how a call ended. See [wire.Outcome].
	Outcome = wire.Outcome
	// Approvers say who may decide an approval, and how many must approve it: an Ask
	// rule's ([Rule.Approvers]), the Default's ([Policy.Approvers]) or one call's
	// ([ApprovalOptions.Approvers]). See [store.Approvers] for each field, and
	// docs/APPROVALS.md.
	Approvers = store.Approvers
)

// StringSession returns the session id s, a JSON string on the wire.
func StringSession(s string) SessionID { return wire.StringSession(s) }

// IntSession returns the numeric session id n, a JSON number on the wire.
func IntSession(n int64) SessionID { return wire.IntSession(n) }

// The ways a call ends; [wire.Outcome] says what each means.
const (
	Answered     = wire.Answered
	Declined     = wire.Declined
	TimedOut     = wire.TimedOut
	Cancelled    = wire.Cancelled
	Undelivered  = wire.Undelivered
	Disconnected = wire.Disconnected
	Shutdown     = wire.Shutdown
	Invalid      = wire.Invalid
	Approved     = wire.Approved
	Edited       = wire.Edited
	Denied       = wire.Denied
)
