// Package askusertest provides what tests and examples of askuser hosts and stores need,
// as net/http/httptest does for HTTP: an in-process [Transport] whose devices are Go
// values; [TestStore], the contract every [store.Store] must keep; [TestReplicas],
// what dispatchers sharing a store need of their transports; and, for tests that build
// their questions in Go or wait for a request, [Ask], [Questions] and [Approvals].
//
// It is a package of its own so that the askuser package's face is only what production
// code calls.
package askusertest

import (
	"context"
	"errors"
	"sync"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// Transport is an in-process [wire.Transport] and [wire.Presence]: devices are
// [*Device] values with unbounded queues, connected with [Transport.Connect]. It keeps
// the join rule of [wire.Transport]. The zero value is not usable; call [NewTransport].
// All methods may be called concurrently.
type Transport struct {
	mu      sync.Mutex
	devices map[askuser.SessionID][]*Device
	inbound wire.Inbound
	closed  bool
}

// NewTransport returns a transport with no device. Call Bind before devices send.
func NewTransport() *Transport {
	return &Transport{devices: make(map[askuser.SessionID][]*Device)}
}

// Bind sets where devices' events go: the dispatcher using this transport, which
// askuser.New binds itself.
func (t *Transport) Bind(in wire.Inbound) {
	t.mu.Lock()
	t.inbound = in
	t.mu.Unlock()
}

// Send queues ev on every device of its session, keeping the join rule. After Close it
// returns [wire.ErrTransportClosed].
func (t *Transport) Send(ctx context.Context, ev wire.Event) error {
	var id string
	switch ev.Type {
	case wire.EventAsk, wire.EventResolved, wire.EventApproval, wire.EventApprovalResolved:
		id = ev.RequestID()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return wire.ErrTransportClosed
	}
	for _, d := range t.devices[ev.SessionID] {
		switch ev.Type {
		case wire.EventAsk, wire.EventApproval:
			if !d.seen.ask(id) {
				continue
			}
		case wire.EventResolved, wire.EventApprovalResolved:
			d.seen.resolved(id)
		}
		d.push(ev)
	}
	return nil
}

// Connected reports whether the session has a device.
func (t *Transport) Connected(session askuser.SessionID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.devices[session]) > 0
}

// Connect adds a device to the session. Like a real transport, it first queues the
// session's pending requests for that device alone (question sets, then approvals),
// holding the transport's lock while it joins and takes that snapshot, so that no event
// of the session falls between the two.
func (t *Transport) Connect(session askuser.SessionID) *Device {
	return t.ConnectAs(session, "")
}

// ConnectAs is Connect for a device of the person user: the events it sends carry user
// as their [wire.Event.User], as a transport that authenticates sets it.
func (t *Transport) ConnectAs(session askuser.SessionID, user string) *Device {
	d := &Device{t: t, session: session, user: user, wake: make(chan struct{}, 1), seen: newSeen()}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		d.closed = true
		return d
	}
	t.devices[session] = append(t.devices[session], d)
	if t.inbound != nil {
		for _, a := range t.inbound.Pending(session) {
			if ev, err := wire.NewEvent(wire.EventAsk, session, a); err == nil && d.seen.ask(a.RequestID) {
				d.push(ev)
			}
		}
		for _, a := range t.inbound.PendingApprovals(session) {
			if ev, err := wire.NewEvent(wire.EventApproval, session, a); err == nil && d.seen.ask(a.RequestID) {
				d.push(ev)
			}
		}
	}
	return d
}

// Close disconnects every device; later Sends fail with [wire.ErrTransportClosed].
// Close may be called more than once.
func (t *Transport) Close() error {
	t.mu.Lock()
	t.closed = true
	all := t.devices
	t.devices = map[askuser.SessionID][]*Device{}
	t.mu.Unlock()
	for _, ds := range all {
		for _, d := range ds {
			d.markClosed()
		}
	}
	return nil
}

// ErrNoInbound is what Device.Send returns before the transport is bound.
var ErrNoInbound = errors.New("askusertest: the transport has no Inbound; call Bind")

// Device is one device of a [Transport]. Its methods may be called concurrently.
type Device struct {
	t       *Transport
	session askuser.SessionID
	user    string
	seen    *seen // guarded by t.mu
	mu      sync.Mutex
	queue   []wire.Event
	closed  bool
	wake    chan struct{}
}

// Session returns the device's session.
func (d *Device) Session() askuser.SessionID { return d.session }

// Recv returns the next event sent to the device, waiting for one until ctx ends. After
// the device is closed and its queue drained, it returns [wire.ErrTransportClosed].
func (d *Device) Recv(ctx context.Context) (wire.Event, error) {
	for {
		d.mu.Lock()
		if len(d.queue) > 0 {
			ev := d.queue[0]
			d.queue[0] = wire.Event{}
			d.queue = d.queue[1:]
			d.mu.Unlock()
			return ev, nil
		}
		closed := d.closed
		d.mu.Unlock()
		if closed {
			return wire.Event{}, wire.ErrTransportClosed
		}
		select {
		case <-d.wake:
		case <-ctx.Done():
			return wire.Event{}, ctx.Err()
		}
	}
}

// Send delivers an event from the device, as a real transport would, with the session
// forced to the device's own (and the user to its, see [Transport.ConnectAs]), and returns the Inbound's verdict: nil when the event was
// accepted, the refusal otherwise. Unlike a real transport it does not also queue the
// refusal to the device as an error event, so that each refusal is reported once.
func (d *Device) Send(ctx context.Context, ev wire.Event) error {
	d.t.mu.Lock()
	in := d.t.inbound
	d.t.mu.Unlock()
	if in == nil {
		return ErrNoInbound
	}
	ev.SessionID, ev.User = d.session, d.user
	return in.HandleEvent(ctx, ev)
}

// Close disconnects the device. When it was the session's last, the Inbound is told.
func (d *Device) Close() {
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

func (d *Device) push(ev wire.Event) {
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

func (d *Device) markClosed() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// seen holds the questions whose ask a device got and whose resolution it has not, so
// that it is never given an ask twice.
type seen struct {
	asked map[string]struct{}
}

func newSeen() *seen { return &seen{asked: make(map[string]struct{})} }

// ask reports whether an ask of id may be given, and records that it is.
func (s *seen) ask(id string) bool {
	if _, dup := s.asked[id]; dup {
		return false
	}
	s.asked[id] = struct{}{}
	return true
}

// resolved records a resolution of id.
func (s *seen) resolved(id string) { delete(s.asked, id) }
