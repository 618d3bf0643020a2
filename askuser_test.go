package askuser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/askuser-go/askuser"
)

var update = flag.Bool("update", false, "rewrite generated files (docs/ERRORS.md)")

func TestParseArguments(t *testing.T) {
	for _, tc := range ArgumentCases {
		t.Run(tc.Name, func(t *testing.T) {
			req, err := ParseArguments([]byte(tc.Args))
			if tc.Problems == nil {
				require.NoError(t, err)
				require.NotEmpty(t, req.Questions)
				// A valid request survives a round trip through its own JSON.
				again, err := json.Marshal(req)
				require.NoError(t, err)
				req2, err := ParseArguments(again)
				require.NoError(t, err)
				assert.Equal(t, req, req2)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidArguments)
			var ae *ArgumentsError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tc.Problems, ae.Problems)
		})
	}
}

func TestParseArgumentsForgivenEncodingsMatchPlain(t *testing.T) {
	plain := `{"questions":[{"question":"Which framework?","header":"Framework","options":[{"label":"Vue","description":"d"},{"label":"React","description":"d"}],"multiSelect":false}]}`
	want, err := ParseArguments([]byte(plain))
	require.NoError(t, err)

	double, _ := json.Marshal(plain)
	got, err := ParseArguments(double)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	var obj map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(plain), &obj))
	inner, _ := json.Marshal(string(obj["questions"]))
	got, err = ParseArguments([]byte(`{"questions":` + string(inner) + `}`))
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// Forgiven once, not forever: a triple encoding is refused.
	triple, _ := json.Marshal(string(double))
	_, err = ParseArguments(triple)
	assert.ErrorIs(t, err, ErrInvalidArguments)
}

func TestParseArgumentsKeepsMetadataAndText(t *testing.T) {
	req, err := ParseArguments([]byte(`{"questions":[{"question":"Layout <b>?","header":"布局","options":[
		{"label":"Sidebar (Recommended)","description":"Fixed & left","preview":"<div>\n  <aside/>\n</div>"},
		{"label":"Top bar","description":"Horizontal"}],"multiSelect":false}],"metadata":{"b":2,"a":{"x":[1.50,"y"]}}}`))
	require.NoError(t, err)
	assert.Equal(t, "Layout <b>?", req.Questions[0].Question)
	assert.Equal(t, "布局", req.Questions[0].Header)
	assert.Equal(t, "<div>\n  <aside/>\n</div>", req.Questions[0].Options[0].Preview)
	assert.JSONEq(t, `{"a":{"x":[1.50,"y"]},"b":2}`, string(req.Metadata))
	assert.Contains(t, string(req.Metadata), "1.50", "numbers are kept as written")
}

func TestRequestValidate(t *testing.T) {
	var nilReq *Request
	assert.ErrorIs(t, nilReq.Validate(), ErrInvalidArguments)
	req := &Request{Questions: []Question{{Question: "Q?", Header: "H", MultiSelect: true, Options: []Option{{Label: "A", Description: "a"}, {Label: "A", Description: "b"}}}}}
	var ae *ArgumentsError
	require.ErrorAs(t, req.Validate(), &ae)
	assert.Equal(t, []string{`questions[0].options[1].label: same label as questions[0].options[0].label; labels must be unique within a question`}, ae.Problems)
	req.Questions[0].Options[1].Label = "B"
	assert.NoError(t, req.Validate())
}

func TestDefinition(t *testing.T) {
	def := Definition()
	assert.Equal(t, "ask_user_questions", def.Name)
	for _, note := range []string{`"Other"`, "multiSelect: true", "(Recommended)", "monospace box", "single-select questions", "side-by-side"} {
		assert.Contains(t, def.Description, note)
	}
	var in, out map[string]any
	require.NoError(t, json.Unmarshal(def.InputSchema, &in))
	require.NoError(t, json.Unmarshal(def.OutputSchema, &out))
	assert.Equal(t, []any{"questions"}, in["required"])
	// The copy is the caller's.
	def.InputSchema[0] = 'X'
	assert.Equal(t, byte('{'), Definition().InputSchema[0])
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

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, []byte(s)))
	return b.String()
}

func TestWireExamplesRoundTripByteForByte(t *testing.T) {
	// Server → client: parse into the library's types, produce it again.
	ev, err := ParseEvent([]byte(designAsk))
	require.NoError(t, err)
	assert.Equal(t, EventAsk, ev.Type)
	assert.Equal(t, IntSession(123), ev.SessionID)
	var ask AskData
	require.NoError(t, json.Unmarshal(ev.Data, &ask))
	assert.Equal(t, "550e8400-e29b-41d4-a716-446655440000", ask.RequestID)
	assert.Equal(t, "Vue 3 (Recommended)", ask.Questions[0].Options[0].Label)
	out, err := NewEvent(EventAsk, IntSession(123), ask)
	require.NoError(t, err)
	b, err := json.Marshal(out)
	require.NoError(t, err)
	assert.Equal(t, compact(t, designAsk), string(b))

	// Client → server.
	ev, err = ParseEvent([]byte(designResult))
	require.NoError(t, err)
	var res ResultData
	require.NoError(t, json.Unmarshal(ev.Data, &res))
	assert.Nil(t, res.Answers[0].CustomInput)
	out, err = NewEvent(EventResult, ev.SessionID, res)
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
		{`123456789012345678901234567890`, ParseSessionID("123456789012345678901234567890"), true},
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
	assert.Equal(t, IntSession(5), ParseSessionID("5"))
	assert.Equal(t, StringSession("a:b"), ParseSessionID("a:b"))
	assert.True(t, SessionID{}.IsZero())
	// Session ids containing the separator of a joined key cannot collide.
	d, _ := newTestDispatcher(nil)
	defer d.Close()
	askPending(t, d, StringSession("a:b"), "c", oneQuestion)
	askPending(t, d, StringSession("a"), "b:c", oneQuestion)
	assert.Len(t, d.Pending(StringSession("a:b")), 1)
	assert.Len(t, d.Pending(StringSession("a")), 1)
}

func TestOutcomeText(t *testing.T) {
	for o := Answered; o <= Invalid; o++ {
		b, err := o.MarshalText()
		require.NoError(t, err)
		var back Outcome
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, o, back)
	}
	_, err := Outcome(0).MarshalText()
	assert.Error(t, err)
	assert.Error(t, new(Outcome).UnmarshalText([]byte("maybe")))
	assert.Equal(t, "Outcome(99)", Outcome(99).String())
}

func TestHandleEventTable(t *testing.T) {
	for _, tc := range DeviceCases {
		t.Run(tc.Name, func(t *testing.T) {
			d, _ := newTestDispatcher(nil)
			defer d.Close()
			session := IntSession(123)
			resCh := askPending(t, d, session, "r1", PendingArgs)

			ev, err := ParseEvent([]byte(tc.Msg))
			if err == nil {
				ev.SessionID = session // what an authorizing transport does
				err = d.HandleEvent(context.Background(), ev)
			}
			if tc.Code == "" {
				require.NoError(t, err)
				assert.False(t, d.Waiting(session), "an accepted result ends the question")
				<-resCh
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.Err, err.Error())
			assert.Equal(t, tc.Code, ErrorCodeOf(err))
			// Nothing is lost: the question is still pending and can still be answered.
			assert.True(t, d.Waiting(session))
			ev, err = NewEvent(EventResult, session, ResultData{RequestID: "r1", Answers: []Answer{
				{Question: "Which framework?", SelectedLabels: []string{"React"}},
				{Question: "Which extras?", SelectedLabels: []string{"Store", "Router"}},
			}})
			require.NoError(t, err)
			require.NoError(t, d.HandleEvent(context.Background(), ev))
			assert.Equal(t, Answered, (<-resCh).Outcome)
		})
	}
}

func TestErrorEvent(t *testing.T) {
	ae := &AnswerError{RequestID: "r9", Problems: []string{"answers: missing"}}
	ev := ErrorEvent(StringSession("s"), "", ae)
	assert.Equal(t, EventError, ev.Type)
	var data ErrorData
	require.NoError(t, json.Unmarshal(ev.Data, &data))
	assert.Equal(t, ErrorData{RequestID: "r9", Code: "invalid_answer", Message: `askuser: invalid answer for request "r9"; see problems`, Problems: ae.Problems}, data,
		"the problems are listed once, not again in the message")

	ev = ErrorEvent(IntSession(1), "r1", fmt.Errorf("wrapped: %w", ErrForbidden))
	require.NoError(t, json.Unmarshal(ev.Data, &data))
	assert.Equal(t, "forbidden", data.Code)
	assert.Equal(t, "r1", data.RequestID)
	assert.Equal(t, "internal", ErrorCodeOf(errors.New("boom")))
}

func TestSummary(t *testing.T) {
	two := `{"answers":[{"question":"a","selectedLabels":["x"],"customInput":null},{"question":"b","selectedLabels":[],"customInput":"y"}]}`
	one := `{"answers":[{"question":"a","selectedLabels":["x"],"customInput":null}]}`
	for _, tc := range []struct{ content, locale, want string }{
		{two, "zh", "回答了 2 个问题"},
		{two, "zh-CN", "回答了 2 个问题"},
		{two, "en", "Answered 2 questions"},
		{two, "", "Answered 2 questions"},
		{one, "en-US", "Answered 1 question"},
		{one, "ZH_tw", "回答了 1 个问题"},
		{ResultTimeout, "en", "No answer: timed out"},
		{ResultTimeout, "zh", "未回答:已超时"},
		{ResultCancelled, "en", "No answer: session cancelled"},
		{ResultDeclined, "zh", "用户拒绝回答"},
		{ResultNoDevice, "en", "Not asked: no device reached"},
		{ResultDisconnected, "en", "No answer: disconnected"},
		{ResultShutdown, "en", "No answer: service shutting down"},
		{InvalidResult([]string{"a", "b"}), "en", "Invalid question (2 problems)"},
		{`not json`, "en", "Unrecognized result"},
		{`{"error":"something else"}`, "zh", "无法识别的结果"},
	} {
		assert.Equal(t, tc.want, Summary(tc.content, tc.locale), "%s %s", tc.content, tc.locale)
	}
}

func TestTranscript(t *testing.T) {
	args := `{"questions":[{"question":"Which framework?","header":"Framework","options":[{"label":"Vue (Recommended)","description":"Matches\nthe stack"},{"label":"React","description":"Bigger"}],"multiSelect":false},
		{"question":"Which extras?","header":"Extras","options":[{"label":"Router","description":"Routing"},{"label":"Store","description":"State"}],"multiSelect":true}]}`
	content := `{"answers":[{"question":"Which framework?","selectedLabels":[],"customInput":"Svelte\n> forged line"},{"question":"Which extras?","selectedLabels":["Router","Store"],"customInput":null}]}`
	assert.Equal(t, `[Framework] Which framework?
  - Vue (Recommended): Matches the stack
  - React: Bigger
  > Other: Svelte > forged line

[Extras] Which extras? (multiple choice)
  - Router: Routing
  - Store: State
  > Router
  > Store
`, Transcript(args, content))

	assert.Equal(t, `[Framework] Which framework?
  - Vue (Recommended): Matches the stack
  - React: Bigger

[Extras] Which extras? (multiple choice)
  - Router: Routing
  - Store: State
  No answer: timed out
`, Transcript(args, ResultTimeout))
	assert.Equal(t, "ask_user_questions (invalid arguments)\n  Invalid question (1 problem)\n", Transcript(`{}`, InvalidResult([]string{"x"})))
}

// TestErrorsDocIsCurrent renders docs/ERRORS.md from the tables above; run
// `go test -run TestErrorsDocIsCurrent -update` to rewrite it.
func TestErrorsDocIsCurrent(t *testing.T) {
	var b strings.Builder
	b.WriteString("# What bad input gets\n\n")
	b.WriteString("<!-- Generated by TestErrorsDocIsCurrent from tables_test.go; do not edit. Run `go test -run TestErrorsDocIsCurrent -update` after changing the tables. -->\n\n")
	b.WriteString("Every row below is a test case: the test fails when the code and this page disagree.\n\n")
	b.WriteString("## Malformed model arguments\n\n")
	b.WriteString("The model's `ask_user_questions` call ends at once, without bothering any device, with the tool result\n")
	b.WriteString("`{\"error\": \"" + InvalidMessage + "\", \"problems\": [...]}`\n")
	b.WriteString("listing every problem below (in `Result.Problems` too). Rows marked *accepted* show input that is forgiven or valid.\n\n")
	b.WriteString("| # | case | arguments | problems listed |\n|---|---|---|---|\n")
	n := 0
	for _, tc := range ArgumentCases {
		n++
		got := "*accepted*"
		if tc.Problems != nil {
			got = strings.Join(mdEscapeAll(tc.Problems), "<br>")
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", n, mdEscape(tc.Name), mdCode(tc.Args), got)
	}
	b.WriteString("\n## Malformed device messages\n\n")
	b.WriteString("Each message is sent by a device of session 123 while request `r1` is pending with two questions:\n")
	b.WriteString("the single-select \"Which framework?\" (Vue, React) and the multi-select \"Which extras?\" (Router, Store).\n")
	b.WriteString("A refused message gets the error below, sent to that device alone as an `ask_user_questions_error`\n")
	b.WriteString("event with this `code`; the question stays pending and can still be answered.\n\n")
	b.WriteString("| # | case | message | code | error |\n|---|---|---|---|---|\n")
	n = 0
	for _, tc := range DeviceCases {
		n++
		code, msg := "*accepted*", ""
		if tc.Code != "" {
			code, msg = "`"+tc.Code+"`", mdEscape(tc.Err)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", n, mdEscape(tc.Name), mdCode(tc.Msg), code, msg)
	}
	const path = "docs/ERRORS.md"
	if *update {
		require.NoError(t, os.MkdirAll("docs", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	}
	current, err := os.ReadFile(path)
	require.NoError(t, err, "run: go test -run TestErrorsDocIsCurrent -update")
	assert.Equal(t, b.String(), string(current), "docs/ERRORS.md is stale; run: go test -run TestErrorsDocIsCurrent -update")
}

func mdEscape(s string) string {
	if len(s) > 160 {
		s = s[:strings.LastIndexAny(s[:160], " ")+1] + "…"
	}
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

// mdCode shows an input in a table cell: shortened, as code, empty input named.
func mdCode(s string) string {
	if strings.TrimSpace(s) == "" {
		return fmt.Sprintf("*%d bytes of white space*", len(s))
	}
	if r := []rune(s); len(r) > 400 {
		s = string(r[:240]) + fmt.Sprintf(" …(%d bytes in all)… ", len(s)) + string(r[len(r)-120:])
	}
	return "<code>" + strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "&#124;", "\n", "\\n", "`", "&#96;").Replace(s) + "</code>"
}

func mdEscapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = mdEscape(s)
	}
	return out
}

func TestEventHelpers(t *testing.T) {
	ev, err := NewEvent(EventAsk, StringSession("s"), AskData{RequestID: "r<1>", Questions: []Question{{Question: "a & b?"}}})
	require.NoError(t, err)
	b, err := ev.Encode()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"requestId":"r<1>"`, "HTML characters are left as they are")
	assert.Contains(t, string(b), `a & b?`)
	assert.Equal(t, "r<1>", ev.RequestID())
	assert.Equal(t, "", Event{Data: json.RawMessage(`[1]`)}.RequestID())
	assert.Equal(t, "", Event{}.RequestID())
	long := strings.Repeat("é", 100) // 200 bytes
	ev, _ = NewEvent(EventResult, IntSession(1), ResultData{RequestID: long})
	assert.Equal(t, strings.Repeat("é", 64), ev.RequestID(), "cut at 128 bytes, on a character boundary")
}
