package wshub

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/coder/websocket"
)

// Defaults of [Options].
const (
	DefaultReadLimit            = 64 << 10
	DefaultQueueSize            = 4096
	DefaultQueueBytes           = 4 << 20
	DefaultWriteTimeout         = 10 * time.Second
	DefaultPingInterval         = 30 * time.Second
	DefaultMaxMessagesPerSecond = 50
)

// Options configure a [Hub]. Exactly one of Authorize and Authenticate is required; the
// zero value of every other field means its default.
type Options struct {
	// Authorize decides which sessions the connecting request may act for: it returns at
	// least one session, or an error. On an error or an empty list the upgrade is refused
	// with 403 Forbidden and the request never gets an event. Authorize is the host's
	// authentication check (a cookie, a token in the URL, ...); it is called concurrently,
	// once per connection attempt, before the upgrade.
	//
	// The sessions it returns must be the very [askuser.SessionID] values the host
	// dispatches with: events are routed by equality, and the numeric session 1 is not the
	// string session "1" (see [wire.ParseSessionID] for ids taken from a URL).
	Authorize func(r *http.Request) ([]askuser.SessionID, error)

	// Authenticate, set instead of Authorize, also names the person behind the request
	// (a user id): the principal recorded as who decided an approval ([wire.Event.User]
	// of every event the connection sends). It is called as Authorize is, with the same
	// rules; set exactly one of the two.
	Authenticate func(r *http.Request) (Access, error)

	// ReadLimit is the largest inbound message, in bytes; a connection that sends a
	// bigger one is closed with [websocket.StatusMessageTooBig]. Default [DefaultReadLimit].
	ReadLimit int64

	// QueueSize is how many outbound messages may wait for one connection, and QueueBytes
	// how many bytes they may hold (one message is always let in, however big). A
	// connection whose queue is full is dropped, so that it never delays anyone else, nor
	// makes the host hold more than this for it. The questions pending when a connection
	// joins do not count: they are written to it first, each encoded when its turn comes,
	// so that a session with any number of pending questions can be joined. Defaults
	// [DefaultQueueSize] and [DefaultQueueBytes].
	QueueSize  int
	QueueBytes int

	// WriteTimeout bounds each write to a connection, the wait for each keepalive pong,
	// and the close handshake; a connection that takes longer is dropped. Default
	// [DefaultWriteTimeout].
	WriteTimeout time.Duration

	// PingInterval is how often each connection is pinged, so that dead peers are noticed
	// and idle proxies keep the connection open. Default [DefaultPingInterval]; a negative
	// value disables pings.
	PingInterval time.Duration

	// MaxMessagesPerSecond limits what one connection may send: a token bucket of this
	// rate with a burst of twice as many. Each message and each ping takes a token; a
	// refused message takes more, the more the bigger it is (a refused 64 KiB message
	// takes about 21), since the hub did the work of reading it for nothing. A connection
	// over the limit is closed with [websocket.StatusPolicyViolation]. Default
	// [DefaultMaxMessagesPerSecond].
	MaxMessagesPerSecond int

	// OriginPatterns are the other origins whose pages may connect, as in
	// [websocket.AcceptOptions]; the request's own host is always allowed. The origin is
	// checked before [Options.Authorize] (or Authenticate) runs, so that a page of another
	// site never makes the host run its authentication with the person's cookies.
	OriginPatterns []string

	// OnEvent, when set, receives every well-formed inbound event whose type is neither
	// ask_user_questions_result nor tool_approval_result (a client's "user_message" or
	// "cancel", say), with ev.SessionID already checked and set to a session the
	// connection is authorized for. A non-nil error is sent back to that connection alone
	// as an ask_user_questions_error event (see [wire.ErrorEvent]). When OnEvent is nil,
	// such events are refused with the unsupported_event code.
	//
	// OnEvent is called by the connection's read loop, one event at a time per
	// connection and concurrently across connections, and the connection reads nothing
	// else until it returns: it must return quickly. Start long work, such as an agent
	// turn that may ask a question, in its own goroutine; waiting in OnEvent for an
	// answer from the same device would wait forever. Its context ends when the
	// connection does.
	OnEvent func(ctx context.Context, c *Conn, ev wire.Event) error

	// OnConnect, when set, is called once a connection has joined its sessions and been
	// queued their pending questions, before any inbound message is read. What it sends
	// with [Conn.Send] (a session's history, say) follows those questions; like every
	// event it goes through the connection's queue, which drops the connection when more
	// than QueueSize events wait at once.
	OnConnect func(c *Conn)

	// Links, when set, checks the tokens of answer and action links: the pages of
	// [Hub.LinkHandler] and the connections they open. Use the same Links as the
	// notifier that makes them (package notify).
	Links *notify.Links

	// LinkGroups, when set, returns the groups of the person a link was made for
	// ([notify.Claims.User]), as Authenticate would give their device: a decision made
	// through the link is theirs, with these groups, for approvals whose approvers name
	// groups. It is called whenever such a link's page connects or its action acts; an
	// error refuses that (the connection with 403, the action with 503). Nil: a person's
	// link acts as the user alone, and decides the approvals whose approvers name the
	// user.
	LinkGroups func(ctx context.Context, user string) ([]string, error)

	// Observer, when set, is told of each connection that joins and leaves
	// ([observe.Connected], [observe.Disconnected]) and of each event the hub refuses to
	// a device, with its code ([observe.Refused]): the hub's part of what an
	// [observe.Observer] sees. Give it the dispatcher's.
	Observer observe.Observer

	// Logger, when set, logs connections at debug level and refused device events at
	// warn level, with the code (askuser.refusal.code).
	Logger *slog.Logger

	// OnDisconnect, when set, is called once a connection has gone and left its sessions,
	// with the reason it ended, for logging: the peer's close (see
	// [websocket.CloseStatus]), a read error, or why the hub dropped it (a full queue, a
	// write or keepalive that timed out, a flood). Never nil.
	OnDisconnect func(c *Conn, err error)
}

// Access is what [Options.Authenticate] grants a connection.
type Access struct {
	// User is the authenticated person, recorded as who made each decision the
	// connection sends.
	User string
	// Groups are the groups User belongs to, given with every event the connection
	// sends ([wire.Event.Groups]), for approvals whose approvers name groups
	// (askuser.Approvers). Nothing a device sends changes User or Groups.
	Groups []string
	// Sessions are the sessions the connection may act for, at least one.
	Sessions []askuser.SessionID
}

// Hub is a WebSocket [wire.Transport] and [wire.Presence]. It is an http.Handler:
// each request it serves becomes one [Conn] of the sessions [Options.Authorize] (or
// [Options.Authenticate]) grants.
// All methods may be called concurrently.
type Hub struct {
	opts   Options
	accept websocket.AcceptOptions

	mu       sync.Mutex
	in       wire.Inbound
	sessions map[askuser.SessionID]map[*Conn]struct{}
	closed   bool
	// seen is, for a session with no visible connection now, when it last had one: the
	// memory behind WatchedSince.
	seen map[askuser.SessionID]time.Time
	// requests are the pending requests the hub has carried the ask of, and decided the
	// approvals ended lately, a ring of at most MaxDecided whose oldest is at next once
	// full (inbox.go); people are the connections of each user ("u:" and the name) and
	// group ("g:"), to whom approvals are routed. Kept by a hub that knows people
	// (Authenticate).
	requests map[askKey]*requestInfo
	noted    int // requests noted, to prune the stale now and then
	decided  []requestInfo
	next     int
	people   map[string]map[*Conn]struct{}
	// wg counts the requests being served, from before Authorize until each connection
	// has fully ended, so that Close can wait for them.
	wg sync.WaitGroup
}

// New returns a hub configured by opts, which is copied. It panics when opts is nil or
// sets neither or both of Authorize and Authenticate: a hub that cannot tell who may
// connect must not serve anyone.
func New(opts *Options) *Hub {
	if opts == nil || (opts.Authorize == nil) == (opts.Authenticate == nil) {
		panic("wshub: exactly one of Options.Authorize and Options.Authenticate is required")
	}
	h := &Hub{opts: *opts, sessions: make(map[askuser.SessionID]map[*Conn]struct{})}
	o := &h.opts
	if o.ReadLimit <= 0 {
		o.ReadLimit = DefaultReadLimit
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.PingInterval == 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.MaxMessagesPerSecond <= 0 {
		o.MaxMessagesPerSecond = DefaultMaxMessagesPerSecond
	}
	o.OriginPatterns = append([]string(nil), o.OriginPatterns...)
	h.accept = websocket.AcceptOptions{OriginPatterns: o.OriginPatterns}
	return h
}

// Bind sets where inbound events go: the [*askuser.Dispatcher] that uses this hub as its
// transport, which [askuser.New] binds itself, or a transport in front of it (a
// cluster.Transport binds its hub so). Until it is called, ServeHTTP refuses connections
// with 503 Service Unavailable.
//
// The hub calls in.Pending while holding its own lock, so that a connecting device misses
// no event; in.Pending must therefore not call back into the hub.
func (h *Hub) Bind(in wire.Inbound) {
	h.mu.Lock()
	h.in = in
	h.mu.Unlock()
}

// ServeHTTP is the WebSocket endpoint. It authorizes the request with
// [Options.Authorize] or [Options.Authenticate] (403 when refused), upgrades it, and
// serves the connection until it ends; it returns only then. It answers 503 before
// the hub is bound ([Hub.Bind], which askuser.New calls) and after [Hub.Close].
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.serveConn(w, r, h.authorize, "")
}

// serveConn serves one connection authorized by authorize; only, when set, scopes it to
// that one request of its session (an answer link's page).
func (h *Hub) serveConn(w http.ResponseWriter, r *http.Request, authorize func(*http.Request) (Access, error), only string) {
	h.mu.Lock()
	ready := h.in != nil && !h.closed
	if ready {
		h.wg.Add(1) // under the lock, so never after Close has begun to wait
	}
	h.mu.Unlock()
	if !ready {
		http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
		return
	}
	defer h.wg.Done()
	if !originAllowed(r, h.opts.OriginPatterns) {
		http.Error(w, http.StatusText(http.StatusForbidden), http.StatusForbidden)
		return
	}
	access, err := authorize(r)
	sessions := access.Sessions
	if err != nil || len(sessions) == 0 {
		// The reason stays on the server: it may say more than the caller should learn.
		http.Error(w, http.StatusText(http.StatusForbidden), http.StatusForbidden)
		return
	}
	var c *Conn
	accept := h.accept // per connection: the ping callback is the connection's
	accept.OnPingReceived = func(ctx context.Context, p []byte) bool { return c.onPing(ctx, p) }
	hw := &hijackRecorder{ResponseWriter: w}
	ws, err := websocket.Accept(hw, r, &accept)
	if err != nil {
		return // Accept has answered the request
	}
	ws.SetReadLimit(h.opts.ReadLimit)
	c = newConn(h, ws, hw.conn, dedupe(sessions))
	c.user, c.groups, c.only = access.User, slices.Clone(access.Groups), only
	if only != "" {
		c.via = "link"
	}
	if !h.join(c) {
		c.requestClose(websocket.StatusGoingAway, "server shutting down")
		c.closeHandshake()
		c.cut(nil)
		return
	}
	h.serve(c)
}

// authorize runs the host's Authorize or Authenticate.
func (h *Hub) authorize(r *http.Request) (Access, error) {
	if h.opts.Authenticate != nil {
		return h.opts.Authenticate(r)
	}
	sessions, err := h.opts.Authorize(r)
	return Access{Sessions: sessions}, err
}

// originAllowed reports whether the request's Origin may connect, by the rules of
// [websocket.AcceptOptions]: no Origin (not a browser), the request's own host, or a
// host (or scheme://host) matching one of patterns, without regard to case.
func originAllowed(r *http.Request, patterns []string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	if strings.EqualFold(r.Host, u.Host) {
		return true
	}
	for _, p := range patterns {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(target)); ok {
			return true
		}
	}
	return false
}

// serve runs a joined connection until it ends, then removes it.
func (h *Hub) serve(c *Conn) {
	var err error
	defer func() {
		// Deferred so that a panicking OnEvent or OnConnect still releases everything.
		// Cutting the connection off ends any write in progress, so when a close
		// handshake is under way the writer is left to finish it (within its timeout).
		if !c.closing() {
			c.cut(nil)
		}
		c.loops.Wait()
		c.cut(nil)
		_ = c.ws.CloseNow()
		h.leave(c)
		if h.opts.OnDisconnect != nil {
			if why := c.ended(); why != nil {
				err = why
			}
			if err == nil {
				err = ErrConnClosed
			}
			h.opts.OnDisconnect(c, err)
		}
	}()
	c.loops.Add(1)
	go c.writeLoop()
	if h.opts.PingInterval > 0 {
		c.loops.Add(1)
		go c.pingLoop(h.opts.PingInterval)
	}
	if h.opts.OnConnect != nil {
		h.opts.OnConnect(c)
	}
	err = c.readLoop()
}

// join adds c to its sessions and gives it their pending requests, to be written
// before any event sent after the join. Both happen under h.mu, which Send also holds
// while it queues, so that c sees every question asked before it joined and every event
// sent after, none twice: a question pending in the snapshot whose ask is sent again
// (asked at that very moment, say) is recognised by its request id and not queued again.
func (h *Hub) join(c *Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	for _, s := range c.sessions {
		m := h.sessions[s]
		if m == nil {
			m = make(map[*Conn]struct{})
			h.sessions[s] = m
		}
		m[c] = struct{}{}
	}
	var replay []pendingAsk
	if c.user != "" && c.only == "" {
		replay = append(replay, pendingAsk{session: c.sessions[0], inbox: h.inboxDataLocked(c)})
		h.addPersonLocked(c)
	}
	for _, s := range c.sessions {
		for _, a := range h.in.Pending(s) {
			if c.only == "" || c.only == a.RequestID {
				replay = append(replay, pendingAsk{session: s, ask: a})
				c.asked[askKey{s, a.RequestID}] = struct{}{}
			}
		}
		for _, a := range h.in.PendingApprovals(s) {
			if c.only == "" || c.only == a.RequestID {
				replay = append(replay, pendingAsk{session: s, approval: &a})
				c.asked[askKey{s, a.RequestID}] = struct{}{}
			}
		}
	}
	replay = h.routedReplayLocked(c, replay)
	if replay != nil {
		c.qmu.Lock()
		c.replay = replay
		c.qmu.Unlock()
		c.signal()
	}
	h.observeConn(c, observe.Connected)
	return true
}

// observeConn tells the observer and the logger that c joined or left.
func (h *Hub) observeConn(c *Conn, what observe.Event) {
	if h.opts.Observer != nil {
		h.opts.Observer.Observe(c.ctx, observe.Observation{Event: what})
	}
	if h.opts.Logger != nil {
		msg := "wshub: device connected"
		if what == observe.Disconnected {
			msg = "wshub: device disconnected"
		}
		h.opts.Logger.LogAttrs(c.ctx, slog.LevelDebug, msg, slog.Int("askuser.sessions", len(c.sessions)), slog.String("askuser.via", c.via))
	}
}

// leave removes c from its sessions and tells the Inbound, outside the lock, of each
// session that has no connection left.
func (h *Hub) leave(c *Conn) {
	var gone []askuser.SessionID
	h.mu.Lock()
	if !c.hidden {
		h.sawLocked(c)
	}
	if c.user != "" && c.only == "" {
		h.removePersonLocked(c)
	}
	for _, s := range c.sessions {
		m := h.sessions[s]
		if _, ok := m[c]; !ok {
			continue
		}
		delete(m, c)
		if len(m) == 0 {
			delete(h.sessions, s)
			gone = append(gone, s)
		}
	}
	in := h.in
	h.mu.Unlock()
	h.observeConn(c, observe.Disconnected)
	for _, s := range gone {
		in.Disconnected(s)
	}
}

// Send queues ev for every connection of ev.SessionID and returns; it implements
// [wire.Transport]. The event is encoded once. Send never waits for a connection: one
// whose queue is full is dropped. A connection already given the ask of a request (a
// question set's or an approval's, by an earlier Send, or as a request pending when it
// joined) is not given it again until its resolution has been sent. A session with no
// connection is not an error. After [Hub.Close], Send returns [wire.ErrTransportClosed].
// ctx is not used, since Send never blocks.
//
// An approval whose approvers name people or groups ([wire.ApproversData.Users] and
// Groups) also goes, with its progress and resolution, to every connection of those
// people ([Access.User], [Access.Groups]), whatever its sessions; such a connection may
// decide it. An escalation step's progress gives the approval to the people it adds.
func (h *Hub) Send(ctx context.Context, ev wire.Event) error {
	b, err := ev.Encode()
	if err != nil {
		return fmt.Errorf("wshub: encoding %s event: %w", ev.Type, err)
	}
	var key askKey
	resolved := ev.Type == wire.EventResolved || ev.Type == wire.EventApprovalResolved
	tracked := resolved || ev.Type == wire.EventAsk || ev.Type == wire.EventApproval
	// A hub that knows people (Authenticate) keeps what their inboxes and routing need.
	noted := h.opts.Authenticate != nil && (tracked || ev.Type == wire.EventApprovalProgress)
	var fields requestFields
	if tracked || noted {
		key = askKey{ev.SessionID, ev.RequestID()}
	}
	if noted {
		fields = requestFieldsOf(ev)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return wire.ErrTransportClosed
	}
	var routed *requestInfo
	if noted {
		routed = h.noteLocked(key, ev.Type, fields)
	}
	for c := range h.sessions[ev.SessionID] {
		if c.only != "" && (!tracked || key.id != c.only) {
			continue // a link's connection: its request's events alone
		}
		c.give(key, b, tracked, resolved)
	}
	if routed == nil || (routed.users == nil && routed.groups == nil) {
		return nil
	}
	var ask []byte // the approval's ask, for those an escalation step reaches: read once
	for c := range h.routedLocked(routed) {
		if slices.Contains(c.sessions, ev.SessionID) {
			continue // given it above
		}
		_, asked := c.asked[key]
		switch {
		case resolved && !asked:
			continue
		case ev.Type == wire.EventApprovalProgress && !asked:
			// An escalation step reached this person: the approval first.
			if ask == nil {
				if ask = h.askOfLocked(key); ask == nil {
					return nil // it has ended
				}
			}
			c.give(key, ask, true, false)
		}
		c.give(key, b, tracked, resolved)
	}
	return nil
}

// askOfLocked returns the encoded ask of the pending approval of key, as the Inbound
// has it; nil when it is not pending. h.mu is held.
func (h *Hub) askOfLocked(key askKey) []byte {
	a := h.pendingApprovalLocked(key)
	if a == nil {
		return nil
	}
	ev, err := wire.NewEvent(wire.EventApproval, key.session, a)
	if err != nil {
		return nil
	}
	b, err := ev.Encode()
	if err != nil {
		return nil
	}
	return b
}

// pendingApprovalLocked returns the pending approval of key, as the Inbound has it; nil
// when it is not pending. h.mu is held.
func (h *Hub) pendingApprovalLocked(key askKey) *wire.ApprovalData {
	for _, a := range h.in.PendingApprovals(key.session) {
		if a.RequestID == key.id {
			return &a
		}
	}
	return nil
}

// routedReplayLocked adds to replay, the requests a joining c is shown, the pending
// approvals routed to its person from sessions not its own. h.mu is held.
func (h *Hub) routedReplayLocked(c *Conn, replay []pendingAsk) []pendingAsk {
	if c.user == "" || c.only != "" {
		return replay
	}
	var keys []askKey
	now := time.Now()
	for k, r := range h.requests {
		if !slices.Contains(c.sessions, k.session) && r.routedTo(c) && !r.expired(now) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return replay
	}
	slices.SortFunc(keys, func(x, y askKey) int { return h.requests[x].entry.AskedAt.Compare(h.requests[y].entry.AskedAt) })
	pending := make(map[askuser.SessionID]map[string]*wire.ApprovalData) // each session's, read once
	for _, k := range keys {
		of, ok := pending[k.session]
		if !ok {
			of = make(map[string]*wire.ApprovalData)
			for _, a := range h.in.PendingApprovals(k.session) {
				of[a.RequestID] = &a
			}
			pending[k.session] = of
		}
		if a := of[k.id]; a != nil {
			replay = append(replay, pendingAsk{session: k.session, approval: a})
			c.asked[k] = struct{}{}
		}
	}
	return replay
}

// setVisible records whether c's page is visible to its person (a device's
// [wire.EventVisibility]).
func (h *Hub) setVisible(c *Conn, visible bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.hidden == !visible {
		return
	}
	if !visible {
		h.sawLocked(c)
	}
	c.hidden = !visible
}

// sawLocked notes that c's sessions were seen until now. h.mu is held.
func (h *Hub) sawLocked(c *Conn) {
	if h.seen == nil {
		h.seen = make(map[askuser.SessionID]time.Time)
	}
	now := time.Now()
	if len(h.seen) > maxSeen { // forget the sessions seen long ago
		for s, t := range h.seen {
			if now.Sub(t) > time.Hour {
				delete(h.seen, s)
			}
		}
	}
	for _, s := range c.sessions {
		h.seen[s] = now
	}
}

// maxSeen is how many sessions the hub remembers the last visible moment of before it
// forgets those older than an hour.
const maxSeen = 10000

// WatchedSince reports whether a connection of the session has been visible to its
// person since t: one is connected now whose page is not hidden, or one was until a
// moment after t. It implements [wire.Attention]. A connection that never says it is
// hidden ([wire.EventVisibility]) counts as visible.
func (h *Hub) WatchedSince(session askuser.SessionID, t time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.sessions[session] {
		if !c.hidden && !c.over() {
			return true
		}
	}
	last, ok := h.seen[session]
	return ok && last.After(t)
}

// Connected reports whether the session has a live connection; it implements
// [wire.Presence].
func (h *Hub) Connected(session askuser.SessionID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.sessions[session] {
		if !c.over() {
			return true
		}
	}
	return false
}

// Close closes every connection with [websocket.StatusGoingAway], after writing what was
// already queued for it, and waits until every connection has ended and every request
// being served has returned; a peer that does not keep up within [Options.WriteTimeout]
// is cut off. Later Sends return [wire.ErrTransportClosed] and later requests get
// 503. Close does not close the Inbound: close the dispatcher first, so that its last
// events reach the devices. Close may be called more than once, and concurrently.
func (h *Hub) Close() error {
	var conns []*Conn
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		seen := make(map[*Conn]bool)
		for _, m := range h.sessions {
			for c := range m {
				if !seen[c] {
					seen[c] = true
					conns = append(conns, c)
				}
			}
		}
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.requestClose(websocket.StatusGoingAway, "server shutting down")
	}
	h.wg.Wait()
	return nil
}

func dedupe(sessions []askuser.SessionID) []askuser.SessionID {
	out := make([]askuser.SessionID, 0, len(sessions))
	for _, s := range sessions {
		dup := false
		for _, o := range out {
			if o == s {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, s)
		}
	}
	return out
}

// hijackRecorder keeps the raw network connection that websocket.Accept hijacks. The
// websocket library bounds a close handshake only by its own timeouts of several seconds
// and cannot abandon it once begun; closing the raw connection is what lets the hub drop
// a stalled device at once and bound a shutdown by [Options.WriteTimeout].
type hijackRecorder struct {
	http.ResponseWriter
	conn net.Conn
}

func (w *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = c
	return c, rw, nil
}

func (w *hijackRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ErrConnClosed is returned by [Conn.Send] once the connection has ended or been dropped,
// and given to [Options.OnDisconnect] when no other reason is known.
var ErrConnClosed = errors.New("wshub: connection closed")
