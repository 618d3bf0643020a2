package wshub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// Answer links: the pages a person reaches from a notification, where they answer one
// request (or decide one approval) without the host's login, and the POST-only action
// links of approvals. The link's token (package notify) is the authorization: it names
// one session and one request, until the request expires, and, for a link made for one
// person, that person; the connection it opens carries that request's events alone and
// takes decisions for it alone, as that person (with Options.LinkGroups' groups).

// LinkHandler serves the pages of answer and action links made by [Options.Links].
// Mount it where Links.BaseURL points, with [http.StripPrefix]:
//
//	mux.Handle("/askuser/links/", http.StripPrefix("/askuser/links", hub.LinkHandler()))
//
// It serves:
//
//   - GET /a/TOKEN: a phone-first page with the panel for that request alone, or, once
//     the request has ended, a page that says how it ended and does nothing more;
//   - GET /a/TOKEN/ws: the page's WebSocket, scoped to that request;
//   - GET /x/TOKEN: the confirmation page of an approval's action link, which acts on
//     nothing (chat apps, mail scanners and link previewers fetch links on their own);
//   - POST /x/TOKEN: the action itself, once, from the confirmation page's form;
//   - GET /assets/...: the panel's files for those pages.
//
// A wrong, altered or expired token gets one same 404 page, which says nothing of the
// request. Every page is sent with Referrer-Policy: no-referrer, Cache-Control:
// no-store, and a Content-Security-Policy that runs only the panel's own files. Without
// Options.Links every link is refused.
func (h *Hub) LinkHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /a/{token}", h.answerPage)
	mux.HandleFunc("GET /a/{token}/ws", h.linkSocket)
	mux.HandleFunc("GET /x/{token}", h.actionPage)
	mux.HandleFunc("POST /x/{token}", h.act)
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", PanelHandler()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Content-Type-Options", "nosniff")
		if !strings.HasPrefix(r.URL.Path, "/assets/") {
			hd.Set("Cache-Control", "no-store")
			hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		}
		mux.ServeHTTP(w, r)
	})
}

// claims checks the request's token, of the kind the route serves: an answer's (action
// false) or an action's.
func (h *Hub) claims(r *http.Request, action bool) (notify.Claims, bool) {
	if h.opts.Links == nil {
		return notify.Claims{}, false
	}
	c, err := h.opts.Links.Check(r.PathValue("token"), time.Now())
	if err != nil || (c.Decision != "") != action {
		return notify.Claims{}, false
	}
	return c, true
}

// badLink answers a link that is not one, the same whatever is wrong with it.
func badLink(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	_ = pages.ExecuteTemplate(w, "bad", page{Title: "Link"})
}

// lookup returns the link's request as the Inbound knows it, pending or ended.
func (h *Hub) lookup(ctx context.Context, c notify.Claims) (store.Record, error) {
	h.mu.Lock()
	in := h.in
	h.mu.Unlock()
	l, ok := in.(interface {
		Lookup(ctx context.Context, session wire.SessionID, id string) (store.Record, error)
	})
	if !ok {
		return store.Record{}, errors.New("wshub: the Inbound cannot look requests up")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return l.Lookup(ctx, c.Session, c.RequestID)
}

// page is what a link's page shows.
type page struct {
	Title    string
	Ended    string // how the request ended, when it has
	Call     string // the tool_approval event the page shows, for link.js
	Decision string // the action's
	Form     string // the action form's token
}

func (h *Hub) answerPage(w http.ResponseWriter, r *http.Request) {
	c, ok := h.claims(r, false)
	if !ok {
		badLink(w)
		return
	}
	// No title of its own while the request waits: the panel puts "(1) Waiting for you"
	// before the page's title.
	var p page
	rec, err := h.lookup(r.Context(), c)
	switch {
	case errors.Is(err, wire.ErrNotPending):
		p.Ended = "This request has ended."
	case err != nil:
		http.Error(w, "The request cannot be read now; try again in a moment.", http.StatusServiceUnavailable)
		return
	case rec.Outcome != 0:
		p.Ended = endedText(rec)
	}
	if p.Ended != "" {
		p.Title = "Ended"
	}
	render(w, "answer", p)
}

func (h *Hub) actionPage(w http.ResponseWriter, r *http.Request) {
	c, ok := h.claims(r, true)
	if !ok {
		badLink(w)
		return
	}
	rec, err := h.lookup(r.Context(), c)
	p := page{Title: "Confirm", Decision: c.Decision}
	switch {
	case errors.Is(err, wire.ErrNotPending):
		p.Ended = "This request has ended."
	case err != nil:
		http.Error(w, "The request cannot be read now; try again in a moment.", http.StatusServiceUnavailable)
		return
	case rec.Approval == nil:
		badLink(w) // an action link names approvals only
		return
	case rec.Outcome != 0:
		p.Ended = endedText(rec)
	default:
		if p.Call, err = shownCall(rec.Approval); err != nil {
			http.Error(w, "The request cannot be shown.", http.StatusInternalServerError)
			return
		}
		p.Form = h.opts.Links.FormToken(r.PathValue("token"))
	}
	render(w, "action", p)
}

// act makes an action link's decision, from its confirmation page's form.
func (h *Hub) act(w http.ResponseWriter, r *http.Request) {
	c, ok := h.claims(r, true)
	if !ok {
		badLink(w)
		return
	}
	token := r.PathValue("token")
	if !sameOrigin(r) || !h.opts.Links.CheckFormToken(token, r.PostFormValue("form")) {
		http.Error(w, "This action must be confirmed on its own page.", http.StatusForbidden)
		return
	}
	rec, err := h.lookup(r.Context(), c)
	p := page{Title: "Done", Decision: c.Decision}
	switch {
	case errors.Is(err, wire.ErrNotPending):
		p.Ended = "This request has ended."
	case err != nil:
		http.Error(w, "The request cannot be read now; try again in a moment.", http.StatusServiceUnavailable)
		return
	case rec.Approval == nil:
		badLink(w)
		return
	case rec.Outcome != 0:
		p.Ended = endedText(rec)
	default:
		access, err := h.linkAccess(r.Context(), c)
		if err != nil {
			http.Error(w, "The decision could not be recorded; try again in a moment.", http.StatusServiceUnavailable)
			return
		}
		data, _ := json.Marshal(wire.ApprovalResultData{RequestID: c.RequestID, Decision: c.Decision, Digest: rec.Approval.Digest})
		ev := wire.Event{Type: wire.EventApprovalResult, SessionID: c.Session, Data: data, Via: "link", User: access.User, Groups: access.Groups}
		h.mu.Lock()
		in := h.in
		h.mu.Unlock()
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		err = in.HandleEvent(ctx, ev)
		cancel()
		switch {
		case err == nil:
			p.Ended = map[string]string{wire.DecisionApprove: "Approved.", wire.DecisionDeny: "Denied."}[c.Decision]
		case errors.Is(err, wire.ErrNotPending):
			p.Ended = "This request has ended."
			if rec, err := h.lookup(r.Context(), c); err == nil && rec.Outcome != 0 {
				p.Ended = endedText(rec)
			}
		case errors.Is(err, wire.ErrNotApprover) && c.User == "":
			// A link of no person: a call with approvers waits for theirs.
			http.Error(w, "This tool call waits for its approvers; a link cannot decide it.", http.StatusForbidden)
			return
		case errors.Is(err, wire.ErrNotApprover):
			http.Error(w, "This tool call waits for its approvers, and this link's person is not one of them (not_approver).", http.StatusForbidden)
			return
		default:
			http.Error(w, "The decision could not be recorded; try again in a moment.", http.StatusServiceUnavailable)
			return
		}
	}
	render(w, "action", p)
}

// sameOrigin reports whether a POST comes from a page of this host: its Origin (or,
// without one, its Referer) names the request's own host. A browser sends one or the
// other with a form's POST; a cross-site form's names another site.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		origin = r.Header.Get("Referer")
	}
	if origin == "" {
		return true // not a browser: the form token still has to be right
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// linkSocket is the WebSocket of an answer page: scoped to the link's request.
func (h *Hub) linkSocket(w http.ResponseWriter, r *http.Request) {
	c, ok := h.claims(r, false)
	if !ok {
		http.Error(w, http.StatusText(http.StatusNotFound), http.StatusNotFound)
		return
	}
	h.serveConn(w, r, func(r *http.Request) (Access, error) {
		return h.linkAccess(r.Context(), c)
	}, c.RequestID)
}

// linkAccess is what a link's claims grant: its session, as its person (when it names
// one) with the groups Options.LinkGroups gives them.
func (h *Hub) linkAccess(ctx context.Context, c notify.Claims) (Access, error) {
	a := Access{User: c.User, Sessions: []askuser.SessionID{c.Session}}
	if c.User != "" && h.opts.LinkGroups != nil {
		groups, err := h.opts.LinkGroups(ctx, c.User)
		if err != nil {
			return Access{}, err
		}
		a.Groups = groups
	}
	return a, nil
}

// endedText says how rec's request ended, for a link's page.
func endedText(rec store.Record) string {
	if rec.Approval != nil {
		switch rec.Outcome {
		case askuser.Approved:
			return "This tool call was approved."
		case askuser.Edited:
			return "This tool call was approved with edited arguments."
		case askuser.Denied:
			return "This tool call was denied."
		case askuser.TimedOut:
			return "This tool call timed out without a decision."
		}
	} else {
		switch rec.Outcome {
		case askuser.Answered:
			return "This question was answered."
		case askuser.Declined:
			return "This question was declined."
		case askuser.TimedOut:
			return "This question timed out."
		}
	}
	switch rec.Outcome {
	case askuser.Cancelled:
		return "This request was cancelled."
	}
	return "This request has ended."
}

// shownCall is the tool_approval event of a, as the confirmation page's script takes it
// to show the call by the panel's own rules (AskUser.showApproval): what the panel's card
// shows, the arguments as the model wrote them, and no decisions, which the page's form
// makes.
func shownCall(a *wire.ApprovalData) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // html/template escapes the attribute
	err := enc.Encode(struct {
		Type string `json:"type"`
		Data any    `json:"data"`
	}{wire.EventApproval, struct {
		RequestID        string           `json:"requestId"`
		Tool             string           `json:"tool"`
		Arguments        json.RawMessage  `json:"arguments"`
		ArgumentsInvalid bool             `json:"argumentsInvalid,omitempty"`
		Description      string           `json:"description,omitempty"`
		Decisions        []string         `json:"decisions"`
		Source           *wire.ToolSource `json:"source,omitempty"`
	}{a.RequestID, a.Tool, a.Arguments, a.ArgumentsInvalid, a.Description, []string{}, a.Source}})
	return strings.TrimSuffix(b.String(), "\n"), err
}

func render(w http.ResponseWriter, name string, p page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = pages.ExecuteTemplate(w, name, p)
}

// pages are the link pages. The answer page's script, link.js, connects the panel to
// the page's own WebSocket; on a confirmation page it shows the call as the panel's card
// does, and only then the form. Every page is at /a/TOKEN or /x/TOKEN: the assets are at
// ../assets/.
var pages = template.Must(template.New("").Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{with .Title}}{{.}} · {{end}}askuser</title><link rel="icon" href="../assets/icon.svg">
<link rel="stylesheet" href="../assets/panel.css"><link rel="stylesheet" href="../assets/link.css"></head>{{end}}
{{define "bad"}}{{template "head" .}}<body class="askuser-link"><main><h1>This link is not valid or has expired.</h1></main></body></html>{{end}}
{{define "answer"}}{{template "head" .}}<body class="askuser-link">
{{if .Ended}}<main><h1>{{.Ended}}</h1><p>There is nothing more to do here.</p></main>
{{else}}<main id="askuser-link-panel"></main><noscript>This page needs JavaScript to show the request.</noscript>
<script src="../assets/panel.js"></script><script src="../assets/link.js"></script>{{end}}
</body></html>{{end}}
{{define "action"}}{{template "head" .}}<body class="askuser-link"><main>
{{if .Ended}}<h1>{{.Ended}}</h1><p>There is nothing more to do here.</p>
{{else}}<h1>{{if eq .Decision "approve"}}Approve{{else}}Deny{{end}} this tool call?</h1>
<div id="askuser-link-call" data-event="{{.Call}}"></div><noscript>This page needs JavaScript to show the tool call.</noscript>
<form method="post" hidden><input type="hidden" name="form" value="{{.Form}}">
<button type="submit" class="askuser-link-{{.Decision}}">{{if eq .Decision "approve"}}Approve{{else}}Deny{{end}}</button></form>
<script src="../assets/panel.js"></script><script src="../assets/link.js"></script>{{end}}
</main></body></html>{{end}}
`))
