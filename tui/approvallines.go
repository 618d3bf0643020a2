package tui

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/askuser-go/askuser/wire"
)

// The accessible mode's approvals: the tool call written once as plain lines, then the
// decisions numbered, and a line for each thing a decision needs: the reason of a
// denial, the arguments of an edit.

// readAloud bounds the arguments' lines written before the decisions; the person can
// ask for the rest.
const readAloud = 40

func (v *lineView) decide(ctx context.Context, a *approval, w waiting) viewResult {
	deny := a.offers(wire.DecisionDeny)
	key := ""
	if deny {
		key = "Type d to deny."
	}
	v.intro("The agent asks you to approve a tool call.", w, key)
	v.printf("Tool: %s\n", a.tool())
	for _, line := range sourceLines(a.data.Source) {
		v.printf("%s\n", line)
	}
	if d := clean(a.data.Description, false); d != "" {
		v.printf("%s\n", d)
	}
	if l := a.waitingLine(); l != "" {
		v.printf("%s\n", l)
	}
	folded := v.printArguments(a, false)
	if len(a.problems) > 0 {
		v.printf("The host refused the decision: %s. Decide again.\n", strings.Join(a.problems, "; "))
	}
	v.printf("Decide: type a number.\n")
	for i, d := range a.data.Decisions {
		v.printf("  %d. %s\n", i+1, a.decisionLabel(d))
	}
	if folded {
		v.printf("Type a to hear the arguments in full.\n")
	}

	seen := w
	for {
		v.printf("Decision: ")
		line, err := v.readLine(ctx, &seen)
		if err != nil {
			return v.stopped(err)
		}
		t := strings.ToLower(strings.TrimSpace(clean(line, false)))
		switch {
		case t == "a" && folded:
			v.printArguments(a, true)
			continue
		case t == "d" && deny:
			return viewResult{decision: a.denial()}
		case inboxWord(t):
			return viewResult{inbox: true}
		}
		k, err := strconv.Atoi(t)
		if err != nil || k < 1 || k > len(a.data.Decisions) {
			v.printf("Type a number from 1 to %d.\n", len(a.data.Decisions))
			continue
		}
		a.decision = a.data.Decisions[k-1]
		switch a.decision {
		case wire.DecisionDeny:
			if err := v.readReason(ctx, a, &seen); err != nil {
				return v.stopped(err)
			}
		case wire.DecisionEdit:
			edited, err := v.readEdit(ctx, a, &seen)
			if err != nil {
				return v.stopped(err)
			}
			if !edited {
				continue
			}
		}
		r := a.reply()
		return viewResult{decision: &r}
	}
}

// watch shows an approval the person may not decide: the tool call, whom it waits
// for, and that it cannot be decided here. It reads lines only for the inbox, until
// the approval ends or the loop closes it.
func (v *lineView) watch(ctx context.Context, a *approval) viewResult {
	v.intro("The agent asks "+cmp.Or(approverNames(a.data.Approvers), "others")+" to approve a tool call.", waiting{}, "")
	v.printf("Tool: %s\n", a.tool())
	for _, line := range sourceLines(a.data.Source) {
		v.printf("%s\n", line)
	}
	if d := clean(a.data.Description, false); d != "" {
		v.printf("%s\n", d)
	}
	if l := a.waitingLine(); l != "" {
		v.printf("%s\n", l)
	}
	v.printArguments(a, false)
	v.printf("%s It stays here until it ends. Type i for your inbox.\n", readOnlyLine)
	var seen waiting
	for {
		line, err := v.readLine(ctx, &seen)
		if err != nil {
			return v.stopped(err)
		}
		if inboxWord(line) {
			return viewResult{inbox: true}
		}
		v.printf("This approval cannot be decided here. Type i for your inbox.\n")
	}
}

// printArguments writes the arguments under their title: folded and at most readAloud
// lines, or, when full, all of them as they are. It reports whether anything was left
// out.
func (v *lineView) printArguments(a *approval, full bool) (folded bool) {
	text := a.shown
	if full {
		text = a.pretty
	}
	if a.invalid {
		v.printf("Arguments: not valid JSON. The model wrote:\n")
		text = clean(a.raw, true)
	} else {
		v.printf("Arguments:\n")
	}
	all := strings.Split(text, "\n")
	lines := all
	if !full {
		lines = capLines(all, readAloud, "")
	}
	for _, l := range lines {
		v.printf("  %s\n", l)
	}
	return !full && (len(lines) < len(all) || !a.invalid && a.shown != a.pretty)
}

// readReason asks why the person denies: a preset's number, their own words, or
// nothing.
func (v *lineView) readReason(ctx context.Context, a *approval, seen *waiting) error {
	reasons := a.data.Reasons
	if len(reasons) > 0 {
		v.printf("Why deny? Type a reason's number, or your own reason, or nothing for no reason.\n")
		for i, r := range reasons {
			v.printf("  %d. %s\n", i+1, clean(r, false))
		}
	} else {
		v.printf("Why deny? Type your reason, or nothing for no reason.\n")
	}
	for {
		v.printf("Reason: ")
		line, err := v.readLine(ctx, seen)
		if err != nil {
			return err
		}
		t := strings.TrimSpace(clean(line, false))
		if k, err := strconv.Atoi(t); err == nil && len(reasons) > 0 {
			if k < 1 || k > len(reasons) {
				v.printf("There is no reason %d: type a number from 1 to %d, or your own reason.\n", k, len(reasons))
				continue
			}
			a.reasonPick = k - 1
			return nil
		}
		if err := checkReason(t); err != nil {
			v.printf("%s.\n", upperFirst(err.Error()))
			continue
		}
		a.reasonPick, a.reason = a.pickTyped(), t
		return nil
	}
}

// readEdit reads the arguments to run the tool with: one line of JSON, or lines ending
// with an empty one. An empty first line goes back to the decisions (edited false).
func (v *lineView) readEdit(ctx context.Context, a *approval, seen *waiting) (edited bool, err error) {
	v.printf("Type the arguments as JSON: on one line, or on several lines and then an empty line. An empty line now goes back to the decisions.\n")
	for {
		v.printf("Arguments: ")
		first, err := v.readLine(ctx, seen)
		if err != nil {
			return false, err
		}
		text := clean(first, false)
		if strings.TrimSpace(text) == "" {
			return false, nil
		}
		if checkEdit(text) != nil {
			for {
				v.printf("More: ")
				line, err := v.readLine(ctx, seen)
				if err != nil {
					return false, err
				}
				if line = clean(line, false); strings.TrimSpace(line) == "" {
					break
				}
				text += "\n" + line
			}
		}
		if err := checkEdit(text); err != nil {
			v.printf("%s. Type the arguments again.\n", upperFirst(err.Error()))
			continue
		}
		a.edit = text
		return true, nil
	}
}

// hintWords are how the source's hints read, true and false, in the order shown;
// others follow by name.
var hintWords = []struct{ name, yes, no string }{
	{"readOnly", "read-only", "not read-only"},
	{"destructive", "destructive", "not destructive"},
	{"idempotent", "idempotent", "not idempotent"},
	{"openWorld", "reaching outside systems", "not reaching outside systems"},
}

// sourceLines say whose tool an approval is for, when it is not the host's own (an MCP
// server's): the server and whether the host trusts it, the tool's title, and what the
// server says of the tool, as the server's word. None for the host's own tools.
func sourceLines(src *wire.ToolSource) []string {
	if src == nil {
		return nil
	}
	trust := " (not marked trusted)"
	if src.Trusted {
		trust = " (marked trusted by the host)"
	}
	lines := []string{"A tool of the server " + clean(src.Server, false) + trust}
	if t := clean(src.Title, false); t != "" {
		lines = append(lines, "Title: "+t)
	}
	var said []string
	for _, h := range hintWords {
		if v, ok := src.Hints[h.name]; ok {
			said = append(said, map[bool]string{true: h.yes, false: h.no}[v])
		}
	}
	for _, name := range slices.Sorted(maps.Keys(src.Hints)) {
		if !slices.ContainsFunc(hintWords, func(h struct{ name, yes, no string }) bool { return h.name == name }) {
			said = append(said, fmt.Sprintf("%s: %v", clean(name, false), src.Hints[name]))
		}
	}
	if said == nil {
		return append(lines, "The server says nothing of what this tool does.")
	}
	return append(lines, "The server says this tool is: "+strings.Join(said, ", ")+".")
}
