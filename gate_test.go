package askuser_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// The approval half: a host's own tool calls gated by a Policy, decided on any device.

// branchSchema is delete_branch's arguments: a non-empty name and nothing else.
const branchSchema = `{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}`

// demoPolicy is the demo's: list_files runs, drop_database never, delete_branch is asked.
func demoPolicy() *Policy {
	return &Policy{
		Deny:    []Rule{{Tool: "drop_*"}},
		Ask:     []Rule{{Tool: "delete_branch", Always: &Rule{Name: "feature branches", Tool: "delete_branch", Description: "deleting branches named feature/*", When: func(a map[string]any) bool { n, _ := a["name"].(string); return strings.HasPrefix(n, "feature/") }}}},
		Allow:   []Rule{{Tool: "list_files"}},
		Tools:   []Tool{{Name: "delete_branch", Description: "Deletes a git branch", Schema: json.RawMessage(branchSchema)}},
		Reasons: []string{"Not now", "Wrong branch"},
	}
}

// auditLog collects the audit records a dispatcher reports.
type auditLog struct {
	mu   sync.Mutex
	recs []observe.Audit
}

func (l *auditLog) add(a observe.Audit) {
	l.mu.Lock()
	l.recs = append(l.recs, a)
	l.mu.Unlock()
}

func (l *auditLog) all() []observe.Audit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.recs)
}

// approveAsync runs Approve in a goroutine.
func approveAsync(ctx context.Context, d *Dispatcher, session SessionID, id, tool, args string) <-chan ApprovalResult {
	ch := make(chan ApprovalResult, 1)
	go func() {
		ch <- d.Approve(ctx, ToolCall{Session: session, ID: id, Name: tool, Arguments: json.RawMessage(args)}, nil)
	}()
	return ch
}

// approvalPending starts Approve and returns once the approval is pending.
func approvalPending(t testing.TB, d *Dispatcher, session SessionID, id, tool, args string) <-chan ApprovalResult {
	t.Helper()
	ch := approveAsync(context.Background(), d, session, id, tool, args)
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; !slices.ContainsFunc(askusertest.Approvals(d, session), func(a wire.ApprovalData) bool { return a.RequestID == id }); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("approval %s never pending", id)
		}
		if i < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(time.Millisecond)
		}
	}
	return ch
}

func decisionEvent(session SessionID, data wire.ApprovalResultData) wire.Event {
	ev, err := wire.NewEvent(wire.EventApprovalResult, session, data)
	if err != nil {
		panic(err)
	}
	return ev
}

func TestApprovalEveryWayOut(t *testing.T) {
	const args = `{"name": "feature/login"}`
	type end struct {
		outcome  Outcome
		content  string // the tool result the model reads, for a tool that returns "ran"
		err      error
		decision string
	}
	cases := []struct {
		name string
		opts Options
		act  func(t *testing.T, d *Dispatcher, dev, other *askusertest.Device, s SessionID, cancel context.CancelFunc)
		want end
	}{
		{"approved", Options{}, func(t *testing.T, d *Dispatcher, dev, other *askusertest.Device, s SessionID, _ context.CancelFunc) {
			require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "call", Decision: wire.DecisionApprove})))
		}, end{Approved, "ran", nil, wire.DecisionApprove}},
		{"edited", Options{}, func(t *testing.T, d *Dispatcher, dev, other *askusertest.Device, s SessionID, _ context.CancelFunc) {
			require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "call", Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{ "name" : "feature/old" }`)})))
		}, end{Edited, `{"notice": "The user edited the arguments of this tool call before it ran: it ran with the arguments given here, not with yours.", "arguments": {"name":"feature/old"}, "result": "ran"}`, nil, wire.DecisionEdit}},
		{"denied with a reason", Options{}, func(t *testing.T, d *Dispatcher, dev, other *askusertest.Device, s SessionID, _ context.CancelFunc) {
			require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "call", Decision: wire.DecisionDeny, Reason: "Wrong branch"})))
		}, end{Denied, `{"error": "The user denied this tool call; the tool did not run. Do not call it again unless the user asks you to.", "reason": "Wrong branch"}`, ErrDenied, wire.DecisionDeny}},
		{"denied", Options{}, func(t *testing.T, d *Dispatcher, dev, other *askusertest.Device, s SessionID, _ context.CancelFunc) {
			require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "call", Decision: wire.DecisionDeny})))
		}, end{Denied, `{"error": "The user denied this tool call; the tool did not run. Do not call it again unless the user asks you to."}`, ErrDenied, wire.DecisionDeny}},
		{"always", Options{}, func(t *testing.T, d *Dispatcher, dev, other *askusertest.Device, s SessionID, _ context.CancelFunc) {
			require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "call", Decision: wire.DecisionAlways})))
		}, end{Approved, "ran", nil, wire.DecisionAlways}},
		{"timed out", Options{Timeout: time.Minute}, func(t *testing.T, d *Dispatcher, dev, other *askusertest.Device, s SessionID, _ context.CancelFunc) {
			time.Sleep(2 * time.Minute)
		}, end{TimedOut, `{"error": "The user did not decide on this tool call before the timeout, so the tool did not run. This is not a refusal: do not call it again unless the user asks you to."}`, ErrTimeout, ""}},
		{"session cancelled", Options{}, func(t *testing.T, d *Dispatcher, dev, other *askusertest.Device, s SessionID, _ context.CancelFunc) {
			require.Equal(t, 1, d.CancelSession(s))
		}, end{Cancelled, `{"error": "Session cancelled; the tool did not run"}`, ErrCancelled, ""}},
		{"caller's context cancelled", Options{}, func(t *testing.T, d *Dispatcher, dev, other *askusertest.Device, s SessionID, cancel context.CancelFunc) {
			cancel()
		}, end{Cancelled, `{"error": "Session cancelled; the tool did not run"}`, ErrCancelled, ""}},
		{"shutdown", Options{}, func(t *testing.T, d *Dispatcher, dev, other *askusertest.Device, s SessionID, _ context.CancelFunc) {
			require.NoError(t, d.Close())
		}, end{Shutdown, `{"error": "The approval service is shutting down; the tool did not run"}`, ErrClosed, ""}},
		{"disconnected", Options{FailOnDisconnect: true}, func(t *testing.T, d *Dispatcher, dev, other *askusertest.Device, s SessionID, _ context.CancelFunc) {
			dev.Close()
			other.Close()
		}, end{Disconnected, `{"error": "User disconnected before deciding on this tool call; the tool did not run"}`, ErrDisconnected, ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var log auditLog
				opts := tc.opts
				opts.Policy = demoPolicy()
				opts.Observer = observe.Hooks{OnAudit: log.add}
				d, mt := newTestDispatcher(&opts)
				defer d.Close()
				s := IntSession(7)
				dev := mt.ConnectAs(s, "alice")
				other := mt.Connect(s)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var ran []string
				var mu sync.Mutex
				tool := wrap(d, func(_ context.Context, call ToolCall) (string, error) {
					mu.Lock()
					ran = append(ran, string(call.Arguments))
					mu.Unlock()
					return "ran", nil
				})
				type out struct {
					content string
					err     error
				}
				ch := make(chan out, 1)
				go func() {
					c, err := tool(ctx, ToolCall{Session: s, ID: "call", Name: "delete_branch", Arguments: json.RawMessage(args)})
					ch <- out{c, err}
				}()
				_, asked := recv[wire.ApprovalData](t, dev, wire.EventApproval)
				assert.Equal(t, "delete_branch", asked.Tool)
				assert.JSONEq(t, args, string(asked.Arguments))
				assert.Equal(t, []string{"approve", "deny", "edit", "always"}, asked.Decisions)
				assert.Equal(t, "Deletes a git branch", asked.Description)
				assert.JSONEq(t, branchSchema, string(asked.ArgumentsSchema))
				assert.Equal(t, "deleting branches named feature/*, in this session", asked.Always)
				assert.Equal(t, []string{"Not now", "Wrong branch"}, asked.Reasons)
				assert.NotEmpty(t, asked.Digest)
				recv[wire.ApprovalData](t, other, wire.EventApproval)

				tc.act(t, d, dev, other, s, cancel)
				got := <-ch
				assert.Equal(t, tc.want.content, got.content)
				if tc.want.err == nil {
					assert.NoError(t, got.err)
				} else {
					assert.ErrorIs(t, got.err, tc.want.err)
				}
				mu.Lock()
				switch tc.want.outcome {
				case Approved:
					assert.Equal(t, []string{args}, ran, "the tool runs with exactly the model's arguments")
				case Edited:
					assert.Equal(t, []string{`{"name":"feature/old"}`}, ran, "the tool runs with the edited arguments")
				default:
					assert.Empty(t, ran, "the tool must not run")
				}
				mu.Unlock()

				// Every device still there is told how it ended.
				if tc.want.outcome != Disconnected {
					_, res := recv[wire.ApprovalResolvedData](t, other, wire.EventApprovalResolved)
					assert.Equal(t, tc.want.outcome, res.Outcome)
					if tc.want.decision == wire.DecisionAlways {
						assert.Equal(t, "deleting branches named feature/*, in this session", res.Grant)
					}
				}
				assert.Empty(t, askusertest.Approvals(d, s))

				// One audit record, complete.
				recs := log.all()
				require.Len(t, recs, 1)
				a := recs[0]
				assert.Equal(t, s, a.Session)
				assert.Equal(t, "call", a.RequestID)
				assert.Equal(t, "delete_branch", a.Tool)
				assert.JSONEq(t, args, string(a.Arguments))
				assert.Equal(t, "Deletes a git branch", a.Description)
				assert.Equal(t, tc.want.outcome, a.Outcome)
				assert.Equal(t, tc.want.decision, a.Decision)
				assert.Empty(t, a.Rule, "a person's approval names no rule")
				assert.False(t, a.AskedAt.IsZero())
				assert.False(t, a.DecidedAt.Before(a.AskedAt))
				if tc.want.decision != "" {
					assert.Equal(t, "alice", a.By, "who decided comes from the transport")
				} else {
					assert.Empty(t, a.By)
				}
				switch tc.want.outcome {
				case Edited:
					assert.Equal(t, `{"name":"feature/old"}`, string(a.Edited))
				case Denied:
					if tc.name == "denied with a reason" {
						assert.Equal(t, "Wrong branch", a.Reason)
					}
				}
				if tc.want.decision == wire.DecisionAlways {
					require.NotNil(t, a.Grant)
					assert.Equal(t, store.Grant{Session: s, ID: "call", Tool: "delete_branch", Scope: "feature branches", Covers: "deleting branches named feature/*, in this session", By: "alice", At: a.Grant.At}, *a.Grant)
				}
			})
		})
	}
}

func TestPolicyRules(t *testing.T) {
	var log auditLog
	d, mt := newTestDispatcher(&Options{Policy: demoPolicy(), Observer: observe.Hooks{OnAudit: log.add}, Timeout: time.Hour})
	defer d.Close()
	s := IntSession(1)
	dev := mt.Connect(s)

	// Allowed by a rule: runs at once, nobody asked.
	r := d.Approve(context.Background(), ToolCall{Session: s, ID: "c1", Name: "list_files", Arguments: json.RawMessage(`{}`)}, nil)
	assert.Equal(t, Approved, r.Outcome)
	assert.Equal(t, "list_files", r.Rule)
	assert.Equal(t, `{}`, string(r.Arguments))
	// Denied by a rule, even though a later rule would allow everything.
	r = d.Approve(context.Background(), ToolCall{Session: s, ID: "c2", Name: "drop_database", Arguments: json.RawMessage(`{"name":"prod"}`)}, nil)
	assert.Equal(t, Denied, r.Outcome)
	assert.Equal(t, "drop_*", r.Rule)
	assert.ErrorIs(t, r.Err, ErrDenied)
	assert.Equal(t, `{"error": "This tool call is not allowed here; the tool did not run. Do not call it again."}`, r.Content("ignored"))
	// Unmatched: the Default, ask.
	ch := approvalPending(t, d, s, "c3", "unknown_tool", `{}`)
	_, a := recv[wire.ApprovalData](t, dev, wire.EventApproval)
	assert.Equal(t, "unknown_tool", a.Tool)
	assert.Equal(t, []string{"approve", "deny", "edit", "always"}, a.Decisions)
	assert.Equal(t, "every call of unknown_tool in this session", a.Always)
	require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "c3", Decision: wire.DecisionApprove})))
	assert.Equal(t, Approved, (<-ch).Outcome)
	recv[wire.ApprovalResolvedData](t, dev, wire.EventApprovalResolved)

	recs := log.all()
	require.Len(t, recs, 3)
	assert.Equal(t, observe.Audit{Session: s, Tool: "list_files", Arguments: json.RawMessage(`{}`), Outcome: Approved, Rule: "list_files", AskedAt: recs[0].AskedAt, DecidedAt: recs[0].DecidedAt}, recs[0])
	assert.Equal(t, "drop_*", recs[1].Rule)
	assert.Equal(t, Denied, recs[1].Outcome)

	// The order is deny, ask, allow: a call matched by both Deny and Allow is denied.
	both := New(askusertest.NewTransport(), &Options{Policy: &Policy{Allow: []Rule{{Tool: "*"}}, Deny: []Rule{{Tool: "rm"}}}})
	defer both.Close()
	assert.Equal(t, Denied, both.Approve(context.Background(), ToolCall{Session: s, Name: "rm", Arguments: json.RawMessage(`{}`)}, nil).Outcome)
	assert.Equal(t, Approved, both.Approve(context.Background(), ToolCall{Session: s, Name: "ls", Arguments: json.RawMessage(`{}`)}, nil).Outcome)
	// Default deny.
	closed := New(askusertest.NewTransport(), &Options{Policy: &Policy{Default: ActionDeny}})
	defer closed.Close()
	r = closed.Approve(context.Background(), ToolCall{Session: s, Name: "ls", Arguments: json.RawMessage(`{}`)}, nil)
	assert.Equal(t, Denied, r.Outcome)
	assert.Equal(t, "default", r.Rule)
}

// TestArgumentsNotJSONAreNeverAllowed: an Allow rule, a grant or a predicate never lets
// through arguments that do not parse; such a call is asked about, as text, with only
// "deny" and "edit" offered, and an edit into valid JSON runs.
func TestArgumentsNotJSONAreNeverAllowed(t *testing.T) {
	d, mt := newTestDispatcher(&Options{Policy: &Policy{Allow: []Rule{{Tool: "*"}}}, Timeout: time.Hour})
	defer d.Close()
	s := IntSession(1)
	dev := mt.Connect(s)
	ch := approvalPending(t, d, s, "bad", "list_files", `{"path": "/tmp"`)
	_, a := recv[wire.ApprovalData](t, dev, wire.EventApproval)
	assert.True(t, a.ArgumentsInvalid)
	assert.Equal(t, `"{\"path\": \"/tmp\""`, string(a.Arguments))
	assert.Equal(t, []string{"deny", "edit"}, a.Decisions)
	err := dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "bad", Decision: wire.DecisionApprove}))
	var ae *wire.AnswerError
	require.ErrorAs(t, err, &ae, "approve is not offered")
	require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "bad", Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"path":"/tmp"}`)})))
	r := <-ch
	assert.Equal(t, Edited, r.Outcome)
	assert.Equal(t, `{"path":"/tmp"}`, string(r.Arguments))
}

// TestPredicateRules: a rule's When sees the decoded arguments.
func TestPredicateRules(t *testing.T) {
	p := &Policy{
		Allow: []Rule{{Tool: "delete_branch", When: func(a map[string]any) bool { return a["name"] == "scratch" }}},
		Deny:  []Rule{{Tool: "delete_branch", When: func(a map[string]any) bool { return a["name"] == "main" }}},
	}
	d, mt := newTestDispatcher(&Options{Policy: p, Timeout: time.Hour})
	defer d.Close()
	s := IntSession(1)
	dev := mt.Connect(s)
	assert.Equal(t, Approved, d.Approve(context.Background(), ToolCall{Session: s, Name: "delete_branch", Arguments: json.RawMessage(`{"name":"scratch"}`)}, nil).Outcome)
	assert.Equal(t, Denied, d.Approve(context.Background(), ToolCall{Session: s, Name: "delete_branch", Arguments: json.RawMessage(`{"name":"main"}`)}, nil).Outcome)
	ch := approvalPending(t, d, s, "x", "delete_branch", `{"name":"other"}`)
	recv[wire.ApprovalData](t, dev, wire.EventApproval)
	d.CancelSession(s)
	assert.Equal(t, Cancelled, (<-ch).Outcome)
}

// TestGrants: "always" lets later calls that the grant covers run without asking, on
// this dispatcher; one it does not cover is asked; a revoked grant asks again.
func TestGrants(t *testing.T) {
	var log auditLog
	d, mt := newTestDispatcher(&Options{Policy: demoPolicy(), Observer: observe.Hooks{OnAudit: log.add}, Timeout: time.Hour})
	defer d.Close()
	s := StringSession("s")
	dev := mt.Connect(s)
	ch := approvalPending(t, d, s, "first", "delete_branch", `{"name":"feature/a"}`)
	recv[wire.ApprovalData](t, dev, wire.EventApproval)
	require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "first", Decision: wire.DecisionAlways})))
	r := <-ch
	require.Equal(t, Approved, r.Outcome)
	require.NotNil(t, r.Grant)

	next := d.Approve(context.Background(), ToolCall{Session: s, ID: "second", Name: "delete_branch", Arguments: json.RawMessage(`{"name":"feature/b"}`)}, nil)
	assert.Equal(t, Approved, next.Outcome, "covered by the grant")
	require.NotNil(t, next.Grant)
	assert.Equal(t, "first", next.Grant.ID)
	assert.Empty(t, askusertest.Approvals(d, s))
	// Another session has no grant.
	other := approvalPending(t, d, StringSession("t"), "elsewhere", "delete_branch", `{"name":"feature/b"}`)
	d.CancelSession(StringSession("t"))
	assert.Equal(t, Cancelled, (<-other).Outcome)
	// Outside the grant's narrower scope: asked.
	outside := approvalPending(t, d, s, "third", "delete_branch", `{"name":"release/1"}`)
	recv[wire.ApprovalResolvedData](t, dev, wire.EventApprovalResolved)
	recv[wire.ApprovalData](t, dev, wire.EventApproval)
	d.CancelSession(s)
	assert.Equal(t, Cancelled, (<-outside).Outcome)
	recv[wire.ApprovalResolvedData](t, dev, wire.EventApprovalResolved)

	grants, err := d.Grants().Grants(context.Background(), s)
	require.NoError(t, err)
	require.Len(t, grants, 1)
	ok, err := d.Grants().RevokeGrant(context.Background(), s, "first")
	require.NoError(t, err)
	assert.True(t, ok)
	again := approvalPending(t, d, s, "fourth", "delete_branch", `{"name":"feature/c"}`)
	recv[wire.ApprovalData](t, dev, wire.EventApproval)
	d.CancelSession(s)
	assert.Equal(t, Cancelled, (<-again).Outcome)

	var byGrant []observe.Audit
	for _, a := range log.all() {
		if a.Grant != nil && a.Decision == "" {
			byGrant = append(byGrant, a)
		}
	}
	require.Len(t, byGrant, 1, "the call the grant allowed is audited with it")
	assert.Equal(t, Approved, byGrant[0].Outcome)
}

// TestApprovalBinding: a decision decides one approval, once.
func TestApprovalBinding(t *testing.T) {
	d, mt := newTestDispatcher(&Options{Policy: demoPolicy(), Timeout: time.Hour})
	defer d.Close()
	s := IntSession(3)
	dev := mt.Connect(s)
	ch := approvalPending(t, d, s, "b1", "delete_branch", `{"name":"x"}`)
	_, a := recv[wire.ApprovalData](t, dev, wire.EventApproval)

	// Another digest: refused as not pending, the approval stays.
	err := dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "b1", Decision: wire.DecisionApprove, Digest: "0123"}))
	assert.ErrorIs(t, err, wire.ErrNotPending)
	// A decision for an unknown id, or an answer for the approval's: not pending.
	assert.ErrorIs(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "nope", Decision: wire.DecisionApprove})), wire.ErrNotPending)
	assert.ErrorIs(t, dev.Send(context.Background(), answerEvent(s, "b1", "Vue")), wire.ErrNotPending)
	// An edit that the schema refuses: refused with its problems, the approval stays open.
	err = dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "b1", Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"name":"","force":true}`)}))
	var ae *wire.AnswerError
	require.ErrorAs(t, err, &ae)
	assert.NotEmpty(t, ae.Problems)
	assert.Equal(t, ErrorCodeOf(err), "invalid_answer")
	// A decision not offered, and malformed decisions.
	for _, bad := range []string{
		`{"requestId":"b1","decision":"maybe"}`,
		`{"requestId":"b1","decision":"approve","reason":"why not"}`,
		`{"requestId":"b1","decision":"approve","arguments":{}}`,
		`{"requestId":"b1","decision":"edit"}`,
		`{"requestId":"b1","decision":"edit","arguments":"{not json"}`,
	} {
		err := dev.Send(context.Background(), wire.Event{Type: wire.EventApprovalResult, Data: json.RawMessage(bad)})
		assert.ErrorAs(t, err, &ae, bad)
	}
	for _, bad := range []string{`{"requestId":"b1"}`, `{"decision":"approve"}`, `{"requestId":"b1","decision":"approve","extra":1}`, `[]`, `{"requestId":1,"decision":"approve"}`} {
		err := dev.Send(context.Background(), wire.Event{Type: wire.EventApprovalResult, Data: json.RawMessage(bad)})
		assert.ErrorIs(t, err, wire.ErrMalformedEvent, bad)
	}
	// The digest of this very approval is taken; a second decision is not pending.
	require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "b1", Decision: wire.DecisionApprove, Digest: a.Digest})))
	assert.ErrorIs(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "b1", Decision: wire.DecisionDeny})), wire.ErrNotPending)
	assert.Equal(t, Approved, (<-ch).Outcome)
}

// TestApprovalSameIDJoins: a call made again with the same id, tool and arguments waits
// for the same approval (no second ask), and one with other arguments is refused.
func TestApprovalSameIDJoins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		asks := 0
		d, mt := newTestDispatcher(&Options{Policy: demoPolicy(), Timeout: time.Hour, Observer: observe.Hooks{OnAsk: func(observe.Observation) { asks++ }}})
		defer d.Close()
		s := IntSession(4)
		dev := mt.Connect(s)
		first := approveAsync(context.Background(), d, s, "j", "delete_branch", `{"name":"x"}`)
		synctest.Wait()
		second := approveAsync(context.Background(), d, s, "j", "delete_branch", `{ "name" : "x" }`) // the same, spelt otherwise
		synctest.Wait()
		assert.Equal(t, 1, asks, "asked once")
		recv[wire.ApprovalData](t, dev, wire.EventApproval)
		other := d.Approve(context.Background(), ToolCall{Session: s, ID: "j", Name: "delete_branch", Arguments: json.RawMessage(`{"name":"y"}`)}, nil)
		assert.Equal(t, Invalid, other.Outcome)
		assert.Contains(t, other.Content(""), "names a request for another tool call")
		q := d.Dispatch(context.Background(), ToolCall{Session: s, ID: "j", Name: ToolName, Arguments: json.RawMessage(oneQuestion)})
		assert.Equal(t, Invalid, q.Outcome, "a question set cannot take an approval's id")
		require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "j", Decision: wire.DecisionDeny, Reason: "no"})))
		a, b := <-first, <-second
		assert.Equal(t, Denied, a.Outcome)
		assert.Equal(t, Denied, b.Outcome)
		assert.Equal(t, "no", b.Decision.Reason)
	})
}

// TestParallelToolCalls: in a batch of calls, one waiting for the person does not hold
// up those that need no approval, and none is lost when a sibling is denied.
func TestParallelToolCalls(t *testing.T) {
	d, mt := newTestDispatcher(&Options{Policy: demoPolicy(), Timeout: time.Hour})
	defer d.Close()
	s := IntSession(5)
	dev := mt.Connect(s)
	tool := wrap(d, func(_ context.Context, call ToolCall) (string, error) { return "ran " + call.Name, nil })
	calls := []ToolCall{
		{Session: s, ID: "p1", Name: "delete_branch", Arguments: json.RawMessage(`{"name":"x"}`)},
		{Session: s, ID: "p2", Name: "list_files", Arguments: json.RawMessage(`{}`)},
		{Session: s, ID: "p3", Name: "drop_database", Arguments: json.RawMessage(`{"name":"x"}`)},
	}
	results := make([]chan string, len(calls))
	for i, c := range calls {
		results[i] = make(chan string, 1)
		go func() {
			out, _ := tool(context.Background(), c)
			results[i] <- out
		}()
	}
	assert.Equal(t, "ran list_files", <-results[1], "runs while its sibling waits")
	assert.Contains(t, <-results[2], "not allowed here")
	recv[wire.ApprovalData](t, dev, wire.EventApproval)
	require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "p1", Decision: wire.DecisionApprove})))
	assert.Equal(t, "ran delete_branch", <-results[0])
}

// TestApprovalRacesQuestion: an approval and a question of the same session end each on
// its own, under every pair of ends at once.
func TestApprovalRacesQuestion(t *testing.T) {
	for round := 0; round < 200; round++ {
		d, mt := newTestDispatcher(&Options{Policy: demoPolicy(), Timeout: time.Hour})
		s := IntSession(int64(round))
		dev := mt.Connect(s)
		a := approvalPending(t, d, s, "a", "delete_branch", `{"name":"x"}`)
		q := askPending(t, d, s, "q", oneQuestion)
		var wg sync.WaitGroup
		wg.Add(3)
		go func() {
			defer wg.Done()
			_ = dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "a", Decision: wire.DecisionApprove}))
		}()
		go func() {
			defer wg.Done()
			_ = dev.Send(context.Background(), answerEvent(s, "q", "Vue"))
		}()
		go func() {
			defer wg.Done()
			d.CancelSession(s)
		}()
		wg.Wait()
		ra, rq := <-a, <-q
		if ra.Outcome != Approved && ra.Outcome != Cancelled {
			t.Fatalf("round %d: approval ended %v", round, ra.Outcome)
		}
		if rq.Outcome != Answered && rq.Outcome != Cancelled {
			t.Fatalf("round %d: question ended %v", round, rq.Outcome)
		}
		// Each device is told of both ends, each once, after each ask.
		seen := map[string]int{}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		for len(seen) < 4 {
			ev, err := dev.Recv(ctx)
			if err != nil {
				break
			}
			seen[ev.Type+" "+ev.RequestID()]++
		}
		cancel()
		for _, k := range []string{"tool_approval a", "tool_approval_resolved a", "ask_user_questions q", "ask_user_questions_resolved q"} {
			if seen[k] != 1 {
				t.Fatalf("round %d: %q seen %d times: %v", round, k, seen[k], seen)
			}
		}
		d.Close()
	}
}

// TestApproveWithoutPolicy: with no Policy, Approve asks about every call, and Wrap
// passes other tools on untouched.
func TestApproveWithoutPolicy(t *testing.T) {
	d, mt := newTestDispatcher(&Options{Timeout: time.Hour})
	defer d.Close()
	s := IntSession(6)
	dev := mt.Connect(s)
	out, err := wrap(d, func(context.Context, ToolCall) (string, error) { return "ran", nil })(context.Background(), ToolCall{Session: s, Name: "rm", Arguments: json.RawMessage(`{}`)})
	assert.Equal(t, "ran", out)
	assert.NoError(t, err)
	ch := approvalPending(t, d, s, "np", "rm", `{}`)
	_, a := recv[wire.ApprovalData](t, dev, wire.EventApproval)
	assert.Equal(t, []string{"approve", "deny", "edit"}, a.Decisions, "no policy to match a grant by: no always")
	require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "np", Decision: wire.DecisionApprove})))
	assert.Equal(t, Approved, (<-ch).Outcome)
}

// TestApprovalRefusedBeforeAsking: calls the gate cannot ask about end as Invalid.
func TestApprovalRefusedBeforeAsking(t *testing.T) {
	d, _ := newTestDispatcher(nil)
	defer d.Close()
	s := IntSession(1)
	for _, call := range []ToolCall{
		{Session: s},
		{Session: s, Name: ToolName},
		{Session: s, Name: "x", ID: strings.Repeat("i", 300)},
		{Session: s, Name: "x", ID: "\xff"},
		{Session: s, Name: "x", Arguments: json.RawMessage(strings.Repeat(" ", wire.MaxArgumentsBytes+1))},
	} {
		r := d.Approve(context.Background(), call, nil)
		assert.Equal(t, Invalid, r.Outcome, "%+v", call)
		assert.True(t, errors.Is(r.Err, ErrInvalidArguments))
		assert.Contains(t, r.Content(""), `"problems": [`)
	}
}

func TestNewRefusesBadPolicies(t *testing.T) {
	for _, p := range []*Policy{
		{Deny: []Rule{{}}},
		{Ask: []Rule{{Tool: "["}}},
		{Ask: []Rule{{Tool: "x", Always: &Rule{Tool: "x"}}}},
		{Ask: []Rule{{Tool: "x", Decisions: []string{"perhaps"}}}},
		{Tools: []Tool{{Name: "x", Schema: json.RawMessage(`{"type": 7}`)}}},
		{Tools: []Tool{{Schema: json.RawMessage(`{}`)}}},
		{Default: Action(9)},
	} {
		assert.Panics(t, func() { New(askusertest.NewTransport(), &Options{Policy: p}) }, "%+v", p)
	}
}

// FuzzApprovalResult: whatever a device sends as a decision, the dispatcher never panics;
// a refusal is coded, small, and leaves the approval pending; an accepted decision ends
// it with an outcome of a decision, and an edit it accepts satisfies the tool's schema.
func FuzzApprovalResult(f *testing.F) {
	for _, data := range []string{
		`{"requestId":"r1","decision":"approve"}`,
		`{"requestId":"r1","decision":"deny","reason":"Not now"}`,
		`{"requestId":"r1","decision":"edit","arguments":{"name":"feature/y"}}`,
		`{"requestId":"r1","decision":"edit","arguments":{"name":""}}`,
		`{"requestId":"r1","decision":"always","digest":"x"}`,
		`{"requestId":"r1","decision":"maybe"}`,
		`{"requestId":"r1","decision":"deny","reason":` + `"` + strings.Repeat("é", 1200) + `"}`,
		`{"requestId":"r1","decision":"edit","arguments":"{"}`,
		`{"requestId":1}`, `[]`, `null`, `{"requestId":"r1","requestId":"r1","decision":"approve"}`,
	} {
		f.Add([]byte(data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, _ := newTestDispatcher(&Options{Policy: demoPolicy(), Timeout: time.Hour})
		defer d.Close()
		s := IntSession(9)
		ch := approvalPending(t, d, s, "r1", "delete_branch", `{"name":"feature/x"}`)
		err := d.Deliver(context.Background(), wire.Event{Type: wire.EventApprovalResult, SessionID: s, Data: data})
		if err != nil {
			if code := ErrorCodeOf(err); code == "internal" {
				t.Fatalf("uncoded error: %v", err)
			}
			if len(askusertest.Approvals(d, s)) != 1 {
				t.Fatalf("a refused decision ended the approval: %v", err)
			}
			wire, werr := wire.ErrorEvent(s, "r1", err).Encode()
			if werr != nil {
				t.Fatal(werr)
			}
			if len(wire) > 4<<10 {
				t.Fatalf("a %d-byte decision got a %d-byte reply", len(data), len(wire))
			}
			return
		}
		if id := (wire.Event{Data: data}).RequestID(); id != "r1" {
			t.Fatalf("a decision that transports read as for %q ended r1", id)
		}
		r := <-ch
		switch r.Outcome {
		case Approved, Denied:
		case Edited:
			if problems := SchemaCheck([]byte(branchSchema), r.Arguments); problems != nil {
				t.Fatalf("an accepted edit breaks the schema: %v", problems)
			}
		default:
			t.Fatalf("an accepted decision ended the approval as %v", r.Outcome)
		}
	})
}

// TestDecisionTable: each malformed or refused decision gets its exact error and code,
// and leaves the approval pending; the accepted ones end it.
func TestDecisionTable(t *testing.T) {
	for _, tc := range DecisionCases {
		t.Run(tc.Name, func(t *testing.T) {
			d, _ := newTestDispatcher(&Options{Policy: &Policy{Tools: DecisionPolicy().Tools, Ask: []Rule{{Tool: "*", Decisions: []string{"approve", "deny", "edit"}}}}, Timeout: time.Hour})
			defer d.Close()
			s := IntSession(123)
			ch := approvalPending(t, d, s, "r1", "delete_branch", DecisionArgs)
			ev, err := wire.ParseEvent([]byte(tc.Msg))
			if err == nil {
				ev.SessionID = s
				err = d.Deliver(context.Background(), ev)
			}
			if tc.Code == "" {
				require.NoError(t, err)
				<-ch
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.Err, err.Error())
			assert.Equal(t, tc.Code, ErrorCodeOf(err))
			assert.Len(t, askusertest.Approvals(d, s), 1, "the approval stays pending")
			d.CancelSession(s)
			<-ch
		})
	}
}

// TestApprovalEndsRace: every way an approval can end, at once: two devices deciding
// differently, a session cancel, the caller's context, and Close. Exactly one end wins:
// the call returns it, every device is told it once, and it is audited once.
func TestApprovalEndsRace(t *testing.T) {
	for round := 0; round < 300; round++ {
		var log auditLog
		d, mt := newTestDispatcher(&Options{Policy: demoPolicy(), Timeout: time.Hour, Observer: observe.Hooks{OnAudit: log.add}})
		s := IntSession(int64(round))
		a, b := mt.ConnectAs(s, "a"), mt.ConnectAs(s, "b")
		ctx, cancel := context.WithCancel(context.Background())
		ch := approveAsync(ctx, d, s, "r", "delete_branch", `{"name":"x"}`)
		recv[wire.ApprovalData](t, a, wire.EventApproval)
		recv[wire.ApprovalData](t, b, wire.EventApproval)
		var wg sync.WaitGroup
		acts := []func(){
			func() {
				_ = a.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "r", Decision: wire.DecisionApprove}))
			},
			func() {
				_ = b.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "r", Decision: wire.DecisionDeny, Reason: "no"}))
			},
			func() { d.CancelSession(s) },
			cancel,
		}
		if round%3 == 0 {
			acts = append(acts, func() { d.Close() })
		}
		for _, act := range acts {
			wg.Go(act)
		}
		wg.Wait()
		r := <-ch
		switch r.Outcome {
		case Approved, Denied, Cancelled, Shutdown:
		default:
			t.Fatalf("round %d: ended %v", round, r.Outcome)
		}
		for _, dev := range []*askusertest.Device{a, b} {
			_, res := recv[wire.ApprovalResolvedData](t, dev, wire.EventApprovalResolved)
			if res.Outcome != r.Outcome {
				t.Fatalf("round %d: a device was told %v, the call got %v", round, res.Outcome, r.Outcome)
			}
			ctx, stop := context.WithTimeout(context.Background(), 5*time.Millisecond)
			if ev, err := dev.Recv(ctx); err == nil {
				t.Fatalf("round %d: a second event %s %s", round, ev.Type, ev.Data)
			}
			stop()
		}
		if recs := log.all(); len(recs) != 1 || recs[0].Outcome != r.Outcome {
			t.Fatalf("round %d: audited %+v for a call that ended %v", round, recs, r.Outcome)
		}
		d.Close()
	}
}

// TestRunTools: a turn of a question, an allowed call, an asked call and a denied one
// ends in one output per call, in order, with the error flags, the asked call running
// with the edited arguments, and the host tool's failure passed on.
func TestRunTools(t *testing.T) {
	d, mt := newTestDispatcher(&Options{Policy: demoPolicy(), Timeout: time.Hour})
	defer d.Close()
	s := IntSession(8)
	dev := mt.Connect(s)
	calls := []ToolCall{
		{Session: s, ID: "t1", Name: ToolName, Arguments: json.RawMessage(oneQuestion)},
		{Session: s, ID: "t2", Name: "list_files", Arguments: json.RawMessage(`{}`)},
		{Session: s, ID: "t3", Name: "delete_branch", Arguments: json.RawMessage(`{"name":"a"}`)},
		{Session: s, ID: "t4", Name: "drop_database", Arguments: json.RawMessage(`{"name":"prod"}`)},
		{Session: s, ID: "t5", Name: "list_files", Arguments: json.RawMessage(`{"fail":true}`)},
	}
	done := make(chan []ToolOutput, 1)
	go func() {
		done <- d.RunTools(context.Background(), calls, func(_ context.Context, c ToolCall) (string, error) {
			if strings.Contains(string(c.Arguments), "fail") {
				return "", errors.New("disk on fire")
			}
			return c.Name + " ran with " + string(c.Arguments), nil
		})
	}()
	for handled := 0; handled < 2; {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ev, err := dev.Recv(ctx)
		cancel()
		require.NoError(t, err)
		switch ev.Type {
		case wire.EventAsk:
			require.NoError(t, dev.Send(context.Background(), answerEvent(s, "t1", "Vue")))
			handled++
		case wire.EventApproval:
			require.NoError(t, dev.Send(context.Background(), decisionEvent(s, wire.ApprovalResultData{RequestID: "t3", Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"name":"b"}`)})))
			handled++
		}
	}
	out := <-done
	require.Len(t, out, 5)
	for i, o := range out {
		assert.Equal(t, calls[i].ID, o.Call.ID, "in the order of the calls")
	}
	assert.False(t, out[0].IsError)
	assert.Contains(t, out[0].Content, `"selectedLabels":["Vue"]`)
	assert.Equal(t, "list_files ran with {}", out[1].Content)
	assert.False(t, out[1].IsError)
	assert.Contains(t, out[2].Content, `"result": "delete_branch ran with {\"name\":\"b\"}"`)
	assert.False(t, out[2].IsError)
	assert.True(t, out[3].IsError)
	assert.True(t, out[3].Refused)
	assert.Contains(t, out[3].Content, "not allowed here")
	assert.True(t, out[4].IsError)
	assert.False(t, out[4].Refused)
	assert.Equal(t, "disk on fire", out[4].Content)
}

// TestApproveWith: what ApprovalOptions say of a call that is not the host's own. The
// host's rules come first; Default decides what no rule matches (named in the result),
// except that a Policy.Default of deny still denies and arguments that are not JSON are
// still asked about; the card carries the source (cut, made valid UTF-8, hints bounded)
// and the tool's description and schema, which edits must satisfy, a schema that does
// not compile being left out.
func TestApproveWith(t *testing.T) {
	allow, ask := ActionAllow, ActionAsk
	d, mt := newTestDispatcher(&Options{Timeout: time.Hour, Policy: &Policy{Deny: []Rule{{Tool: "rm_*"}}, Ask: []Rule{{Tool: "read_secret"}}}})
	defer d.Close()
	s := IntSession(8)
	dev := mt.Connect(s)
	ctx := context.Background()
	allowOpts := ApprovalOptions{Default: &allow, DefaultRule: "trusted read-only"}

	r := d.Approve(ctx, ToolCall{Session: s, Name: "read_file", Arguments: json.RawMessage(`{"p":1}`)}, &allowOpts)
	assert.Equal(t, Approved, r.Outcome)
	assert.Equal(t, "trusted read-only", r.Rule)
	assert.Equal(t, `{"p":1}`, string(r.Arguments))
	assert.Equal(t, Denied, d.Approve(ctx, ToolCall{Session: s, Name: "rm_rf", Arguments: json.RawMessage(`{}`)}, &allowOpts).Outcome, "the host's Deny rule first")

	denyAll, _ := newTestDispatcher(&Options{Policy: &Policy{Default: ActionDeny}})
	defer denyAll.Close()
	assert.Equal(t, Denied, denyAll.Approve(ctx, ToolCall{Session: s, Name: "read_file", Arguments: json.RawMessage(`{}`)}, &allowOpts).Outcome, "Policy.Default deny still denies")

	// The host's Ask rule first, with the source on the card.
	src := &wire.ToolSource{Server: strings.Repeat("é", 300) + "\xff", Title: "Read a secret", Hints: map[string]bool{"readOnly": true, "destructive": false, strings.Repeat("x", 40): true}}
	for i := range 10 {
		src.Hints[string(rune('a'+i))] = true
	}
	ch := make(chan ApprovalResult, 1)
	go func() {
		ch <- d.Approve(ctx, ToolCall{Session: s, ID: "sec", Name: "read_secret", Arguments: json.RawMessage(`{"k":"a"}`)}, &ApprovalOptions{
			Default: &allow, Source: src,
			Tool: &Tool{Description: "Reads a secret", Schema: json.RawMessage(`{"type":"object","properties":{"k":{"type":"string","maxLength":1}}}`)},
		})
	}()
	ev, a := recv[wire.ApprovalData](t, dev, wire.EventApproval)
	require.NotNil(t, a.Source)
	assert.Equal(t, strings.Repeat("é", 200)+"…", a.Source.Server)
	assert.Equal(t, "Read a secret", a.Source.Title)
	assert.Len(t, a.Source.Hints, 8)
	assert.NotContains(t, a.Source.Hints, strings.Repeat("x", 40))
	assert.Equal(t, "Reads a secret", a.Description)
	assert.Contains(t, string(ev.Data), `"source":{"server":"`)
	assert.Contains(t, string(ev.Data), `"title":"Read a secret","hints":{"a":true,`)
	require.ErrorIs(t, dev.Send(ctx, decisionEvent(s, wire.ApprovalResultData{RequestID: "sec", Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"k":"ab"}`)})), wire.ErrInvalidAnswer, "the tool's schema checks edits")
	require.NoError(t, dev.Send(ctx, decisionEvent(s, wire.ApprovalResultData{RequestID: "sec", Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"k":"b"}`)})))
	assert.Equal(t, Edited, (<-ch).Outcome)
	recv[wire.ApprovalResolvedData](t, dev, wire.EventApprovalResolved)

	// Not JSON: asked, not allowed; a schema that does not compile is left out.
	go func() {
		ch <- d.Approve(ctx, ToolCall{Session: s, ID: "nj", Name: "read_file", Arguments: json.RawMessage(`{not json`)}, &ApprovalOptions{
			Default: &allow, Tool: &Tool{Schema: json.RawMessage(`{"type":12}`)},
		})
	}()
	_, a = recv[wire.ApprovalData](t, dev, wire.EventApproval)
	assert.True(t, a.ArgumentsInvalid)
	assert.Empty(t, a.ArgumentsSchema)
	assert.Nil(t, a.Source)
	require.NoError(t, dev.Send(ctx, decisionEvent(s, wire.ApprovalResultData{RequestID: "nj", Decision: wire.DecisionDeny})))
	assert.Equal(t, Denied, (<-ch).Outcome)
	recv[wire.ApprovalResolvedData](t, dev, wire.EventApprovalResolved)

	// Default ask: asked even where the dispatcher has no rule.
	go func() {
		ch <- d.Approve(ctx, ToolCall{Session: s, ID: "ask", Name: "write_file", Arguments: json.RawMessage(`{}`)}, &ApprovalOptions{Default: &ask})
	}()
	recv[wire.ApprovalData](t, dev, wire.EventApproval)
	require.NoError(t, dev.Send(ctx, decisionEvent(s, wire.ApprovalResultData{RequestID: "ask", Decision: wire.DecisionApprove})))
	assert.Equal(t, Approved, (<-ch).Outcome)
}

// TestPolicyDescribe: Policy.Describe says more of each call that Wrap (and so RunTools)
// decides: its default and source, for the calls it knows; nil leaves a call to the
// rules alone.
func TestPolicyDescribe(t *testing.T) {
	allow := ActionAllow
	d, mt := newTestDispatcher(&Options{Timeout: time.Hour, Policy: &Policy{Describe: func(_ context.Context, call ToolCall) *ApprovalOptions {
		switch call.Name {
		case "srv_read":
			return &ApprovalOptions{Default: &allow, DefaultRule: "read-only", Source: &wire.ToolSource{Server: "srv", Trusted: true}}
		case "srv_write":
			return &ApprovalOptions{Source: &wire.ToolSource{Server: "srv"}}
		}
		return nil
	}}})
	defer d.Close()
	s := IntSession(9)
	dev := mt.Connect(s)
	ctx := context.Background()
	tool := wrap(d, func(_ context.Context, call ToolCall) (string, error) { return "ran " + call.Name, nil })
	out, err := tool(ctx, ToolCall{Session: s, Name: "srv_read", Arguments: json.RawMessage(`{}`)})
	assert.Equal(t, "ran srv_read", out)
	require.NoError(t, err)
	for _, name := range []string{"srv_write", "own"} {
		ch := make(chan string, 1)
		go func() {
			out, _ := tool(ctx, ToolCall{Session: s, ID: name, Name: name, Arguments: json.RawMessage(`{}`)})
			ch <- out
		}()
		_, a := recv[wire.ApprovalData](t, dev, wire.EventApproval)
		if name == "own" {
			assert.Nil(t, a.Source)
		} else {
			require.NotNil(t, a.Source)
			assert.Equal(t, "srv", a.Source.Server)
		}
		require.NoError(t, dev.Send(ctx, decisionEvent(s, wire.ApprovalResultData{RequestID: name, Decision: wire.DecisionApprove, Digest: a.Digest})))
		assert.Equal(t, "ran "+name, <-ch)
		recv[wire.ApprovalResolvedData](t, dev, wire.EventApprovalResolved)
	}
}

// TestPolicyApproversChecked: New refuses approvers that cannot be met or name nobody
// by an empty name, saying where; a quorum a group may meet is taken.
func TestPolicyApproversChecked(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{Ask: []Rule{{Tool: "drop", Approvers: &Approvers{Users: []string{"ann"}, Quorum: 2}}}}, "askuser: Options.Policy: Ask[0]: Approvers: the Quorum 2 is more than the 1 Users named"},
		{Policy{Ask: []Rule{{Tool: "drop", Approvers: &Approvers{Quorum: -1}}}}, "askuser: Options.Policy: Ask[0]: Approvers: the Quorum -1 is negative"},
		{Policy{Approvers: &Approvers{Groups: []string{""}}}, "askuser: Options.Policy: Approvers: a user or group name is empty"},
		{Policy{Ask: []Rule{{Tool: "drop", Approvers: &Approvers{Users: []string{"ann"}, Groups: []string{"dba"}, Quorum: 3}}}}, ""},
		{Policy{Approvers: &Approvers{Escalate: []store.Escalation{{After: time.Second, Users: []string{"lead"}}}}}, "askuser: Options.Policy: Approvers: the escalation needs Users or Groups: without them anyone of the session decides already"},
		{Policy{Approvers: &Approvers{Users: []string{"ann"}, Escalate: []store.Escalation{{After: 0, Users: []string{"lead"}}}}}, "askuser: Options.Policy: Approvers: the escalation step 0: After 0s is not positive and more than the step's before"},
		{Policy{Approvers: &Approvers{Users: []string{"ann"}, Escalate: []store.Escalation{{After: 2 * time.Second, Users: []string{"lead"}}, {After: time.Second, Groups: []string{"cto"}}}}}, "askuser: Options.Policy: Approvers: the escalation step 1: After 1s is not positive and more than the step's before"},
		{Policy{Approvers: &Approvers{Users: []string{"ann"}, Escalate: []store.Escalation{{After: time.Second}}}}, "askuser: Options.Policy: Approvers: the escalation step 0 names no user nor group"},
		{Policy{Approvers: &Approvers{Users: []string{"ann"}, Escalate: []store.Escalation{{After: time.Second, Groups: []string{""}}}}}, "askuser: Options.Policy: Approvers: the escalation step 0: a user or group name is empty"},
		{Policy{Approvers: &Approvers{Users: []string{"ann"}, Quorum: 2, Escalate: []store.Escalation{{After: time.Second, Users: []string{"lead"}}}}}, ""},
	} {
		got := func() (msg string) {
			defer func() {
				if r := recover(); r != nil {
					msg = fmt.Sprint(r)
				}
			}()
			New(askusertest.NewTransport(), &Options{Policy: &tc.p}).Close()
			return ""
		}()
		if got != tc.want {
			t.Errorf("New with %+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}

// TestQuorumConcurrentApprovals: three approvers approve at once a call that needs two;
// it is approved once, with two approvals counted, and the third is told not_pending. Under -race, the compare-and-set of the store is the only
// order between them.
func TestQuorumConcurrentApprovals(t *testing.T) {
	for range 20 {
		mt := askusertest.NewTransport()
		audits := make(chan observe.Audit, 4)
		d := New(mt, &Options{Policy: &Policy{Ask: []Rule{{Tool: "drop", Approvers: &Approvers{Users: []string{"ann", "bob", "cy"}, Quorum: 2}}}},
			Observer: observe.Hooks{OnAudit: func(a observe.Audit) { audits <- a }}})
		s := StringSession("q")
		devs := []*askusertest.Device{mt.ConnectAs(s, "ann"), mt.ConnectAs(s, "bob"), mt.ConnectAs(s, "cy")}
		done := make(chan ApprovalResult, 1)
		go func() { done <- d.Approve(context.Background(), ToolCall{Session: s, ID: "c", Name: "drop"}, nil) }()
		var ap []wire.ApprovalData
		for len(ap) == 0 {
			ap = askusertest.Approvals(d, s)
			time.Sleep(time.Millisecond)
		}
		ev, err := wire.NewEvent(wire.EventApprovalResult, s, wire.ApprovalResultData{RequestID: "c", Decision: wire.DecisionApprove, Digest: ap[0].Digest})
		require.NoError(t, err)
		errs := make([]error, len(devs))
		var wg sync.WaitGroup
		for i, dv := range devs {
			wg.Go(func() { errs[i] = dv.Send(context.Background(), ev) })
		}
		wg.Wait()
		r := <-done
		require.Equal(t, Approved, r.Outcome)
		failed := 0
		for _, err := range errs {
			if err != nil {
				require.ErrorIs(t, err, wire.ErrNotPending)
				failed++
			}
		}
		require.Equal(t, 1, failed, "one of three approvals comes after the quorum")
		a := <-audits
		counted := map[string]bool{}
		for _, x := range a.Approvals {
			counted[x.By] = true
		}
		require.Len(t, counted, 2, "audit approvals %+v", a.Approvals)
		d.Close()
	}
}

// TestApprovalOptionsEscalationChecked: approvers a host names for one call are checked
// as a Policy's are; a call whose escalation cannot work is refused, nothing asked.
func TestApprovalOptionsEscalationChecked(t *testing.T) {
	tr := askusertest.NewTransport()
	d := New(tr, nil)
	defer d.Close()
	r := d.Approve(context.Background(), ToolCall{Session: StringSession("s"), ID: "c1", Name: "drop", Arguments: json.RawMessage(`{}`)},
		&ApprovalOptions{Approvers: &Approvers{Users: []string{"ann"}, Escalate: []store.Escalation{{After: time.Second, Users: []string{"lead"}}, {After: time.Second, Users: []string{"cto"}}}}})
	if r.Outcome != Invalid || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "the escalation step 1: After 1s is not positive and more than the step's before") {
		t.Fatalf("result %+v; want refused for the second step's After", r)
	}
	if got := askusertest.Approvals(d, StringSession("s")); len(got) != 0 {
		t.Fatalf("pending %+v; want nothing asked", got)
	}
}
