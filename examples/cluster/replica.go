package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/examples/internal/demo"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/nats-io/nats.go"
)

// The page is examples/web's (its script and styles shared through examples/internal/demo), with
// the replica's name in the header.
//
//go:embed page
var pageFiles embed.FS

// maxSessionIDLength bounds the session ids the demo accepts from URLs.
const maxSessionIDLength = 128

// Replica is one replica of the demo: the page, the panel, a WebSocket hub for its
// devices, a dispatcher on the cluster's store and transport, and the scripted agents of
// the sessions whose runs it owns, kept in NATS so that they outlive it.
type Replica struct {
	name   string
	nc     *nats.Conn
	store  *cluster.Store
	tr     *cluster.Transport
	d      *askuser.Dispatcher
	hub    *wshub.Hub
	agents *agents
	mux    *http.ServeMux
	index  []byte
	log    *slog.Logger
}

// ReplicaOptions configure a replica.
type ReplicaOptions struct {
	// Copies is how many NATS servers keep the buckets: 1, or 3 on a NATS cluster.
	Copies int
	// Timeout is how long each question waits.
	Timeout time.Duration
	// Logger receives connection logs, and the dispatcher's and the hub's (each
	// request's life, decisions, refusals); nil for none.
	Logger *slog.Logger
	// Notifier and NotifyAfter reach a person no device of any replica shows a request
	// to (docs/NOTIFY.md); Links are the answer links, whose pages the replica serves
	// under /askuser/links/. Nil for none.
	Notifier    notify.Notifier
	NotifyAfter time.Duration
	Links       *notify.Links
	// Observer, given to the dispatcher and the hub, and Metrics, served at /metrics:
	// the replica's telemetry (examples/internal/metrics). Nil for none.
	Observer observe.Observer
	Metrics  http.Handler
}

// NewReplica starts the replica name on the NATS servers at natsURL and resumes the runs
// it owned.
func NewReplica(ctx context.Context, natsURL, name string, o ReplicaOptions) (*Replica, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Reconnect for ever; a server tried a moment ago is tried again after 250 ms; a
	// server that answers no ping within 2 × 2 s is taken as dead (a machine that crashes
	// closes no connection); connecting gives up on one server after a second. See
	// docs/CLUSTER.md, "Operations".
	nc, err := nats.Connect(natsURL, nats.Name("askuser demo "+name), nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond), nats.ReconnectJitter(100*time.Millisecond, 100*time.Millisecond),
		nats.PingInterval(2*time.Second), nats.MaxPingsOutstanding(2), nats.Timeout(time.Second))
	if err != nil {
		return nil, err
	}
	st, err := cluster.NewStore(ctx, nc, &cluster.Options{Replicas: o.Copies, Logger: log})
	if err != nil {
		nc.Close()
		return nil, err
	}
	r := &Replica{name: name, nc: nc, store: st, log: log}
	r.hub = wshub.New(&wshub.Options{
		Authorize:    authorize,
		ReadLimit:    wire.MaxArgumentsBytes + 8192, // room for /ask with the largest arguments
		OnEvent:      r.onEvent,
		OnConnect:    r.onConnect,
		OnDisconnect: func(c *wshub.Conn, err error) { log.Info("device disconnected", "replica", name, "reason", err) },
		Links:        o.Links,
		Observer:     o.Observer,
		Logger:       o.Logger,
	})
	if r.tr, err = cluster.NewTransport(st, r.hub); err != nil {
		st.Close()
		nc.Close()
		return nil, err
	}
	obs := o.Observer
	if o.Logger != nil {
		obs = observe.Join(obs, observe.Log(o.Logger))
	}
	r.d = askuser.New(r.tr, &askuser.Options{Store: st, Timeout: o.Timeout, Policy: demo.ToolPolicy(),
		Notifier: o.Notifier, NotifyAfter: o.NotifyAfter, Observer: obs})
	if r.agents, err = newAgents(ctx, nc, name, o.Copies, r.d, r.tr, log); err != nil {
		r.Close()
		return nil, err
	}
	page, _ := fs.Sub(pageFiles, "page")
	page = demo.PageWith(page)
	index, err := fs.ReadFile(page, "index.html")
	if err != nil {
		r.Close()
		return nil, err
	}
	r.index = bytes.ReplaceAll(index, []byte("{{REPLICA}}"), []byte(html.EscapeString(name)))
	r.mux = http.NewServeMux()
	r.mux.Handle("GET /ws", r.hub)
	r.mux.Handle("GET /askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	if o.Links != nil {
		links := http.StripPrefix("/askuser/links", r.hub.LinkHandler())
		r.mux.Handle("GET /askuser/links/", links)
		r.mux.Handle("POST /askuser/links/", links)
	}
	if o.Metrics != nil {
		r.mux.Handle("GET /metrics", o.Metrics)
	}
	r.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(r.index)
	})
	r.mux.Handle("GET /", http.FileServerFS(page))
	r.agents.resume()
	return r, nil
}

// authorize lets anyone act for the session named in the URL. THIS IS ONLY FOR THE DEMO:
// a real host authenticates the request and returns that user's sessions alone.
func authorize(req *http.Request) ([]askuser.SessionID, error) {
	raw := req.URL.Query().Get("session")
	if raw == "" || len(raw) > maxSessionIDLength {
		return nil, errors.New("the URL needs ?session=ID (at most 128 characters)")
	}
	return []askuser.SessionID{wire.ParseSessionID(raw)}, nil
}

func (r *Replica) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if !strings.HasPrefix(req.URL.Path, "/askuser/links/") { // the link pages set their own
		h.Set("Content-Security-Policy", demo.ContentSecurityPolicy)
	}
	r.mux.ServeHTTP(w, req)
}

// onConnect shows the device the session's transcript, from NATS, whichever replica
// made it; the hub has already shown it the pending questions.
func (r *Replica) onConnect(c *wshub.Conn) {
	for _, s := range c.Sessions() {
		r.log.Info("device connected", "replica", r.name, "session", s.String())
		ev, err := r.agents.history(s)
		if err == nil {
			err = c.Send(context.Background(), ev)
		}
		if err != nil {
			r.log.Warn("history not sent", "session", s.String(), "err", err)
		}
	}
}

func (r *Replica) onEvent(ctx context.Context, c *wshub.Conn, ev wire.Event) error {
	switch ev.Type {
	case demo.EventUserMessage:
		var data struct {
			Text string `json:"text"`
		}
		dec := json.NewDecoder(bytes.NewReader(ev.Data))
		dec.DisallowUnknownFields()
		if len(ev.Data) == 0 || dec.Decode(&data) != nil {
			return fmt.Errorf(`%w: user_message data must be {"text": "..."}`, wire.ErrMalformedEvent)
		}
		return r.agents.message(ev.SessionID, data.Text)
	case demo.EventCancel:
		return r.agents.cancel(ev.SessionID)
	}
	return fmt.Errorf("%w: %q (the demo takes user_message and cancel)", wire.ErrUnsupportedEvent, ev.Type)
}

// Close stops the replica as a deploy would: its runs stop where they are (their state
// stays in NATS, to be resumed when it starts again), its questions stay pending for the
// other replicas, its devices are disconnected.
func (r *Replica) Close() {
	if r.d != nil {
		r.d.Close()
	}
	if r.agents != nil {
		r.agents.close()
	}
	_ = r.hub.Close()
	if r.tr != nil {
		_ = r.tr.Close()
	}
	_ = r.store.Close()
	r.nc.Close()
}
