package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// Transport is one replica's [wire.Transport] in a cluster: it gives the replica's
// devices, which a local transport holds (a wshub.Hub, say), every event of their
// sessions, wherever it was sent from, and it is the local transport's
// [wire.Inbound].
//
//   - Questions (ask and resolved events) reach the devices from the [Store]'s watch of
//     the bucket, on every replica, in the bucket's one order, so Send ignores them: the
//     record the dispatcher has just written is the event.
//   - Every other event given to Send (a host's own events: a transcript, a status) is
//     delivered to the local devices and published on the subject
//     "<prefix>.events.<session>", whence every other replica delivers it to its own.
//   - As the local transport's Inbound, Pending answers from what the store's watch has
//     seen, consistently with the events it has relayed: a device that joins on any
//     replica sees every pending question, then every later event, none twice (the join
//     rule of wire.Transport, kept across replicas). HandleEvent and Disconnected go
//     to the bound Inbound, the replica's dispatcher, which ends questions in the shared
//     store: an answer is accepted on whichever replica its device is on.
//
// Transport implements [wire.Presence] across replicas: a session has a device when
// any replica's local transport has one. It implements [wire.Attention] the same way,
// for the dispatcher's notify.Notifier: a request is seen when a device of any
// replica shows it (a replica answers for its devices while one of the session is
// connected to it), so that the notice comes once, from the replica that asked, and only
// when no device of any replica is looking.
//
// All methods may be called concurrently.
type Transport struct {
	store     *Store
	local     wire.Transport
	presence  wire.Presence  // local's, when it has one
	attention wire.Attention // local's, when it has one
	id        string         // this replica's, to skip its own publications
	prefix    string

	sub *nats.Subscription // the events of every session

	mu     sync.Mutex
	in     wire.Inbound
	here   map[askuser.SessionID]*nats.Subscription // sessions with a local device: their presence subjects
	closed bool
}

// presenceTimeout bounds the question "has any replica a device of this session?": past
// it, the answer is yes, which only means waiting for an answer.
const presenceTimeout = 2 * time.Second

// replicaHeader names the replica that published an event.
const replicaHeader = "Askuser-Replica"

// NewTransport returns the transport of the replica whose store is st and whose devices
// local holds. It starts relaying st's question events to local at once, beginning with
// the ask of every request pending now (local has no device yet: a wshub.Hub learns
// from them whom approvals are for, and what its people's inboxes hold). Make the
// replica's dispatcher with it (askuser.New binds them), which also binds local to it
// when local has a method Bind(wire.Inbound), as a wshub.Hub does. One Transport per
// Store.
func NewTransport(st *Store, local wire.Transport) (*Transport, error) {
	t := &Transport{store: st, local: local, id: nuid.Next(), prefix: st.opts.Prefix, here: make(map[askuser.SessionID]*nats.Subscription)}
	t.presence, _ = local.(wire.Presence)
	t.attention, _ = local.(wire.Attention)
	sub, err := st.nc.Subscribe(t.prefix+".events.>", t.receive)
	if err != nil {
		return nil, fmt.Errorf("cluster: subscribing to the events: %w", err)
	}
	t.sub = sub
	// Once the server has the subscription, every event published from now on reaches
	// this replica.
	if err := st.nc.FlushTimeout(st.opts.RequestTimeout); err != nil {
		_ = sub.Unsubscribe()
		return nil, unavailable("subscribing to the events", err)
	}
	// The requests the watch saw before the relay was set are relayed first: the local
	// transport has no device yet (it is bound to the dispatcher later, and then shows
	// them to its devices by Pending on joining), but one that keeps what its people's
	// inboxes need, or routes approvals to people (a wshub.Hub), learns of them.
	if !st.setRelay(t.relay) {
		_ = sub.Unsubscribe()
		return nil, errors.New("cluster: the store already has a transport")
	}
	return t, nil
}

// Bind sets where the local devices' events go: the replica's dispatcher; askuser.New
// calls it. When local has a method Bind(wire.Inbound), Bind then binds local to t,
// so that the local devices' events come through t.
func (t *Transport) Bind(in wire.Inbound) {
	t.mu.Lock()
	t.in = in
	t.mu.Unlock()
	if b, ok := t.local.(interface{ Bind(wire.Inbound) }); ok {
		b.Bind(t)
	}
}

func (t *Transport) inbound() wire.Inbound {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.in
}

// relay delivers a question event of the store's watch to the local devices.
func (t *Transport) relay(ev wire.Event) {
	_ = t.local.Send(context.Background(), ev)
}

// Send delivers ev to the session's devices on every replica. Ask and resolved events
// are not sent from here: every replica's store watch delivers them, from the record the
// dispatcher wrote. Other events go to the local devices at once, and to the other
// replicas' through NATS; Send returns an error when NATS would not take the event.
func (t *Transport) Send(ctx context.Context, ev wire.Event) error {
	if isRequestEvent(ev.Type) {
		return nil
	}
	b, err := ev.Encode()
	if err != nil {
		return err
	}
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return wire.ErrTransportClosed
	}
	lerr := t.local.Send(ctx, ev)
	msg := &nats.Msg{Subject: t.prefix + ".events." + sessionToken(ev.SessionID), Data: b, Header: nats.Header{replicaHeader: []string{t.id}}}
	if err := t.store.nc.PublishMsg(msg); err != nil {
		return unavailable("publishing an event", err)
	}
	return lerr
}

// receive delivers an event published by another replica to the local devices.
func (t *Transport) receive(m *nats.Msg) {
	if m.Header.Get(replicaHeader) == t.id {
		return
	}
	ev, err := wire.ParseEvent(m.Data)
	if err != nil || isRequestEvent(ev.Type) {
		return // requests come from the store's watch
	}
	_ = t.local.Send(context.Background(), ev)
}

// isRequestEvent reports whether typ is the ask or the resolution of a request, which
// the store's watch delivers.
func isRequestEvent(typ string) bool {
	switch typ {
	case wire.EventAsk, wire.EventResolved, wire.EventApproval, wire.EventApprovalResolved:
		return true
	}
	return false
}

// Pending returns the session's pending questions as the store's watch has seen them,
// for the local transport to show a device that joins; it implements
// [wire.Inbound.Pending] for the local transport. It reads no network, and may be
// called with the local transport's lock held. It also notes that the session has a
// local device, for [Transport.Connected] on other replicas.
func (t *Transport) Pending(session askuser.SessionID) []wire.AskData {
	t.arrived(session)
	var out []wire.AskData
	for _, r := range t.store.pendingOf(session) {
		if r.Approval == nil {
			out = append(out, r.Ask)
		}
	}
	return out
}

// PendingApprovals returns the session's pending approvals as the store's watch has seen
// them, as Pending does for question sets; it implements [wire.Inbound.PendingApprovals].
func (t *Transport) PendingApprovals(session askuser.SessionID) []wire.ApprovalData {
	var out []wire.ApprovalData
	for _, r := range t.store.pendingOf(session) {
		if r.Approval != nil {
			out = append(out, *r.Approval)
		}
	}
	return out
}

// HandleEvent passes a device's event to the bound Inbound. When ctx has no deadline, it
// gets one of the store's [Options.RequestTimeout] for the whole event: a dispatcher
// reads the question and then ends it, and without quorum a refusal then takes one
// timeout, not one for each.
func (t *Transport) HandleEvent(ctx context.Context, ev wire.Event) error {
	in := t.inbound()
	if in == nil {
		return errors.New("cluster: the transport is not bound to a dispatcher")
	}
	ctx, cancel := t.store.bounded(ctx)
	defer cancel()
	return in.HandleEvent(ctx, ev)
}

// Disconnected tells the bound Inbound that the session's last local device has gone.
// A dispatcher that then ends questions for want of a device (with
// [askuser.Options.FailOnDisconnect]) asks [Transport.Connected] first, which sees the
// devices of the other replicas.
func (t *Transport) Disconnected(session askuser.SessionID) {
	t.left(session)
	if in := t.inbound(); in != nil {
		in.Disconnected(session)
	}
}

// arrived notes that session has a local device: other replicas asking whether it has
// one get an answer from this one.
func (t *Transport) arrived(session askuser.SessionID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.here[session] != nil {
		return
	}
	// An empty question asks whether a device is connected; one that carries a time (Unix
	// nanoseconds) asks whether a device has been visible since then. Only yes is said.
	sub, err := t.store.nc.Subscribe(t.prefix+".presence."+sessionToken(session), func(m *nats.Msg) {
		yes := false
		if len(m.Data) == 0 {
			yes = t.localConnected(session)
		} else if ns, err := strconv.ParseInt(string(m.Data), 10, 64); err == nil {
			yes = t.localWatched(session, time.Unix(0, ns))
		}
		if yes {
			_ = m.Respond(nil)
		}
	})
	if err == nil {
		t.here[session] = sub
	}
}

// left notes that session's last local device has gone, unless one came back meanwhile.
func (t *Transport) left(session askuser.SessionID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sub := t.here[session]
	if sub == nil || t.localConnected(session) {
		return
	}
	delete(t.here, session)
	_ = sub.Unsubscribe()
}

// localConnected reports whether the local transport has a device of session; without
// Presence it assumes so.
func (t *Transport) localConnected(session askuser.SessionID) bool {
	return t.presence == nil || t.presence.Connected(session)
}

// localWatched reports whether a local device has shown session to its person since
// since: the local transport's [wire.Attention], or else its [wire.Presence] (a
// connected device counts as seen); with neither, no.
func (t *Transport) localWatched(session askuser.SessionID, since time.Time) bool {
	if t.attention != nil {
		return t.attention.WatchedSince(session, since)
	}
	return t.presence != nil && t.presence.Connected(session)
}

// WatchedSince reports whether a device of session, on any replica, has been visible to
// its person at some moment since since: one of this replica's, or one of another
// replica's, which answers on NATS. When no replica says yes within [presenceTimeout]
// (NATS itself not answering, say), it reports false: the notice is then sent, which
// costs a message, where a wrong yes would cost the person's wait. It implements
// [wire.Attention].
func (t *Transport) WatchedSince(session askuser.SessionID, since time.Time) bool {
	if t.localWatched(session, since) {
		return true
	}
	_, err := t.store.nc.Request(t.prefix+".presence."+sessionToken(session), []byte(strconv.FormatInt(since.UnixNano(), 10)), presenceTimeout)
	return err == nil
}

// Connected reports whether a device of session is connected to any replica: to this
// one's local transport, or to another replica, which answers on NATS. When NATS does not
// answer in time it reports true: the question is then asked, and waits for an answer.
func (t *Transport) Connected(session askuser.SessionID) bool {
	if t.presence != nil && t.presence.Connected(session) {
		return true
	}
	_, err := t.store.nc.Request(t.prefix+".presence."+sessionToken(session), nil, presenceTimeout)
	return !errors.Is(err, nats.ErrNoResponders)
}

// Close stops relaying events, to the local devices and from them; later Sends return
// [wire.ErrTransportClosed]. It closes neither the store nor the local transport.
// Close may be called more than once.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	subs := t.here
	t.here = nil
	t.mu.Unlock()
	for _, sub := range subs {
		_ = sub.Unsubscribe()
	}
	_ = t.sub.Unsubscribe()
	t.store.setRelayOff()
	return nil
}
