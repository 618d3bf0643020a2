package store

import (
	"context"
	"fmt"
	"time"

	"github.com/askuser-go/askuser/wire"
)

// Record is one request as a [Store] holds it, a question set or an approval: what was
// asked, and once it has ended, how. A Record is a value; the slices and pointers in one
// a Store returns are shared with the store and must not be modified.
type Record struct {
	// Session is the session whose devices are asked.
	Session wire.SessionID
	// Ask is the question set as devices are shown it, for a question set; zero for an
	// approval. Ask.RequestID names the question set within its session.
	Ask wire.AskData
	// Approval is the tool call to approve as devices are shown it, for an approval; nil
	// for a question set. Approval.RequestID names it within its session.
	Approval *wire.ApprovalData
	// Rev tells apart the requests made under one request id one after another: the
	// store sets it in Put, different for each.
	Rev uint64
	// AskedAt is when the request was first made.
	AskedAt time.Time
	// Outcome is zero while the request is pending, then how it ended.
	Outcome wire.Outcome
	// Answers are the accepted answers of a question set when Outcome is [wire.Answered].
	Answers []wire.Answer
	// Decision is how an approval was decided, once it has ended; nil before, and for a
	// question set.
	Decision *Decision
	// Carrier is the trace context of the call that made the request (observe.Observer.Carrier),
	// kept so that a dispatcher that ends it elsewhere can link to it; nil for none.
	Carrier map[string]string
}

// RequestID returns the id that names the request within its session: Ask.RequestID,
// or Approval.RequestID for an approval.
func (r Record) RequestID() string {
	if r.Approval != nil {
		return r.Approval.RequestID
	}
	return r.Ask.RequestID
}

// ExpiresAt returns when the request times out.
func (r Record) ExpiresAt() time.Time {
	if r.Approval != nil {
		return r.Approval.ExpiresAt
	}
	return r.Ask.ExpiresAt
}

// Kind returns whether the record is of a question set or of an approval.
func (r Record) Kind() Kind {
	if r.Approval != nil {
		return KindApproval
	}
	return KindQuestion
}

// Kind tells the two kinds of request apart.
type Kind int

const (
	// KindQuestion is a question set: a call of ask_user_questions.
	KindQuestion Kind = iota + 1
	// KindApproval is an approval: a host's tool call waiting for the person.
	KindApproval
)

// String returns "question" or "approval".
func (k Kind) String() string {
	switch k {
	case KindQuestion:
		return "question"
	case KindApproval:
		return "approval"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Store holds the pending requests (question sets and approvals) of one askuser.Dispatcher, or
// of several that share it (the replicas of a host, say), and decides how each ends: the
// first End wins. It keys records by session and [Record.RequestID], whatever their
// kind. The
// default, used when askuser.Options.Store is nil, is in memory and belongs to its dispatcher;
// the cluster module keeps records on NATS JetStream.
//
// Every method may be called concurrently. A method that returns an error changed
// nothing the caller can rely on; a dispatcher turns it into the [wire.Undelivered] outcome
// when asking, and into a refusal of the device's event when answering.
//
// A store shared by several dispatchers needs a transport that spans them. Each
// dispatcher sends the asks and resolutions of the questions it asks and ends through
// its own [wire.Transport], and nothing else: so every dispatcher's transport must deliver
// those events to the session's devices wherever they are connected, and a device that
// joins must be shown the session's pending questions from the shared store. A
// transport of one replica's own devices alone (a wshub.Hub by itself) does not do: the
// devices of one replica would never be shown the others' questions, nor told how the
// questions their replica asked were ended elsewhere. The cluster module's Transport
// spans replicas by delivering every ask and resolution from the store's own watch;
// askusertest.TestReplicas checks a pair of replicas for what this paragraph asks.
type Store interface {
	// Put records rec, whose Outcome is zero, as pending, and returns it with its Rev set
	// and true. When a request is already recorded under rec's session and request id,
	// pending or ended and still kept, whatever its kind, Put changes nothing and returns
	// that one and false.
	Put(ctx context.Context, rec Record) (Record, bool, error)

	// Get returns the request recorded under session and request id, pending or ended
	// and still kept; an error matching [wire.ErrNotPending] when there is none.
	Get(ctx context.Context, session wire.SessionID, requestID string) (Record, error)

	// End ends the pending request that rec names (its Session, RequestID and Rev) with
	// rec's Outcome, Answers and Decision, and reports whether it did. Of all the Ends of
	// one request, by every dispatcher sharing the store, exactly one reports true; the
	// others, and an End of a request that is unknown or has ended, report false.
	End(ctx context.Context, rec Record) (bool, error)

	// Pending returns the session's pending requests, of both kinds, oldest first.
	Pending(ctx context.Context, session wire.SessionID) ([]Record, error)

	// Watch calls f with the record of each request that ends from now until stop is
	// called, ended by any dispatcher sharing the store; it is how a dispatcher learns
	// that a request its callers wait on was ended elsewhere. A store that only one
	// dispatcher uses may never call f: a dispatcher learns of its own Ends itself. f may
	// be called more than once for an end, and concurrently, and must return quickly.
	Watch(f func(Record)) (stop func())
}

// AskEvent returns the event that shows the pending request to devices: a
// [wire.EventAsk] of its question set, or a [wire.EventApproval].
func (r Record) AskEvent() (wire.Event, error) {
	if r.Approval != nil {
		return wire.NewEvent(wire.EventApproval, r.Session, r.Approval)
	}
	return wire.NewEvent(wire.EventAsk, r.Session, &r.Ask)
}

// ResolvedEvent returns the event that tells devices how the ended request ended: a
// [wire.EventResolved] with the answers of a question set, or a
// [wire.EventApprovalResolved] with what the decision says. An outcome this version does not know (written to a shared
// store by a newer one) is told as [wire.Undelivered].
func (r Record) ResolvedEvent() (wire.Event, error) {
	if r.Approval == nil {
		data := wire.ResolvedData{RequestID: r.Ask.RequestID, Outcome: r.Outcome, Answers: r.Answers}
		if _, err := data.Outcome.MarshalText(); err != nil || data.Outcome >= wire.Approved {
			data.Outcome, data.Answers = wire.Undelivered, nil
		}
		return wire.NewEvent(wire.EventResolved, r.Session, data)
	}
	data := wire.ApprovalResolvedData{RequestID: r.Approval.RequestID, Outcome: r.Outcome}
	if dec := r.Decision; dec != nil {
		data.Reason, data.Arguments = dec.Reason, dec.Arguments
		if dec.Grant != nil {
			data.Grant = dec.Grant.Covers
		}
	}
	switch data.Outcome {
	case wire.Approved, wire.Edited, wire.Denied, wire.TimedOut, wire.Cancelled, wire.Undelivered, wire.Disconnected, wire.Shutdown:
	default: // not an outcome of an approval
		data.Outcome = wire.Undelivered
	}
	return wire.NewEvent(wire.EventApprovalResolved, r.Session, data)
}
