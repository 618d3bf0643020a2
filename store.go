package askuser

import (
	"context"
	"time"
)

// Record is one question set as a [Store] holds it: what was asked, and once it has
// ended, how. A Record is a value; the slices in one a Store returns are shared with the
// store and must not be modified.
type Record struct {
	// Session is the session whose devices are asked.
	Session SessionID
	// Ask is the question set as devices are shown it; Ask.RequestID names it within its
	// session.
	Ask AskData
	// Rev tells apart the question sets asked under one request id one after another: the
	// store sets it in Put, different for each.
	Rev uint64
	// AskedAt is when the question set was first asked.
	AskedAt time.Time
	// Outcome is zero while the question set is pending, then how it ended.
	Outcome Outcome
	// Answers are the accepted answers when Outcome is [Answered].
	Answers []Answer
}

// Store holds the pending question sets of one [Dispatcher], or of several that share it
// (the replicas of a host, say), and decides how each ends: the first End wins. The
// default, used when [Options.Store] is nil, is in memory and belongs to its dispatcher;
// the cluster module keeps records on NATS JetStream.
//
// Every method may be called concurrently. A method that returns an error changed
// nothing the caller can rely on; a dispatcher turns it into the [Undelivered] outcome
// when asking, and into a refusal of the device's event when answering.
//
// A store shared by several dispatchers needs a transport that spans them. Each
// dispatcher sends the asks and resolutions of the questions it asks and ends through
// its own [Transport], and nothing else: so every dispatcher's transport must deliver
// those events to the session's devices wherever they are connected, and a device that
// joins must be shown the session's pending questions from the shared store. A
// transport of one replica's own devices alone (a wshub.Hub by itself) does not do: the
// devices of one replica would never be shown the others' questions, nor told how the
// questions their replica asked were ended elsewhere. The cluster module's Transport
// spans replicas by delivering every ask and resolution from the store's own watch;
// askusertest.TestReplicas checks a pair of replicas for what this paragraph asks.
type Store interface {
	// Put records rec, whose Outcome is zero, as pending, and returns it with its Rev set
	// and true. When a question set is already recorded under rec's session and request
	// id, pending or ended and still kept, Put changes nothing and returns that one and
	// false.
	Put(ctx context.Context, rec Record) (Record, bool, error)

	// Get returns the question set recorded under session and request id, pending or
	// ended and still kept; an error matching [ErrNotPending] when there is none.
	Get(ctx context.Context, session SessionID, requestID string) (Record, error)

	// End ends the pending question set that rec names (its Session, Ask.RequestID and
	// Rev) with rec's Outcome and Answers, and reports whether it did. Of all the Ends of
	// one question set, by every dispatcher sharing the store, exactly one reports true;
	// the others, and an End of a question set that is unknown or has ended, report false.
	End(ctx context.Context, rec Record) (bool, error)

	// Pending returns the session's pending question sets, oldest first.
	Pending(ctx context.Context, session SessionID) ([]Record, error)

	// Watch calls f with the record of each question set that ends from now until stop
	// is called, ended by any dispatcher sharing the store; it is how a dispatcher learns
	// that a question its callers wait on was ended elsewhere. A store that only one
	// dispatcher uses may never call f: a dispatcher learns of its own Ends itself. f may
	// be called more than once for an end, and concurrently, and must return quickly.
	Watch(f func(Record)) (stop func())
}
