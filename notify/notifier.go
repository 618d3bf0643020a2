package notify

import (
	"context"
	"time"

	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// Notifier is told of each request that has gone askuser.Options.NotifyAfter with no device
// showing it to its person: none connected, or every one hidden. While a device shows
// it, the notice waits; once the request has gone a whole NotifyAfter unseen (since it
// was made, or since a device last showed it), the notice comes. [Webhook] is one that
// posts a signed webhook.
//
// Notify is called once per request, by the dispatcher that made it (so once across
// the replicas of a host), and once more per escalation step of an approval whose
// approvers escalate (store.Escalation: by the dispatcher that fired the step, once
// across the replicas, with [Notice.To] set, whether or not a device shows it), in a
// goroutine of its own: it may block, retry, and take its
// time. Its ctx ends when the request ends (answered, decided, timed out, ...) or the
// dispatcher closes; a notifier that is still trying then stops. Its error, and any
// failure of its own, changes nothing of the request. Notify may be called
// concurrently.
type Notifier interface {
	Notify(ctx context.Context, n Notice) error
}

// Notice describes a request no device is showing, for a [Notifier].
type Notice struct {
	Kind      store.Kind
	Session   wire.SessionID
	RequestID string
	// Title is what the request is about, in a line: the first question's text, or the
	// tool's name.
	Title string
	// ExpiresAt is when the request times out.
	ExpiresAt time.Time
	// Decisions are the approval's decisions, for a notifier that offers actions; nil for
	// a question set.
	Decisions []string
	// To, for the notice of an approval's escalation step (store.Escalation), names the
	// people the step adds: its users, then its groups. Nil for the notice of a request
	// gone unseen, which is for whoever the session belongs to.
	To []string
	// Users are the people a notifier can give links of their own that act as them
	// ([Links.AnswerAs], [Links.ActionAs]): the users among To for an escalation step's
	// notice, and the approvers' users for the notice of an approval with approvers gone
	// unseen, which a link of no person cannot decide. A link names one person, never a
	// group, whose people only the host knows.
	Users []string
}
