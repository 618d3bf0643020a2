package store

import (
	"context"
	"encoding/json"
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

	// Tally, for an approval whose host named approvers, is who may decide it and the
	// approvals recorded so far; nil for the others, which anyone of the session decides,
	// the first decision ending them.
	Tally *Tally
}

// Tally is what an approval with approvers keeps beside its request.
type Tally struct {
	// Approvers are who may decide, and how many must approve.
	Approvers Approvers
	// Requester is who asked for the call (askuser.ToolCall.Requester), whose approval
	// does not count when Approvers.SeparateDuties is set.
	Requester string
	// Approvals are the approvals recorded so far, oldest first, each with the digest
	// of the arguments it approved; only those with the present
	// wire.ApprovalData.Digest count. An edit is recorded as the editor's approval of
	// the edited arguments, and so starts the count again.
	Approvals []Approval
	// Arguments are the arguments the model wrote, once an edit changed the
	// approval's; nil before.
	Arguments json.RawMessage
	// Escalated is how many steps of Approvers.Escalate have fired: their people may
	// decide too. A dispatcher raises it with [Store.Update] when a step is due, so that
	// each step fires once across every dispatcher sharing the store.
	Escalated int
	// Version tells apart the states of the request that [Store.Update] made: 0 as Put
	// recorded it, then a new one, set by the store, with each Update.
	Version uint64
}

// Approvers say who may decide an approval and how many of them must approve it. The
// host names them (an askuser.Rule's, or askuser.ApprovalOptions'), never the model.
type Approvers struct {
	// Users are the people who may decide, by the names the transport authenticates
	// devices as (wire.Event.User).
	Users []string
	// Groups are the groups whose members may decide, by the names the transport gives
	// with each event (wire.Event.Groups). With neither Users nor Groups, anyone who may
	// act for the session decides, as without Approvers, but each must be named by the
	// transport to count toward Quorum.
	Groups []string
	// Quorum is how many approvals, from different people, the call needs; 0 means 1.
	// Any denial ends it at once; an edit starts the count again on the edited
	// arguments, with the editor's approval. "always" is not offered when Quorum is
	// more than 1.
	Quorum int
	// SeparateDuties says that the approval of the call's requester
	// (askuser.ToolCall.Requester) does not count toward Quorum: someone else must
	// approve. Their denial still ends the call.
	SeparateDuties bool
	// Escalate are the steps that widen Users and Groups while nobody has ended the
	// approval, by increasing After. It needs Users or Groups: without them anyone of
	// the session decides already.
	Escalate []Escalation
}

// Escalation is one step of [Approvers.Escalate]: once the approval has waited After
// since it was asked with no decision ending it, Users and Groups may decide it too,
// beside the approvers named before. The request stays the one request, with its one
// timeout: the approvals already given still count toward Quorum, nobody is asked
// twice, and a step that comes after the approval ended, or after it timed out, never
// fires.
//
// The dispatcher that made the request fires each step, once across the dispatchers
// sharing its store ([Tally.Escalated] is raised by compare-and-set): that one tells
// the session's devices the approvers now (wire.ApprovalProgressData.Names) and gives
// the step's people to the host's Notifier. A dispatcher that joins the pending
// request (a call resumed with the same id, after a restart say) fires the steps due
// too; when no dispatcher waits on it any more, no step fires until one does.
type Escalation struct {
	// After is how long after the approval was asked the step fires: positive, and
	// more than the step's before.
	After time.Duration
	// Users and Groups are the people the step adds, as [Approvers.Users] and
	// [Approvers.Groups]; one name at least, none empty.
	Users  []string
	Groups []string
}

// Approval is one approval recorded toward an approval's quorum.
type Approval struct {
	// By is who approved (wire.Event.User); Via how the decision came, as
	// [Decision.Via]; At when.
	By  string
	Via string
	At  time.Time
	// Digest is the wire.ApprovalData.Digest of the arguments approved.
	Digest string
	// Arguments are the arguments an edit gave, when this approval is an edit's.
	Arguments json.RawMessage
	// Counted says whether it counts toward the quorum: false for the requester's own
	// under SeparateDuties.
	Counted bool
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

	// Update replaces the pending request that rec names (its Session, RequestID and
	// Rev), an approval with a Tally, with rec, while it is in the state rec.Tally.Version
	// names (a compare-and-set): it returns rec with its new Tally.Version and true. It
	// reports false, changing nothing, when the request has ended, is unknown, or was
	// updated meanwhile (read it again). An Update keeps Rev and never ends a request: it
	// records the approvals of an approval that needs several, and the arguments an edit
	// changed ([Tally]). Every dispatcher sharing the store reads what it wrote; Watch
	// does not report it.
	Update(ctx context.Context, rec Record) (Record, bool, error)

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
		data.Reason, data.Arguments, data.By, data.At = dec.Reason, dec.Arguments, dec.By, dec.At.UTC()
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
