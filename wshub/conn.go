package wshub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askuser-go/askuser"
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

	// The outbound queue: a slice that grows as messages wait and is let go once a burst
	// has drained, so that an idle connection holds no buffer for the collector to scan.
	// queue[head:] waits, oldest first; wake (buffer 1) tells the writer there is more.
	qmu   sync.Mutex
	queue [][]byte
	head  int
	wake  chan struct{}

	// ctx ends when the connection does; it bounds its reads, writes and OnEvent calls.
	// Ending it closes raw, which fails any read or write in progress; ioCtx, given to each
	// read and write, is then a context that never ends, because the websocket library
	// registers a callback on every cancellable context it is given, at each call.
	ctx    context.Context
	cancel context.CancelFunc
	ioCtx  context.Context
	// wtimer drops the connection when a write takes longer than WriteTimeout; it is
	// armed around each write.
	wtimer *time.Timer
	rbuf   bytes.Buffer // read loop only: each message is read here, then copied out
	dead   atomic.Bool  // dropped or ended: deliver nothing more
	// dropErr says why the hub dropped the connection; set once, before dead.
	dropErr error

	dropOnce    sync.Once
	closeOnce   sync.Once
	closeReq    chan struct{} // closed when a close handshake is wanted
	closeCode   websocket.StatusCode
	closeReason string

	loops sync.WaitGroup // the writer and the pinger
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
	}
	if raw != nil {
		context.AfterFunc(ctx, func() { _ = raw.Close() })
		c.ioCtx = context.Background()
	}
	c.wtimer = time.AfterFunc(time.Hour, func() { c.drop(errWriteTimeout) })
	c.wtimer.Stop()
	return c
}

// Sessions returns the sessions the connection is authorized for, as [Options.Authorize]
// returned them (without duplicates). The caller may modify the returned slice.
func (c *Conn) Sessions() []askuser.SessionID {
	return append([]askuser.SessionID(nil), c.sessions...)
}

// Send queues ev for this connection alone, whatever its session, and returns without
// waiting for the write; ctx is not used, since Send never blocks. It returns an error
// matching [ErrConnClosed] when the connection has ended, and also when its queue is
// full, in which case the connection is dropped.
func (c *Conn) Send(ctx context.Context, ev askuser.Event) error {
	b, err := ev.Encode()
	if err != nil {
		return fmt.Errorf("wshub: encoding %s event: %w", ev.Type, err)
	}
	if c.dead.Load() {
		return ErrConnClosed
	}
	if !c.enqueue(b) {
		return errQueueFull
	}
	return nil
}

// enqueue queues b without blocking and reports whether it did; a full queue drops the
// connection.
func (c *Conn) enqueue(b []byte) bool {
	if c.dead.Load() {
		return false
	}
	c.qmu.Lock()
	if len(c.queue)-c.head >= c.hub.opts.QueueSize {
		c.qmu.Unlock()
		c.drop(errQueueFull)
		return false
	}
	if len(c.queue) == cap(c.queue) && c.head > 0 {
		// Full at the back but drained at the front: slide down rather than grow.
		n := copy(c.queue, c.queue[c.head:])
		clear(c.queue[n:])
		c.queue, c.head = c.queue[:n], 0
	}
	c.queue = append(c.queue, b)
	c.qmu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default: // the writer has been told already
	}
	return true
}

// keepQueue is the largest queue capacity kept once the queue is empty; a bigger one, left
// by a burst, is let go.
const keepQueue = 16

// dequeue takes the oldest queued message, if any.
func (c *Conn) dequeue() ([]byte, bool) {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if c.head == len(c.queue) {
		return nil, false
	}
	b := c.queue[c.head]
	c.queue[c.head] = nil
	c.head++
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

// drop cuts the connection off at once, without a close handshake: its peer is too slow
// or gone, and waiting on it is what must not happen. The first reason is kept.
func (c *Conn) drop(reason error) {
	c.dropOnce.Do(func() {
		c.dropErr = reason
		c.dead.Store(true)
		c.kill()
	})
}

// kill closes the network connection under the websocket library, which fails every
// read, write and handshake in progress, and ends ctx.
func (c *Conn) kill() {
	if c.raw != nil {
		_ = c.raw.Close()
	} else {
		go c.ws.CloseNow() // CloseNow may wait on the library's locks: not here
	}
	c.cancel()
}

// requestClose asks the writer to close the connection with a handshake. The first
// request wins.
func (c *Conn) requestClose(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() {
		c.closeCode, c.closeReason = code, reason
		close(c.closeReq)
	})
}

func (c *Conn) closing() bool {
	select {
	case <-c.closeReq:
		return true
	default:
		return false
	}
}

// closeHandshake closes with the requested status, cutting the peer off when it does not
// answer within the write timeout.
func (c *Conn) closeHandshake() {
	t := time.AfterFunc(c.hub.opts.WriteTimeout, c.kill)
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
			if !c.write(b) {
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
		if !c.write(b) {
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
		c.drop(fmt.Errorf("wshub: write: %w", err)) // the timer's reason, if it fired, wins
		return false
	}
	return true
}

// maxKeptReadBuffer is the largest read buffer kept between messages; a bigger one, grown
// for a big message, is let go.
const maxKeptReadBuffer = 4 << 10

// read reads one message. Reading into the connection's own buffer and copying the
// message out allocates its exact size once, where reading it whole grows a new buffer for
// each message; the copy is the caller's to keep.
func (c *Conn) read() ([]byte, error) {
	_, r, err := c.ws.Reader(c.ioCtx)
	if err != nil {
		return nil, err
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
					c.drop(fmt.Errorf("wshub: keepalive: %w", err))
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
	rate := float64(c.hub.opts.MaxMessagesPerSecond)
	lim := bucket{rate: rate, burst: 2 * rate, tokens: 2 * rate}
	for {
		msg, err := c.read()
		if err != nil {
			return err
		}
		if c.closing() {
			continue // closing: drain until the peer's close frame
		}
		if !lim.allow(time.Now()) {
			c.requestClose(websocket.StatusPolicyViolation, "too many messages")
			return errFlood
		}
		c.handle(msg)
	}
}

// handle takes one inbound message: it parses it, checks which session it acts for, and
// hands it on. Every refusal goes back to this connection alone.
func (c *Conn) handle(msg []byte) {
	ev, err := askuser.ParseEvent(msg)
	if err != nil {
		c.refuse(c.defaultSession(), "", err)
		return
	}
	// The request id only labels a refusal, and finding it decodes the data again: it is
	// looked up only for one.
	session, err := c.authorize(ev.SessionID)
	if err != nil {
		s := ev.SessionID
		if s.IsZero() {
			s = c.defaultSession()
		}
		c.refuse(s, ev.RequestID(), err)
		return
	}
	ev.SessionID = session
	h := c.hub
	if ev.Type != askuser.EventResult && h.opts.OnEvent != nil {
		err = h.opts.OnEvent(c.ctx, c, ev)
	} else {
		// The Inbound takes results, and refuses every other type as unsupported.
		h.mu.Lock()
		in := h.in
		h.mu.Unlock()
		err = in.HandleEvent(c.ctx, ev)
	}
	if err != nil {
		c.refuse(session, ev.RequestID(), err)
	}
}

func (c *Conn) refuse(session askuser.SessionID, requestID string, err error) {
	if b, mErr := askuser.ErrorEvent(session, requestID, err).Encode(); mErr == nil {
		c.enqueue(b)
	}
}

// errSessionRequired refuses an event without a sessionId on a connection authorized for
// several sessions: which one it acts for cannot be guessed.
var errSessionRequired = fmt.Errorf("%w: sessionId is required on a connection authorized for several sessions", askuser.ErrMalformedEvent)

// authorize returns the authorized session an inbound event acts for. An absent id means
// the connection's only session. An id matches an authorized one that is equal, or else
// one with the same text: an id that came through a URL may have lost whether it was a
// number or a string.
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
		if s.String() == id.String() {
			return s, nil
		}
	}
	return askuser.SessionID{}, askuser.ErrForbidden
}

// defaultSession is the session an error event about an unreadable message carries.
func (c *Conn) defaultSession() askuser.SessionID {
	if len(c.sessions) == 1 {
		return c.sessions[0]
	}
	return askuser.SessionID{}
}

// bucket is a token bucket: rate tokens a second, at most burst saved up. Only the read
// loop uses it.
type bucket struct {
	rate, burst, tokens float64
	last                time.Time
}

func (b *bucket) allow(now time.Time) bool {
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
