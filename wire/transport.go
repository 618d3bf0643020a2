package wire

import (
	"context"
	"time"
)

// Transport carries events from the dispatcher to the devices of a session, and the
// devices' events back to an [Inbound] (the dispatcher).
//
// Send delivers ev to every device currently connected for ev.SessionID. It may be called
// concurrently, for the same session or different ones. It must not block for long: a
// transport queues the event per device and returns, and deals with a slow device itself
// (by dropping it, say), so that one device never delays another session. Send returns an
// error only when the event could not be handed to the transport at all (it is closed,
// say); a session with no device is not an error. A Send error of an ask ends the
// question as [Undelivered]. Send may call the dispatcher's [Inbound] methods, or
// askuser.Dispatcher.CancelSession, before it returns (a transport answering for a device from
// within Send, say): ending a question never waits for a Send.
//
// Every transport keeps the join rule: a device that joins a session is shown, first,
// the session's pending requests (the question sets of [Inbound.Pending], then the
// approvals of [Inbound.PendingApprovals], read atomically with joining), then every
// event sent for the session after it joined, in order, and never the same request's
// ask (an ask_user_questions or tool_approval event) twice until its resolution (a
// request pending when the device joined may also be sent to it at that very moment:
// transports key asks by request id, which one session's requests of both kinds share).
// The dispatcher, for its part, never sends a request's resolution before its ask.
//
// With a store.Store shared by several dispatchers, every dispatcher's transport must reach
// the session's devices on all of them, as the Store's documentation says.
//
// A transport that carries the devices' events back has a method Bind(Inbound), which
// askuser.New calls with the dispatcher. A transport may also implement [Presence].
type Transport interface {
	Send(ctx context.Context, ev Event) error
}

// Presence is implemented by a transport that knows whether a session has a device
// connected. With it, askuser.Options.FailWithoutDevice and askuser.Options.FailOnDisconnect can act;
// without it, they assume a device may be there. Connected may be called concurrently.
type Presence interface {
	Connected(session SessionID) bool
}

// Inbound is the side of the dispatcher a transport calls: askuser.New gives it to the
// transport's method Bind(Inbound). Its methods may be called concurrently.
//
// A dispatcher's Inbound also has the method
//
//	Lookup(ctx context.Context, session SessionID, id string) (store.Record, error)
//
// which says how a request ended, as well as whether it is pending (an error matching
// [ErrNotPending] when the dispatcher knows nothing of it). A transport that serves answer
// links asks it, so that a link's page says how its request ended; it is not part of
// Inbound, so that this package need not know of stores.
//
// The transport is the authorization boundary: it must set ev.SessionID to a session the
// device is authorized for before calling HandleEvent, whatever the device wrote there.
type Inbound interface {
	// HandleEvent takes one event from a device. A nil error means it was accepted. An error
	// is for that device alone, which the transport should tell with [ErrorEvent].
	HandleEvent(ctx context.Context, ev Event) error
	// Pending returns the session's pending question sets, oldest first, to show a device
	// that connects or reconnects (the join rule of [Transport]). It must not call back
	// into the transport: a transport may hold its own lock while it calls Pending.
	Pending(session SessionID) []AskData
	// PendingApprovals returns the session's pending approvals, oldest first, to show a
	// joining device after the question sets, with the same rule as Pending.
	PendingApprovals(session SessionID) []ApprovalData
	// Disconnected tells that the session's last device has gone.
	Disconnected(session SessionID)
}

// Attention is implemented by a transport that knows whether a device shows a session
// to its person: a connected device whose page is not hidden, say. The dispatcher asks
// it before notifying. Without it, a transport's [Presence] stands in (a connected
// device counts as seen); with neither, a request is taken as unseen. WatchedSince may be
// called concurrently.
type Attention interface {
	// WatchedSince reports whether a device of the session has been visible to its
	// person at any moment since t: connected and not hidden, now or at some time after t.
	WatchedSince(session SessionID, t time.Time) bool
}
