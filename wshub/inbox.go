package wshub

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/askuser-go/askuser"
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

// How long, and how many, ended approvals a hub keeps for inboxes.
const (
	DecidedFor = 4 * time.Hour
	MaxDecided = 1000
)

// approvalInfo is what the hub keeps of a pending approval, from its events: its inbox
// entry, and whom it is routed to beside its session's connections.
type approvalInfo struct {
	entry         wire.InboxEntry
	users, groups []string // who may decide; both nil when anyone of the session may
}

// routedTo reports whether an approval of a is routed to c's person: its approvers name
// them or one of their groups. A link's connection is routed nothing.
func (a *approvalInfo) routedTo(c *Conn) bool {
	return c.only == "" && c.user != "" && approver(a.users, a.groups, c.user, c.groups)
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

// approvalFields are the fields of an approval's events the hub reads.
type approvalFields struct {
	Tool         string              `json:"tool"`
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

// noteApprovalLocked updates what the hub keeps of the approval of key from one of its
// events, of type typ, whose fields are f, and returns it (nil when the hub keeps
// nothing of it). The entry of a resolution is moved to the decided ones. h.mu is held.
func (h *Hub) noteApprovalLocked(key askKey, typ string, f approvalFields) *approvalInfo {
	a := h.approvals[key]
	switch typ {
	case wire.EventApproval:
		a = &approvalInfo{entry: wire.InboxEntry{SessionID: key.session, SessionTitle: f.SessionTitle, RequestID: key.id,
			Kind: wire.KindApproval, What: f.Tool, AskedAt: f.AskedAt, ExpiresAt: f.ExpiresAt, Approvers: f.Approvers}}
		if f.Approvers != nil {
			a.users, a.groups = f.Approvers.Users, f.Approvers.Groups
		}
		if h.approvals == nil {
			h.approvals = make(map[askKey]*approvalInfo)
		}
		h.approvals[key] = a
		if h.noted++; h.noted%pruneEvery == 0 {
			h.pruneLocked()
		}
	case wire.EventApprovalProgress:
		if a == nil {
			return nil
		}
		who := *cmp.Or(a.entry.Approvers, &wire.ApproversData{})
		who.Approved = f.Approved
		if f.Names != nil || f.Users != nil || f.Groups != nil { // an escalation step
			who.Names, who.Users, who.Groups = f.Names, f.Users, f.Groups
			a.users, a.groups = f.Users, f.Groups
		}
		a.entry.Approvers = &who
	case wire.EventApprovalResolved:
		if a != nil {
			delete(h.approvals, key)
			h.decideLocked(a, f)
		}
	}
	return a
}

// pruneEvery is how many approvals the hub notes between two looks for those it was
// never told the end of.
const pruneEvery = 256

// pruneLocked forgets the approvals long past their expiry: their resolution never
// reached the hub (a cluster replica that started as one ended, say). h.mu is held.
func (h *Hub) pruneLocked() {
	for k, a := range h.approvals {
		if !a.entry.ExpiresAt.IsZero() && time.Since(a.entry.ExpiresAt) > 10*time.Minute {
			delete(h.approvals, k)
		}
	}
}

// decideLocked keeps the entry of a, which ended as f says, among the decided ones, in
// place of the oldest once MaxDecided are kept. h.mu is held.
func (h *Hub) decideLocked(a *approvalInfo, f approvalFields) {
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
func (h *Hub) decidedLocked(yield func(*approvalInfo) bool) {
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
func (h *Hub) routedLocked(a *approvalInfo) func(yield func(*Conn) bool) {
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

// approvalFieldsOf returns the fields of ev, an approval's event, that the hub reads:
// from the data NewEvent encoded, or decoded from Data for a resolution (a small one,
// whose outcome is read by its name on the wire) and for an event from elsewhere.
func approvalFieldsOf(ev wire.Event) approvalFields {
	switch v := ev.Value().(type) {
	case *wire.ApprovalData:
		return approvalFields{Tool: v.Tool, AskedAt: v.AskedAt, ExpiresAt: v.ExpiresAt, SessionTitle: v.SessionTitle, Approvers: v.Approvers}
	case wire.ApprovalData:
		return approvalFields{Tool: v.Tool, AskedAt: v.AskedAt, ExpiresAt: v.ExpiresAt, SessionTitle: v.SessionTitle, Approvers: v.Approvers}
	case wire.ApprovalProgressData:
		return approvalFields{Approved: v.Approved, Names: v.Names, Users: v.Users, Groups: v.Groups}
	case *wire.ApprovalProgressData:
		return approvalFields{Approved: v.Approved, Names: v.Names, Users: v.Users, Groups: v.Groups}
	}
	if ev.Type == wire.EventApprovalResolved {
		var r struct {
			Outcome string    `json:"outcome"`
			By      string    `json:"by"`
			At      time.Time `json:"at"`
		}
		_ = json.Unmarshal(ev.Data, &r)
		return approvalFields{Outcome: r.Outcome, By: r.By, At: r.At}
	}
	f := new(approvalFields)
	_ = json.Unmarshal(ev.Data, f) // what does not read is kept as nothing
	return *f
}

// routed reports whether c may send ev, a decision, although ev's session is not one of
// c's: the approval it decides is routed to c's person.
func (h *Hub) routed(c *Conn, ev wire.Event) bool {
	if ev.SessionID.IsZero() || c.user == "" || c.only != "" {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.approvals[askKey{ev.SessionID, ev.RequestID()}]
	return a != nil && a.routedTo(c)
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
// [Options.Authenticate] would grant their device): what their devices may show, as
// this hub knows it. A hub that authorizes with [Options.Authorize] knows no people: it
// lists the sessions' pending requests alone. A hub knows the approvals routed to people from the events it
// carries: in a cluster every replica's hub carries every approval, and one that started
// while approvals were pending learns of them from its cluster.Transport. The decided
// approvals are those this hub has seen end since it started. Inbox may be called
// concurrently; it reads no network.
func (h *Hub) Inbox(a Access) Inbox {
	var box Inbox
	h.mu.Lock()
	in := h.in
	c := &Conn{user: a.User, groups: a.Groups, sessions: dedupe(a.Sessions)}
	for k, x := range h.approvals {
		if !slices.Contains(c.sessions, k.session) && x.routedTo(c) {
			if p := h.pendingApprovalLocked(k); p != nil { // not one that ended unseen
				box.Pending = append(box.Pending, approvalEntry(k.session, p))
			}
		}
	}
	if a.User != "" {
		box.Decided = h.inboxDataLocked(c).Decided
	} else {
		for d := range h.decidedLocked {
			if slices.Contains(c.sessions, d.entry.SessionID) {
				box.Decided = append(box.Decided, d.entry)
			}
		}
	}
	h.mu.Unlock()
	if in != nil {
		for _, s := range c.sessions {
			for _, q := range in.Pending(s) {
				box.Pending = append(box.Pending, questionEntry(s, q))
			}
			for _, p := range in.PendingApprovals(s) {
				box.Pending = append(box.Pending, approvalEntry(s, &p))
			}
		}
	}
	for i, e := range box.Pending {
		if e.Kind == wire.KindApproval && e.Approvers != nil && (len(e.Approvers.Users) > 0 || len(e.Approvers.Groups) > 0) {
			box.Pending[i].ReadOnly = a.User == "" || !approver(e.Approvers.Users, e.Approvers.Groups, a.User, a.Groups)
		}
	}
	slices.SortStableFunc(box.Pending, func(x, y wire.InboxEntry) int { return y.AskedAt.Compare(x.AskedAt) })
	return box
}

// questionEntry is the inbox entry of a pending question set of session.
func questionEntry(session askuser.SessionID, q wire.AskData) wire.InboxEntry {
	e := wire.InboxEntry{SessionID: session, SessionTitle: q.SessionTitle, RequestID: q.RequestID, Kind: wire.KindQuestion,
		AskedAt: q.AskedAt, ExpiresAt: q.ExpiresAt}
	if len(q.Questions) > 0 {
		e.What = cmp.Or(q.Questions[0].Header, q.Questions[0].Question)
	}
	return e
}

// approvalEntry is the inbox entry of a pending approval of session.
func approvalEntry(session askuser.SessionID, p *wire.ApprovalData) wire.InboxEntry {
	return wire.InboxEntry{SessionID: session, SessionTitle: p.SessionTitle, RequestID: p.RequestID, Kind: wire.KindApproval,
		What: p.Tool, AskedAt: p.AskedAt, ExpiresAt: p.ExpiresAt, Approvers: p.Approvers}
}
