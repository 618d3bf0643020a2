package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"
	"github.com/askuser-go/askuser/wire"
)

// formModel is the Bubble Tea model of one question set: a header with the countdown,
// the huh form, the preview of the option under the cursor, and the keys that decline.
type formModel struct {
	frame
	set      *set
	form     *huh.Form
	fields   map[huh.Field]formField
	previews previews
	reply    *wire.ResultData // the person's reply, once closed with one
}

func newFormModel(s *set, w waiting, maxText int) *formModel {
	f, fields := buildForm(s, maxText)
	m := &formModel{frame: newFrame(s.ask.ExpiresAt, w), set: s, form: f, fields: fields}
	m.from = s.origin
	return m
}

func (m *formModel) Init() tea.Cmd { return tea.Batch(m.form.Init(), m.frame.init()) }

func (m *formModel) base() *frame { return &m.frame }

func (m *formModel) result() viewResult { return viewResult{reply: m.reply, inbox: m.inbox} }

func (m *formModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m.closed {
		return m, nil
	}
	if m.openInbox(msg) {
		return m, tea.Quit
	}
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch msg.String() {
		case "esc", "ctrl+c":
			m.reply = &wire.ResultData{RequestID: m.set.ask.RequestID, Declined: true}
			m.closed = true
			return m, tea.Quit
		case "ctrl+a":
			if f, ok := m.form.GetFocusedField().(*huh.MultiSelect[int]); ok {
				return m, m.chooseAll(m.set.qs[m.fields[f].question], f)
			}
		case "enter", "tab":
			if f, ok := m.fields[m.form.GetFocusedField()]; ok {
				q := m.set.qs[f.question]
				q.moving = true // checked as the form handles the key, in step
				defer func() { q.moving = false }()
			}
		}
	}
	return m, m.step(msg, &m.form, m.resize, func() {
		r := m.set.reply()
		m.reply = &r
	})
}

// chooseAll is ctrl+a on the multi-select field f of question q: it chooses every
// option, or none when every one is chosen already, and leaves Other as it is. (huh's
// own select-all would choose Other too, and so open an empty text box the person
// never asked for.) It moves the field's cursor and toggles, as the person would with
// the keys, then puts the cursor back where it was.
func (m *formModel) chooseAll(q *question, f *huh.MultiSelect[int]) tea.Cmd {
	chosen := make([]bool, len(q.Options))
	for _, i := range q.multi {
		if i >= 0 && i < len(chosen) {
			chosen[i] = true
		}
	}
	want := q.chosenOptions() < len(q.Options)
	start, _ := f.Hovered()
	at := start
	var cmds []tea.Cmd
	press := func(code rune) {
		_, cmd := m.form.Update(tea.KeyPressMsg{Code: code})
		cmds = append(cmds, cmd)
	}
	moveTo := func(j int) {
		for ; at < j; at++ {
			press(tea.KeyDown)
		}
		for ; at > j; at-- {
			press(tea.KeyUp)
		}
	}
	for j, c := range chosen {
		if c != want {
			moveTo(j)
			press(tea.KeySpace)
		}
	}
	moveTo(start)
	return tea.Batch(cmds...)
}

// resize fits the form to the terminal's width, and gives every group the height of
// the tallest, its question (which may take several lines), hint, field and help
// together, so that none is cut. huh's own sizing (from a WindowSizeMsg) measures the
// groups before they are shown and can cut a later one short.
func (m *formModel) resize() {
	w, _ := m.columns()
	m.form.WithWidth(w)
	h := 0
	for f, ff := range m.fields {
		h = max(h, lipgloss.Height(ff.group.Header())+lipgloss.Height(f.View())+lipgloss.Height(ff.group.Footer()))
	}
	m.form.WithHeight(h)
}

// hasPreviews reports whether any question of the set shows previews.
func (m *formModel) hasPreviews() bool {
	for _, q := range m.set.qs {
		if q.hasPreviews() {
			return true
		}
	}
	return false
}

// columns returns the widths of the form and of the preview beside it; a preview
// width of 0 means the preview goes below the form (a narrow terminal) or there is none.
func (m *formModel) columns() (form, preview int) {
	if !m.hasPreviews() || m.width < 90 {
		return m.width, 0
	}
	form = m.width / 2
	return form, m.width - form - 1
}

// chromeHeight is the lines the model draws around the form.
func (m *formModel) chromeHeight() int {
	h := 2 + len(wrapLines(m.header(m.what()), m.width)) // header, blank line, footer
	if len(m.set.problems) > 0 {
		h += 1 + len(m.set.problems)
	}
	return h
}

var (
	headerStyle  = lipgloss.NewStyle().Bold(true)
	dimStyle     = lipgloss.NewStyle().Faint(true)
	problemStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("9"))
	previewBox   = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1)
)

func (m *formModel) View() tea.View {
	if m.aside {
		return tea.NewView("")
	}
	if m.closed {
		return tea.NewView(finalView(m.set, m.reply, m.note))
	}
	if !m.sized {
		return tea.NewView("")
	}
	var b strings.Builder
	b.WriteString(m.headerView(m.what()))
	b.WriteString("\n")
	if len(m.set.problems) > 0 {
		b.WriteString(problemStyle.Render("The host refused the answer; fix this and send again:"))
		b.WriteString("\n")
		for _, p := range m.set.problems {
			b.WriteString(problemStyle.Render("  • "+p) + "\n")
		}
	}
	b.WriteString("\n")
	body := m.form.View()
	if pv := m.previewView(); pv != "" {
		if _, w := m.columns(); w > 0 {
			body = lipgloss.JoinHorizontal(lipgloss.Top, body, " ", pv)
		} else {
			body = lipgloss.JoinVertical(lipgloss.Left, body, pv)
		}
	}
	b.WriteString(body)
	b.WriteString("\n")
	b.WriteString(dimStyle.Render("esc or ctrl+c: decline · ctrl+o: inbox · the first answer from any device wins"))
	return tea.NewView(b.String())
}

// what is what the header says is asked.
func (m *formModel) what() string {
	if n := len(m.set.qs); n > 1 {
		return fmt.Sprintf("The agent asks you %d questions", n)
	}
	return "The agent asks you a question"
}

// previewView is the preview of the option under the cursor of the focused question,
// when that question has previews.
func (m *formModel) previewView() string {
	f := m.form.GetFocusedField()
	ff, ok := m.fields[f]
	if !ok {
		return ""
	}
	q := m.set.qs[ff.question]
	if !q.hasPreviews() {
		return ""
	}
	sel, ok := f.(*huh.Select[int])
	if !ok {
		return "" // the Other text box of the question
	}
	j, ok := sel.Hovered()
	if !ok {
		return ""
	}
	width := m.width
	if _, w := m.columns(); w > 0 {
		width = w
	}
	inner := width - previewBox.GetHorizontalFrameSize()
	var caption, body string
	if j < len(q.Options) {
		caption = "Preview: " + clean(q.Options[j].Label, false)
		if q.Options[j].Preview == "" {
			body = dimStyle.Render("(no preview for this option)")
		} else {
			style := styleDark
			if !m.dark {
				style = styleLight
			}
			body = m.previews.render(q.Options[j].Preview, inner, style)
		}
	} else {
		caption = "Preview"
		body = dimStyle.Render("(type your own answer)")
	}
	lines := strings.Split(body, "\n")
	if limit := max(m.height-m.chromeHeight()-3, 5); len(lines) > limit {
		lines = append(lines[:limit-1], dimStyle.Render("…"))
	}
	return previewBox.Width(width).Render(headerStyle.Render(caption) + "\n" + strings.Join(lines, "\n"))
}
