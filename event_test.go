package askuser_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	. "github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, []byte(s)))
	return b.String()
}

// The two examples of §3.4, as they stand in the design.
const designAsk = `{
  "type": "ask_user_questions",
  "sessionId": 123,
  "data": {
    "requestId": "550e8400-e29b-41d4-a716-446655440000",
    "questions": [
      {
        "question": "Which framework should we use for the new module?",
        "header": "Framework",
        "options": [
          { "label": "Vue 3 (Recommended)", "description": "Composition API + TypeScript, matches existing stack" },
          { "label": "React", "description": "Larger ecosystem but different from current codebase" }
        ],
        "multiSelect": false
      }
    ]
  }
}`

const designResult = `{
  "type": "ask_user_questions_result",
  "sessionId": 123,
  "data": {
    "requestId": "550e8400-e29b-41d4-a716-446655440000",
    "answers": [
      {
        "question": "Which framework should we use for the new module?",
        "selectedLabels": ["Vue 3 (Recommended)"],
        "customInput": null
      }
    ]
  }
}`

func TestWireExamplesRoundTripByteForByte(t *testing.T) {
	// Server → client: parse into the library's types, produce it again.
	ev, err := wire.ParseEvent([]byte(designAsk))
	require.NoError(t, err)
	assert.Equal(t, wire.EventAsk, ev.Type)
	assert.Equal(t, IntSession(123), ev.SessionID)
	var ask wire.AskData
	require.NoError(t, json.Unmarshal(ev.Data, &ask))
	assert.Equal(t, "550e8400-e29b-41d4-a716-446655440000", ask.RequestID)
	assert.Equal(t, "Vue 3 (Recommended)", ask.Questions[0].Options[0].Label)
	out, err := wire.NewEvent(wire.EventAsk, IntSession(123), ask)
	require.NoError(t, err)
	b, err := json.Marshal(out)
	require.NoError(t, err)
	assert.Equal(t, compact(t, designAsk), string(b))

	// Client → server.
	ev, err = wire.ParseEvent([]byte(designResult))
	require.NoError(t, err)
	var res wire.ResultData
	require.NoError(t, json.Unmarshal(ev.Data, &res))
	assert.Nil(t, res.Answers[0].CustomInput)
	out, err = wire.NewEvent(wire.EventResult, ev.SessionID, res)
	require.NoError(t, err)
	b, err = json.Marshal(out)
	require.NoError(t, err)
	assert.Equal(t, compact(t, designResult), string(b))

	// The answers of the example are a valid tool result.
	content, err := Marshal(Response{Answers: res.Answers})
	require.NoError(t, err)
	assert.NoError(t, ValidateOutput(content))
}

func TestSessionID(t *testing.T) {
	for _, tc := range []struct {
		json    string
		want    SessionID
		numeric bool
	}{
		{`123`, IntSession(123), true},
		{`-7`, IntSession(-7), true},
		{`"123"`, StringSession("123"), false},
		{`"tenant:42:chat"`, StringSession("tenant:42:chat"), false},
		{`"会话"`, StringSession("会话"), false},
		{`123456789012345678901234567890`, wire.ParseSessionID("123456789012345678901234567890"), true},
	} {
		var s SessionID
		require.NoError(t, json.Unmarshal([]byte(tc.json), &s), tc.json)
		assert.Equal(t, tc.want, s)
		assert.Equal(t, tc.numeric, s.IsNumeric())
		back, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, tc.json, string(back))
	}
	for _, bad := range []string{`1.5`, `1e3`, `01`, `true`, `null`, `{}`, `[]`, `-`} {
		var s SessionID
		assert.Error(t, json.Unmarshal([]byte(bad), &s), bad)
	}
	assert.NotEqual(t, IntSession(123), StringSession("123"), "a number and a string are different sessions")
	assert.Equal(t, IntSession(5), wire.ParseSessionID("5"))
	assert.Equal(t, StringSession("a:b"), wire.ParseSessionID("a:b"))
	assert.True(t, SessionID{}.IsZero())
	// Session ids containing the separator of a joined key cannot collide.
	d, _ := newTestDispatcher(nil)
	defer d.Close()
	askPending(t, d, StringSession("a:b"), "c", oneQuestion)
	askPending(t, d, StringSession("a"), "b:c", oneQuestion)
	assert.Len(t, askusertest.Questions(d, StringSession("a:b")), 1)
	assert.Len(t, askusertest.Questions(d, StringSession("a")), 1)
}

// Numeric session ids are integers written without a second spelling; those beyond
// int64 are kept as they are.
func TestSessionIDEdges(t *testing.T) {
	var s SessionID
	assert.ErrorIs(t, json.Unmarshal([]byte(`-0`), &s), wire.ErrMalformedEvent)
	assert.False(t, wire.ParseSessionID("-0").IsNumeric(), "-0 from a URL is a string id")
	big := "123456789012345678901234567890"
	require.NoError(t, json.Unmarshal([]byte(big), &s))
	assert.True(t, s.IsNumeric())
	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.Equal(t, big, string(b))
	assert.Equal(t, wire.ParseSessionID(big), s)
	snowflake := wire.ParseSessionID("1234567890123456789")
	assert.Equal(t, IntSession(1234567890123456789), snowflake)
}

func TestErrorEvent(t *testing.T) {
	ae := &wire.AnswerError{RequestID: "r9", Problems: []string{"answers: missing"}}
	ev := wire.ErrorEvent(StringSession("s"), "", ae)
	assert.Equal(t, wire.EventError, ev.Type)
	var data wire.ErrorData
	require.NoError(t, json.Unmarshal(ev.Data, &data))
	assert.Equal(t, wire.ErrorData{RequestID: "r9", Code: "invalid_answer", Message: `askuser: invalid answer for request "r9"; see problems`, Problems: ae.Problems}, data,
		"the problems are listed once, not again in the message")

	ev = wire.ErrorEvent(IntSession(1), "r1", fmt.Errorf("wrapped: %w", wire.ErrForbidden))
	require.NoError(t, json.Unmarshal(ev.Data, &data))
	assert.Equal(t, "forbidden", data.Code)
	assert.Equal(t, "r1", data.RequestID)
	assert.Equal(t, "internal", ErrorCodeOf(errors.New("boom")))
}

func TestEventHelpers(t *testing.T) {
	ev, err := wire.NewEvent(wire.EventAsk, StringSession("s"), wire.AskData{RequestID: "r<1>", Questions: []Question{{Question: "a & b?"}}})
	require.NoError(t, err)
	b, err := ev.Encode()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"requestId":"r<1>"`, "HTML characters are left as they are")
	assert.Contains(t, string(b), `a & b?`)
	assert.Equal(t, "r<1>", ev.RequestID())
	assert.Equal(t, "", wire.Event{Data: json.RawMessage(`[1]`)}.RequestID())
	assert.Equal(t, "", wire.Event{}.RequestID())
	long := strings.Repeat("é", 100) // 200 bytes
	ev, _ = wire.NewEvent(wire.EventResult, IntSession(1), wire.ResultData{RequestID: long})
	assert.Equal(t, long, ev.RequestID(), "whole: transports key asks by it")
	// Not first, or escaped: read by decoding.
	assert.Equal(t, `a"b`, wire.Event{Data: json.RawMessage(` {"answers":[{"requestId":"no"}], "requestId" : "a\"b"}`)}.RequestID())
	assert.Equal(t, "", wire.Event{Data: json.RawMessage(`{"requestId":7}`)}.RequestID())
	assert.Equal(t, "", wire.Event{Data: json.RawMessage(`{"requestId":"x`)}.RequestID())
	// The reply to a device cuts it at 128 bytes, on a character boundary.
	var data wire.ErrorData
	require.NoError(t, json.Unmarshal(wire.ErrorEvent(IntSession(1), ev.RequestID(), wire.ErrNotPending).Data, &data))
	assert.Equal(t, strings.Repeat("é", 64), data.RequestID)
}

// An event NewEvent makes knows its request id without decoding its data, and says the
// same as its data does, whatever the data type and the id.
func TestNewEventRequestIDIsTheData(t *testing.T) {
	for _, id := range []string{"r1", "", "r\xff<&>\u2028", strings.Repeat("é", 100)} {
		for _, v := range []any{
			wire.AskData{RequestID: id}, &wire.AskData{RequestID: id}, wire.ResultData{RequestID: id},
			wire.ResolvedData{RequestID: id, Outcome: Declined}, wire.ErrorData{RequestID: id, Code: "x"},
			wire.ApprovalData{RequestID: id}, &wire.ApprovalData{RequestID: id}, wire.ApprovalResultData{RequestID: id},
			wire.ApprovalResolvedData{RequestID: id, Outcome: Denied}, map[string]string{"requestId": id},
		} {
			ev, err := wire.NewEvent("x", IntSession(1), v)
			require.NoError(t, err)
			assert.Equal(t, wire.Event{Data: ev.Data}.RequestID(), ev.RequestID(), "%T %q", v, id)
		}
	}
	ev, err := wire.NewEvent("x", IntSession(1), (*wire.AskData)(nil))
	require.NoError(t, err)
	assert.Equal(t, "", ev.RequestID())
}

// FuzzEnvelope: an envelope that parses is produced again, in valid UTF-8, with the same
// meaning, and the session id keeps its JSON type.
func FuzzEnvelope(f *testing.F) {
	f.Add([]byte(designAsk))
	f.Add([]byte(designResult))
	f.Add([]byte(`{"type":"x","sessionId":"a:b"}`))
	f.Add([]byte(`{"type":"x","sessionId":-0}`))
	f.Add([]byte(`{"type":"x","sessionId":12345678901234567890123,"data":null}`))
	for _, tc := range DeviceCases {
		if len(tc.Msg) < 4096 {
			f.Add([]byte(tc.Msg))
		}
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		ev, err := wire.ParseEvent(msg)
		if err != nil {
			if !errors.Is(err, wire.ErrMalformedEvent) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		out, err := ev.Encode()
		if err != nil || !utf8.Valid(out) {
			t.Fatalf("encoding: %v\n%q", err, out)
		}
		back, err := wire.ParseEvent(out)
		if err != nil {
			t.Fatalf("produced envelope does not parse: %v\n%s", err, out)
		}
		if back.Type != ev.Type || back.SessionID != ev.SessionID {
			t.Fatalf("envelope changed: %+v -> %+v", ev, back)
		}
		if len(ev.Data) > 0 && !equalRaw(t, ev.Data, back.Data) {
			t.Fatalf("data changed: %s -> %s", ev.Data, back.Data)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func equalJSON(t *testing.T, a, b any) bool {
	return string(mustJSON(t, a)) == string(mustJSON(t, b))
}

func equalRaw(t *testing.T, a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return equalJSON(t, va, vb)
}
