package askuser

import (
	"context"
	"errors"
	"sync"
)

// Transport carries events from the dispatcher to the devices of a session.
//
// Send delivers ev to every device currently connected to ev.SessionID. It may be called
// concurrently, for the same session or different ones. It must not block for long: a
// transport queues the event per device and returns, and deals with a slow device itself
// (by dropping it, say), so that one device never delays another session. Send returns an
// error only when the event could not be handed to the transport at all (it is closed,
// say); a session with no device is not an error, since a device may connect later and is
// then shown the pending questions (see [Inbound.Pending]). A Send error ends the question
// as [Undelivered].
//
// A transport may also implement [Presence]. Events a transport receives from devices go
// to an [Inbound], normally the [*Dispatcher], given to the transport with a Bind method
// or the like.
type Transport interface {
	Send(ctx context.Context, ev Event) error
}

// Presence is implemented by a transport that knows whether a session has a device
// connected. With it, [FailWithoutDevice] and [FailOnDisconnect] can act; without it,
// they assume a device may be there. Connected may be called concurrently.
type Presence interface {
	Connected(session SessionID) bool
}

// Inbound is the side of the dispatcher a transport calls. [*Dispatcher] implements it;
// a cluster layer can implement it to route events to the replica that holds the question.
//
// The transport is the authorization boundary: it must set ev.SessionID to a session the
// device is authorized for before calling HandleEvent, whatever the device wrote there.
type Inbound interface {
	// HandleEvent takes one event from a device. A nil error means it was accepted. An error
	// is for that device alone, which the transport should tell with [ErrorEvent].
	HandleEvent(ctx context.Context, ev Event) error
	// Pending returns the session's pending questions, oldest first, to show a device that
	// connects or reconnects.
	Pending(session SessionID) []AskData
	// Disconnected tells that the session's last device has gone.
	Disconnected(session SessionID)
}

// ErrTransportClosed is returned by a closed [MemoryTransport].
var ErrTransportClosed = errors.New("askuser: transport closed")

// MemoryTransport is an in-process [Transport] and [Presence] for tests and examples:
// devices are [*MemoryDevice] values with unbounded queues. The zero value is not usable;
// call [NewMemoryTransport].
type MemoryTransport struct {
	mu      sync.Mutex
	devices map[SessionID][]*MemoryDevice
	inbound Inbound
	closed  bool
}

// NewMemoryTransport returns a transport with no device. Call Bind before devices send.
func NewMemoryTransport() *MemoryTransport {
	return &MemoryTransport{devices: make(map[SessionID][]*MemoryDevice)}
}

// Bind sets where devices' events go, normally the dispatcher using this transport.
func (t *MemoryTransport) Bind(in Inbound) {
	t.mu.Lock()
	t.inbound = in
	t.mu.Unlock()
}

// Send queues ev on every device of its session.
func (t *MemoryTransport) Send(ctx context.Context, ev Event) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrTransportClosed
	}
	for _, d := range t.devices[ev.SessionID] {
		d.push(ev)
	}
	return nil
}

// Connected reports whether the session has a device.
func (t *MemoryTransport) Connected(session SessionID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.devices[session]) > 0
}

// Connect adds a device to the session. Like a real transport, it first queues the
// session's pending questions for that device alone. It holds the transport's lock while
// it joins and takes that snapshot, so that no event of the session falls between the
// two: the device may see an ask twice (clients key questions by requestId) but never
// misses one, nor sees an ask after its resolution.
func (t *MemoryTransport) Connect(session SessionID) *MemoryDevice {
	d := &MemoryDevice{t: t, session: session, wake: make(chan struct{}, 1)}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		d.closed = true
		return d
	}
	t.devices[session] = append(t.devices[session], d)
	if t.inbound != nil {
		for _, a := range t.inbound.Pending(session) {
			if ev, err := NewEvent(EventAsk, session, a); err == nil {
				d.push(ev)
			}
		}
	}
	return d
}

// Close disconnects every device; later Sends fail with [ErrTransportClosed].
func (t *MemoryTransport) Close() error {
	t.mu.Lock()
	t.closed = true
	all := t.devices
	t.devices = map[SessionID][]*MemoryDevice{}
	t.mu.Unlock()
	for _, ds := range all {
		for _, d := range ds {
			d.markClosed()
		}
	}
	return nil
}

// MemoryDevice is one device of a [MemoryTransport]. Its methods may be called
// concurrently.
type MemoryDevice struct {
	t       *MemoryTransport
	session SessionID
	mu      sync.Mutex
	queue   []Event
	closed  bool
	wake    chan struct{}
}

// Session returns the device's session.
func (d *MemoryDevice) Session() SessionID { return d.session }

// Recv returns the next event sent to the device, waiting for one until ctx ends. After
// the device is closed and its queue drained, it returns [ErrTransportClosed].
func (d *MemoryDevice) Recv(ctx context.Context) (Event, error) {
	for {
		d.mu.Lock()
		if len(d.queue) > 0 {
			ev := d.queue[0]
			d.queue[0] = Event{}
			d.queue = d.queue[1:]
			d.mu.Unlock()
			return ev, nil
		}
		closed := d.closed
		d.mu.Unlock()
		if closed {
			return Event{}, ErrTransportClosed
		}
		select {
		case <-d.wake:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Send delivers an event from the device, as a real transport would, with the session
// forced to the device's own, and returns the Inbound's verdict: nil when the event was
// accepted, the refusal otherwise. Unlike a real transport it does not also queue the
// refusal to the device as an [EventError], so that each refusal is reported once.
func (d *MemoryDevice) Send(ctx context.Context, ev Event) error {
	d.t.mu.Lock()
	in := d.t.inbound
	d.t.mu.Unlock()
	if in == nil {
		return errors.New("askuser: MemoryTransport has no Inbound; call Bind")
	}
	ev.SessionID = d.session
	return in.HandleEvent(ctx, ev)
}

// Close disconnects the device. When it was the session's last, the Inbound is told.
func (d *MemoryDevice) Close() {
	t := d.t
	t.mu.Lock()
	list := t.devices[d.session]
	found := false
	for i, x := range list {
		if x == d {
			list = append(list[:i:i], list[i+1:]...)
			found = true
			break
		}
	}
	if len(list) == 0 {
		delete(t.devices, d.session)
	} else {
		t.devices[d.session] = list
	}
	last := found && len(list) == 0
	in := t.inbound
	t.mu.Unlock()
	d.markClosed()
	if last && in != nil {
		in.Disconnected(d.session)
	}
}

func (d *MemoryDevice) push(ev Event) {
	d.mu.Lock()
	if !d.closed {
		d.queue = append(d.queue, ev)
	}
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *MemoryDevice) markClosed() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}
