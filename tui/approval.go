package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// approval is one pending approval: the tool call the host asks about, and what the
// person has chosen so far. The choices outlive a view, so that a refused decision (an
// edit the tool's schema does not take) opens again with them. Only the device loop and
// the one view showing it use it, one after the other.
type approval struct {
	session askuser.SessionID // echoed on the decision
	data    wire.ApprovalData
	// invalid says that the arguments are not JSON (data.ArgumentsInvalid); raw is then
	// the text the model wrote.
	invalid bool
	raw     string
	// pretty is the arguments indented, every hidden character escaped: the start of an
	// edit. shown is the same with long strings folded, for reading.
	pretty, shown string

	decision   string // the decision chosen, one of data.Decisions
	reasonPick int    // the reason: an index of data.Reasons, or pickTyped or pickNone past them
	reason     string // the reason typed
	edit       string // the arguments being edited
	// problems are why the host refused the last decision; the reopened view shows them.
	problems []string
	// readOnly says that the person may not decide it (its approvers are others): the
	// view shows it without the decisions. origin, when set, names its session in the
	// view. The device loop sets both before a view shows it.
	readOnly bool
	origin   string
}

// readOnlyLine says why a read-only approval offers no decision.
const readOnlyLine = "You cannot decide this approval here: you are not among its approvers."

// foldAt is how many characters of a string argument are shown before it is folded.
const foldAt = 200

// maxReason bounds a denial's reason, in characters, as the host does.
const maxReason = 1000

func newApproval(session askuser.SessionID, data wire.ApprovalData) *approval {
	a := &approval{session: session, data: data, decision: data.Decisions[0]}
	if !data.ArgumentsInvalid {
		pretty, err1 := prettyJSON(data.Arguments, "  ", 0)
		shown, err2 := prettyJSON(data.Arguments, "  ", foldAt)
		a.pretty, a.shown = pretty, shown
		a.invalid = err1 != nil || err2 != nil
		if a.invalid {
			a.raw = string(data.Arguments)
		}
	} else {
		a.invalid = true
		if json.Unmarshal(data.Arguments, &a.raw) != nil {
			a.raw = string(data.Arguments)
		}
	}
	a.edit = a.pretty
	if a.invalid {
		a.edit = clean(a.raw, true) // to be fixed by the person
	}
	return a
}

func (a *approval) title() string { return a.tool() }

// waitingLine says whom the approval waits for and who has approved, when the host
// named approvers: "Waiting for 1 more approval from dba: alice approved."; "" otherwise.
func (a *approval) waitingLine() string { return waitingLine(a.data.Approvers) }

// waitingLine is approval.waitingLine for the approvers ap.
func waitingLine(ap *wire.ApproversData) string {
	if ap == nil {
		return ""
	}
	left := max(1, max(ap.Quorum, 1)-len(ap.Approved))
	s := "Waiting for 1 more approval"
	if left != 1 {
		s = fmt.Sprintf("Waiting for %d more approvals", left)
	}
	if who := approverNames(ap); who != "" {
		s += " from " + who
	}
	if len(ap.Approved) > 0 {
		s += ": " + clean(strings.Join(ap.Approved, ", "), false) + " approved"
	}
	return s + "."
}

// approverNames names the approvers for a line: "dba", "alice, dba"; "" for none.
func approverNames(ap *wire.ApproversData) string {
	if ap == nil {
		return ""
	}
	names := ap.Names
	if len(names) == 0 {
		names = append(slices.Clone(ap.Users), ap.Groups...)
	}
	return clean(strings.Join(names, ", "), false)
}

// progress takes a tool_approval_progress of this approval: who has approved so far,
// the approvers now after an escalation step, and the arguments an edit gave, with
// which the approval is made anew. No view may be showing a.
func (a *approval) progress(p wire.ApprovalProgressData) {
	data := withProgress(a.data, p)
	if len(p.Arguments) == 0 {
		a.data = data
		return
	}
	data.Arguments, data.ArgumentsInvalid, data.Digest = p.Arguments, false, p.Digest
	ro, origin := a.readOnly, a.origin
	*a = *newApproval(a.session, data)
	a.readOnly, a.origin = ro, origin
}

// withProgress is data with the approvers p says (who has approved, and the approvers
// an escalation step made), the arguments aside. data's own approvers are not changed.
func withProgress(data wire.ApprovalData, p wire.ApprovalProgressData) wire.ApprovalData {
	if data.Approvers != nil {
		ap := *data.Approvers
		ap.Approved = p.Approved
		if len(p.Names) > 0 || len(p.Users) > 0 || len(p.Groups) > 0 { // an escalation step
			ap.Names = p.Names
			if len(p.Users) > 0 || len(p.Groups) > 0 {
				ap.Users, ap.Groups = p.Users, p.Groups
			}
		}
		data.Approvers = &ap
	}
	return data
}

// mayDecide reports whether the person user, of groups, may decide an approval whose
// approvers are ap: anyone may when ap names no users or groups, or the person is not
// known (user ""; the host then refuses a non-approver's decision, and says so).
func mayDecide(ap *wire.ApproversData, user string, groups []string) bool {
	if user == "" || ap == nil || len(ap.Users) == 0 && len(ap.Groups) == 0 {
		return true
	}
	if slices.Contains(ap.Users, user) {
		return true
	}
	return slices.ContainsFunc(groups, func(g string) bool { return slices.Contains(ap.Groups, g) })
}

// tool is the tool's name as the terminal shows it: as it is or, when it holds a
// character that clean drops (a bidirectional control, a zero-width space, ...), a
// quote or a backslash, as a JSON string with every such character escaped, as in the
// arguments: "send_invoice \u202egnp.exe". What is shown is exactly the name that runs.
func (a *approval) tool() string {
	name := a.data.Tool
	if !strings.ContainsFunc(name, func(r rune) bool { return hidden(r) || r == '"' || r == '\\' }) {
		return name
	}
	var p printer
	p.str(name, 0)
	return p.b.String()
}

// hostText is a text of the host's that may name the tool (the grant of Always allow),
// cleaned, with the tool's name in it shown as tool shows it.
func (a *approval) hostText(s string) string {
	if shown := a.tool(); shown != a.data.Tool && a.data.Tool != "" {
		s = strings.ReplaceAll(s, a.data.Tool, shown)
	}
	return clean(s, false)
}

func (a *approval) offers(decision string) bool { return slices.Contains(a.data.Decisions, decision) }

// Past the presets, the two other answers to "why deny?".
func (a *approval) pickTyped() int { return len(a.data.Reasons) }
func (a *approval) pickNone() int  { return len(a.data.Reasons) + 1 }

// decisionLabel is how a decision is offered.
func (a *approval) decisionLabel(decision string) string {
	switch decision {
	case wire.DecisionApprove:
		return "Approve"
	case wire.DecisionDeny:
		return "Deny"
	case wire.DecisionEdit:
		return "Edit the arguments, then run it"
	case wire.DecisionAlways:
		if a.data.Always != "" {
			return "Always allow: " + a.hostText(a.data.Always)
		}
		return "Always allow"
	}
	return clean(decision, false) // a decision this version does not know
}

// chosenReason is the reason of a denial as chosen: a preset, the text typed, or none.
func (a *approval) chosenReason() string {
	if a.reasonPick >= 0 && a.reasonPick < len(a.data.Reasons) {
		return a.data.Reasons[a.reasonPick]
	}
	if len(a.data.Reasons) > 0 && a.reasonPick != a.pickTyped() {
		return ""
	}
	return strings.TrimSpace(a.reason)
}

// checkEdit is what an edit must be before it is sent: a JSON value the host takes.
// The tool's schema is the host's to check.
func checkEdit(s string) error {
	t := strings.TrimSpace(s)
	if t == "" {
		return errors.New("type the arguments, as JSON")
	}
	if len(t) > wire.MaxArgumentsBytes {
		return fmt.Errorf("%d bytes; at most %d are taken", len(t), wire.MaxArgumentsBytes)
	}
	var v any
	if err := json.Unmarshal([]byte(t), &v); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	return nil
}

// checkReason is the host's rule for a reason: at most maxReason characters.
func checkReason(s string) error {
	if n := utf8.RuneCountInString(strings.TrimSpace(s)); n > maxReason {
		return fmt.Errorf("at most %d characters, got %d", maxReason, n)
	}
	return nil
}

// reply is the decision the person's choices make.
func (a *approval) reply() wire.ApprovalResultData {
	r := wire.ApprovalResultData{RequestID: a.data.RequestID, Decision: a.decision, Digest: a.data.Digest}
	switch a.decision {
	case wire.DecisionDeny:
		r.Reason = a.chosenReason()
	case wire.DecisionEdit:
		r.Arguments = json.RawMessage(strings.TrimSpace(a.edit))
	}
	return r
}

// denial is the decision that Esc, Ctrl-C and the end of input make: deny, without a
// reason.
func (a *approval) denial() *wire.ApprovalResultData {
	return &wire.ApprovalResultData{RequestID: a.data.RequestID, Decision: wire.DecisionDeny, Digest: a.data.Digest}
}

// An approval is a request of the device's queue.

func (a *approval) requestID() string { return a.data.RequestID }

func (a *approval) resolvedType() string { return wire.EventApprovalResolved }

func (a *approval) noun() string { return "approval" }

func (a *approval) replyEvent(res viewResult) (wire.Event, error) {
	return wire.NewEvent(wire.EventApprovalResult, a.session, *res.decision)
}

func (a *approval) key() reqKey { return reqKey{a.session, a.data.RequestID} }

func (a *approval) entry() wire.InboxEntry {
	return wire.InboxEntry{SessionID: a.session, SessionTitle: a.data.SessionTitle, RequestID: a.data.RequestID,
		Kind: wire.InboxApproval, What: a.data.Tool, AskedAt: a.data.AskedAt, ExpiresAt: a.data.ExpiresAt,
		ReadOnly: a.readOnly, Approvers: a.data.Approvers}
}

func (a *approval) setOrigin(label string) { a.origin = label }

func (a *approval) refused(problems []string) string {
	a.problems = problems
	return "decision"
}

// endNote says how the approval ended: "Approved.", "Denied on another device: Not
// now.", ... A resolution that does not match what this device sent (another device
// decided first) is told as another device's.
func (a *approval) endNote(r resolution, sent viewResult) string {
	mine := sent.decision != nil && decided(*sent.decision, r)
	where := " on another device"
	if mine {
		where = ""
	}
	switch r.Outcome {
	case "approved":
		if r.Grant != "" {
			return "Always allowed" + where + ": " + a.hostText(r.Grant) + "."
		}
		return "Approved" + where + "."
	case "edited":
		return "Edited" + where + ": ran with " + oneLine(r.Arguments, 160) + "."
	case "denied":
		if r.Reason != "" && !mine {
			return "Denied" + where + ": " + clean(r.Reason, false) + "."
		}
		return "Denied" + where + "."
	}
	return unansweredNote(r.Outcome, "approval")
}

// decided reports whether the resolution r is what the decision sent makes.
func decided(sent wire.ApprovalResultData, r resolution) bool {
	switch sent.Decision {
	case wire.DecisionApprove:
		return r.Outcome == "approved" && r.Grant == ""
	case wire.DecisionAlways:
		return r.Outcome == "approved" && r.Grant != ""
	case wire.DecisionDeny:
		return r.Outcome == "denied" && r.Reason == sent.Reason
	case wire.DecisionEdit:
		var x, y any
		return r.Outcome == "edited" && json.Unmarshal(sent.Arguments, &x) == nil &&
			json.Unmarshal(r.Arguments, &y) == nil && reflect.DeepEqual(x, y)
	}
	return false
}

// decisionText is a decision as one line, for the record a closed form leaves.
func decisionText(d *wire.ApprovalResultData) string {
	switch d.Decision {
	case wire.DecisionDeny:
		if d.Reason != "" {
			return "deny: " + clean(d.Reason, false)
		}
		return "deny"
	case wire.DecisionEdit:
		return "edit: " + oneLine(d.Arguments, 120)
	case wire.DecisionAlways:
		return "always allow"
	}
	return clean(d.Decision, false)
}
