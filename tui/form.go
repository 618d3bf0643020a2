package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// formUI shows each question set and each approval as a huh form inside a Bubble Tea
// program of its own, drawn inline (not on the alternate screen), so that what was
// asked and answered stays in the terminal's scrollback. Between forms the terminal is
// left as it was.
type formUI struct {
	opts *Options
	keys *keys
}

func newFormUI(o *Options) *formUI { return &formUI{opts: o, keys: newKeys(o)} }

func (u *formUI) say(text string) { _, _ = io.WriteString(u.opts.Output, text+"\n") }

func (u *formUI) close() { u.keys.close() }

func (u *formUI) show(ctx context.Context, s *set, w waiting) view {
	return u.run(ctx, newFormModel(s, w, u.opts.MaxCustomInput))
}

func (u *formUI) showApproval(ctx context.Context, a *approval, w waiting) view {
	return u.run(ctx, newApprovalModel(a, w))
}

func (u *formUI) showInbox(ctx context.Context, l inboxList) view {
	return u.run(ctx, newInboxModel(l))
}

func (u *formUI) inboxKey() string { return "ctrl+o in a form" }

// model is the model of one form: a question set's or an approval's.
type model interface {
	tea.Model
	base() *frame
	// result is the person's reply once the form has closed; the zero viewResult when
	// it closed without one.
	result() viewResult
}

// run shows the form of m in a Bubble Tea program of its own.
func (u *formUI) run(ctx context.Context, m model) view {
	prog := tea.NewProgram(m,
		tea.WithContext(ctx),
		tea.WithInput(nil), // keys come from u.keys
		tea.WithOutput(u.opts.Output),
		tea.WithEnvironment(u.opts.Environ),
		// Signals are the host's: a SIGINT or SIGTERM ends the host's context, and so
		// the form. In raw mode Ctrl-C is a key, which declines (or denies).
		tea.WithoutSignalHandler(),
		tea.WithFilter(dropSizeRequests),
	)
	v := &formView{prog: prog, result: make(chan viewResult, 1)}
	go func() {
		defer close(m.base().stop) // ends the countdown's timer goroutine
		if err := u.keys.start(); err != nil {
			v.result <- viewResult{err: fmt.Errorf("tui: reading the terminal: %w", err)}
			return
		}
		restore, err := u.keys.show(prog)
		if err != nil {
			v.result <- viewResult{err: err}
			return
		}
		final, err := prog.Run()
		restore()
		fm, _ := final.(model)
		switch {
		case err != nil && ctx.Err() != nil:
			v.result <- viewResult{err: ctx.Err()}
		case err != nil:
			v.result <- viewResult{err: fmt.Errorf("tui: the terminal failed: %w", err)}
		case fm == nil:
			v.result <- viewResult{err: errors.New("tui: the form ended without a model")}
		case fm.base().inputEnded:
			v.result <- viewResult{err: ErrInputEnded}
		default:
			v.result <- fm.result()
		}
	}()
	return v
}

// dropSizeRequests drops the form's request for the terminal's size: the program sends
// the size as it starts and on every resize anyway, and it answers a request from a
// goroutine that the end of the program does not wait for, which could then use the
// terminal after Run has returned.
func dropSizeRequests(_ tea.Model, msg tea.Msg) tea.Msg {
	if msg == tea.RequestWindowSize() {
		return nil
	}
	return msg
}

// formView is a running form. Its messages reach the program through Send, which
// is safe from any goroutine and does nothing once the program has ended.
type formView struct {
	prog   *tea.Program
	result chan viewResult
}

func (v *formView) done() <-chan viewResult { return v.result }

func (v *formView) setWaiting(w waiting) { v.prog.Send(waitingMsg(w)) }

func (v *formView) progress(line string) { v.prog.Send(progressMsg(line)) }

func (v *formView) list(l inboxList) { v.prog.Send(listMsg(l)) }

func (v *formView) end(note string) { v.prog.Send(endMsg(note)) }

// Messages from the device loop to a form.
type (
	waitingMsg waiting // what waits behind the request shown
	endMsg     string  // the request ended elsewhere: close with this note
)

// formKeyMap is huh's key map without filtering: Esc must decline, not leave a filter,
// and "/" must not hide options. Nor is there an external editor for a text box: the
// forms do not own the terminal's input, so the editor would not get it. The bindings
// are emptied rather than disabled, since the fields enable their keys again as they go.
// Ctrl+A never reaches the form (see formModel.chooseAll): its bindings stay only for
// the help line, worded to fit either way.
func formKeyMap() *huh.KeyMap {
	km := huh.NewDefaultKeyMap()
	for _, b := range []*key.Binding{&km.Select.Filter, &km.Select.SetFilter, &km.Select.ClearFilter,
		&km.MultiSelect.Filter, &km.MultiSelect.SetFilter, &km.MultiSelect.ClearFilter, &km.Text.Editor, &km.Quit} {
		*b = key.NewBinding() // Ctrl-C (Quit) declines, handled before the form sees it
	}
	// huh's help says "x toggle"; the hint above the options says space, which both take.
	km.MultiSelect.Toggle.SetHelp("space", "toggle")
	km.MultiSelect.SelectAll.SetHelp("ctrl+a", "all/none")
	km.MultiSelect.SelectNone.SetHelp("ctrl+a", "all/none")
	return km
}

// formField is a field of a set's form: its question's index, and its group.
type formField struct {
	question int
	group    *huh.Group
}

// buildForm makes the huh form of a set: for each question a group with a select (or
// multi-select) whose last option is Other, then a group with the Other text box,
// shown only when Other is chosen. A single-select answer is thus an option or the
// Other text, never both.
func buildForm(s *set, maxText int) (*huh.Form, map[huh.Field]formField) {
	fields := make(map[huh.Field]formField)
	var groups []*huh.Group
	for i, q := range s.qs {
		title := questionTitle(q)
		if q.freeText() {
			// No options: the text box alone, always shown.
			in := huh.NewInput().CharLimit(maxText).Value(&q.text).Validate(func(s string) error {
				if !q.moving {
					return nil
				}
				return checkText(s, maxText)
			})
			if p := clean(q.Placeholder, false); strings.TrimSpace(p) != "" {
				in.Placeholder(p)
			}
			g := huh.NewGroup(in).Title(title).Description("Type your answer.")
			fields[in] = formField{i, g}
			groups = append(groups, g)
			continue
		}
		var opts []huh.Option[int]
		for j, o := range q.Options {
			label := clean(o.Label, false)
			if d := clean(o.Description, false); d != "" {
				label += " — " + d
			}
			opts = append(opts, huh.NewOption(label, j))
		}
		opts = append(opts, huh.NewOption("Other: type your own answer", q.other()))

		// The question is the group's title, not the field's: huh sizes a multi-select
		// with a title of its own too short for its options.
		var f huh.Field
		hint := "Choose one, or Other to type your own."
		if q.MultiSelect {
			hint = "Choose any (space toggles), then enter. Other lets you type your own."
			f = huh.NewMultiSelect[int]().Options(opts...).Value(&q.multi).Validate(func(v []int) error {
				if !q.moving {
					return nil
				}
				return checkChoice(v)
			})
		} else {
			f = huh.NewSelect[int]().Options(opts...).Value(&q.single)
		}
		g := huh.NewGroup(f).Title(title).Description(hint)
		fields[f] = formField{i, g}
		groups = append(groups, g)

		hint = "Type your own answer, instead of the options."
		if q.MultiSelect {
			hint = "Type your own answer, besides the options chosen; leave it empty to send only those."
		}
		in := huh.NewInput().CharLimit(maxText).Value(&q.text).Validate(func(s string) error {
			if !q.moving || strings.TrimSpace(s) == "" && q.chosenOptions() > 0 {
				return nil // a blank box beside options chosen is no Other text
			}
			return checkText(s, maxText)
		})
		g = huh.NewGroup(in).Title(title).Description(hint).WithHideFunc(func() bool { return !q.wantsText() })
		fields[in] = formField{i, g}
		groups = append(groups, g)
	}
	f := huh.NewForm(groups...).WithKeyMap(formKeyMap()).WithShowHelp(true)
	return f, fields
}

// questionTitle is a question's header chip and text, as one line of safe text; a
// question without a header has no chip.
func questionTitle(q *question) string {
	if h := clean(q.Header, false); strings.TrimSpace(h) != "" {
		return "[" + h + "] " + clean(q.Question.Question, false)
	}
	return clean(q.Question.Question, false)
}

// finalView is what stays in the terminal once a form has closed: each question with
// the answer given, or how the set ended.
func finalView(s *set, reply *wire.ResultData, note string) string {
	var b strings.Builder
	for i, q := range s.qs {
		b.WriteString(questionTitle(q))
		switch {
		case note != "":
			if i == len(s.qs)-1 {
				b.WriteString("\n  " + note)
			}
		case reply == nil:
		case reply.Declined:
			if i == len(s.qs)-1 {
				b.WriteString("\n  → declined")
			}
		default:
			b.WriteString("\n  → " + answerText(reply.Answers[i]))
		}
		b.WriteString("\n")
	}
	if reply != nil && !reply.Declined {
		b.WriteString("Sending…\n")
	}
	return b.String()
}

// answerText is an answer as one line: the labels, then the Other text in quotes.
func answerText(a askuser.Answer) string {
	parts := make([]string, 0, len(a.SelectedLabels)+1)
	for _, l := range a.SelectedLabels {
		parts = append(parts, clean(l, false))
	}
	if a.CustomInput != nil {
		parts = append(parts, fmt.Sprintf("%q", clean(*a.CustomInput, false)))
	}
	return strings.Join(parts, ", ")
}
