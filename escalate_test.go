package askuser_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// escalating asks ann, then the lead after ten minutes, then oncall after twenty.
func escalating() *Policy {
	return &Policy{Ask: []Rule{{Tool: "drop", Approvers: &Approvers{Users: []string{"ann"}, Escalate: []store.Escalation{
		{After: 10 * time.Minute, Users: []string{"lead"}},
		{After: 20 * time.Minute, Groups: []string{"oncall"}},
	}}}}}
}

// TestEscalationSteps: on the bubble's clock, a step fires at its After since the
// approval was asked, not before, telling the devices and the Notifier once; a step due
// after the timeout never fires, and the timeout ends the call.
func TestEscalationSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l recordingNotifier
		d, mt := newTestDispatcher(&Options{Policy: escalating(), Timeout: 15 * time.Minute, Notifier: &l, NotifyAfter: time.Hour})
		defer d.Close()
		s := IntSession(1)
		dev := mt.ConnectAs(s, "ann")
		res := approveAsync(context.Background(), d, s, "e1", "drop", `{}`)
		recv[wire.ApprovalData](t, dev, wire.EventApproval)
		time.Sleep(10*time.Minute - time.Second)
		synctest.Wait()
		notices, _ := l.got()
		assert.Empty(t, notices, "a second before the step")
		time.Sleep(time.Second)
		synctest.Wait()
		_, p := recv[wire.ApprovalProgressData](t, dev, wire.EventApprovalProgress)
		assert.Equal(t, []string{"ann", "lead"}, p.Names)
		assert.Equal(t, TimedOut, (<-res).Outcome)
		synctest.Wait()
		notices, _ = l.got()
		require.Len(t, notices, 1, "the second step is due after the timeout")
		assert.Equal(t, []string{"lead"}, notices[0].To)
	})
}

// TestEscalationNotAfterDecision: an approval decided before its steps fires none of
// them, ever.
func TestEscalationNotAfterDecision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l recordingNotifier
		d, mt := newTestDispatcher(&Options{Policy: escalating(), Timeout: time.Hour, Notifier: &l, NotifyAfter: 2 * time.Hour})
		defer d.Close()
		s := IntSession(2)
		dev := mt.ConnectAs(s, "ann")
		res := approveAsync(context.Background(), d, s, "e2", "drop", `{}`)
		_, a := recv[wire.ApprovalData](t, dev, wire.EventApproval)
		data, err := json.Marshal(wire.ApprovalResultData{RequestID: "e2", Decision: wire.DecisionApprove, Digest: a.Digest})
		require.NoError(t, err)
		require.NoError(t, dev.Send(context.Background(), wire.Event{Type: wire.EventApprovalResult, Data: data}))
		assert.Equal(t, Approved, (<-res).Outcome)
		time.Sleep(time.Hour)
		synctest.Wait()
		notices, _ := l.got()
		assert.Empty(t, notices)
	})
}
