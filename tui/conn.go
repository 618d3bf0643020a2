package tui

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/askuser-go/askuser/wire"
	"github.com/coder/websocket"
)

// Conn is the terminal's connection to the host: one device of its sessions, speaking
// the askuser wire protocol (docs/PROTOCOL.md). [Run] receives inbox,
// ask_user_questions, ask_user_questions_resolved, tool_approval,
// tool_approval_progress, tool_approval_resolved and ask_user_questions_error events
// from it and sends ask_user_questions_result and tool_approval_result events on it,
// each with the sessionId of the request it answers or decides.
//
// Recv is called by one goroutine at a time; Send may be called while a Recv is in
// progress, but not concurrently with itself.
type Conn interface {
	// Recv returns the next event the host sent to this device, waiting until one comes
	// or ctx ends. An error means the connection is over: Run returns it.
	Recv(ctx context.Context) (wire.Event, error)
	// Send delivers one event from this device to the host. The host decides which
	// session the device acts for; the event's SessionID is only a hint.
	Send(ctx context.Context, ev wire.Event) error
}

// MaxEventBytes bounds one event read by a [WebSocketConn]: the largest question set a
// host sends (arguments of at most 256 KiB) with room to spare.
const MaxEventBytes = 1 << 20

// WebSocketConn is a [Conn] over a WebSocket, such as a connection to a wshub endpoint.
// Make one with [Dial]. Its methods follow the Conn contract; Close may be called at any
// time, more than once.
type WebSocketConn struct {
	ws   *websocket.Conn
	once sync.Once // guards the close
}

// Dial connects to the WebSocket endpoint at url (ws:// or wss://), such as a host's
// wshub endpoint "ws://127.0.0.1:8080/ws?session=123". The host authorizes the
// connection from the request: put credentials in the URL or, through opts, in headers
// (opts.HTTPHeader) or cookies (opts.HTTPClient). opts may be nil; it is passed to
// [websocket.Dial] as it is.
//
// The connection ends when the context given to a Recv in progress ends (the WebSocket
// library closes it then), when the host closes it, or on Close.
func Dial(ctx context.Context, url string, opts *websocket.DialOptions) (*WebSocketConn, error) {
	ws, resp, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("tui: connecting to %s: %w (HTTP %s)", url, err, resp.Status)
		}
		return nil, fmt.Errorf("tui: connecting to %s: %w", url, err)
	}
	ws.SetReadLimit(MaxEventBytes)
	return &WebSocketConn{ws: ws}, nil
}

// Recv reads the next event. A message that is not a well-formed event is skipped: a
// device must survive whatever the host sends it. When ctx ends during Recv, the
// connection is closed and Recv returns ctx's error.
func (c *WebSocketConn) Recv(ctx context.Context) (wire.Event, error) {
	for {
		typ, msg, err := c.ws.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return wire.Event{}, ctx.Err()
			}
			return wire.Event{}, fmt.Errorf("tui: reading from the host: %w", err)
		}
		if typ != websocket.MessageText {
			continue
		}
		ev, err := wire.ParseEvent(msg)
		if err != nil {
			continue
		}
		return ev, nil
	}
}

// Send writes ev as one text message.
func (c *WebSocketConn) Send(ctx context.Context, ev wire.Event) error {
	b, err := ev.Encode()
	if err != nil {
		return fmt.Errorf("tui: encoding %s: %w", ev.Type, err)
	}
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("tui: sending %s: %w", ev.Type, err)
	}
	return nil
}

// Close closes the connection with a normal closure, waiting a little for the host's
// reply. Later calls do nothing and return nil.
func (c *WebSocketConn) Close() error {
	err := errClosed
	c.once.Do(func() { err = c.ws.Close(websocket.StatusNormalClosure, "") })
	if err == errClosed {
		return nil
	}
	return err
}

var errClosed = errors.New("tui: closed")
