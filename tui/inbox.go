package tui

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// The inbox: what the terminal holds for its person across sessions. A host whose hub
// knows the person (wshub's Authenticate) tells the terminal first who it is connected
// as (the inbox event); the terminal then shows the approvals that others must decide
// read-only, and lists everything pending, newest first, with what ended lately.

// maxDecided bounds the ended requests the terminal keeps for the list, and
// listDecided those it shows.
const (
	maxDecided  = 50
	listDecided = 10
)

// person takes the inbox event: who the terminal is connected as, in session, and what
// was decided lately.
func (d *device) person(session askuser.SessionID, in wire.InboxData) {
	d.user, d.groups = in.User, in.Groups
	d.decided = slices.Clone(in.Decided[:min(len(in.Decided), maxDecided)])
	d.noteSession(session, "")
}

// readOnly reports whether r is an approval the person may see but not decide.
func (d *device) readOnly(r request) bool {
	a, ok := r.(*approval)
	return ok && !mayDecide(a.data.Approvers, d.user, d.groups)
}

// noteSession remembers that the terminal holds requests of session, called title.
func (d *device) noteSession(session askuser.SessionID, title string) {
	if d.titles == nil {
		d.titles = make(map[askuser.SessionID]string)
	}
	if t, ok := d.titles[session]; !ok || t == "" {
		d.titles[session] = title
	}
}

// origin names r's session in its view once the terminal holds requests of several
// sessions; "" before.
func (d *device) origin(r request) string {
	if len(d.titles) < 2 {
		return ""
	}
	e := r.entry()
	return sessionLabel(e.SessionID, cmp.Or(e.SessionTitle, d.titles[e.SessionID]))
}

// sessionLabel is how a session is named for the person: its title, or its id.
func sessionLabel(session askuser.SessionID, title string) string {
	if t := strings.TrimSpace(clean(title, false)); t != "" {
		return truncateText(t, 40)
	}
	return "session " + truncateText(clean(session.String(), false), 40)
}

// record keeps r, which ended as rs says, among the decided requests.
func (d *device) record(r request, rs resolution) {
	e := r.entry()
	e.Outcome, e.By, e.At = rs.Outcome, rs.By, cmp.Or(rs.At, time.Now())
	e.ExpiresAt, e.Approvers, e.ReadOnly = time.Time{}, nil, false
	d.decided = slices.Insert(d.decided, 0, e)
	d.decided = d.decided[:min(len(d.decided), maxDecided)]
}

// inboxList is the inbox as a view shows it: the pending requests, newest first, each a
// line the person may open, and the ones decided lately, as lines.
type inboxList struct {
	who     string // the person, "alice (dba)"; "" when not known
	pending []inboxItem
	decided []string
}

// inboxItem is a pending request of the list.
type inboxItem struct {
	key  reqKey
	text string
}

// inboxList lists what the terminal holds now.
func (d *device) inboxList() inboxList {
	var l inboxList
	if d.user != "" {
		l.who = clean(d.user, false)
		if len(d.groups) > 0 {
			l.who += " (" + clean(strings.Join(d.groups, ", "), false) + ")"
		}
	}
	for _, r := range d.pendingNewest() {
		e := r.entry()
		e.ReadOnly = d.readOnly(r)
		l.pending = append(l.pending, inboxItem{key: r.key(), text: pendingLine(e)})
	}
	for _, e := range d.decided[:min(len(d.decided), listDecided)] {
		l.decided = append(l.decided, decidedLine(e))
	}
	return l
}

// pendingNewest is the queue, newest first: by when each was asked, then by when it
// came.
func (d *device) pendingNewest() []request {
	rs := slices.Clone(d.queue)
	slices.Reverse(rs)
	slices.SortStableFunc(rs, func(x, y request) int { return y.entry().AskedAt.Compare(x.entry().AskedAt) })
	return rs
}

// pendingLine is a pending request in a line: "Billing · approval · drop_database ·
// asked 16:21 · only dba can decide it".
func pendingLine(e wire.InboxEntry) string {
	s := entryLine(e)
	if !e.AskedAt.IsZero() {
		s += " · asked " + clock(e.AskedAt)
	}
	if e.ReadOnly {
		s += " · only " + approverNames(e.Approvers) + " can decide it"
	}
	return s
}

// decidedLine is an ended request in a line: "Billing · approval · drop_database ·
// approved by bob · 16:25".
func decidedLine(e wire.InboxEntry) string {
	outcome := strings.ReplaceAll(clean(e.Outcome, false), "_", " ")
	if outcome == "timeout" { // a question's
		outcome = "timed out"
	}
	s := entryLine(e) + " · " + outcome
	if e.By != "" {
		s += " by " + clean(e.By, false)
	}
	if !e.At.IsZero() {
		s += " · " + clock(e.At)
	}
	return s
}

// entryLine names a request: its session, its kind and what it asks.
func entryLine(e wire.InboxEntry) string {
	kind := "question"
	if e.Kind == wire.InboxApproval {
		kind = "approval"
	}
	return sessionLabel(e.SessionID, e.SessionTitle) + " · " + kind + " · " + truncateText(clean(e.What, false), 60)
}

// clock is a time of today's requests, in the terminal's zone: "16:21".
func clock(t time.Time) string { return t.Local().Format("15:04") }

// printList prints the pending requests, newest first, when several wait and they are
// not the ones printed (or shown in the inbox list) last.
func (d *device) printList() {
	if len(d.queue) < 2 {
		d.listed = ""
		return
	}
	text := d.pendingText()
	if text == d.listed {
		return
	}
	d.listed = text
	d.ui.say("Pending here, newest first (" + d.ui.inboxKey() + " for the inbox):\n" + text)
}

// pendingText is the pending requests, newest first, a line each.
func (d *device) pendingText() string {
	var lines []string
	for _, it := range d.inboxList().pending {
		lines = append(lines, "  "+it.text)
	}
	return strings.Join(lines, "\n")
}

// serveInbox shows the inbox list until the person opens a request of it, which is
// shown next, or goes back. It keeps the list up to date as requests come and end.
func (d *device) serveInbox(ctx context.Context) error {
	d.listing, d.listUp = false, true
	defer func() { d.listUp = false }()
	v := d.ui.showInbox(ctx, d.inboxList())
	for {
		select {
		case res := <-v.done():
			if res.err != nil {
				return res.err
			}
			d.listed = d.pendingText() // the person has just seen them
			if res.open != nil {
				if i := d.find(*res.open); i >= 0 {
					d.chosen = d.queue[i]
				}
			}
			return res.then
		case ev := <-d.events:
			d.take(ev, nil)
			v.list(d.inboxList())
		case err := <-d.failed:
			if ctx.Err() != nil {
				<-v.done()
				return ctx.Err()
			}
			v.end("The connection to the host was lost.")
			<-v.done()
			return err
		}
	}
}

// listMsg gives the inbox list's form the list now.
type listMsg inboxList

// inboxModel is the Bubble Tea model of the inbox list: the pending requests, one of
// them under the cursor, and those decided lately.
type inboxModel struct {
	frame
	l      inboxList
	cursor int
	open   *reqKey // the request the person opened, once closed with one
}

func newInboxModel(l inboxList) *inboxModel {
	return &inboxModel{frame: newFrame(time.Time{}, waiting{}), l: l}
}

func (m *inboxModel) Init() tea.Cmd { return m.frame.init() }

func (m *inboxModel) base() *frame { return &m.frame }

func (m *inboxModel) result() viewResult { return viewResult{open: m.open} }

func (m *inboxModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m.closed {
		return m, nil
	}
	switch msg := msg.(type) {
	case listMsg:
		at := -1
		if m.cursor < len(m.l.pending) {
			k := m.l.pending[m.cursor].key
			at = slices.IndexFunc(msg.pending, func(it inboxItem) bool { return it.key == k })
		}
		m.l = inboxList(msg)
		if at >= 0 {
			m.cursor = at
		}
		m.cursor = max(0, min(m.cursor, len(m.l.pending)-1))
		return m, nil
	case tea.KeyPressMsg:
		switch msg.String() {
		case "up", "k":
			m.cursor = max(m.cursor-1, 0)
		case "down", "j":
			m.cursor = max(0, min(m.cursor+1, len(m.l.pending)-1))
		case "enter":
			if len(m.l.pending) > 0 {
				k := m.l.pending[m.cursor].key
				m.open, m.aside, m.closed = &k, true, true
				return m, tea.Quit
			}
		case "esc", "ctrl+c", "ctrl+o", "q":
			m.aside, m.closed = true, true
			return m, tea.Quit
		}
		return m, nil
	}
	cmd, _ := m.frame.update(msg)
	return m, cmd
}

func (m *inboxModel) View() tea.View {
	if m.closed {
		if m.aside {
			return tea.NewView("")
		}
		return tea.NewView(m.note + "\n")
	}
	if !m.sized {
		return tea.NewView("")
	}
	title := "Your inbox"
	if m.l.who != "" {
		title += " · " + m.l.who
	}
	lines := []string{headerStyle.Render(title)}
	if len(m.l.pending) == 0 {
		lines = append(lines, "Nothing is pending here.")
	} else {
		lines = append(lines, "Pending, newest first:")
	}
	for i, it := range m.l.pending {
		mark := "  "
		if i == m.cursor {
			mark = "> "
		}
		lines = append(lines, truncateText(mark+it.text, max(m.width, 20)))
	}
	if len(m.l.decided) > 0 {
		lines = append(lines, "Ended lately:")
		for _, s := range m.l.decided {
			lines = append(lines, dimStyle.Render(truncateText("  "+s, max(m.width, 20))))
		}
	}
	lines = capLines(lines, max(m.height-1, 4), "")
	help := "↑/↓: choose · enter: open · esc: back"
	if len(m.l.pending) == 0 {
		help = "esc: back"
	}
	return tea.NewView(strings.Join(lines, "\n") + "\n" + dimStyle.Render(help))
}

// listLines are the inbox list as plain numbered lines, for the accessible mode.
func listLines(l inboxList) []string {
	var lines []string
	if len(l.pending) == 0 {
		lines = append(lines, "Nothing is pending here.")
	} else {
		lines = append(lines, "Pending, newest first:")
	}
	for i, it := range l.pending {
		lines = append(lines, "  "+strconv.Itoa(i+1)+". "+it.text)
	}
	if len(l.decided) > 0 {
		lines = append(lines, "Ended lately:")
		for _, s := range l.decided {
			lines = append(lines, "  "+s)
		}
	}
	return lines
}
