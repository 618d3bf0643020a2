package askuser_test

import (
	"testing"

	. "github.com/askuser-go/askuser"
	"github.com/stretchr/testify/assert"
)

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

	// An option without a description is its label alone.
	got := Transcript(`{"questions":[{"question":"Go ahead?","header":"Go","options":[{"label":"Yes","description":""},{"label":"No"}],"multiSelect":false}]}`, ResultTimeout)
	assert.Equal(t, "[Go] Go ahead?\n  - Yes\n  - No\n  No answer: timed out\n", got)

	// A question without a header has no brackets; one without options is answered in
	// free text, which is the answer itself, not an "Other".
	got = Transcript(`{"questions":"[{\"question\":\"What art style?\",\"type\":\"text\"}]"}`,
		`{"answers":[{"question":"What art style?","selectedLabels":[],"customInput":"Pixel art"}]}`)
	assert.Equal(t, "What art style?\n  > Pixel art\n", got)
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
