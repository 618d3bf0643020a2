package wshub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
)

// approversEnv is a hub whose devices name their person with ?user= and their groups
// with ?groups=a,b, and a dispatcher with policy and an observer that keeps every
// observation and audit.
type approversEnv struct {
	*env
	obs    *observations
	audits chan observe.Audit
}

func newApproversEnv(t *testing.T, policy *askuser.Policy) *approversEnv {
	return newApproversEnvWith(t, &askuser.Options{Policy: policy})
}

// newApproversEnvWith is newApproversEnv with the dispatcher's options o, whose
// Observer it sets.
func newApproversEnvWith(t *testing.T, o *askuser.Options) *approversEnv {
	obs := &observations{}
	audits := make(chan observe.Audit, 8)
	o.Observer = observe.Join(obs, observe.Hooks{OnAudit: func(a observe.Audit) { audits <- a }})
	e := newEnv(t, &wshub.Options{Authenticate: func(r *http.Request) (wshub.Access, error) {
		sessions, err := authorizeQuery(r)
		var groups []string
		if g := r.URL.Query().Get("groups"); g != "" {
			groups = strings.Split(g, ",")
		}
		return wshub.Access{User: r.URL.Query().Get("user"), Groups: groups, Sessions: sessions}, err
	}}, o)
	return &approversEnv{env: e, obs: obs, audits: audits}
}

// dial connects a device as the person its query names, and reads the inbox event the
// hub sends such a device first, checking it names the person.
func (e *approversEnv) dial(q string) *device {
	e.t.Helper()
	dv := e.env.dial(q)
	if want := queryValue(q, "user"); want != "" {
		if in := decode[wire.InboxData](e.t, dv.next(wire.EventInbox)); in.User != want {
			e.t.Fatalf("inbox event names %q; want %q", in.User, want)
		}
	}
	return dv
}

// queryValue returns the value of name in q, a query without its leading session name.
func queryValue(q, name string) string {
	for _, kv := range strings.Split(q, "&") {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// approve makes the call in the background; its result comes on the channel.
func (e *approversEnv) approve(call askuser.ToolCall, o *askuser.ApprovalOptions) <-chan askuser.ApprovalResult {
	ch := make(chan askuser.ApprovalResult, 1)
	go func() { ch <- e.d.Approve(context.Background(), call, o) }()
	return ch
}

// pending waits until the session's approval id is pending, and returns it.
func (e *approversEnv) pending(s askuser.SessionID, id string) wire.ApprovalData {
	e.t.Helper()
	deadline := time.Now().Add(failsafe)
	for {
		for _, a := range askusertest.Approvals(e.d, s) {
			if a.RequestID == id {
				return a
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the approval %s is not pending", id)
		}
		time.Sleep(time.Millisecond)
	}
}

// progressed counts the Progressed observations so far.
// aliceApprovedFirst asks dev's drop1 in session ops, connects alice and bob of dba, and
// has alice approve it, the devices told: the call's result to come, the approval as
// asked, and the two devices.
func (e *approversEnv) aliceApprovedFirst() (<-chan askuser.ApprovalResult, wire.ApprovalData, *device, *device) {
	s := askuser.StringSession("ops")
	res := e.approve(dropCall(s, "dev"), nil)
	ap := e.pending(s, "drop1")
	alice := e.dial("ops&user=alice&groups=dba")
	bob := e.dial("ops&user=bob&groups=dba")
	alice.next(wire.EventApproval)
	bob.next(wire.EventApproval)
	decide(alice, "drop1", wire.DecisionApprove, ap.Digest, nil)
	alice.next(wire.EventApprovalProgress)
	bob.next(wire.EventApprovalProgress)
	return res, ap, alice, bob
}

func (e *approversEnv) progressed() []observe.Audit {
	e.obs.mu.Lock()
	defer e.obs.mu.Unlock()
	var out []observe.Audit
	for _, x := range e.obs.seen {
		if x.Event == observe.Progressed {
			out = append(out, *x.Audit)
		}
	}
	return out
}

func decide(dv *device, id, decision, digest string, args json.RawMessage) {
	dv.t.Helper()
	dv.send(map[string]any{"type": wire.EventApprovalResult, "data": wire.ApprovalResultData{RequestID: id, Decision: decision, Digest: digest, Arguments: args}})
}

// settle sends a decision that is surely refused and waits for its refusal: the events
// the device sent before it have been taken.
func settle(t *testing.T, dv *device) {
	t.Helper()
	decide(dv, "no-such-request", wire.DecisionApprove, "", nil)
	expectError(t, dv.next(wire.EventError), "not_pending", "no-such-request")
}

func dropCall(s askuser.SessionID, requester string) askuser.ToolCall {
	return askuser.ToolCall{Session: s, ID: "drop1", Name: "drop_database", Arguments: json.RawMessage(`{"db":"prod"}`), Requester: requester}
}

// dbaRule asks about drop_database, which two of the dba group must approve.
func dbaRule(q int, separate bool) *askuser.Policy {
	return &askuser.Policy{Ask: []askuser.Rule{{Tool: "drop_database", Approvers: &askuser.Approvers{Groups: []string{"dba"}, Quorum: q, SeparateDuties: separate}}}}
}

// TestNotApproverRefused: a decision from someone the approvers do not name, by user
// or by group, is refused with not_approver and changes nothing; an approver's then
// decides. Devices are shown who may decide; "always" stays offered with one approval.
func TestNotApproverRefused(t *testing.T) {
	e := newApproversEnv(t, &askuser.Policy{Ask: []askuser.Rule{{Tool: "drop_database", Approvers: &askuser.Approvers{Users: []string{"alice"}, Groups: []string{"dba"}}}}})
	s := askuser.StringSession("ops")
	res := e.approve(dropCall(s, "dev"), nil)
	ap := e.pending(s, "drop1")
	if ap.Approvers == nil || fmt.Sprint(*ap.Approvers) != "{[alice dba] 0 [] [alice] [dba]}" {
		t.Fatalf("approval shows approvers %+v; want alice and dba, one approval", ap.Approvers)
	}
	dev := e.dial("ops&user=dev&groups=web,ops")
	dev.next(wire.EventApproval)
	for _, dec := range []string{wire.DecisionApprove, wire.DecisionDeny} {
		decide(dev, "drop1", dec, ap.Digest, nil)
		expectError(t, dev.next(wire.EventError), "not_approver", "drop1")
	}
	anon := e.dial("ops")
	anon.next(wire.EventApproval)
	decide(anon, "drop1", wire.DecisionApprove, "", nil)
	expectError(t, anon.next(wire.EventError), "not_approver", "drop1")
	if got := e.pending(s, "drop1"); got.Digest != ap.Digest {
		t.Fatalf("the approval changed: %+v", got)
	}
	carol := e.dial("ops&user=carol&groups=dba")
	carol.next(wire.EventApproval)
	decide(carol, "drop1", wire.DecisionApprove, ap.Digest, nil)
	r := <-res
	if r.Outcome != askuser.Approved || r.Decision.By != "carol" {
		t.Fatalf("result %+v; want approved by carol, of the dba group", r)
	}
	if a := <-e.audits; a.By != "carol" || a.Outcome != askuser.Approved || len(a.Approvals) != 0 {
		t.Fatalf("audit %+v", a)
	}
}

// TestQuorumTwoPeople: two approvals of the dba group are needed. One person approving
// twice counts once, and the request stays pending; every device learns each approval;
// a device that joins is shown the approvals so far; the second person's approval ends
// it, and the audit lists both.
func TestQuorumTwoPeople(t *testing.T) {
	e := newApproversEnv(t, dbaRule(2, false))
	s := askuser.StringSession("ops")
	res := e.approve(dropCall(s, "dev"), nil)
	ap := e.pending(s, "drop1")
	if ap.Approvers == nil || fmt.Sprint(*ap.Approvers) != "{[dba] 2 [] [] [dba]}" || fmt.Sprint(ap.Decisions) != "[approve deny edit]" {
		t.Fatalf("approval %+v; want a quorum of 2 of dba, without \"always\"", ap)
	}
	dev := e.dial("ops&user=dev")
	alice := e.dial("ops&user=alice&groups=dba")
	for _, dv := range []*device{dev, alice} {
		dv.next(wire.EventApproval)
	}
	decide(alice, "drop1", wire.DecisionApprove, ap.Digest, nil)
	for _, dv := range []*device{dev, alice} {
		p := decode[wire.ApprovalProgressData](t, dv.next(wire.EventApprovalProgress))
		if p.RequestID != "drop1" || fmt.Sprint(p.Approved) != "[alice]" || p.Digest != ap.Digest || p.Arguments != nil {
			t.Fatalf("progress %+v; want alice's approval", p)
		}
	}
	decide(alice, "drop1", wire.DecisionApprove, ap.Digest, nil) // again: counts once
	for _, dv := range []*device{dev, alice} {
		if p := decode[wire.ApprovalProgressData](t, dv.next(wire.EventApprovalProgress)); fmt.Sprint(p.Approved) != "[alice]" {
			t.Fatalf("progress after alice approved again %+v; want alice's approval, once", p)
		}
	}
	settle(t, alice)
	if got := e.pending(s, "drop1"); fmt.Sprint(got.Approvers.Approved) != "[alice]" {
		t.Fatalf("after alice approved twice, approvals %v; want [alice], still pending", got.Approvers.Approved)
	}
	select {
	case r := <-res:
		t.Fatalf("one person approving twice ended the call: %+v", r)
	default:
	}
	if n := len(e.progressed()); n != 1 {
		t.Fatalf("%d approvals observed, want 1", n)
	}
	bob := e.dial("ops&user=bob&groups=dba")
	if late := decode[wire.ApprovalData](t, bob.next(wire.EventApproval)); late.Approvers == nil || fmt.Sprint(*late.Approvers) != "{[dba] 2 [alice] [] [dba]}" {
		t.Fatalf("a device joining is shown %+v; want alice's approval of 2", late)
	}
	decide(bob, "drop1", wire.DecisionApprove, ap.Digest, nil)
	r := <-res
	if r.Outcome != askuser.Approved || r.Decision.By != "bob" || string(r.Arguments) != `{"db":"prod"}` {
		t.Fatalf("result %+v; want approved, by bob last", r)
	}
	for _, dv := range []*device{dev, alice, bob} {
		if res := decode[wire.ApprovalResolvedData](t, dv.next(wire.EventApprovalResolved)); res.Outcome != askuser.Approved {
			t.Fatalf("resolution %+v", res)
		}
	}
	a := <-e.audits
	if a.Outcome != askuser.Approved || len(a.Approvals) != 2 || a.Approvals[0].By != "alice" || a.Approvals[1].By != "bob" || a.Approvals[1].Digest != ap.Digest {
		t.Fatalf("audit %+v; want both approvals listed", a)
	}
	if p := e.progressed(); len(p) != 2 || p[1].By != "bob" {
		t.Fatalf("observed steps %+v; want alice's and bob's", p)
	}
}

// TestQuorumDenial: one denial ends a quorum at once, whatever the approvals before it.
func TestQuorumDenial(t *testing.T) {
	e := newApproversEnv(t, dbaRule(2, false))
	res, ap, _, bob := e.aliceApprovedFirst()
	bob.send(map[string]any{"type": wire.EventApprovalResult, "data": wire.ApprovalResultData{RequestID: "drop1", Decision: wire.DecisionDeny, Reason: "not today", Digest: ap.Digest}})
	r := <-res
	if r.Outcome != askuser.Denied || r.Decision.By != "bob" || r.Decision.Reason != "not today" {
		t.Fatalf("result %+v; want denied by bob", r)
	}
	if a := <-e.audits; a.Outcome != askuser.Denied || len(a.Approvals) != 1 || a.Approvals[0].By != "alice" {
		t.Fatalf("audit %+v; want the denial, with alice's approval before it", a)
	}
}

// TestQuorumEdit: an edit restarts the count on the edited arguments, the editor's
// approval first; an approval of the arguments before the edit is refused; the call
// runs with the edit once the quorum approves it.
func TestQuorumEdit(t *testing.T) {
	e := newApproversEnv(t, dbaRule(2, false))
	res, ap, alice, bob := e.aliceApprovedFirst()
	decide(bob, "drop1", wire.DecisionEdit, ap.Digest, json.RawMessage(`{"db": "staging"}`))
	var edited wire.ApprovalProgressData
	for _, dv := range []*device{alice, bob} {
		edited = decode[wire.ApprovalProgressData](t, dv.next(wire.EventApprovalProgress))
		if fmt.Sprint(edited.Approved) != "[bob]" || edited.Digest == ap.Digest || string(edited.Arguments) != `{"db":"staging"}` {
			t.Fatalf("progress after the edit %+v; want bob's approval of the edited arguments", edited)
		}
	}
	if got := e.pending(askuser.StringSession("ops"), "drop1"); got.Digest != edited.Digest || string(got.Arguments) != `{"db":"staging"}` {
		t.Fatalf("pending after the edit %+v", got)
	}
	decide(alice, "drop1", wire.DecisionApprove, ap.Digest, nil) // what she saw before the edit
	expectError(t, alice.next(wire.EventError), "not_pending", "drop1")
	decide(alice, "drop1", wire.DecisionApprove, edited.Digest, nil)
	r := <-res
	if r.Outcome != askuser.Edited || string(r.Arguments) != `{"db":"staging"}` || r.Decision.By != "alice" {
		t.Fatalf("result %+v; want edited, approved by alice last", r)
	}
	a := <-e.audits
	if a.Outcome != askuser.Edited || string(a.Arguments) != `{"db":"prod"}` || string(a.Edited) != `{"db":"staging"}` || len(a.Approvals) != 3 ||
		string(a.Approvals[1].Arguments) != `{"db":"staging"}` || a.Approvals[2].Digest != edited.Digest {
		t.Fatalf("audit %+v; want the model's arguments, the edit, and every step", a)
	}
}

// TestSeparateDuties: the requester's own approval is recorded but does not count;
// someone else's does.
func TestSeparateDuties(t *testing.T) {
	e := newApproversEnv(t, dbaRule(1, true))
	s := askuser.StringSession("ops")
	res := e.approve(dropCall(s, "alice"), nil)
	ap := e.pending(s, "drop1")
	if fmt.Sprint(ap.Decisions) != "[approve deny edit]" {
		t.Fatalf("decisions %v; want no \"always\" with separate duties", ap.Decisions)
	}
	alice := e.dial("ops&user=alice&groups=dba")
	alice.next(wire.EventApproval)
	decide(alice, "drop1", wire.DecisionApprove, ap.Digest, nil)
	if p := decode[wire.ApprovalProgressData](t, alice.next(wire.EventApprovalProgress)); p.Approved == nil || len(p.Approved) != 0 {
		t.Fatalf("progress %+v; want no approval counted", p)
	}
	select {
	case r := <-res:
		t.Fatalf("the requester alone approved the call: %+v", r)
	default:
	}
	bob := e.dial("ops&user=bob&groups=dba")
	bob.next(wire.EventApproval)
	decide(bob, "drop1", wire.DecisionApprove, ap.Digest, nil)
	if r := <-res; r.Outcome != askuser.Approved || r.Decision.By != "bob" {
		t.Fatalf("result %+v; want approved by bob", r)
	}
	if a := <-e.audits; len(a.Approvals) != 2 || a.Approvals[0].Counted || !a.Approvals[1].Counted {
		t.Fatalf("audit approvals %+v; want alice's uncounted, then bob's", a.Approvals)
	}
}

// TestApproversOfOneCall: ApprovalOptions name approvers for a call no rule asks about.
func TestApproversOfOneCall(t *testing.T) {
	e := newApproversEnv(t, nil)
	s := askuser.StringSession("ops")
	res := e.approve(askuser.ToolCall{Session: s, ID: "c1", Name: "restart"}, &askuser.ApprovalOptions{Approvers: &askuser.Approvers{Users: []string{"lead"}}})
	ap := e.pending(s, "c1")
	dev := e.dial("ops&user=dev")
	dev.next(wire.EventApproval)
	decide(dev, "c1", wire.DecisionApprove, ap.Digest, nil)
	expectError(t, dev.next(wire.EventError), "not_approver", "c1")
	lead := e.dial("ops&user=lead")
	lead.next(wire.EventApproval)
	decide(lead, "c1", wire.DecisionApprove, ap.Digest, nil)
	if r := <-res; r.Outcome != askuser.Approved || r.Decision.By != "lead" {
		t.Fatalf("result %+v", r)
	}
}
