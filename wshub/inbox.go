package wshub

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/askuser-go/askuser/wire"
)

// Inbox is what waits for one person, across their sessions and the approvals routed to
// them, and what was decided lately: the list a device connected as the person shows
// (the panel's inbox view), for a host's own page or bot. See [Hub.Inbox].
type Inbox struct {
	// Pending are the pending questions of the person's sessions, and the pending
	// approvals of their sessions or whose approvers name them, newest first. An approval
	// they may see but not decide is ReadOnly.
	Pending []wire.InboxEntry
	// Decided are the approvals of the same that ended in the last [DecidedFor] (at
	// most [MaxDecided] across the hub), newest first.
	Decided []wire.InboxEntry
}

// How long, and how many, ended approvals a hub keeps for inboxes: fixed, not settings.
const (
	DecidedFor = 4 * time.Hour
	MaxDecided = 1000
)

// requestInfo is what the hub keeps of a pending request, from its events: its inbox
// entry, and, for an approval, whom it is routed to beside its session's connections.
type requestInfo struct {
	entry         wire.InboxEntry
	users, groups []string // who may decide an approval; both nil when anyone of the session may
}

// routedTo reports whether the request of r is routed to c's person: an approval whose
// approvers name them or one of their groups. A link's connection is routed nothing.
func (r *requestInfo) routedTo(c *Conn) bool {
	return c.only == "" && c.user != "" && approver(r.users, r.groups, c.user, c.groups)
}

// expired reports whether the request of r is past its expiry at now: its resolution is
// due, or was lost, and no device is shown it any more.
func (r *requestInfo) expired(now time.Time) bool {
	return !r.entry.ExpiresAt.IsZero() && now.After(r.entry.ExpiresAt)
}

// approver reports whether user, of groups, is among users or in one of approverGroups.
func approver(users, approverGroups []string, user string, groups []string) bool {
	if slices.Contains(users, user) {
		return true
	}
	for _, g := range groups {
		if slices.Contains(approverGroups, g) {
			return true
		}
	}
	return false
}

// requestFields are the fields of a request's events the hub reads.
type requestFields struct {
	What         string              `json:"tool"` // an approval's; a question set's first header
	AskedAt      time.Time           `json:"askedAt"`
	ExpiresAt    time.Time           `json:"expiresAt"`
	SessionTitle string              `json:"sessionTitle"`
	Approvers    *wire.ApproversData `json:"approvers"`
	// Of a tool_approval_progress:
	Approved []string `json:"approved"`
	Names    []string `json:"names"`
	Users    []string `json:"users"`
	Groups   []string `json:"groups"`
	// Of a tool_approval_resolved:
	Outcome string    `json:"outcome"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
}

// noteLocked updates what the hub keeps of the request of key from one of its events,
// of type typ, whose fields are f, and returns it (nil when the hub keeps nothing of
// it). An approval's resolution moves its entry to the decided ones. h.mu is held.
func (h *Hub) noteLocked(key askKey, typ string, f requestFields) *requestInfo {
	r := h.requests[key]
	switch typ {
	case wire.EventAsk, wire.EventApproval:
		r = &requestInfo{entry: wire.InboxEntry{SessionID: key.session, SessionTitle: f.SessionTitle, RequestID: key.id,
			Kind: wire.InboxQuestion, What: f.What, AskedAt: f.AskedAt, ExpiresAt: f.ExpiresAt}}
		if typ == wire.EventApproval {
			r.entry.Kind, r.entry.Approvers = wire.InboxApproval, f.Approvers
			if f.Approvers != nil {
				r.users, r.groups = f.Approvers.Users, f.Approvers.Groups
			}
		}
		if h.requests == nil {
			h.requests = make(map[askKey]*requestInfo)
		}
		h.requests[key] = r
		if h.noted++; h.noted%pruneEvery == 0 {
			h.pruneLocked()
		}
	case wire.EventApprovalProgress:
		if r == nil {
			return nil
		}
		who := *cmp.Or(r.entry.Approvers, &wire.ApproversData{})
		who.Approved = f.Approved
		if f.Names != nil || f.Users != nil || f.Groups != nil { // an escalation step
			who.Names, who.Users, who.Groups = f.Names, f.Users, f.Groups
			r.users, r.groups = f.Users, f.Groups
		}
		r.entry.Approvers = &who
	case wire.EventResolved, wire.EventApprovalResolved:
		if r != nil {
			delete(h.requests, key)
			if r.entry.Kind == wire.InboxApproval {
				h.decideLocked(r, f)
			}
		}
	}
	return r
}

// pruneEvery is how many approvals the hub notes between two looks for those it was
// never told the end of.
const pruneEvery = 256

// pruneLocked forgets the requests long past their expiry, whose resolution never
// reached the hub: a transport that is not the dispatcher's own may lose one. h.mu is
// held.
func (h *Hub) pruneLocked() {
	for k, r := range h.requests {
		if !r.entry.ExpiresAt.IsZero() && time.Since(r.entry.ExpiresAt) > 10*time.Minute {
			delete(h.requests, k)
		}
	}
}

// decideLocked keeps the entry of a, which ended as f says, among the decided ones, in
// place of the oldest once MaxDecided are kept. h.mu is held.
func (h *Hub) decideLocked(a *requestInfo, f requestFields) {
	d := *a
	d.entry.Outcome, d.entry.By, d.entry.At = f.Outcome, f.By, cmp.Or(f.At, time.Now().UTC())
	d.entry.ExpiresAt, d.entry.Approvers = time.Time{}, nil
	if len(h.decided) < MaxDecided {
		h.decided = append(h.decided, d)
		return
	}
	h.decided[h.next] = d
	h.next = (h.next + 1) % MaxDecided
}

// decidedLocked yields the decided approvals of the last DecidedFor, newest first.
// h.mu is held.
func (h *Hub) decidedLocked(yield func(*requestInfo) bool) {
	n := len(h.decided)
	for i := range n {
		d := &h.decided[(h.next-1-i+2*n)%n]
		if time.Since(d.entry.At) > DecidedFor || !yield(d) {
			return
		}
	}
}

// addPersonLocked indexes c, which has a user, by its user and groups, for routing.
// h.mu is held.
func (h *Hub) addPersonLocked(c *Conn) {
	if h.people == nil {
		h.people = make(map[string]map[*Conn]struct{})
	}
	for _, name := range personNames(c) {
		m := h.people[name]
		if m == nil {
			m = make(map[*Conn]struct{})
			h.people[name] = m
		}
		m[c] = struct{}{}
	}
}

// removePersonLocked undoes addPersonLocked. h.mu is held.
func (h *Hub) removePersonLocked(c *Conn) {
	for _, name := range personNames(c) {
		if m := h.people[name]; m != nil {
			delete(m, c)
			if len(m) == 0 {
				delete(h.people, name)
			}
		}
	}
}

// personNames are the keys of c in Hub.people: its user's, and each of its groups'.
func personNames(c *Conn) []string {
	names := []string{"u:" + c.user}
	for _, g := range c.groups {
		names = append(names, "g:"+g)
	}
	return names
}

// routedLocked yields each connection a is routed to, once: those of its users, then
// those of its groups. h.mu is held.
func (h *Hub) routedLocked(a *requestInfo) func(yield func(*Conn) bool) {
	return func(yield func(*Conn) bool) {
		for _, u := range a.users {
			for c := range h.people["u:"+u] {
				if !yield(c) {
					return
				}
			}
		}
		for i, g := range a.groups {
			for c := range h.people["g:"+g] {
				if slices.Contains(a.users, c.user) || slices.ContainsFunc(a.groups[:i], func(e string) bool { return slices.Contains(c.groups, e) }) {
					continue // yielded already
				}
				if !yield(c) {
					return
				}
			}
		}
	}
}

// requestFieldsOf returns the fields of ev, a request's event, that the hub reads: from
// the data NewEvent encoded, or decoded from Data for an event from elsewhere.
func requestFieldsOf(ev wire.Event) requestFields {
	switch v := ev.Value().(type) {
	case *wire.AskData:
		return askFields(v)
	case wire.AskData:
		return askFields(&v)
	case *wire.ApprovalData:
		return requestFields{What: v.Tool, AskedAt: v.AskedAt, ExpiresAt: v.ExpiresAt, SessionTitle: v.SessionTitle, Approvers: v.Approvers}
	case wire.ApprovalData:
		return requestFields{What: v.Tool, AskedAt: v.AskedAt, ExpiresAt: v.ExpiresAt, SessionTitle: v.SessionTitle, Approvers: v.Approvers}
	case wire.ApprovalProgressData:
		return requestFields{Approved: v.Approved, Names: v.Names, Users: v.Users, Groups: v.Groups}
	case *wire.ApprovalProgressData:
		return requestFields{Approved: v.Approved, Names: v.Names, Users: v.Users, Groups: v.Groups}
	case wire.ApprovalResolvedData:
		return requestFields{Outcome: approvalOutcome(v.Outcome), By: v.By, At: v.At}
	}
	switch ev.Type {
	case wire.EventResolved:
		return requestFields{}
	case wire.EventApprovalResolved:
		var r struct {
			Outcome string    `json:"outcome"`
			By      string    `json:"by"`
			At      time.Time `json:"at"`
		}
		_ = json.Unmarshal(ev.Data, &r)
		return requestFields{Outcome: r.Outcome, By: r.By, At: r.At}
	case wire.EventAsk:
		a := new(wire.AskData)
		_ = json.Unmarshal(ev.Data, a) // what does not read is kept as nothing
		return askFields(a)
	}
	f := new(requestFields)
	_ = json.Unmarshal(ev.Data, f)
	return *f
}

// approvalOutcome returns o's name in tool_approval_resolved, as devices read it.
func approvalOutcome(o wire.Outcome) string {
	if o == wire.TimedOut {
		return "timed_out"
	}
	return o.String()
}

// askFields returns the fields of a question set the hub reads.
func askFields(a *wire.AskData) requestFields {
	f := requestFields{AskedAt: a.AskedAt, ExpiresAt: a.ExpiresAt, SessionTitle: a.SessionTitle}
	if len(a.Questions) > 0 {
		f.What = cmp.Or(a.Questions[0].Header, a.Questions[0].Question)
	}
	return f
}

// routed reports whether c may send ev, a decision, although ev's session is not one of
// c's: the approval it decides is routed to c's person.
func (h *Hub) routed(c *Conn, ev wire.Event) bool {
	if ev.SessionID.IsZero() || c.user == "" || c.only != "" {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.requests[askKey{ev.SessionID, ev.RequestID()}]
	return r != nil && r.routedTo(c) && !r.expired(time.Now())
}

// inboxData is the inbox event's data for c, which has a user: who it is, and the
// decided approvals it may see. h.mu is held.
func (h *Hub) inboxDataLocked(c *Conn) *wire.InboxData {
	data := &wire.InboxData{User: c.user, Groups: c.groups, Decided: []wire.InboxEntry{}}
	for d := range h.decidedLocked {
		if slices.Contains(c.sessions, d.entry.SessionID) || d.routedTo(c) {
			data.Decided = append(data.Decided, d.entry)
		}
	}
	return data
}

// Inbox returns the inbox of the person a names (its User, Groups and Sessions, as
// [Options.Authenticate] would grant their device): what their devices show, as this hub
// knows it from the events it has carried. In a cluster every replica's hub carries
// every request, and one that starts while requests wait learns of them from its
// cluster.Transport. The decided approvals are those the hub has seen end since it
// started. A hub that authorizes with [Options.Authorize] knows no people, and keeps
// nothing for inboxes: its Inbox is empty. Inbox may be called concurrently; it reads
// no network and calls nothing back.
func (h *Hub) Inbox(a Access) Inbox {
	var box Inbox
	c := &Conn{user: a.User, groups: a.Groups, sessions: dedupe(a.Sessions)}
	now := time.Now()
	h.mu.Lock()
	h.pruneLocked()
	for k, r := range h.requests {
		if r.expired(now) {
			continue
		}
		if slices.Contains(c.sessions, k.session) || r.routedTo(c) {
			e := r.entry
			if e.Approvers != nil {
				e.Approvers = cloneApprovers(e.Approvers)
				e.ReadOnly = (r.users != nil || r.groups != nil) && !approver(r.users, r.groups, a.User, a.Groups)
			}
			box.Pending = append(box.Pending, e)
		}
	}
	for d := range h.decidedLocked {
		if slices.Contains(c.sessions, d.entry.SessionID) || d.routedTo(c) {
			box.Decided = append(box.Decided, d.entry)
		}
	}
	h.mu.Unlock()
	slices.SortFunc(box.Pending, func(x, y wire.InboxEntry) int {
		return cmp.Or(y.AskedAt.Compare(x.AskedAt), cmp.Compare(x.RequestID, y.RequestID))
	})
	return box
}

// cloneApprovers returns a copy of a that shares nothing with it.
func cloneApprovers(a *wire.ApproversData) *wire.ApproversData {
	c := *a
	c.Names, c.Approved, c.Users, c.Groups = slices.Clone(a.Names), slices.Clone(a.Approved), slices.Clone(a.Users), slices.Clone(a.Groups)
	return &c
}
