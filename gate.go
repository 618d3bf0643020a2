package askuser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/askuser-go/askuser/internal/jsonx"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// The gate: a host's own tool call is allowed, denied, or asked about before it runs
// ([Dispatcher.Approve]), by the rules of [Options.Policy], the session's grants, and
// the person's decision on an approval, whose life is a request's (lifecycle.go).

// ApprovalResult is how the gate decided one tool call.
type ApprovalResult struct {
	// Outcome is [Approved] or [Edited] when the tool may run; otherwise why not:
	// [Denied], [TimedOut], [Cancelled], [Undelivered], [Disconnected], [Shutdown], or
	// [Invalid] for a call refused before anything was asked.
	Outcome Outcome
	// RequestID is the approval's request id (the tool-call id, or one made); "" when no
	// person was asked.
	RequestID string
	// Arguments are the arguments the tool may run with, when it may: the model's as
	// they came, or the person's edit. Nil otherwise.
	Arguments json.RawMessage
	// Decision is the person's, when one decided: the decision, the reason of a denial,
	// who decided and when.
	Decision store.Decision
	// Rule is the name of the rule that decided, when no person did ("default" for the
	// Policy's Default).
	Rule string
	// Grant is the grant that let the call run without asking, or the one an "always"
	// decision made.
	Grant *store.Grant
	// Problems lists what was wrong with the call when Outcome is [Invalid].
	Problems []string
	// Err is nil when the tool may run, and otherwise wraps the outcome's error
	// ([ErrDenied], [ErrTimeout], [ErrCancelled], [ErrUndelivered], [ErrDisconnected],
	// [ErrClosed], or an [*ArgumentsError]), and possibly its cause.
	Err error
}

// Allowed reports whether the tool may run: Outcome is [Approved] or [Edited].
func (r ApprovalResult) Allowed() bool { return r.Outcome == Approved || r.Outcome == Edited }

// Content returns the tool result the model reads for the call. toolResult is what the
// tool returned when it ran. Approved: toolResult unchanged. Edited:
// {"notice": "...", "arguments": {the arguments it ran with}, "result": toolResult (as
// a JSON value when it is one)}. Otherwise the call did not run, toolResult is ignored,
// and the result says why: denied by the person ({"error": "...", "reason": "..."} with
// their reason, if any), denied by a rule, timed out (worded apart from a denial),
// cancelled, undelivered, disconnected, shutting down, or invalid (with its problems).
// docs/APPROVALS.md lists each exactly.
func (r ApprovalResult) Content(toolResult string) string {
	switch r.Outcome {
	case Approved:
		return toolResult
	case Edited:
		return editedResult(r.Arguments, toolResult)
	case Denied:
		return deniedResult(r.Rule != "" && r.Decision.Decision == "", r.Decision.Reason)
	case Invalid:
		return invalidApprovalResult(r.Problems)
	case Undelivered:
		if errors.Is(r.Err, errNoDevice) {
			return noDeviceApproval
		}
	}
	if e := approvalEndingOf(r.Outcome); e != nil && e.content != "" {
		return e.content
	}
	return approvalEndingOf(Undelivered).content // an outcome this version does not know
}

// Approve decides one tool call of the host's by [Options.Policy]: a Deny rule refuses
// it, an Allow rule lets it run, and a call that an Ask rule (or the Default, or the
// absence of a Policy) asks about runs without asking when a grant of the session
// covers it, and otherwise waits for the person's decision on any device of the
// session, the first decision winning. It returns how the call was decided; the host
// runs the tool only when [ApprovalResult.Allowed], with [ApprovalResult.Arguments],
// and gives the model [ApprovalResult.Content] of what the tool returned. [Dispatcher.RunTools]
// does all this around a host's ToolFunc.
//
// The approval is bound to the call: its session, tool, id and arguments. A call made
// again with the same id, tool and arguments (retried, or resumed on another replica
// with a shared [store.Store]) waits for the same approval, or gets the decision given
// meanwhile, and is never asked twice; a call whose id names a request that asks
// something else is refused as [Invalid]. Approve never panics on bad input.
//
// o, which may be nil, says more of the call than it does, for a tool that is not the
// host's own (see [ApprovalOptions]). The rules of [Options.Policy] come first, then
// o.Default, then the session's grants, then the person. With o, [Policy.Describe] is not
// asked: o says it all.
func (d *Dispatcher) Approve(ctx context.Context, call ToolCall, o *ApprovalOptions) ApprovalResult {
	ctx, e := d.begin(ctx, observe.CallInfo{Kind: store.KindApproval, Session: call.Session, ID: call.ID, Tool: call.Name, Arguments: call.Arguments})
	defer e.unended()
	r := d.approve(ctx, call, o)
	e.end(observe.CallEnd{RequestID: r.RequestID, Outcome: r.Outcome, IsError: !r.Allowed(), Err: r.Err})
	return r
}

// ApprovalOptions say more of one tool call to [Dispatcher.Approve] than the call does:
// for a tool that is not the host's own (an MCP server's, say), where it comes from, how
// it describes itself, and what its calls get when no rule of the host's Policy matches
// them. The zero value says nothing, as nil does.
type ApprovalOptions struct {
	// Source says whose tool it is, for the approval card.
	Source *wire.ToolSource
	// Tool describes the tool for the card and for edits (its description, and the
	// JSON Schema an edit must satisfy) when [Policy.Tools] does not: the Policy's
	// description of a tool of the same name comes first. A schema that does not
	// compile is left out, and so not checked. Its Name is not read.
	Tool *Tool
	// Default, when set, decides a call that no rule of the Policy matches, in place of
	// [Policy.Default], which still denies when it is [ActionDeny]. Arguments that are
	// not JSON are asked about, never allowed, whatever Default says. Nil: the Policy's
	// Default, as Approve.
	Default *Action
	// DefaultRule names Default in [ApprovalResult.Rule] and [observe.Audit.Rule] when it
	// decides the call without asking; empty: "default".
	DefaultRule string
	// Approvers, when set, are who may decide the call and how many must approve it,
	// unless the Ask rule that asks about it names its own ([Rule.Approvers]); they
	// come before [Policy.Approvers]. A Quorum below 1 means 1.
	Approvers *Approvers
}

// approve is Approve, unobserved. With o nil, [Policy.Describe] says what o would.
func (d *Dispatcher) approve(ctx context.Context, call ToolCall, o *ApprovalOptions) ApprovalResult {
	if o == nil && d.policy != nil && d.policy.Describe != nil {
		o = d.policy.Describe(ctx, call)
	}
	if o == nil {
		o = &ApprovalOptions{}
	}
	now := time.Now()
	refuse := func(problems ...string) ApprovalResult {
		r := ApprovalResult{Outcome: Invalid, Problems: problems, Err: &ArgumentsError{Problems: problems}}
		d.report(store.Record{Session: call.Session, Approval: &wire.ApprovalData{Tool: call.Name}, Outcome: Invalid}, r.Err, 0)
		return r
	}
	switch {
	case call.Name == "":
		return refuse("name: the tool call has no tool name")
	case !utf8.ValidString(call.Name) || len(call.Name) > wire.MaxRequestIDBytes:
		return refuse("name: the tool name is not valid UTF-8 of at most 256 bytes")
	case call.Name == ToolName:
		return refuse("name: ask_user_questions is not gated; dispatch it with Dispatch")
	case len(call.Arguments) > wire.MaxArgumentsBytes:
		return refuse(fmt.Sprintf("arguments: %d bytes exceeds the limit of %d", len(call.Arguments), wire.MaxArgumentsBytes))
	}
	if call.ID != "" {
		if problem := requestIDProblem(call.ID); problem != "" {
			return refuse(problem)
		}
	}
	if err := checkApprovers(o.Approvers); err != nil {
		return refuse("ApprovalOptions.Approvers: " + err.Error())
	}
	args := call.Arguments
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}") // a call of a tool that takes no arguments
	}
	shown, err := jsonx.Compact(args)
	argsOK := err == nil
	canonical, _ := canonicalArguments(args)
	var tree map[string]any
	if argsOK && d.policy != nil && d.policy.predicates {
		_ = json.Unmarshal(shown, &tree) // not an object: no members
	}

	action, rule := ActionAsk, (*Rule)(nil)
	if d.policy != nil {
		action, rule = d.policy.decide(call.Name, tree, argsOK)
	}
	defaultRule := "default"
	if rule == nil && o.Default != nil && (d.policy == nil || d.policy.Default != ActionDeny) {
		action = *o.Default
		if !argsOK && action != ActionDeny {
			action = ActionAsk
		}
		if o.DefaultRule != "" {
			defaultRule = o.DefaultRule
		}
	}
	byRule := func(out Outcome, g *store.Grant) ApprovalResult {
		r := ApprovalResult{Outcome: out, Rule: defaultRule, Grant: g}
		if rule != nil {
			r.Rule = rule.name()
		}
		if g != nil {
			r.Rule = ""
		}
		if r.Allowed() {
			r.Arguments = call.Arguments
		} else {
			r.Err = ErrDenied
		}
		d.auditRule(ctx, call, now, r)
		return r
	}
	switch action {
	case ActionDeny:
		return byRule(Denied, nil)
	case ActionAllow:
		return byRule(Approved, nil)
	}
	if argsOK && d.grants != nil && d.policy != nil {
		if grants, err := d.grants.Grants(ctx, call.Session); err == nil {
			for i := range grants {
				if d.policy.covers(&grants[i], call.Name, tree, argsOK) {
					return byRule(Approved, &grants[i])
				}
			}
		}
	}

	id := call.ID
	if id == "" {
		if id = d.opts.NewRequestID(); id == "" {
			return refuse("id: Options.NewRequestID returned an empty id, which no device could answer")
		}
		if problem := requestIDProblem(id); problem != "" {
			return refuse(problem)
		}
	}
	approvers := o.Approvers
	switch {
	case rule != nil && rule.Approvers != nil:
		approvers = rule.Approvers
	case approvers == nil && rule == nil && d.policy != nil:
		approvers = d.policy.Approvers
	}
	data := &wire.ApprovalData{
		RequestID:    id,
		Tool:         call.Name,
		Arguments:    shown,
		Decisions:    d.decisionsFor(rule, argsOK, approvers),
		ExpiresAt:    now.Add(d.opts.Timeout).UTC(),
		AskedAt:      now.UTC(),
		SessionTitle: d.sessionTitle(call.Session),
	}
	if approvers != nil {
		data.Approvers = &wire.ApproversData{Names: slices.Concat(approvers.Users, approvers.Groups),
			Users: slices.Clone(approvers.Users), Groups: slices.Clone(approvers.Groups)}
		if approvers.Quorum > 1 {
			data.Approvers.Quorum = approvers.Quorum
		}
	}
	if !argsOK {
		data.Arguments = json.RawMessage(jsonx.String(string(call.Arguments)))
		data.ArgumentsInvalid = true
	}
	if t := o.Tool; t != nil {
		data.Description = t.Description
		if _, err := compiledSchema(t.Schema); len(t.Schema) > 0 && err == nil {
			data.ArgumentsSchema = t.Schema
		}
	}
	if d.policy != nil {
		if t := d.policy.tools[call.Name]; t != nil {
			data.Description, data.ArgumentsSchema = t.Description, t.Schema
		}
		data.Reasons = d.policy.Reasons
	}
	data.Source = shownSource(o.Source)
	if rule != nil && rule.Description != "" {
		data.Description = rule.Description
	}
	if slices.Contains(data.Decisions, wire.DecisionAlways) {
		data.Always = alwaysText(call.Name, rule)
		if rule != nil && rule.Always != nil {
			data.Scope = rule.Always.Name
		}
	}
	data.Digest = approvalDigest(call.Session, data, canonical)
	rec := store.Record{Session: call.Session, Approval: data, AskedAt: now}
	if approvers != nil {
		a := *approvers
		a.Users, a.Groups = slices.Clone(a.Users), slices.Clone(a.Groups)
		a.Escalate = slices.Clone(a.Escalate)
		for i, e := range a.Escalate {
			a.Escalate[i].Users, a.Escalate[i].Groups = slices.Clone(e.Users), slices.Clone(e.Groups)
		}
		a.Quorum = max(a.Quorum, 1)
		rec.Tally = &store.Tally{Approvers: a, Requester: call.Requester}
	}
	same := func(cur store.Record) bool {
		if cur.Approval == nil || cur.Approval.Tool != call.Name {
			return false
		}
		c, _ := canonicalArguments(cur.Approval.Arguments)
		if cur.Approval.ArgumentsInvalid || !argsOK {
			return cur.Approval.ArgumentsInvalid == !argsOK && bytes.Equal(cur.Approval.Arguments, data.Arguments)
		}
		return bytes.Equal(c, canonical)
	}
	err = d.request(ctx, &rec, same)
	if errors.Is(err, errIDTaken) {
		what := "names a request for another tool call"
		if rec.Approval == nil {
			what = "names a question set"
		}
		return refuse(fmt.Sprintf("id: the tool-call id %q %s; make this call with its own id", jsonx.Truncate(id, 64), what))
	}
	return d.approvalResult(ctx, rec, err, call.Arguments)
}

// decisionsFor returns the decisions an approval asked by rule offers: the rule's, or
// all; "always" only when the store keeps grants and there is a policy to match them,
// and approvers need no more than one approval, and for arguments that are not JSON
// only "deny" and "edit".
func (d *Dispatcher) decisionsFor(rule *Rule, argsOK bool, approvers *Approvers) []string {
	decisions := allDecisions
	if rule != nil && len(rule.Decisions) > 0 {
		decisions = rule.Decisions
	}
	out := make([]string, 0, len(decisions))
	for _, dec := range allDecisions { // in the one order, whatever the rule's
		if !slices.Contains(decisions, dec) {
			continue
		}
		switch {
		case dec == wire.DecisionAlways && (d.grants == nil || d.policy == nil || approvers != nil && (approvers.Quorum > 1 || approvers.SeparateDuties)),
			!argsOK && (dec == wire.DecisionApprove || dec == wire.DecisionAlways):
			continue
		}
		out = append(out, dec)
	}
	if len(out) == 0 {
		out = append(out, wire.DecisionDeny) // the person can always refuse
	}
	return out
}

// approvalResult renders an ended approval for the host. A grant that an "always"
// decision made is kept before the call returns (again, should the deciding dispatcher
// have kept it already), so that the model's next call finds it.
func (d *Dispatcher) approvalResult(ctx context.Context, rec store.Record, err error, original json.RawMessage) ApprovalResult {
	r := ApprovalResult{Outcome: rec.Outcome, RequestID: rec.RequestID(), Err: err}
	if dec := rec.Decision; dec != nil {
		r.Decision = *dec
		r.Grant = dec.Grant
	}
	switch r.Outcome {
	case Approved:
		r.Arguments = original
		if r.Grant != nil && d.grants != nil {
			_ = d.grants.PutGrant(ctx, *r.Grant)
		}
	case Edited:
		r.Arguments = r.Decision.Arguments
	default:
		if r.Err == nil {
			r.Err = outcomeErr(r.Outcome, nil)
		}
		if approvalEndingOf(r.Outcome) == nil {
			r.Outcome, r.Err = Undelivered, ErrUndelivered
		}
	}
	return r
}

// gated runs call through the gate and, when it may run, through next: one call for
// the observer, the tool's run within it.
func (d *Dispatcher) gated(ctx context.Context, call ToolCall, next ToolFunc) (string, error) {
	ctx, e := d.begin(ctx, observe.CallInfo{Kind: store.KindApproval, Session: call.Session, ID: call.ID, Tool: call.Name, Arguments: call.Arguments})
	defer e.unended()
	r := d.approve(ctx, call, nil)
	if !r.Allowed() {
		content := r.Content("")
		e.end(observe.CallEnd{RequestID: r.RequestID, Outcome: r.Outcome, IsError: true, Err: r.Err, Content: content})
		return content, &resultError{r.Err}
	}
	run := call
	run.Arguments = r.Arguments
	e.sofar, e.tool = observe.CallEnd{RequestID: r.RequestID, Outcome: r.Outcome}, call.Name
	out, err := next(ctx, run)
	content := r.Content(out)
	e.end(observe.CallEnd{RequestID: r.RequestID, Outcome: r.Outcome, IsError: err != nil, Err: err, Content: content})
	return content, err
}

// handleDecision takes a device's decision on an approval.
func (d *Dispatcher) handleDecision(ctx context.Context, ev wire.Event) error {
	if len(ev.Data) == 0 {
		return fmt.Errorf("%w: %s without data", wire.ErrMalformedEvent, wire.EventApprovalResult)
	}
	if len(ev.Data) > wire.MaxArgumentsBytes+maxReasonLength*4+4096 {
		return fmt.Errorf("%w: %s data of %d bytes is too long", wire.ErrMalformedEvent, wire.EventApprovalResult, len(ev.Data))
	}
	data, err := decodeApprovalResultData(ev.Data)
	if err != nil {
		return err
	}
	rec, err := d.store.Get(ctx, ev.SessionID, data.RequestID)
	if errors.Is(err, wire.ErrNotPending) || err == nil && (rec.Outcome != 0 || rec.Approval == nil) {
		return wire.ErrNotPending
	}
	if err != nil {
		return fmt.Errorf("askuser: reading the approval: %w", err)
	}
	dec, err := d.checkDecision(rec.Approval, &data)
	if err != nil {
		return err
	}
	dec.By, dec.Via, dec.At = ev.User, ev.Via, time.Now()
	if rec.Tally != nil {
		ap := &rec.Tally.Approvers
		if !mayDecide(rec.Tally, ev.User, ev.Groups) {
			return fmt.Errorf("%w: %q is not among its approvers", wire.ErrNotApprover, jsonx.Truncate(ev.User, 64))
		}
		if counting(ap) {
			return d.decideCounted(ctx, rec, data, dec)
		}
	}
	switch dec.Decision {
	case wire.DecisionApprove:
		rec.Outcome = Approved
	case wire.DecisionDeny:
		rec.Outcome = Denied
	case wire.DecisionEdit:
		rec.Outcome = Edited
	case wire.DecisionAlways:
		rec.Outcome = Approved
		dec.Grant = &store.Grant{Session: rec.Session, ID: rec.Approval.RequestID, Tool: rec.Approval.Tool, Scope: rec.Approval.Scope, Covers: rec.Approval.Always, By: dec.By, At: dec.At}
	}
	rec.Decision = &dec
	won, err := d.end(ctx, rec, nil)
	if err != nil {
		// The decision may or may not be recorded: the device can send it again.
		return fmt.Errorf("askuser: recording the decision: %w", err)
	}
	if !won {
		return wire.ErrNotPending
	}
	return nil
}

// audit reports an ended approval to the observer, and keeps the grant an "always"
// decision made.
func (d *Dispatcher) audit(rec store.Record) {
	dec := rec.Decision
	if dec.Grant != nil && d.grants != nil {
		_ = d.grants.PutGrant(context.Background(), *dec.Grant)
	}
	if d.obs == nil {
		return
	}
	a := rec.Approval
	d.observe(context.Background(), observe.Observation{Event: observe.Decided, Session: rec.Session, RequestID: a.RequestID, Kind: store.KindApproval, Outcome: rec.Outcome, Carrier: rec.Carrier, Audit: &observe.Audit{
		Session: rec.Session, RequestID: a.RequestID, Tool: a.Tool, Arguments: modelArguments(rec), Description: a.Description,
		Outcome: rec.Outcome, Decision: dec.Decision, Reason: dec.Reason, Edited: dec.Arguments, Grant: dec.Grant,
		AskedAt: rec.AskedAt, DecidedAt: dec.At, By: dec.By, Via: dec.Via, Approvals: approvalsOf(rec),
	}})
}

// auditRule reports a call decided by a rule or a grant, without asking.
func (d *Dispatcher) auditRule(ctx context.Context, call ToolCall, asked time.Time, r ApprovalResult) {
	if d.obs == nil {
		return
	}
	args, err := jsonx.Compact(call.Arguments)
	if err != nil {
		args = json.RawMessage(jsonx.String(string(call.Arguments)))
	}
	d.observe(ctx, observe.Observation{Event: observe.Decided, Session: call.Session, Kind: store.KindApproval, Outcome: r.Outcome, Audit: &observe.Audit{
		Session: call.Session, Tool: call.Name, Arguments: args, Outcome: r.Outcome,
		Rule: r.Rule, Grant: r.Grant, AskedAt: asked, DecidedAt: time.Now(),
	}})
}

// Grants returns the grants of the dispatcher's store: the "always" decisions whose
// later calls run without asking, for a host to list them, and to revoke them so that
// the calls they covered are asked about again, on every dispatcher sharing the store.
// It is nil when the store keeps no grants (then "always" is not offered).
func (d *Dispatcher) Grants() store.GrantStore {
	return d.grants
}

// cloneApproval returns a copy of a that shares nothing mutable with it.
func cloneApproval(a wire.ApprovalData) wire.ApprovalData {
	a.Arguments = bytes.Clone(a.Arguments)
	a.ArgumentsSchema = bytes.Clone(a.ArgumentsSchema)
	a.Decisions = slices.Clone(a.Decisions)
	a.Reasons = slices.Clone(a.Reasons)
	if a.Approvers != nil {
		ap := *a.Approvers
		ap.Names, ap.Approved = slices.Clone(ap.Names), slices.Clone(ap.Approved)
		ap.Users, ap.Groups = slices.Clone(ap.Users), slices.Clone(ap.Groups)
		a.Approvers = &ap
	}
	if a.Source != nil {
		src := *a.Source
		src.Hints = maps.Clone(src.Hints)
		a.Source = &src
	}
	return a
}

// cloneAsk returns a copy of a that shares nothing mutable with it.
func cloneAsk(a wire.AskData) wire.AskData {
	a.Metadata = bytes.Clone(a.Metadata)
	if a.Questions != nil {
		qs := make([]Question, len(a.Questions))
		for i, q := range a.Questions {
			q.Options = slices.Clone(q.Options)
			qs[i] = q
		}
		a.Questions = qs
	}
	return a
}
