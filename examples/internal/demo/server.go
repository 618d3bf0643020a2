// Package demo is the server of the web demo (examples/web): a page with a transcript and
// a message box, the question panel, the WebSocket hub, and per session a scripted agent
// that asks its questions through a real [askuser.Dispatcher] and calls host tools gated
// by its [askuser.Policy] (list_files runs, delete_branch waits for the person's
// approval, drop_database waits for two DBAs, and for the lead once it has waited).
//
// Each page is one person's, named by ?as= in its URL (the developer, [Developer],
// without it): the hub authenticates each device as that person, with their groups
// (alice and bob are the DBAs, [GroupDBA]), routes an approval to the people its
// approvers name, whatever session their page is of, and takes their decisions. The
// developer's /drop asks two DBAs to approve drop_database; after
// [Options.EscalateAfter] it reaches the lead ([Lead]) too.
//
// It is internal: hosts copy what they need from it (see docs/WEB.md) rather than import it.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
)

// Event types of the demo's own protocol, carried in the same envelope and on the same
// socket as the askuser events.
const (
	// EventUserMessage, from a device, starts a run: data {"text": "..."}. The server
	// echoes it to every device of the session with data {"text", "queued", "seq"}.
	EventUserMessage = "user_message"
	// EventCancel, from a device, stops the current run and ends its question; no data.
	EventCancel = "cancel"
	// EventAgentMessage is the agent's text: data {"text", "seq"}.
	EventAgentMessage = "agent_message"
	// EventToolCall is a tool call of the agent, of ask_user_questions or of a host tool:
	// data {"requestId", "name", "arguments", "seq"}.
	EventToolCall = "tool_call"
	// EventToolResult is its result: data {"requestId", "content", "outcome", "isError",
	// "summary", "seq"}, where content is exactly what the model reads. A host tool's
	// also has "rule", the rule that decided without asking, and "grant", what the grant
	// that let it run without asking covers, when there was one, and "noSuchTool" when it
	// was allowed but the demo has no tool of that name (so nothing ran).
	EventToolResult = "tool_result"
	// EventStatus is the agent's state: data {"state": "idle"|"running"|"waiting",
	// "queued", "seq"}.
	EventStatus = "status"
	// EventHistory is sent to a device when it connects: data {"events": [...]}, every
	// event above kept so far for the session, oldest first.
	EventHistory = "history"
)

// DefaultMaxSessions is the default of [Options.MaxSessions].
const DefaultMaxSessions = 1000

// maxSessionIDLength bounds the session ids the demo accepts from URLs.
const maxSessionIDLength = 128

// Options configure a [Server]. A nil *Options means all defaults, except Page, which is
// required.
type Options struct {
	// Page holds the demo page: index.html at its root and the files it loads.
	Page fs.FS
	// Timeout is how long each question or approval waits for the person. Default
	// 5 minutes.
	Timeout time.Duration
	// NoCSP turns off the Content-Security-Policy header the page is served with. The
	// end-to-end tests turn it off to check that the panel alone, without the browser's
	// help, never runs model content.
	NoCSP bool
	// MaxSessions bounds the sessions whose agent and history are kept; beyond it, the
	// idle session used least recently is forgotten. Default [DefaultMaxSessions].
	MaxSessions int
	// Logger receives the demo's connection and error logs, and the dispatcher's and the
	// hub's (each request's life, decisions, refusals). Default: none.
	Logger *slog.Logger
	// Notifier, NotifyAfter and Links reach a person who is not looking (docs/NOTIFY.md):
	// the dispatcher's notifier and its delay, and the links it sends, whose pages are
	// served under /askuser/links/ (Links.BaseURL must end so). Default: none.
	Notifier    notify.Notifier
	NotifyAfter time.Duration
	Links       *notify.Links
	// Observer is told of the dispatcher's and the hub's calls, requests and devices
	// (package askotel has one). Default: none.
	Observer observe.Observer
	// EscalateAfter is how long a drop_database waits for the DBAs before it reaches the
	// lead too. Default [DefaultEscalateAfter].
	EscalateAfter time.Duration
}

// ContentSecurityPolicy is the policy the demo page is served with: scripts, styles and
// connections from the page's own origin only, and nothing else. A host page that loads
// the panel can use the same.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Server is the demo's HTTP handler: the page at /, the panel's files under /askuser/,
// and the WebSocket at /ws?session=ID. Close it to end every run and connection.
type Server struct {
	opts Options
	hub  *wshub.Hub
	d    *askuser.Dispatcher
	mux  *http.ServeMux
	log  *slog.Logger

	ctx  context.Context // ends every run on Close
	stop context.CancelFunc

	runMu  sync.Mutex // guards closed against wg.Add
	closed bool
	wg     sync.WaitGroup // counts the runs

	mu     sync.Mutex
	agents map[askuser.SessionID]*agent

	closeOnce sync.Once
}

// New returns a demo server. It fails when opts.Page has no index.html.
func New(opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Page == nil {
		return nil, errors.New("demo: Options.Page is required")
	}
	if _, err := fs.Stat(o.Page, "index.html"); err != nil {
		return nil, fmt.Errorf("demo: the page has no index.html: %w", err)
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.EscalateAfter <= 0 {
		o.EscalateAfter = DefaultEscalateAfter
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: o, log: log, agents: make(map[askuser.SessionID]*agent)}
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.hub = wshub.New(&wshub.Options{
		Authenticate: authenticate,
		// Room for /ask with the largest arguments the tool accepts.
		ReadLimit:    maxMessageBytes + 4096,
		OnEvent:      s.onEvent,
		OnConnect:    s.onConnect,
		OnDisconnect: s.onDisconnect,
		Links:        o.Links,
		LinkGroups:   linkGroups,
		Observer:     o.Observer,
		Logger:       o.Logger,
	})
	s.d = askuser.New(transport{s.hub, s.approvalSent}, &askuser.Options{
		Timeout: o.Timeout, Policy: peoplePolicy(o.EscalateAfter), SessionTitle: s.sessionTitle,
		Notifier: o.Notifier, NotifyAfter: o.NotifyAfter, Observer: observe.Join(o.Observer, logTo(o.Logger)),
	})
	s.mux = http.NewServeMux()
	s.mux.Handle("GET /ws", s.hub)
	s.mux.Handle("GET /askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	if o.Links != nil {
		links := http.StripPrefix("/askuser/links", s.hub.LinkHandler())
		s.mux.Handle("GET /askuser/links/", links)
		s.mux.Handle("POST /askuser/links/", links)
	}
	s.mux.HandleFunc("GET /{$}", s.serveIndex)
	s.mux.Handle("GET /", http.FileServerFS(o.Page))
	return s, nil
}

// authorize returns the session named in the URL: anyone may act for it (see
// authenticate).
func authorize(r *http.Request) ([]askuser.SessionID, error) {
	raw := r.URL.Query().Get("session")
	if raw == "" || len(raw) > maxSessionIDLength {
		return nil, errors.New("demo: the URL needs ?session=ID (at most 128 characters)")
	}
	// A decimal id becomes a numeric session: it is a number in every event.
	return []askuser.SessionID{wire.ParseSessionID(raw)}, nil
}

// ServeHTTP serves the page, the panel's files and the WebSocket.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if !s.opts.NoCSP && !strings.HasPrefix(r.URL.Path, "/askuser/links/") { // the link pages set their own
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request) {
	b, err := fs.ReadFile(s.opts.Page, "index.html")
	if err != nil {
		http.Error(w, "index.html is missing", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(b))
}

// Dispatcher returns the server's dispatcher, so that a program embedding the demo can
// ask questions of its own.
func (s *Server) Dispatcher() *askuser.Dispatcher { return s.d }

// Close ends every run and pending question (as shutdown), closes every connection, and
// waits for the runs to return. Close may be called more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.runMu.Lock()
		s.closed = true
		s.runMu.Unlock()
		s.stop()
		s.d.Close()
		_ = s.hub.Close()
		s.wg.Wait()
	})
	return nil
}

// agent returns the session's agent, making it on first use.
func (s *Server) agent(session askuser.SessionID) *agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.agents[session]; a != nil {
		return a
	}
	if len(s.agents) >= s.opts.MaxSessions {
		s.evictLocked()
	}
	a := newAgent(s.ctx, s.spawn, session, s.d, func(ev wire.Event) error {
		return s.hub.Send(context.Background(), ev)
	})
	s.agents[session] = a
	return a
}

// spawn runs f in a goroutine that Close waits for, unless the server is closing.
func (s *Server) spawn(f func()) bool {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

// evictLocked forgets the idle session used least recently. Sessions with a run going
// are never forgotten, so the map may exceed the bound while they all run.
func (s *Server) evictLocked() {
	var oldest askuser.SessionID
	var oldestAt time.Time
	found := false
	for id, a := range s.agents {
		idle, at := a.idleSince()
		if idle && (!found || at.Before(oldestAt)) {
			oldest, oldestAt, found = id, at, true
		}
	}
	if found {
		delete(s.agents, oldest)
		// And what the person allowed always in it, which would outlive it otherwise.
		grants, _ := s.d.Grants().Grants(context.Background(), oldest)
		for _, g := range grants {
			_, _ = s.d.Grants().RevokeGrant(context.Background(), oldest, g.ID)
		}
	}
}

// transport is the dispatcher's: the hub, which also tells, through sent, of every
// approval it has sent to a session's devices.
type transport struct {
	*wshub.Hub
	sent func(askuser.SessionID)
}

func (t transport) Send(ctx context.Context, ev wire.Event) error {
	err := t.Hub.Send(ctx, ev)
	if err == nil && ev.Type == wire.EventApproval {
		t.sent(ev.SessionID)
	}
	return err
}

// approvalSent tells the session's devices that the agent waits for the person, when one
// of its host tool calls waits for their approval; before a question, the agent says so
// itself.
func (s *Server) approvalSent(session askuser.SessionID) {
	ag := s.agent(session)
	_, queued := ag.status()
	ag.publishStatus("waiting", queued)
}

// onConnect replays the session's history to the device that connected; the hub has
// already queued it the pending questions.
func (s *Server) onConnect(c *wshub.Conn) {
	for _, session := range c.Sessions() {
		s.log.Info("device connected", "session", session.String())
		if err := s.agent(session).replay(func(ev wire.Event) error {
			return c.Send(context.Background(), ev)
		}); err != nil {
			s.log.Warn("history not sent", "session", session.String(), "err", err)
		}
	}
}

func (s *Server) onDisconnect(c *wshub.Conn, err error) {
	for _, session := range c.Sessions() {
		s.log.Info("device disconnected", "session", session.String(), "reason", err)
	}
}

// onEvent takes the demo's own events from a device; the hub has checked the session.
func (s *Server) onEvent(ctx context.Context, c *wshub.Conn, ev wire.Event) error {
	switch ev.Type {
	case EventUserMessage:
		var data struct {
			Text string `json:"text"`
		}
		dec := json.NewDecoder(bytes.NewReader(ev.Data))
		dec.DisallowUnknownFields()
		if len(ev.Data) == 0 || dec.Decode(&data) != nil {
			return fmt.Errorf(`%w: user_message data must be {"text": "..."}`, wire.ErrMalformedEvent)
		}
		return s.agent(ev.SessionID).messageAs(ev.User, data.Text)
	case EventCancel:
		s.agent(ev.SessionID).cancel()
		return nil
	}
	return fmt.Errorf("%w: %q (the demo takes user_message and cancel)", wire.ErrUnsupportedEvent, ev.Type)
}

// logTo returns an observer that logs to l, or nil for no logger.
func logTo(l *slog.Logger) observe.Observer {
	if l == nil {
		return nil
	}
	return observe.Log(l)
}
