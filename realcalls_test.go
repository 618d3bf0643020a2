package askuser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/wire"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real calls: ask_user_questions-shaped tool calls that real models emitted in
// recorded sessions, one JSON file each in the shared corpus (realcorpus/calls, beside the
// repository), with what the harness that recorded it did with it (harness_verdict). The
// test reads every file and holds the library to the harness:
//
//   - "accepted: ..." (the person answered) and "passed Claude Code's input validation;
//     the user then rejected ..." (valid, declined by the person): the call is dispatched
//     through a Dispatcher to an in-process device, which answers every question; the
//     tool result must be the answers, one per question, each echoing its question's
//     text exactly and naming only labels of that question.
//   - "refused by <harness>: ..." naming the parameters that are missing: the call is
//     refused, and the problems name each of those parameters by its path.
//   - "not seen" (the recording does not show what came of it): the call is held to the
//     advertised schema, which it must keep, and then asked as an accepted one.
//   - Unity's AskUser (tool "unity:AskUser", accepted by Unity): another tool, with
//     another shape ("type": "text" or "choice", "placeholder", no header, no
//     multiSelect, "questions" as a JSON-encoded string). Read liberally, it is asked
//     and answered as any other: a question without options in free text.
//
// OpenCode's calls are in the corpus as mapped onto this schema ("multiple" written as
// multiSelect); their "original" is left alone.
//
// The corpus is read from $ASKUSER_SHARED/realcorpus/calls, ASKUSER_SHARED defaulting to
// ../shared from the repository's root; a missing corpus fails the test, unless
// ASKUSER_SHARED=none.

// realCall is one file of the corpus.
type realCall struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Harness   string          `json:"harness"`
	Verdict   string          `json:"harness_verdict"`
	Arguments json.RawMessage `json:"arguments"`
}

// sharedDir returns the shared data's folder, or "" when the test is told there is none.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ASKUSER_SHARED")
	switch dir {
	case "none":
		return ""
	case "":
		dir = filepath.Join("..", "shared")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the shared data is not at %s (set ASKUSER_SHARED to its folder, or to none to skip): %v", dir, err)
	}
	return dir
}

// missingParam finds the parameters a harness's refusal says are missing: "The required
// parameter `questions[0].question` is missing".
var missingParam = regexp.MustCompile("`([A-Za-z0-9_.\\[\\]]+)` is missing")

func TestRealCalls(t *testing.T) {
	shared := sharedDir(t)
	if shared == "" {
		t.Skip("ASKUSER_SHARED=none")
	}
	files, err := filepath.Glob(filepath.Join(shared, "realcorpus", "calls", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no calls in %s/realcorpus/calls", shared)

	mt := askusertest.NewTransport()
	d := New(mt, &Options{Timeout: time.Minute})
	defer d.Close()
	advertised := compileAdvertised(t)

	var accepted, refused int
	for i, file := range files {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		var c realCall
		require.NoError(t, json.Unmarshal(raw, &c), file)
		t.Run(c.ID, func(t *testing.T) {
			session := IntSession(int64(9000 + i))
			switch {
			case strings.HasPrefix(c.Verdict, "refused by "):
				refused++
				var want []string
				for _, m := range missingParam.FindAllStringSubmatch(c.Verdict, -1) {
					p := m[1]
					want = append(want, p+`: missing required field "`+p[strings.LastIndexAny(p, ".]")+1:]+`"`)
				}
				require.NotEmpty(t, want, "the verdict names no missing parameter: %s", c.Verdict)
				assertRefused(t, d, session, c, want)
			case c.Verdict == "not seen":
				var v any
				require.NoError(t, json.Unmarshal(c.Arguments, &v))
				require.NoError(t, advertised.Validate(v), "a call of unknown fate is expected to keep the advertised schema")
				fallthrough
			case strings.HasPrefix(c.Verdict, "accepted"), strings.HasPrefix(c.Verdict, "passed Claude Code's input validation"):
				accepted++
				assertAnswered(t, d, mt, session, c)
			default:
				t.Fatalf("a verdict this test does not know: %q; say what the call must get", c.Verdict)
			}
		})
	}
	t.Logf("%d real calls: %d accepted, %d refused", len(files), accepted, refused)
}

// assertRefused dispatches the call and checks that it is refused with at least the
// problems want, and that every problem says where it is.
func assertRefused(t *testing.T, d *Dispatcher, session SessionID, c realCall, want []string) {
	t.Helper()
	res := d.Dispatch(context.Background(), ToolCall{Session: session, ID: c.ID, Name: ToolName, Arguments: c.Arguments})
	require.Equal(t, Invalid, res.Outcome, "%s: %s", c.ID, res.Content)
	for _, w := range want {
		assert.Contains(t, res.Problems, w)
	}
	for _, p := range res.Problems {
		assert.Regexp(t, `^(arguments|questions)(\[\d+\])?[\w.\[\]]*: `, p, "a problem without its place")
	}
	var content struct {
		Error    string   `json:"error"`
		Problems []string `json:"problems"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content), &content))
	assert.Equal(t, res.Problems, content.Problems, "the model reads every problem")
}

// assertAnswered dispatches the call while a device of the session answers it, and
// checks the tool result against the arguments as the model wrote them.
func assertAnswered(t *testing.T, d *Dispatcher, mt *askusertest.Transport, session SessionID, c realCall) {
	t.Helper()
	var args struct {
		Questions json.RawMessage `json:"questions"`
	}
	require.NoError(t, json.Unmarshal(c.Arguments, &args))
	var questions []Question
	if s := ""; json.Unmarshal(args.Questions, &s) == nil { // a JSON-encoded string
		args.Questions = json.RawMessage(s)
	}
	require.NoError(t, json.Unmarshal(args.Questions, &questions))
	require.NotEmpty(t, questions)
	for k := range questions {
		if questions[k].Options == nil { // a question in free text: shown with "options": []
			questions[k].Options = []Option{}
		}
	}

	dev := mt.Connect(session)
	defer dev.Close()
	shown := make(chan wire.AskData, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ev, err := dev.Recv(ctx)
		if err != nil || ev.Type != wire.EventAsk {
			close(shown)
			return
		}
		var ask wire.AskData
		if json.Unmarshal(ev.Data, &ask) != nil {
			close(shown)
			return
		}
		shown <- ask
		reply, _ := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: ask.RequestID, Answers: answersFor(ask.Questions)})
		_ = dev.Send(ctx, reply)
	}()

	res := d.Dispatch(context.Background(), ToolCall{Session: session, ID: c.ID, Name: ToolName, Arguments: c.Arguments})
	require.Equal(t, Answered, res.Outcome, "%s: %s", c.ID, res.Content)
	ask, ok := <-shown
	require.True(t, ok, "the device was not asked")
	assert.Equal(t, questions, ask.Questions, "the device is shown the questions as the model wrote them: every header whole, every option")

	require.NoError(t, ValidateOutput([]byte(res.Content)))
	var out Response
	require.NoError(t, json.Unmarshal([]byte(res.Content), &out))
	require.Len(t, out.Answers, len(questions))
	for k, a := range out.Answers {
		q := questions[k]
		assert.Equal(t, q.Question, a.Question, "answers[%d] echoes its question", k)
		for _, l := range a.SelectedLabels {
			assert.True(t, slices.ContainsFunc(q.Options, func(o Option) bool { return o.Label == l }), "answers[%d]: %q is not a label of the question", k, l)
		}
		assert.True(t, len(a.SelectedLabels) > 0 || a.CustomInput != nil, "answers[%d] is empty", k)
	}
	assert.Equal(t, answersFor(questions), out.Answers, "the answers the device gave")
}

// answersFor answers questions in every shape an answer takes: a single-select question
// with its last option, or (every other one, and one without options) with Other text;
// a multi-select question with all its options and Other text.
func answersFor(qs []Question) []Answer {
	var out []Answer
	for k, q := range qs {
		a := Answer{Question: q.Question, SelectedLabels: []string{}}
		text := "typed by the person"
		switch {
		case q.MultiSelect:
			for _, o := range q.Options {
				a.SelectedLabels = append(a.SelectedLabels, o.Label)
			}
			a.CustomInput = &text
		case k%2 == 1, len(q.Options) == 0:
			a.CustomInput = &text
		default:
			a.SelectedLabels = append(a.SelectedLabels, q.Options[len(q.Options)-1].Label)
		}
		out = append(out, a)
	}
	return out
}

// compileAdvertised compiles the input schema the tool advertises.
func compileAdvertised(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("mem://advertised.json", bytes.NewReader(Definition().InputSchema)))
	s, err := c.Compile("mem://advertised.json")
	require.NoError(t, err)
	return s
}

// TestLiberalCallsAnswerAsAnyOther: a question accepted beyond the advertised schema (a
// header of 28 characters, six options, one option, a description left empty) is shown
// as the model wrote it, and its answers are checked as any other's: a label that is not
// an option, or two for a single-select question, are refused and the question stays
// open; the sixth option and the one option are answers.
func TestLiberalCallsAnswerAsAnyOther(t *testing.T) {
	args := `{"questions":[
		{"question":"Which framework?","header":"Operational Context Details?","multiSelect":false,"options":[
			{"label":"Vue","description":""},{"label":"React","description":"b"},{"label":"Svelte","description":"c"},
			{"label":"Solid","description":"d"},{"label":"Angular","description":"e"},{"label":"Lit","description":"f"}]},
		{"question":"Go ahead?","header":"Go","multiSelect":false,"options":[{"label":"Yes, go ahead"}]}]}`
	mt := askusertest.NewTransport()
	d := New(mt, &Options{Timeout: time.Minute})
	defer d.Close()
	session := IntSession(77)
	dev := mt.Connect(session)
	defer dev.Close()

	done := make(chan Result, 1)
	go func() {
		done <- d.Dispatch(context.Background(), ToolCall{Session: session, ID: "call-1", Name: ToolName, Arguments: json.RawMessage(args)})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ev, err := dev.Recv(ctx)
	require.NoError(t, err)
	require.Equal(t, wire.EventAsk, ev.Type)
	var ask wire.AskData
	require.NoError(t, json.Unmarshal(ev.Data, &ask))
	require.Len(t, ask.Questions, 2)
	assert.Equal(t, "Operational Context Details?", ask.Questions[0].Header)
	assert.Len(t, ask.Questions[0].Options, 6)
	assert.Equal(t, []Option{{Label: "Yes, go ahead"}}, ask.Questions[1].Options)

	send := func(answers ...Answer) error {
		reply, err := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: ask.RequestID, Answers: answers})
		require.NoError(t, err)
		return dev.Send(ctx, reply)
	}
	yes := Answer{Question: "Go ahead?", SelectedLabels: []string{"Yes, go ahead"}}
	for _, bad := range []struct {
		answer Answer
		want   string
	}{
		{Answer{Question: "Which framework?", SelectedLabels: []string{"Ember"}}, `answers[0].selectedLabels[0]: "Ember" is not an option of this question`},
		{Answer{Question: "Which framework?", SelectedLabels: []string{"Svelte", "Lit"}}, `answers[0].selectedLabels: a single-select question takes one label, got 2`},
	} {
		err := send(bad.answer, yes)
		require.ErrorIs(t, err, wire.ErrInvalidAnswer)
		assert.Contains(t, err.Error(), bad.want)
	}
	require.NoError(t, send(Answer{Question: "Which framework?", SelectedLabels: []string{"Lit"}}, yes))
	res := <-done
	require.Equal(t, Answered, res.Outcome)
	assert.JSONEq(t, `{"answers":[{"question":"Which framework?","selectedLabels":["Lit"],"customInput":null},
		{"question":"Go ahead?","selectedLabels":["Yes, go ahead"],"customInput":null}]}`, res.Content)
}
