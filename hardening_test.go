package askuser_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
)

// Tests of the contracts an outside review found missing or broken: each would have
// caught its defect.

// Pending hands out copies: a caller that changes them changes nothing that devices are
// shown or answers are checked against.
func TestPendingReturnsCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(11)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		resCh := dispatchAsync(context.Background(), d, session, "c1", `{"questions":[`+Q1+`],"metadata":{"k":"v"}}`)
		synctest.Wait()
		p := d.Pending(session)
		require.Len(t, p, 1)
		p[0].Questions[0].Question = "Delete the database?"
		p[0].Questions[0].Options[0].Label = "Yes"
		p[0].Metadata[2] = 'X'

		_, ask := recv[AskData](t, mt.Connect(session), EventAsk)
		assert.Equal(t, "Which framework?", ask.Questions[0].Question, "a device that joins later is shown what was asked")
		assert.Equal(t, "Vue", ask.Questions[0].Options[0].Label)
		assert.JSONEq(t, `{"k":"v"}`, string(ask.Metadata))
		assert.Equal(t, "Which framework?", d.Pending(session)[0].Questions[0].Question)

		dev := mt.Connect(session)
		recv[AskData](t, dev, EventAsk)
		require.NoError(t, dev.Send(context.Background(), answerEvent(session, "c1", "Vue")), "answers are checked against what was asked")
		res := <-resCh
		assert.Equal(t, "Which framework?", res.Answers[0].Question)
	})
}

// Ask keeps its own copy of a Go-built request.
func TestAskKeepsItsOwnCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(12)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		dev := mt.Connect(session)
		req := &Request{Questions: []Question{{Question: "Deploy now?", Header: "Deploy", Options: []Option{{Label: "Yes", Description: "Ship it"}, {Label: "No", Description: "Wait"}}}}}
		ch := make(chan Result, 1)
		go func() { ch <- d.Ask(context.Background(), session, "c1", req) }()
		recv[AskData](t, dev, EventAsk)
		req.Questions[0].Question = "Delete staging?" // the caller's own value, after the ask
		req.Questions[0].Options[0].Label = "Sure"
		ev, err := NewEvent(EventResult, session, ResultData{RequestID: "c1", Answers: []Answer{{Question: "Deploy now?", SelectedLabels: []string{"Yes"}}}})
		require.NoError(t, err)
		require.NoError(t, dev.Send(context.Background(), ev))
		res := <-ch
		require.Equal(t, Answered, res.Outcome)
		assert.Equal(t, "Deploy now?", res.Answers[0].Question)
	})
}

// The same tool-call id with different questions must not join the first question: the
// model would get an answer to a question it never asked. It ends at once instead, and
// the first question is left as it is.
func TestSameIDDifferentQuestionsIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(13)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		dev := mt.Connect(session)
		deleteStaging := `{"questions":[{"question":"Delete the staging database?","header":"Staging","options":[{"label":"Delete","description":"Drop it"},{"label":"Keep","description":"Leave it"}],"multiSelect":false}]}`
		keepBackups := `{"questions":[{"question":"Keep the nightly backups?","header":"Backups","options":[{"label":"Delete","description":"Drop them"},{"label":"Keep","description":"Leave them"}],"multiSelect":false}]}`
		first := dispatchAsync(context.Background(), d, session, "call_0", deleteStaging)
		recv[AskData](t, dev, EventAsk)

		second := d.Dispatch(context.Background(), ToolCall{Session: session, ID: "call_0", Arguments: json.RawMessage(keepBackups)})
		assert.Equal(t, Invalid, second.Outcome)
		assert.ErrorIs(t, second.Err, ErrInvalidArguments)
		require.Len(t, second.Problems, 1)
		assert.Contains(t, second.Problems[0], `the tool-call id "call_0" is already asking different questions`)
		assert.Contains(t, second.Content, "call_0")
		assert.Len(t, d.Pending(session), 1)
		assert.Equal(t, "Delete the staging database?", d.Pending(session)[0].Questions[0].Question, "the first question is untouched")

		// The same questions under the same id still join.
		third := dispatchAsync(context.Background(), d, session, "call_0", deleteStaging)
		synctest.Wait()
		ev, err := NewEvent(EventResult, session, ResultData{RequestID: "call_0", Answers: []Answer{{Question: "Delete the staging database?", SelectedLabels: []string{"Keep"}}}})
		require.NoError(t, err)
		require.NoError(t, dev.Send(context.Background(), ev))
		r1, r3 := <-first, <-third
		assert.Equal(t, Answered, r1.Outcome)
		assert.Equal(t, r1.Content, r3.Content)
	})
}

// Whatever can be asked can be answered: a Go-built request or an id that a device
// could not echo is refused at once, and no device is bothered.
func TestUnanswerableRequestsAreRefused(t *testing.T) {
	good := func() *Request {
		return &Request{Questions: []Question{{Question: "Deploy now?", Header: "Deploy", Options: []Option{{Label: "Yes", Description: "Ship it"}, {Label: "No", Description: "Wait"}}}}}
	}
	for _, tc := range []struct {
		name    string
		req     func() *Request
		id      string
		newID   func() string
		problem string
	}{
		{name: "invalid UTF-8 in a question", req: func() *Request { r := good(); r.Questions[0].Question = "Deploy\xff now?"; return r }, problem: "questions[0].question: is not valid UTF-8"},
		{name: "invalid UTF-8 in a label", req: func() *Request { r := good(); r.Questions[0].Options[1].Label = "N\xc3o"; return r }, problem: "questions[0].options[1].label: is not valid UTF-8"},
		{name: "invalid UTF-8 in a preview", req: func() *Request { r := good(); r.Questions[0].Options[0].Preview = "\xed\xa0\x80"; return r }, problem: "questions[0].options[0].preview: is not valid UTF-8"},
		{name: "invalid metadata", req: func() *Request { r := good(); r.Metadata = json.RawMessage(`{"a":`); return r }, problem: "metadata: not valid JSON: unexpected end of input; expected a value"},
		{name: "metadata not an object", req: func() *Request { r := good(); r.Metadata = json.RawMessage(`[1]`); return r }, problem: "metadata: must be an object, not an array"},
		{name: "an id of invalid UTF-8", req: good, id: "call\xff", problem: "id: the tool-call id is not valid UTF-8, so no device could answer it; use another id"},
		{name: "an id too long", req: good, id: strings.Repeat("x", MaxRequestIDBytes+1), problem: "id: the tool-call id of 257 bytes is too long; at most 256 bytes are accepted"},
		{name: "an empty id made", req: good, newID: func() string { return "" }, problem: "id: Options.NewRequestID returned an empty id, which no device could answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := IntSession(14)
			d, mt := newTestDispatcher(&Options{NewRequestID: tc.newID})
			defer d.Close()
			dev := mt.Connect(session)
			res := d.Ask(context.Background(), session, tc.id, tc.req())
			assert.Equal(t, Invalid, res.Outcome)
			assert.Equal(t, []string{tc.problem}, res.Problems)
			assert.JSONEq(t, InvalidResult([]string{tc.problem}), res.Content)
			assert.False(t, d.Waiting(session))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := dev.Recv(ctx)
			assert.ErrorIs(t, err, context.Canceled, "no device was bothered")
		})
	}
	// The same ids through Dispatch.
	d, _ := newTestDispatcher(nil)
	defer d.Close()
	res := d.Dispatch(context.Background(), ToolCall{Session: IntSession(1), ID: "c\xff", Arguments: json.RawMessage(oneQuestion)})
	assert.Equal(t, Invalid, res.Outcome)
	assert.Equal(t, "", res.RequestID, "an id that is not valid UTF-8 is not echoed")
}

func TestNewRefusesNegativeOptions(t *testing.T) {
	for _, opts := range []*Options{{Timeout: -1}, {DisconnectGrace: -1}, {MaxCustomInput: -1}} {
		assert.Panics(t, func() { New(askusertest.NewTransport(), opts) }, "%+v", opts)
	}
	assert.NotPanics(t, func() { New(askusertest.NewTransport(), &Options{}).Close() })
}

// Wrap keeps the error flag: the content is the tool result either way, and the error
// says it is an error result, with the outcome's sentinel.
func TestWrapCarriesTheErrorFlag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(15)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		dev := mt.Connect(session)
		tool := d.Wrap(nil)
		go func() {
			recv[AskData](t, dev, EventAsk)
			_ = dev.Send(context.Background(), declineEvent(session, "c1"))
		}()
		out, err := tool(context.Background(), ToolCall{Session: session, Name: ToolName, ID: "c1", Arguments: json.RawMessage(oneQuestion)})
		assert.Equal(t, ResultDeclined, out)
		require.Error(t, err)
		assert.Equal(t, ResultDeclined, err.Error(), "the error's text is the tool result")
		assert.ErrorIs(t, err, ErrDeclined)
		re, ok := err.(*ResultError)
		require.True(t, ok)
		assert.Equal(t, Declined, re.Result.Outcome)

		out, err = tool(context.Background(), ToolCall{Session: session, Name: ToolName, ID: "c2", Arguments: json.RawMessage(`{}`)})
		assert.ErrorIs(t, err, ErrInvalidArguments)
		assert.Equal(t, out, err.Error())
	})
}

// Summaries read results as JSON: spacing and escapes that a JSON encoder may have
// changed on the way to a history do not matter.
func TestSummaryReadsResultsAsJSON(t *testing.T) {
	for _, tc := range []struct{ content, want string }{
		{`{"error":"Session cancelled"}`, "No answer: session cancelled"},
		{" \n{ \"error\" : \"Session cancelled\" }\n", "No answer: session cancelled"},
		{`{"error":"Session \u0063ancelled"}`, "No answer: session cancelled"},
		{`{"error":"User did not respond within timeout"}`, "No answer: timed out"},
		{`{"problems":["a"],"error":"Invalid arguments for ask_user_questions; fix every problem listed and call the tool again"}`, "Invalid question (1 problem)"},
	} {
		assert.Equal(t, tc.want, Summary(tc.content, "en"), tc.content)
	}
	assert.Equal(t, "提问无效(2 处错误)", Summary(InvalidResult([]string{"a", "b"}), "zh"), "problems are not 问题, which reads as questions")
}

// Numeric session ids are integers written without a second spelling; those beyond
// int64 are kept as they are.
func TestSessionIDEdges(t *testing.T) {
	var s SessionID
	assert.ErrorIs(t, json.Unmarshal([]byte(`-0`), &s), ErrMalformedEvent)
	assert.False(t, ParseSessionID("-0").IsNumeric(), "-0 from a URL is a string id")
	big := "123456789012345678901234567890"
	require.NoError(t, json.Unmarshal([]byte(big), &s))
	assert.True(t, s.IsNumeric())
	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.Equal(t, big, string(b))
	assert.Equal(t, ParseSessionID(big), s)
	snowflake := ParseSessionID("1234567890123456789")
	assert.Equal(t, IntSession(1234567890123456789), snowflake)
}
