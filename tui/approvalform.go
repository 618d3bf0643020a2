package tui

import (
	"cmp"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"
	"github.com/askuser-go/askuser/wire"
	"github.com/charmbracelet/x/ansi"
)

// approvalModel is the Bubble Tea model of one approval: a header with the countdown,
// the tool, its description and its arguments, then the huh form of the decisions it
// offers, and the keys that deny.
type approvalModel struct {
	frame
	a    *approval
	form *huh.Form
	// groups and fields are the form's, in order, one field a group: each group is
	// given its own field's height.
	groups []*huh.Group
	fields []huh.Field
	edit   *huh.Text // the edit box; nil when edit is not offered
	// back is set while a key that goes back is handled: an edit is checked only when
	// the person goes on with it.
	back bool
	// args are the arguments' lines laid out for width argsWidth.
	args      []string
	argsWidth int

	decision *wire.ApprovalResultData // the person's decision, once closed with one
	// waiting is whom the approval waits for now, once a tool_approval_progress told.
	waiting *string
}

// progressMsg tells an approval's form whom it waits for now.
type progressMsg string

func newApprovalModel(a *approval, w waiting) *approvalModel {
	m := &approvalModel{frame: newFrame(a.data.ExpiresAt, w), a: a}
	m.from = a.origin
	m.build()
	return m
}

// build makes the form: the decisions, then, shown only for the decision they belong
// to, the reason of a denial (a preset, or typed) and the edit box.
func (m *approvalModel) build() {
	a := m.a
	var opts []huh.Option[string]
	for _, d := range a.data.Decisions {
		opts = append(opts, huh.NewOption(a.decisionLabel(d), d))
	}
	m.add(huh.NewSelect[string]().Options(opts...).Value(&a.decision), "Your decision", nil)
	notDeny := func() bool { return a.decision != wire.DecisionDeny }
	if a.offers(wire.DecisionDeny) {
		if len(a.data.Reasons) > 0 {
			var reasons []huh.Option[int]
			for i, r := range a.data.Reasons {
				reasons = append(reasons, huh.NewOption(clean(r, false), i))
			}
			reasons = append(reasons, huh.NewOption("Type a reason", a.pickTyped()), huh.NewOption("No reason", a.pickNone()))
			m.add(huh.NewSelect[int]().Options(reasons...).Value(&a.reasonPick), "Why deny? The agent is told.", notDeny)
		}
		typed := func() bool { return notDeny() || len(a.data.Reasons) > 0 && a.reasonPick != a.pickTyped() }
		m.add(huh.NewInput().CharLimit(maxReason).Value(&a.reason).Placeholder("no reason"),
			"Your reason for denying, or nothing (optional)", typed)
	}
	if a.offers(wire.DecisionEdit) {
		m.edit = huh.NewText().Value(&a.edit).ExternalEditor(false).Validate(func(s string) error {
			if m.back {
				return nil
			}
			return checkEdit(s)
		})
		m.add(m.edit, "The arguments to run the tool with, as JSON", func() bool { return a.decision != wire.DecisionEdit })
	}
	m.form = huh.NewForm(m.groups...).WithKeyMap(formKeyMap()).WithShowHelp(true)
}

// add adds a group of one field to the form, shown unless hide says otherwise.
func (m *approvalModel) add(f huh.Field, title string, hide func() bool) {
	g := huh.NewGroup(f).Title(title)
	if hide != nil {
		g = g.WithHideFunc(hide)
	}
	m.groups = append(m.groups, g)
	m.fields = append(m.fields, f)
}

func (m *approvalModel) Init() tea.Cmd { return tea.Batch(m.form.Init(), m.frame.init()) }

func (m *approvalModel) base() *frame { return &m.frame }

func (m *approvalModel) result() viewResult { return viewResult{decision: m.decision, inbox: m.inbox} }

func (m *approvalModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m.closed {
		return m, nil
	}
	if m.openInbox(msg) {
		return m, tea.Quit
	}
	if p, ok := msg.(progressMsg); ok {
		line := string(p)
		m.waiting = &line
		return m, nil
	}
	if m.a.readOnly { // no decision: the frame's messages alone
		cmd, _ := m.update(msg)
		return m, cmd
	}
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "esc", "ctrl+c":
			if !m.a.offers(wire.DecisionDeny) {
				return m, nil
			}
			m.decision = m.a.denial()
			m.closed = true
			return m, tea.Quit
		}
		m.back = k.String() == "shift+tab"
	}
	return m, m.step(msg, &m.form, m.resize, func() {
		r := m.a.reply()
		m.decision = &r
	})
}

// resize fits the form to the terminal: its width, the edit box's lines (as many as
// the arguments have, up to a third of the terminal), and each group the height of its
// own field, so that the decisions are not followed by the edit box's empty lines.
func (m *approvalModel) resize() {
	m.form.WithWidth(m.width)
	if m.edit != nil {
		m.edit.Lines(min(max(strings.Count(m.a.edit, "\n")+2, 3), max(m.height/3, 3)))
	}
	for i, g := range m.groups {
		g.WithHeight(lipgloss.Height(g.Header()) + lipgloss.Height(m.fields[i].View()) + lipgloss.Height(g.Footer()))
	}
}

// waitingLine is whom the approval waits for, as last told.
func (m *approvalModel) waitingLine() string {
	if m.waiting != nil {
		return *m.waiting
	}
	return m.a.waitingLine()
}

func (m *approvalModel) View() tea.View {
	if m.aside {
		return tea.NewView("")
	}
	if m.closed {
		return tea.NewView(m.finalView())
	}
	if !m.sized {
		return tea.NewView("")
	}
	var top, bottom strings.Builder
	who := "you"
	if m.a.readOnly {
		who = cmp.Or(approverNames(m.a.data.Approvers), "others")
	}
	top.WriteString(m.headerView("The agent asks "+who+" to approve a tool call") + "\n")
	top.WriteString("Tool: " + headerStyle.Render(m.a.tool()) + "\n")
	for _, line := range sourceLines(m.a.data.Source) {
		top.WriteString(strings.Join(wrapLines(line, m.width), "\n") + "\n")
	}
	if d := clean(m.a.data.Description, false); d != "" {
		top.WriteString(strings.Join(wrapLines(d, m.width), "\n") + "\n")
	}
	if l := m.waitingLine(); l != "" {
		top.WriteString(strings.Join(wrapLines(l, m.width), "\n") + "\n")
	}
	if m.a.readOnly {
		bottom.WriteString("\n" + headerStyle.Render(readOnlyLine) + "\n")
		bottom.WriteString(dimStyle.Render("It stays here until it ends · ctrl+o: inbox"))
	} else if len(m.a.problems) > 0 {
		bottom.WriteString(problemStyle.Render("The host refused the decision; fix this and send again:") + "\n")
		for _, p := range m.a.problems {
			bottom.WriteString(problemStyle.Render("  • "+p) + "\n")
		}
	}
	if !m.a.readOnly {
		bottom.WriteString("\n" + m.form.View() + "\n")
		bottom.WriteString(dimStyle.Render(m.help()))
	}

	var b strings.Builder
	b.WriteString(top.String())
	if m.edit != nil && m.form.GetFocusedField() == m.edit {
		b.WriteString(dimStyle.Render("Editing the arguments: the tool runs with yours, not the model's.") + "\n")
	} else {
		room := m.height - lipgloss.Height(top.String()) - lipgloss.Height(bottom.String())
		b.WriteString(strings.Join(m.argumentLines(room), "\n") + "\n")
	}
	b.WriteString(bottom.String())
	return tea.NewView(b.String())
}

// argumentLines are the arguments under their title, in at most room lines (at least
// a few, whatever the room).
func (m *approvalModel) argumentLines(room int) []string {
	if m.argsWidth != m.width || m.args == nil {
		m.argsWidth = m.width
		text := m.a.shown
		if m.a.invalid {
			text = clean(m.a.raw, true)
		}
		m.args = wrapLines(text, m.width-2)
	}
	title := "Arguments:"
	if m.a.invalid {
		title = problemStyle.Render("Arguments: not valid JSON; the model wrote:")
	}
	more := ", not shown"
	if m.edit != nil {
		more = "; choose Edit to see them all"
	}
	lines := []string{title}
	for _, l := range capLines(m.args, max(room-1, 4), more) {
		lines = append(lines, "  "+l)
	}
	return lines
}

// help is the line under the form: the keys that deny, and who wins.
func (m *approvalModel) help() string {
	if !m.a.offers(wire.DecisionDeny) {
		return "ctrl+o: inbox · the first decision from any device wins"
	}
	return "esc or ctrl+c: deny without a reason · ctrl+o: inbox · the first decision from any device wins"
}

// finalView is what stays in the terminal once the form has closed: the tool call, and
// the decision sent or how the approval ended.
func (m *approvalModel) finalView() string {
	args := "(arguments not valid JSON)"
	if !m.a.invalid {
		args = oneLine(m.a.data.Arguments, 200)
	}
	s := ansi.Truncate("Tool call: "+m.a.tool()+" "+args, max(m.width, 20), "…")
	switch {
	case m.note != "":
		s += "\n  " + m.note
	case m.decision != nil:
		s += "\n  → " + decisionText(m.decision) + "\nSending…"
	}
	return s + "\n"
}
