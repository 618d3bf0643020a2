package wshub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/coder/websocket"
)

// Conn is one device's connection to a [Hub], authorized for a fixed set of sessions.
// The hub creates it; a host meets it in [Options.OnEvent], [Options.OnConnect] and
// [Options.OnDisconnect]. Its methods may be called concurrently.
type Conn struct {
	hub      *Hub
	ws       *websocket.Conn
	raw      net.Conn // nil only if the hijack went unseen; see hijackRecorder
	sessions []askuser.SessionID
	user     string   // the principal, from Options.Authenticate; set before the first read
	groups   []string // user's groups, from Options.Authenticate; set with user
	// only, for a link's connection, is the one request it is for; via is "link" then.
	// Both are set before the connection joins.
	only, via string

	// What waits to be written, oldest first: replay, the questions pending when the
	// connection joined, each encoded only when its turn comes; then queue[head:], the
	// encoded events sent since, which hold queued bytes. The queue grows as messages
	// wait and is let go once a burst has drained, so that an idle connection holds no
	// buffer for the collector to scan. wake (buffer 1) tells the writer there is more.
	qmu    sync.Mutex
	replay []pendingAsk
	queue  [][]byte
	head   int
	queued int
	wake   chan struct{}

	// asked holds the questions this connection has been given an ask for (in the
	// replay or the queue) and not yet their resolution, so that it is never given one
	// twice. Guarded by hub.mu.
	asked map[askKey]struct{}
	// hidden says the device's page is hidden ([wire.EventVisibility]). Guarded by
	// hub.mu.
	hidden bool

	// limit is the inbound rate limit, charged for messages, pings and costly refusals.
	limit bucket

	// The connection's life, which state says: open; then closing, once a close
	// handshake is wanted (closeReq is closed; the writer flushes what is queued, then
	// closes); then over, once it is cut off or has ended (ctx is cancelled, which closes
	// raw in a goroutine of its own, failing every read and write in progress; nothing
	// more is delivered). Each step happens once, in that order or straight to over,
	// under stateMu; state may be read without it.
	state       atomic.Int32
	stateMu     sync.Mutex
	closeReq    chan struct{}
	closeCode   websocket.StatusCode // set entering closing
	closeReason string
	overErr     error // why the hub cut it off, set entering over; nil when it just ended

	// ctx bounds the connection's reads, writes and OnEvent calls. ioCtx, given to each
	// read and write, is a context that never ends when raw is known, because the
	// websocket library registers a callback on every cancellable context it is given,
	// at each call; cancelling ctx closes raw instead.
	ctx    context.Context
	cancel context.CancelFunc
	ioCtx  context.Context
	// wtimer cuts the connection off when a write takes longer than WriteTimeout; it is
	// armed around each write.
	wtimer *time.Timer
	rbuf   bytes.Buffer // read loop only: each message is read here, then copied out

	loops sync.WaitGroup // the writer and the pinger
}

// pendingAsk is a request pending when a connection joined, waiting to be written to
// it: a question set, or an approval when approval is set.
type pendingAsk struct {
	session  askuser.SessionID
	ask      wire.AskData
	approval *wire.ApprovalData
	inbox    *wire.InboxData // the inbox event instead, when set
}

// event encodes the request's ask event.
func (p *pendingAsk) event() (wire.Event, error) {
	if p.inbox != nil {
		return wire.NewEvent(wire.EventInbox, p.session, p.inbox)
	}
	if p.approval != nil {
		return wire.NewEvent(wire.EventApproval, p.session, p.approval)
	}
	return wire.NewEvent(wire.EventAsk, p.session, &p.ask)
}

// askKey names a question: its session and request id.
type askKey struct {
	session askuser.SessionID
	id      string
}

func newConn(h *Hub, ws *websocket.Conn, raw net.Conn, sessions []askuser.SessionID) *Conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{
		hub:      h,
		ws:       ws,
		raw:      raw,
		sessions: sessions,
		wake:     make(chan struct{}, 1),
		ctx:      ctx,
		cancel:   cancel,
		ioCtx:    ctx,
		closeReq: make(chan struct{}),
		asked:    make(map[askKey]struct{}),
	}
	rate := float64(h.opts.MaxMessagesPerSecond)
	c.limit = bucket{rate: rate, burst: 2 * rate, tokens: 2 * rate}
	if raw != nil {
		context.AfterFunc(ctx, func() { _ = raw.Close() })
		c.ioCtx = context.Background()
	}
	c.wtimer = time.AfterFunc(time.Hour, func() { c.cut(errWriteTimeout) })
	c.wtimer.Stop()
	return c
}

// Sessions returns the sessions the connection is authorized for, as [Options.Authorize]
// or [Options.Authenticate] returned them (without duplicates). The caller may modify the
// returned slice.
func (c *Conn) Sessions() []askuser.SessionID {
	return append([]askuser.SessionID(nil), c.sessions...)
}

// User returns the principal [Options.Authenticate] named for the connection; "" when the
// hub uses Authorize.
func (c *Conn) User() string { return c.user }

// Send queues ev for this connection alone, whatever its session, and returns without
// waiting for the write; ctx is not used, since Send never blocks. It returns an error
// matching [ErrConnClosed] when the connection has ended, and also when its queue is
// full, in which case the connection is dropped.
func (c *Conn) Send(ctx context.Context, ev wire.Event) error {
	b, err := ev.Encode()
	if err != nil {
		return fmt.Errorf("wshub: encoding %s event: %w", ev.Type, err)
	}
	if c.over() {
		return ErrConnClosed
	}
	if !c.enqueue(b) {
		return errQueueFull
	}
	return nil
}

// enqueue queues b without blocking and reports whether it did. When the queue is full,
// in messages or in bytes, the connection is cut off (so that it never misses one event
// and gets a later one) and enqueue returns false. It may be called with the hub's lock
// held: cutting a connection off closes no socket in the caller's goroutine.
func (c *Conn) enqueue(b []byte) bool {
	if c.over() {
		return false
	}
	c.qmu.Lock()
	waiting := len(c.queue) - c.head
	if waiting >= c.hub.opts.QueueSize || waiting > 0 && c.queued+len(b) > c.hub.opts.QueueBytes {
		c.qmu.Unlock()
		c.cut(errQueueFull)
		return false
	}
	if len(c.queue) == cap(c.queue) && c.head > 0 {
		// Full at the back but drained at the front: slide down rather than grow.
		n := copy(c.queue, c.queue[c.head:])
		clear(c.queue[n:])
		c.queue, c.head = c.queue[:n], 0
	}
	c.queue = append(c.queue, b)
	c.queued += len(b)
	c.qmu.Unlock()
	c.signal()
	return true
}

// signal tells the writer there is something to write.
func (c *Conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default: // the writer has been told already
	}
}

// keepQueue is the largest queue capacity kept once the queue is empty; a bigger one, left
// by a burst, is let go.
const keepQueue = 16

// dequeue takes the next message to write, if any: a replayed question first, encoded
// now, then the oldest queued message. It returns a nil message and true for a replayed
// question that does not encode, which is skipped.
func (c *Conn) dequeue() ([]byte, bool) {
	c.qmu.Lock()
	if len(c.replay) > 0 {
		p := c.replay[0]
		c.replay[0] = pendingAsk{}
		c.replay = c.replay[1:]
		if len(c.replay) == 0 {
			c.replay = nil
		}
		c.qmu.Unlock()
		ev, err := p.event()
		if err != nil {
			return nil, true // a pending question always encodes; skip it if not
		}
		b, err := ev.Encode()
		if err != nil {
			return nil, true // skipped, as one that does not encode
		}
		return b, true
	}
	defer c.qmu.Unlock()
	if c.head == len(c.queue) {
		return nil, false
	}
	b := c.queue[c.head]
	c.queue[c.head] = nil
	c.head++
	c.queued -= len(b)
	if c.head == len(c.queue) {
		c.head = 0
		if cap(c.queue) > keepQueue {
			c.queue = nil
		} else {
			c.queue = c.queue[:0]
		}
	}
	return b, true
}

// errQueueFull drops a connection that reads too slowly to keep up.
var errQueueFull = fmt.Errorf("%w: outbound queue full", ErrConnClosed)

// States of a connection: see Conn.state.
const (
	stateOpen int32 = iota
	stateClosing
	stateOver
)

// cut cuts the connection off at once, without a close handshake: its peer is too slow
// or gone, or is not answering the close, and waiting on it is what must not happen.
// reason, the first given, says why. cut closes no socket in the caller's goroutine, so
// it may be called with any lock held.
func (c *Conn) cut(reason error) {
	c.stateMu.Lock()
	if c.state.Load() != stateOver {
		c.state.Store(stateOver)
		c.overErr = reason
	}
	c.stateMu.Unlock()
	c.cancel() // closes raw, in a goroutine of its own (see newConn)
	if c.raw == nil {
		go c.ws.CloseNow() // CloseNow may wait on the library's locks: not here
	}
}

// over reports whether the connection has been cut off or has ended.
func (c *Conn) over() bool { return c.state.Load() == stateOver }

// closing reports whether the connection is no longer open: closing or over.
func (c *Conn) closing() bool { return c.state.Load() != stateOpen }

// requestClose asks the writer to close the connection with a handshake. Only the first
// request of an open connection counts.
func (c *Conn) requestClose(code websocket.StatusCode, reason string) {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	if c.state.Load() != stateOpen {
		return
	}
	c.state.Store(stateClosing)
	c.closeCode, c.closeReason = code, reason
	close(c.closeReq)
}

// ended returns why the connection ended, once it is over.
func (c *Conn) ended() error {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.overErr
}

// violationCloseWait is how long the hub waits for the close reply of a peer it closes
// for breaking a rule (a flood, a binary message): the close frame says why, but such a
// peer gets no more of the hub's time, which the wait would spend reading what it sends.
const violationCloseWait = 250 * time.Millisecond

// closeHandshake closes with the requested status, cutting the peer off when it does not
// answer in time: within the write timeout, or violationCloseWait for a peer closed for
// breaking a rule.
func (c *Conn) closeHandshake() {
	wait := c.hub.opts.WriteTimeout
	if c.closeCode == websocket.StatusPolicyViolation || c.closeCode == websocket.StatusUnsupportedData {
		wait = min(wait, violationCloseWait)
	}
	t := time.AfterFunc(wait, func() { c.cut(nil) })
	defer t.Stop()
	_ = c.ws.Close(c.closeCode, c.closeReason)
}

// writeLoop is the connection's only writer of data messages.
func (c *Conn) writeLoop() {
	defer c.loops.Done()
	for {
		if b, ok := c.dequeue(); ok {
			if c.ctx.Err() != nil {
				return // ended meanwhile: the reason is the reader's, not a failed write
			}
			if b != nil && !c.write(b) {
				return
			}
			continue
		}
		select {
		case <-c.wake:
		case <-c.closeReq:
			// What was queued before the close (the resolutions a closing dispatcher
			// sends, say) goes out first; a peer too slow for it is dropped as ever.
			if c.flush() {
				c.closeHandshake()
			}
			return
		case <-c.ctx.Done():
			return
		}
	}
}

// flush writes what is queued, without waiting for more, and reports whether the
// connection is still up.
func (c *Conn) flush() bool {
	for {
		b, ok := c.dequeue()
		if !ok {
			return true
		}
		if b != nil && !c.write(b) {
			return false
		}
	}
}

// errWriteTimeout drops a connection whose write took longer than WriteTimeout.
var errWriteTimeout = fmt.Errorf("wshub: write: %w", context.DeadlineExceeded)

// write writes one message within the write timeout, or drops the connection.
func (c *Conn) write(b []byte) bool {
	c.wtimer.Reset(c.hub.opts.WriteTimeout)
	err := c.ws.Write(c.ioCtx, websocket.MessageText, b)
	c.wtimer.Stop()
	if err != nil {
		c.cut(fmt.Errorf("wshub: write: %w", err)) // the timer's reason, if it fired, wins
		return false
	}
	return true
}

// maxKeptReadBuffer is the largest read buffer kept between messages; a bigger one, grown
// for a big message, is let go.
const maxKeptReadBuffer = 4 << 10

// errBinary ends a connection that sent a binary message: events are JSON text.
var errBinary = errors.New("wshub: binary message; events are JSON text messages")

// read reads one message. Reading into the connection's own buffer and copying the
// message out allocates its exact size once, where reading it whole grows a new buffer for
// each message; the copy is the caller's to keep. A binary message is not read.
func (c *Conn) read() ([]byte, error) {
	typ, r, err := c.ws.Reader(c.ioCtx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, errBinary
	}
	c.rbuf.Reset()
	_, err = c.rbuf.ReadFrom(r)
	msg := bytes.Clone(c.rbuf.Bytes())
	if c.rbuf.Cap() > maxKeptReadBuffer {
		c.rbuf = bytes.Buffer{}
	}
	return msg, err
}

// pingLoop pings the peer; a pong that does not come back in time drops the connection.
func (c *Conn) pingLoop(interval time.Duration) {
	defer c.loops.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.closeReq:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(c.ctx, c.hub.opts.WriteTimeout)
			err := c.ws.Ping(ctx)
			cancel()
			if err != nil {
				// A ping that fails because a close handshake began must not cut it short.
				if !c.closing() {
					c.cut(fmt.Errorf("wshub: keepalive: %w", err))
				}
				return
			}
		}
	}
}

// errFlood ends a connection that sent more than MaxMessagesPerSecond allows.
var errFlood = errors.New("wshub: inbound message rate exceeded")

// readLoop reads and handles inbound messages until the connection ends, and returns why.
func (c *Conn) readLoop() error {
	for {
		msg, err := c.read()
		if errors.Is(err, errBinary) {
			c.requestClose(websocket.StatusUnsupportedData, "binary messages are not accepted; send events as JSON text")
			return err
		}
		if err != nil {
			return err
		}
		if !c.limit.take(1) { // charged while closing too: draining is not free
			if c.closing() {
				c.cut(errFlood)
			} else {
				c.requestClose(websocket.StatusPolicyViolation, "too many messages")
			}
			return errFlood
		}
		if c.closing() {
			continue // closing: drain until the peer's close frame
		}
		if !c.handle(msg) {
			// A refusal costs more than an accepted event, and more the bigger the
			// message: what was sent has been read and parsed for nothing. The bucket
			// may go below zero, so that the next message, or ping, is over the limit.
			c.limit.charge(refusalCost + float64(len(msg))/refusalBytesPerToken)
		}
	}
}

// The extra cost of a refused message, in tokens of the rate limit: refusalCost, plus one
// for every refusalBytesPerToken bytes it holds. With the defaults, a refused 64 KiB
// answer costs as much as 21 accepted events.
const (
	refusalCost          = 4
	refusalBytesPerToken = 4096
)

// onPing is the websocket library's callback for each ping the peer sends: pings count
// against the rate limit like messages, and one over the limit gets no pong and ends the
// connection.
func (c *Conn) onPing(context.Context, []byte) bool {
	if c.limit.take(1) {
		return true
	}
	c.requestClose(websocket.StatusPolicyViolation, "too many messages")
	return false
}

// handle takes one inbound message: it parses it, checks which session it acts for, and
// hands it on. Every refusal goes back to this connection alone; handle reports whether
// the message was accepted.
func (c *Conn) handle(msg []byte) bool {
	ev, err := wire.ParseEvent(msg)
	if err != nil {
		c.refuse(c.defaultSession(), "", err)
		return false
	}
	if ev.Type == wire.EventVisibility { // the connection's, whatever its sessions
		var v struct {
			Visible *bool `json:"visible"`
		}
		if json.Unmarshal(ev.Data, &v) != nil || v.Visible == nil {
			c.refuse(c.defaultSession(), "", fmt.Errorf(`%w: %s data: want {"visible": true|false}`, wire.ErrMalformedEvent, wire.EventVisibility))
			return false
		}
		c.hub.setVisible(c, *v.Visible)
		return true
	}
	// The request id only labels a refusal, and finding it decodes the data again: it is
	// looked up only for one.
	session, err := c.authorize(ev.SessionID)
	if err != nil && ev.Type == wire.EventApprovalResult && c.hub.routed(c, ev) {
		session, err = ev.SessionID, nil
	}
	if err != nil {
		s := ev.SessionID
		if s.IsZero() {
			s = c.defaultSession()
		}
		c.refuse(s, ev.RequestID(), err)
		return false
	}
	ev.SessionID, ev.User, ev.Groups, ev.Via = session, c.user, c.groups, c.via
	h := c.hub
	if c.only != "" && !c.mayAct(ev) {
		c.refuse(session, ev.RequestID(), fmt.Errorf("%w: this link is for request %q alone", wire.ErrForbidden, truncate(c.only)))
		return false
	}
	if ev.Type != wire.EventResult && ev.Type != wire.EventApprovalResult && h.opts.OnEvent != nil {
		err = h.opts.OnEvent(c.ctx, c, ev)
	} else {
		// The Inbound takes answers and decisions, and refuses every other type as
		// unsupported.
		h.mu.Lock()
		in := h.in
		h.mu.Unlock()
		err = in.HandleEvent(c.ctx, ev)
	}
	if err != nil {
		c.refuse(session, ev.RequestID(), err)
		return false
	}
	return true
}

// give queues b, an event of the request key (when tracked) for c, unless c was given
// the request's ask already and b is that ask. hub.mu is held.
func (c *Conn) give(key askKey, b []byte, tracked, resolved bool) {
	switch {
	case !tracked:
	case resolved:
		delete(c.asked, key)
	default:
		if _, dup := c.asked[key]; dup {
			return
		}
		c.asked[key] = struct{}{}
	}
	c.enqueue(b) // a connection too slow for it is cut off, without I/O here
}

// mayAct reports whether a link's connection may send ev: an answer or a decision of its
// one request.
func (c *Conn) mayAct(ev wire.Event) bool {
	return (ev.Type == wire.EventResult || ev.Type == wire.EventApprovalResult) && ev.RequestID() == c.only
}

func (c *Conn) refuse(session askuser.SessionID, requestID string, err error) {
	ev := wire.ErrorEvent(session, requestID, err)
	defer func() { // after it is observed: a device that has its refusal finds it counted
		if b, mErr := ev.Encode(); mErr == nil {
			c.enqueue(b)
		}
	}()
	h := c.hub
	if h.opts.Observer == nil && h.opts.Logger == nil {
		return
	}
	var data wire.ErrorData
	_ = json.Unmarshal(ev.Data, &data)
	if h.opts.Observer != nil {
		h.opts.Observer.Observe(c.ctx, observe.Observation{Event: observe.Refused, Session: session, RequestID: data.RequestID, Code: data.Code, Err: err})
	}
	if h.opts.Logger != nil {
		h.opts.Logger.LogAttrs(c.ctx, slog.LevelWarn, "wshub: device event refused", slog.String("askuser.refusal.code", data.Code),
			slog.String("askuser.session", session.String()), slog.String("askuser.request.id", data.RequestID), slog.String("error", err.Error()))
	}
}

// errSessionRequired refuses an event without a sessionId on a connection authorized for
// several sessions: which one it acts for cannot be guessed.
var errSessionRequired = fmt.Errorf("%w: sessionId is required on a connection authorized for several sessions", wire.ErrMalformedEvent)

// authorize returns the authorized session an inbound event acts for: the one equal to
// id, number or string alike, as everywhere in the protocol (the numeric session 123 and
// the string session "123" are two sessions). An absent id means the connection's only
// session.
func (c *Conn) authorize(id askuser.SessionID) (askuser.SessionID, error) {
	if id.IsZero() {
		if len(c.sessions) == 1 {
			return c.sessions[0], nil
		}
		return askuser.SessionID{}, errSessionRequired
	}
	for _, s := range c.sessions {
		if s == id {
			return s, nil
		}
	}
	for _, s := range c.sessions {
		if s.String() == id.String() { // the same text, another type: say so
			if s.IsNumeric() {
				return askuser.SessionID{}, fmt.Errorf("%w: sessionId %q is a string; this connection's session is the number %s", wire.ErrForbidden, truncate(id.String()), s)
			}
			return askuser.SessionID{}, fmt.Errorf("%w: sessionId %s is a number; this connection's session is the string %q", wire.ErrForbidden, truncate(id.String()), s)
		}
	}
	return askuser.SessionID{}, wire.ErrForbidden
}

// truncate cuts s for an error message, without splitting a character.
func truncate(s string) string {
	if len(s) <= 64 {
		return s
	}
	n := 64
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// defaultSession is the session an error event about an unreadable message carries.
func (c *Conn) defaultSession() askuser.SessionID {
	if len(c.sessions) == 1 {
		return c.sessions[0]
	}
	return askuser.SessionID{}
}

// bucket is a token bucket: rate tokens a second, at most burst saved up. The read loop
// and the websocket library's ping callback share it.
type bucket struct {
	mu                  sync.Mutex
	rate, burst, tokens float64
	last                time.Time
}

// take takes n tokens and reports whether there were that many.
func (b *bucket) take(n float64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	if b.tokens < n {
		return false
	}
	b.tokens -= n
	return true
}

// charge takes n tokens, going below zero if need be.
func (b *bucket) charge(n float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	b.tokens -= n
}

func (b *bucket) refill() {
	now := time.Now()
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
}
