package cluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/cluster/natstest"
	"github.com/askuser-go/askuser/wire"
	"github.com/nats-io/nats.go"
)

// A replica as a process of its own: the test binary run again with these variables
// set runs one agent call on a replica and reports on its standard output, so that the
// test can kill it with SIGKILL while its question waits.
const (
	envNATS    = "ASKUSER_CLUSTER_TEST_NATS"
	envSession = "ASKUSER_CLUSTER_TEST_SESSION"
	envCall    = "ASKUSER_CLUSTER_TEST_CALL"
	envArgs    = "ASKUSER_CLUSTER_TEST_ARGS"
	// envTool, when set, makes the call a host tool call of that name through
	// Dispatcher.Approve (under branchPolicy) instead of ask_user_questions.
	envTool = "ASKUSER_CLUSTER_TEST_TOOL"
	// envQuorum, when set with envTool, names the users two of whom must approve.
	envQuorum = "ASKUSER_CLUSTER_TEST_QUORUM"
)

func TestMain(m *testing.M) {
	natstest.RunIfNode() // a NATS node of crash_test.go
	if url := os.Getenv(envNATS); url != "" {
		os.Exit(replicaProcess(url))
	}
	os.Exit(m.Run())
}

// replicaProcess is the child: it dispatches one call and prints "waiting" once its
// question is pending in the bucket, then "result <outcome> <content>" when it returns.
func replicaProcess(url string) int {
	nc, err := nats.Connect(url)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	st, err := cluster.NewStore(ctx, nc, nil)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	devices := askusertest.NewTransport()
	tr, err := cluster.NewTransport(st, devices)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	policy := branchPolicy()
	if q := os.Getenv(envQuorum); q != "" {
		policy.Ask[0].Approvers = &askuser.Approvers{Users: strings.Split(q, ","), Quorum: 2}
	}
	d := askuser.New(tr, &askuser.Options{Store: st, Policy: policy})
	devices.Bind(tr)
	session := askuser.StringSession(os.Getenv(envSession))
	id := os.Getenv(envCall)
	go func() {
		for !(len(d.Pending(session)) > 0) {
			time.Sleep(5 * time.Millisecond)
		}
		fmt.Println("waiting")
	}()
	if tool := os.Getenv(envTool); tool != "" {
		r := d.Approve(context.Background(), askuser.ToolCall{Session: session, ID: id, Name: tool, Arguments: json.RawMessage(os.Getenv(envArgs))}, nil)
		fmt.Println("result", r.Outcome, string(r.Arguments))
		return 0
	}
	res := d.Dispatch(context.Background(), askuser.ToolCall{Session: session, ID: id, Name: askuser.ToolName, Arguments: json.RawMessage(os.Getenv(envArgs))})
	fmt.Println("result", res.Outcome, res.Content)
	return 0
}

// child is a replica process.
type child struct {
	cmd   *exec.Cmd
	lines chan string
}

func startChild(t *testing.T, url, session, id, args string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envNATS+"="+url, envSession+"="+session, envCall+"="+id, envArgs+"="+args), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, lines: make(chan string, 16)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return c
}

// line returns the child's next line that starts with prefix.
func (c *child) line(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(failsafe)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatalf("the replica process ended before saying %q", prefix)
			}
			if strings.HasPrefix(l, "error") {
				t.Fatalf("the replica process: %s", l)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-timeout:
			t.Fatalf("the replica process never said %q", prefix)
		}
	}
}

func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
}

// Guarantee 4: a replica killed with SIGKILL while its question waits. The question
// stays visible and answerable from the other replicas; the host's run, resumed on
// another replica process with the same tool-call id and arguments, gets the answer
// given meanwhile at once, or, resumed before the answer, waits for the same question.
// Nobody is asked twice. The same id with other arguments is refused.
func TestReplicaKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs replica processes")
	}
	checkLeaks(t)
	n := startNode(t)
	r := newReplica(t, "survivor", n.url(), nil, nil)
	s := askuser.StringSession("killed")
	dev := r.devices.Connect(s)

	t.Run("answered while it was down", func(t *testing.T) {
		a := startChild(t, n.url(), "killed", "toolu_A", deployArgs)
		a.line(t, "waiting")
		if ask := recv(t, dev, wire.EventAsk); ask.RequestID() != "toolu_A" {
			t.Fatal(ask)
		}
		a.kill(t)
		if p := askusertest.Questions(r.d, s); len(p) != 1 || p[0].RequestID != "toolu_A" {
			t.Fatalf("after the kill, pending %+v", p)
		}
		late := r.devices.Connect(s)
		recv(t, late, wire.EventAsk)
		late.Close()
		if err := dev.Send(context.Background(), answerEvent(s, "toolu_A", "Yes", "")); err != nil {
			t.Fatal(err)
		}
		recv(t, dev, wire.EventResolved)
		b := startChild(t, n.url(), "killed", "toolu_A", deployArgs)
		if got := b.line(t, "result"); got != `result answered {"answers":[{"question":"Deploy now?","selectedLabels":["Yes"],"customInput":null}]}` {
			t.Fatalf("the resumed run got %s", got)
		}
	})

	t.Run("resumed before the answer", func(t *testing.T) {
		a := startChild(t, n.url(), "killed", "toolu_B", deployArgs)
		a.line(t, "waiting")
		recv(t, dev, wire.EventAsk)
		a.kill(t)
		b := startChild(t, n.url(), "killed", "toolu_B", deployArgs)
		b.line(t, "waiting")
		if err := dev.Send(context.Background(), answerEvent(s, "toolu_B", "No", "")); err != nil {
			t.Fatal(err)
		}
		if got := b.line(t, "result"); got != `result answered {"answers":[{"question":"Deploy now?","selectedLabels":["No"],"customInput":null}]}` {
			t.Fatalf("the resumed run got %s", got)
		}
	})

	t.Run("same id, other arguments", func(t *testing.T) {
		a := startChild(t, n.url(), "killed", "toolu_C", deployArgs)
		a.line(t, "waiting")
		recv(t, dev, wire.EventAsk)
		a.kill(t)
		b := startChild(t, n.url(), "killed", "toolu_C", otherArgs)
		if got := b.line(t, "result"); !strings.HasPrefix(got, "result invalid ") || !strings.Contains(got, "already asking different questions") {
			t.Fatalf("got %s", got)
		}
		if p := askusertest.Questions(r.d, s); len(p) != 1 || p[0].Questions[0].Question != "Deploy now?" {
			t.Fatalf("the pending question changed: %+v", p)
		}
		r.d.CancelSession(s)
	})

	for _, ev := range drain(dev) {
		if ev.Type == wire.EventAsk {
			t.Fatalf("a question was asked twice: %v", ev)
		}
	}
}

// Guarantee 4, for approvals: a replica killed with SIGKILL while its tool call waits for
// approval. The approval stays pending and is decided on another replica; the host's run,
// resumed on a new replica process with the same tool-call id and arguments, gets the
// decision given meanwhile, with the arguments the person approved (an edit here), and
// is never asked twice. The tool had not run: the host runs it, on resuming.
func TestReplicaKilledWhileApprovalWaits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs replica processes")
	}
	checkLeaks(t)
	n := startNode(t)
	r := newReplica(t, "survivor", n.url(), nil, &askuser.Options{Policy: branchPolicy()})
	s := askuser.StringSession("killed-approval")
	dev := r.devices.Connect(s)
	tool := envTool + "=delete_branch"

	a := startChild(t, n.url(), "killed-approval", "toolu_K", `{"name":"old"}`, tool)
	a.line(t, "waiting")
	if ev := recv(t, dev, wire.EventApproval); ev.RequestID() != "toolu_K" {
		t.Fatal(ev)
	}
	a.kill(t)
	if p := askusertest.Approvals(r.d, s); len(p) != 1 || p[0].RequestID != "toolu_K" {
		t.Fatalf("after the kill, pending %+v", p)
	}
	if err := dev.Send(context.Background(), decision(s, wire.ApprovalResultData{RequestID: "toolu_K", Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"name":"older"}`)})); err != nil {
		t.Fatal(err)
	}
	recv(t, dev, wire.EventApprovalResolved)
	b := startChild(t, n.url(), "killed-approval", "toolu_K", `{"name":"old"}`, tool)
	if got := b.line(t, "result"); got != `result edited {"name":"older"}` {
		t.Fatalf("the resumed run got %s", got)
	}
	for _, ev := range drain(dev) {
		if ev.Type == wire.EventApproval {
			t.Fatalf("asked twice: %v", ev)
		}
	}
}

// A replica killed with SIGKILL between the first and the second approval of a call two
// people must approve: the first approval, kept in the store, still counts; the second,
// given on another replica, ends the approval approved, and the host's run, resumed on a
// new replica process, gets it at once, asked nothing again.
func TestReplicaKilledBetweenApprovals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs replica processes")
	}
	checkLeaks(t)
	n := startNode(t)
	policy := branchPolicy()
	policy.Ask[0].Approvers = &askuser.Approvers{Users: []string{"ann", "bob"}, Quorum: 2}
	r := newReplica(t, "survivor", n.url(), nil, &askuser.Options{Policy: policy})
	s := askuser.StringSession("killed-quorum")
	ann, bob := r.devices.ConnectAs(s, "ann"), r.devices.ConnectAs(s, "bob")
	env := []string{envTool + "=delete_branch", envQuorum + "=ann,bob"}

	a := startChild(t, n.url(), "killed-quorum", "toolu_Q", `{"name":"old"}`, env...)
	a.line(t, "waiting")
	var ap wire.ApprovalData
	if err := json.Unmarshal(recv(t, ann, wire.EventApproval).Data, &ap); err != nil || ap.Approvers == nil || ap.Approvers.Quorum != 2 {
		t.Fatalf("approval %+v, %v; want a quorum of 2", ap, err)
	}
	recv(t, bob, wire.EventApproval)
	if err := ann.Send(context.Background(), decision(s, wire.ApprovalResultData{RequestID: "toolu_Q", Decision: wire.DecisionApprove, Digest: ap.Digest})); err != nil {
		t.Fatal(err)
	}
	recv(t, bob, wire.EventApprovalProgress)
	a.kill(t)

	if err := bob.Send(context.Background(), decision(s, wire.ApprovalResultData{RequestID: "toolu_Q", Decision: wire.DecisionApprove, Digest: ap.Digest})); err != nil {
		t.Fatalf("bob's approval after the kill: %v", err)
	}
	var res wire.ApprovalResolvedData
	if err := json.Unmarshal(recv(t, ann, wire.EventApprovalResolved).Data, &res); err != nil || res.Outcome != wire.Approved || res.By != "bob" {
		t.Fatalf("resolution %+v, %v; want approved by bob", res, err)
	}
	b := startChild(t, n.url(), "killed-quorum", "toolu_Q", `{"name":"old"}`, env...)
	if got := b.line(t, "result"); got != `result approved {"name":"old"}` {
		t.Fatalf("the resumed run got %s", got)
	}
	for _, ev := range drain(bob) {
		if ev.Type == wire.EventApproval {
			t.Fatalf("asked twice: %v", ev)
		}
	}
}
