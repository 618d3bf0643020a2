package askuser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/askuser-go/askuser/store"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Policy decides, before each of a host's own tool calls runs, whether it runs, is
// denied, or waits for the person's approval. The rules are checked in the order Deny,
// then Ask, then Allow; the first that matches decides. A call that an Ask rule (or
// the Default) would ask about runs without asking when a grant of the session covers
// it (see [wire.DecisionAlways]). A call whose arguments are not valid JSON is never allowed
// by a rule or a grant: a Deny rule denies it, anything else asks about it.
//
// A Policy is read by [New] and must not be changed afterwards.
type Policy struct {
	// Deny, Ask and Allow are the rules, checked in that order.
	Deny, Ask, Allow []Rule
	// Default is what a call that no rule matches gets. The zero value is [ActionAsk].
	Default Action
	// Approvers, when set, are who may decide the calls that Default asks about, and how
	// many must approve each, unless [ApprovalOptions.Approvers] names others; nil:
	// anyone of the session, the first decision ending the call. An Ask rule names its
	// own ([Rule.Approvers]).
	Approvers *Approvers
	// Tools describe the host's tools, for the approval card: the description shown, and
	// the JSON Schema of the arguments that an edit must satisfy.
	Tools []Tool
	// Reasons are preset reasons a person can pick when denying.
	Reasons []string
	// Describe, when set, says more of a call about to be decided than the call does, as
	// [ApprovalOptions] do for [Dispatcher.Approve]: for a tool that is not the
	// host's own (an MCP server's: see askmcp's Gate), whose it is, its description and
	// schema, and its default when no rule matches. It is asked for each call that
	// [Dispatcher.Approve] and [Dispatcher.RunTools] decide, before
	// the rules; nil from it says nothing more. It may be called concurrently, and should
	// not take long: the call waits for it.
	Describe func(ctx context.Context, call ToolCall) *ApprovalOptions
}

// Action is what a [Policy] does with a tool call.
type Action int

const (
	// ActionAsk asks the person.
	ActionAsk Action = iota
	// ActionAllow runs the call without asking.
	ActionAllow
	// ActionDeny refuses the call without asking.
	ActionDeny
)

// Rule matches tool calls by the tool's name and, optionally, their arguments.
type Rule struct {
	// Name names the rule in audit records ([observe.Audit.Rule]) and in grants ([store.Grant.Scope]);
	// default: Tool. Names should be unique within a Policy.
	Name string
	// Tool is the tool's name, or a pattern of names in the syntax of [path.Match]
	// ("delete_*", "*").
	Tool string
	// When, when set, must also report true for the call's arguments, decoded as
	// encoding/json decodes into any (objects as map[string]any, numbers as float64); it
	// is not called for arguments that are not valid JSON. It must not keep or change
	// args, and may be called concurrently.
	When func(args map[string]any) bool
	// Description is shown on the approval card of a call this rule asks about, instead
	// of the tool's.
	Description string
	// Decisions, for an Ask rule, are the decisions the person is offered, some of
	// "approve", "deny", "edit" and "always"; default all four. "always" is offered only
	// when the store keeps grants ([store.GrantStore]).
	Decisions []string
	// Always, for an Ask rule, narrows what an "always" decision grants: later calls of
	// the same tool in the session run without asking only when they also match this
	// rule (its Tool and When; its Name, required, is kept in the grant, and its
	// Description is what the person is told the grant covers). Nil: every later call
	// of the same tool in the session.
	Always *Rule
	// Approvers, for an Ask rule, are who may decide the calls it asks about, and how
	// many must approve each (see [Approvers]). Nil: [ApprovalOptions.Approvers] when
	// set, otherwise anyone of the session, the first decision ending the call.
	Approvers *Approvers
}

// Tool describes one of the host's tools for approvals.
type Tool struct {
	// Name is the tool's name.
	Name string
	// Description is shown on the approval card.
	Description string
	// Schema is the JSON Schema of the tool's arguments: an edit must satisfy it, and the
	// card shows it. Optional.
	Schema json.RawMessage
}

// policy is a Policy made ready by New: its tools by name, its schemas compiled, and
// every rule that can be a grant's scope by name.
type policy struct {
	Policy
	tools  map[string]*Tool
	scopes map[string]*Rule
	// predicates says whether any rule looks at the arguments, so that calls are decoded
	// only then.
	predicates bool
}

// compilePolicy checks p and makes it ready; a mistake in it is an error.
func compilePolicy(p *Policy) (*policy, error) {
	c := &policy{Policy: *p, tools: make(map[string]*Tool), scopes: make(map[string]*Rule)}
	if c.Default < ActionAsk || c.Default > ActionDeny {
		return nil, fmt.Errorf("the Default %d is not an Action", c.Default)
	}
	for i := range p.Tools {
		t := &p.Tools[i]
		if t.Name == "" {
			return nil, fmt.Errorf("the tool Tools[%d] needs a Name", i)
		}
		if len(t.Schema) > 0 {
			if _, err := compiledSchema(t.Schema); err != nil {
				return nil, fmt.Errorf("the Schema of Tools[%d] (%s): %w", i, t.Name, err)
			}
		}
		c.tools[t.Name] = t
	}
	if err := checkApprovers(p.Approvers); err != nil {
		return nil, fmt.Errorf("Approvers: %w", err)
	}
	for _, list := range []struct {
		name  string
		rules []Rule
	}{{"Deny", p.Deny}, {"Ask", p.Ask}, {"Allow", p.Allow}} {
		for i := range list.rules {
			r := &list.rules[i]
			where := fmt.Sprintf("%s[%d]", list.name, i)
			if err := checkRule(r); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			for _, dec := range r.Decisions {
				if !slices.Contains(allDecisions, dec) {
					return nil, fmt.Errorf("%s: Decisions: %q is not a decision", where, dec)
				}
			}
			c.predicates = c.predicates || r.When != nil
			if err := checkApprovers(r.Approvers); err != nil {
				return nil, fmt.Errorf("%s: Approvers: %w", where, err)
			}
			if a := r.Always; a != nil {
				if a.Name == "" {
					return nil, fmt.Errorf("%s: Always needs a Name, which grants keep", where)
				}
				if err := checkRule(a); err != nil {
					return nil, fmt.Errorf("%s.Always: %w", where, err)
				}
				c.scopes[a.Name] = a
				c.predicates = c.predicates || a.When != nil
			}
		}
	}
	return c, nil
}

func checkRule(r *Rule) error {
	if r.Tool == "" {
		return errors.New("a rule needs a Tool (a name or a pattern)")
	}
	if _, err := path.Match(r.Tool, ""); err != nil {
		return fmt.Errorf("Tool %q is not a valid pattern: %w", r.Tool, err)
	}
	return nil
}

// checkApprovers returns what is wrong with a, which may be nil.
func checkApprovers(a *Approvers) error {
	if a == nil {
		return nil
	}
	for _, names := range [][]string{a.Users, a.Groups} {
		for _, n := range names {
			if n == "" {
				return errors.New("a user or group name is empty")
			}
		}
	}
	var last time.Duration
	users, groups := len(a.Users), len(a.Groups)
	for i, e := range a.Escalate {
		users, groups = users+len(e.Users), groups+len(e.Groups)
		switch {
		case len(a.Users) == 0 && len(a.Groups) == 0:
			return errors.New("the escalation needs Users or Groups: without them anyone of the session decides already")
		case e.After <= last:
			return fmt.Errorf("the escalation step %d: After %v is not positive and more than the step's before", i, e.After)
		case len(e.Users) == 0 && len(e.Groups) == 0:
			return fmt.Errorf("the escalation step %d names no user nor group", i)
		case slices.Contains(e.Users, "") || slices.Contains(e.Groups, ""):
			return fmt.Errorf("the escalation step %d: a user or group name is empty", i)
		}
		last = e.After
	}
	switch {
	case a.Quorum < 0:
		return fmt.Errorf("the Quorum %d is negative", a.Quorum)
	case groups == 0 && users > 0 && a.Quorum > users:
		return fmt.Errorf("the Quorum %d is more than the %d Users named", a.Quorum, users)
	}
	return nil
}

// name is the rule's name: Name, or Tool.
func (r *Rule) name() string {
	if r.Name != "" {
		return r.Name
	}
	return r.Tool
}

// matches reports whether the rule matches a call of tool with args (nil when the
// arguments are not JSON, which no rule with When matches).
func (r *Rule) matches(tool string, args map[string]any, argsOK bool) bool {
	if ok, _ := path.Match(r.Tool, tool); !ok {
		return false
	}
	if r.When == nil {
		return true
	}
	return argsOK && r.When(args)
}

// decide returns what the policy does with a call of tool, and the rule that decided
// (nil for the Default). args are the decoded arguments, argsOK false when they are not
// valid JSON: such a call is never allowed.
func (p *policy) decide(tool string, args map[string]any, argsOK bool) (Action, *Rule) {
	for i := range p.Deny {
		if p.Deny[i].matches(tool, args, argsOK) {
			return ActionDeny, &p.Deny[i]
		}
	}
	for i := range p.Ask {
		if p.Ask[i].matches(tool, args, argsOK) {
			return ActionAsk, &p.Ask[i]
		}
	}
	if !argsOK {
		if p.Default == ActionDeny {
			return ActionDeny, nil
		}
		return ActionAsk, nil
	}
	for i := range p.Allow {
		if p.Allow[i].matches(tool, args, argsOK) {
			return ActionAllow, &p.Allow[i]
		}
	}
	return p.Default, nil
}

// covers reports whether grant g covers a call of tool with args.
func (p *policy) covers(g *store.Grant, tool string, args map[string]any, argsOK bool) bool {
	if g.Tool != tool || !argsOK {
		return false
	}
	if g.Scope == "" {
		return true
	}
	r := p.scopes[g.Scope]
	return r != nil && r.matches(tool, args, argsOK)
}

// schemaCache holds the tool schemas compiled, by their text. Schemas come from the
// hosts' policies (a record carries its tool's), so there are few.
var schemaCache sync.Map // string → schemaEntry

type schemaEntry struct {
	s   *jsonschema.Schema
	err error
}

// maxCachedSchemas bounds schemaCache; past it, schemas are compiled for each use.
const maxCachedSchemas = 512

var cachedSchemas struct {
	sync.Mutex
	n int
}

// compiledSchema compiles a tool's JSON Schema, once for each text.
func compiledSchema(raw []byte) (*jsonschema.Schema, error) {
	if e, ok := schemaCache.Load(string(raw)); ok {
		return e.(schemaEntry).s, e.(schemaEntry).err
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	var e schemaEntry
	if err := c.AddResource(toolSchemaURL, bytes.NewReader(raw)); err != nil {
		e.err = fmt.Errorf("not a JSON Schema: %w", err)
	} else if e.s, err = c.Compile(toolSchemaURL); err != nil {
		e.err = fmt.Errorf("does not compile: %w", err)
	}
	cachedSchemas.Lock()
	if cachedSchemas.n < maxCachedSchemas {
		if _, loaded := schemaCache.LoadOrStore(string(raw), e); !loaded {
			cachedSchemas.n++
		}
	}
	cachedSchemas.Unlock()
	return e.s, e.err
}

// schemaCheck validates edited arguments against the tool's schema, when there is one,
// and returns the problems, each with where it is, in the library's words (see
// editproblems.go); none when they are valid.
func schemaCheck(schema, arguments []byte) []string {
	if len(schema) == 0 {
		return nil
	}
	s, err := compiledSchema(schema)
	if err != nil {
		return []string{"argumentsSchema: the tool's schema " + err.Error()}
	}
	var tree any
	if err := json.Unmarshal(arguments, &tree); err != nil {
		return []string{"arguments: not valid JSON: " + err.Error()}
	}
	err = s.Validate(tree)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{"arguments: " + err.Error()}
	}
	out := sortProblems(editProblems(ve, schema, tree))
	if len(out) > maxReportedProblems {
		out = append(out[:maxReportedProblems], moreProblems("arguments", len(out)-maxReportedProblems))
	}
	return out
}

// alwaysText says what an "always" decision on a call of tool that rule asked about
// grants.
func alwaysText(tool string, rule *Rule) string {
	if rule != nil && rule.Always != nil {
		if d := strings.TrimSpace(rule.Always.Description); d != "" {
			return d + ", in this session"
		}
		return fmt.Sprintf("calls of %s matching the rule %q, in this session", tool, rule.Always.Name)
	}
	return fmt.Sprintf("every call of %s in this session", tool)
}
