package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/askuser-go/askuser/wire"
)

// Decision is how a person (or the clock) decided an approval, as the ended record of
// the approval keeps it.
type Decision struct {
	// Decision is the decision made: one of wire's Decision constants ([wire.DecisionApprove], ...); empty when the
	// approval ended without one (timed out, cancelled, ...).
	Decision string
	// Reason is the reason given for a denial.
	Reason string
	// Arguments are the edited arguments, for an "edit".
	Arguments json.RawMessage
	// Grant is what an "always" decision granted.
	Grant *Grant
	// By is who decided: the principal the transport authenticated the device as
	// ([wire.Event.User]); empty when no person decided, or the transport knows no principal.
	By string
	// Via is how the decision came: "" from a device, "link" from an answer or action
	// link ([wire.Event.Via]).
	Via string
	// At is when the approval ended.
	At time.Time
}

// Grant lets later tool calls of a session run without asking: what an "always"
// decision makes. It is kept in the [Store] (see [GrantStore]), so that every
// dispatcher sharing the store honours it.
type Grant struct {
	Session wire.SessionID
	// ID names the grant within its session: the request id of the approval that made it.
	ID string
	// Tool is the name of the tool whose calls it covers.
	Tool string
	// Scope, when set, is the name of the narrower askuser.Rule a call must also match (see
	// askuser.Rule.Always); empty, the grant covers every call of Tool in the session.
	Scope string
	// Covers says in words what the grant covers, as the person was shown.
	Covers string
	// By is who granted it; At is when.
	By string
	At time.Time
}

// GrantStore is implemented by a [Store] that keeps grants. Without it, "always" is not
// offered. The methods may be called concurrently.
type GrantStore interface {
	// PutGrant keeps g, replacing a grant of the same session and ID.
	PutGrant(ctx context.Context, g Grant) error
	// Grants returns the session's grants, oldest first.
	Grants(ctx context.Context, session wire.SessionID) ([]Grant, error)
	// RevokeGrant removes the session's grant id, and reports whether there was one.
	RevokeGrant(ctx context.Context, session wire.SessionID, id string) (bool, error)
}
