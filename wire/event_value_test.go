package wire

import (
	"encoding/json"
	"testing"
)

// TestEventValue: an event's Value is the data NewEvent encoded, until its Type or Data
// is changed; a parsed event has none.
func TestEventValue(t *testing.T) {
	data := &ApprovalData{RequestID: "a1", Tool: "restart"}
	ev, err := NewEvent(EventApproval, StringSession("s"), data)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Value() != any(data) {
		t.Fatalf("Value = %v; want the data given", ev.Value())
	}
	copied := ev
	if copied.Value() != any(data) {
		t.Fatal("a copy of the event lost its Value")
	}
	redacted := ev
	redacted.Data = json.RawMessage(`{"requestId":"a1","tool":"other"}`)
	retyped := ev
	retyped.Type = EventApprovalProgress
	b, _ := ev.Encode()
	parsed, err := ParseEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]Event{"Data changed": redacted, "Type changed": retyped, "parsed": parsed, "built by hand": {Type: EventApproval, Data: ev.Data}} {
		if e.Value() != nil {
			t.Errorf("%s: Value = %v; want nil", name, e.Value())
		}
	}
}
