package wshub

import (
	"fmt"
	"testing"
	"time"

	"github.com/askuser-go/askuser/wire"
)

// TestDecidedRing: the hub keeps the last MaxDecided decided approvals, newest first,
// and leaves out those older than DecidedFor.
func TestDecidedRing(t *testing.T) {
	h := &Hub{}
	now := time.Now()
	for i := range MaxDecided + 5 {
		at := now.Add(time.Duration(i-(MaxDecided+5)) * time.Second)
		h.decideLocked(&requestInfo{entry: wire.InboxEntry{RequestID: fmt.Sprint(i)}}, requestFields{Outcome: "approved", At: at})
	}
	var got []string
	for d := range h.decidedLocked {
		got = append(got, d.entry.RequestID)
	}
	if len(got) != MaxDecided || got[0] != fmt.Sprint(MaxDecided+4) || got[MaxDecided-1] != "5" {
		t.Fatalf("kept %d, from %s to %s; want %d, from %d to 5", len(got), got[0], got[len(got)-1], MaxDecided, MaxDecided+4)
	}

	h = &Hub{}
	h.decideLocked(&requestInfo{entry: wire.InboxEntry{RequestID: "old"}}, requestFields{At: now.Add(-DecidedFor - time.Minute)})
	h.decideLocked(&requestInfo{entry: wire.InboxEntry{RequestID: "new"}}, requestFields{At: now})
	got = got[:0]
	for d := range h.decidedLocked {
		got = append(got, d.entry.RequestID)
	}
	if fmt.Sprint(got) != "[new]" {
		t.Fatalf("decided %v; want the new one alone", got)
	}
}

// TestApprovalOutcomeNames: the hub names an approval's outcome as
// tool_approval_resolved does, whether it reads the event's value or its data.
func TestApprovalOutcomeNames(t *testing.T) {
	for _, o := range []wire.Outcome{wire.Approved, wire.Edited, wire.Denied, wire.TimedOut, wire.Cancelled, wire.Shutdown, wire.Undelivered, wire.Disconnected} {
		ev, err := wire.NewEvent(wire.EventApprovalResolved, wire.StringSession("s"), wire.ApprovalResolvedData{RequestID: "a", Outcome: o, By: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := ev.Encode()
		parsed, err := wire.ParseEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		fromValue, fromData := requestFieldsOf(ev), requestFieldsOf(parsed)
		if fromValue.Outcome != fromData.Outcome || fromValue.By != "bob" || fromData.By != "bob" || fromValue.Outcome == "" {
			t.Errorf("%v: from the value %+v, from the data %+v; want the same outcome", o, fromValue, fromData)
		}
	}
}
