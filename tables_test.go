package askuser

import (
	"fmt"
	"strings"
)

// These tables drive the validation tests and generate docs/ERRORS.md (see
// TestErrorsDocIsCurrent), so that the page is always what the code does.

// q1 is a valid single-select question; its text is "Which framework?".
const q1 = `{"question":"Which framework?","header":"Framework","options":[{"label":"Vue","description":"Matches the stack"},{"label":"React","description":"Bigger ecosystem"}],"multiSelect":false}`

// withQ returns arguments whose only question is q1 with old replaced by new.
func withQ(old, new string) string {
	return `{"questions":[` + strings.Replace(q1, old, new, 1) + `]}`
}

type argumentCase struct {
	name     string
	args     string
	problems []string // nil: valid
}

var argumentCases = []argumentCase{
	// Valid input, including the forgiven encodings.
	{name: "minimal single-select", args: `{"questions":[` + q1 + `]}`},
	{name: "multi-select", args: withQ(`"multiSelect":false`, `"multiSelect":true`)},
	{name: "previews", args: withQ(`"description":"Matches the stack"}`, `"description":"Matches the stack","preview":"# Vue\n<template/>"}`)},
	{name: "metadata of any shape", args: `{"questions":[` + q1 + `],"metadata":{"source":"planner","n":1,"nested":{"x":[1,2]}}}`},
	{name: "Chinese header of 12 characters", args: withQ(`"Framework"`, `"选择一个合适的前端框架方"`)},
	{name: "arguments double-encoded as a JSON string", args: `"{\"questions\":[{\"question\":\"Which framework?\",\"header\":\"Framework\",\"options\":[{\"label\":\"Vue\",\"description\":\"d\"},{\"label\":\"React\",\"description\":\"d\"}],\"multiSelect\":false}]}"`},
	{name: "questions as a JSON-encoded string", args: `{"questions":"[{\"question\":\"Which framework?\",\"header\":\"Framework\",\"options\":[{\"label\":\"Vue\",\"description\":\"d\"},{\"label\":\"React\",\"description\":\"d\"}],\"multiSelect\":false}]"}`},

	// The arguments as a whole.
	{name: "empty", args: ``, problems: []string{`arguments: empty; expected a JSON object like {"questions": [...]}`}},
	{name: "white space only", args: "  \n", problems: []string{`arguments: empty; expected a JSON object like {"questions": [...]}`}},
	{name: "not JSON", args: `{questions: []}`, problems: []string{`arguments: not valid JSON: invalid character 'q' at offset 1; expected a member name in double quotes`}},
	{name: "truncated JSON", args: `{"questions":[`, problems: []string{`arguments: not valid JSON: unexpected end of input; expected a value`}},
	{name: "trailing data", args: `{"questions":[` + q1 + `]} {}`, problems: []string{`arguments: not valid JSON: unexpected data after the JSON value at offset 202`}},
	{name: "null", args: `null`, problems: []string{`arguments: must be an object, not null`}},
	{name: "an array", args: `[` + q1 + `]`, problems: []string{`arguments: must be an object, not an array`}},
	{name: "a number", args: `42`, problems: []string{`arguments: must be an object, not a number`}},
	{name: "a string that is not JSON", args: `"please ask the user"`, problems: []string{`arguments: a JSON string whose content is not valid JSON: invalid character 'p' at offset 0; expected a value`}},
	{name: "a string holding an array", args: `"[1]"`, problems: []string{`arguments: must be an object, not an array`}},
	{name: "too large", args: `{"questions":[` + q1 + `],"metadata":{"pad":"` + strings.Repeat("x", MaxArgumentsBytes) + `"}}`, problems: []string{`arguments: 262367 bytes is too large; at most 262144 bytes are accepted`}},
	{name: "unknown top-level field", args: `{"questions":[` + q1 + `],"question":"Which?"}`, problems: []string{`question: unknown field; the allowed fields here are questions, metadata`}},
	{name: "metadata is a string", args: `{"questions":[` + q1 + `],"metadata":"run 7"}`, problems: []string{`metadata: must be an object, not a string`}},
	{name: "metadata is an array", args: `{"questions":[` + q1 + `],"metadata":[]}`, problems: []string{`metadata: must be an object, not an array`}},

	// The questions array.
	{name: "questions missing", args: `{}`, problems: []string{`questions: missing required field "questions"`}},
	{name: "questions null", args: `{"questions":null}`, problems: []string{`questions: must be an array, not null`}},
	{name: "questions an object", args: `{"questions":` + q1 + `}`, problems: []string{`questions: must be an array, not an object`}},
	{name: "questions a string that is not JSON", args: `{"questions":"Which framework?"}`, problems: []string{`questions: must be an array of question objects; the string given is not valid JSON: invalid character 'W' at offset 0; expected a value`}},
	{name: "no questions", args: `{"questions":[]}`, problems: []string{`questions: must have 1 to 4 questions, got 0`}},
	{name: "five questions", args: `{"questions":[` + q1 + `,` + strings.Replace(q1, "Which", "Two", 1) + `,` + strings.Replace(q1, "Which", "Three", 1) + `,` + strings.Replace(q1, "Which", "Four", 1) + `,` + strings.Replace(q1, "Which", "Five", 1) + `]}`, problems: []string{`questions: must have 1 to 4 questions, got 5`}},
	{name: "a question that is a string", args: `{"questions":["Which framework?"]}`, problems: []string{`questions[0]: must be an object, not a string`}},
	{name: "an empty question object", args: `{"questions":[{}]}`, problems: []string{
		`questions[0].header: missing required field "header"`,
		`questions[0].multiSelect: missing required field "multiSelect"`,
		`questions[0].options: missing required field "options"`,
		`questions[0].question: missing required field "question"`,
	}},
	{name: "duplicate question texts", args: `{"questions":[` + q1 + `,` + q1 + `]}`, problems: []string{`questions[1].question: same text as questions[0].question; each question must be different`}},
	{name: "duplicate question texts up to white space", args: `{"questions":[` + q1 + `,` + strings.Replace(q1, `"Which framework?"`, `" Which framework? "`, 1) + `]}`, problems: []string{`questions[1].question: same text as questions[0].question; each question must be different`}},
	{name: "unknown question field", args: withQ(`"multiSelect":false`, `"multiSelect":false,"allowOther":true`), problems: []string{`questions[0].allowOther: unknown field; the allowed fields here are question, header, options, multiSelect`}},

	// Fields of a question.
	{name: "question empty", args: withQ(`"Which framework?"`, `""`), problems: []string{`questions[0].question: must not be empty`}},
	{name: "question blank", args: withQ(`"Which framework?"`, `"  \t"`), problems: []string{`questions[0].question: must not be blank`}},
	{name: "question a number", args: withQ(`"Which framework?"`, `7`), problems: []string{`questions[0].question: must be a string, not a number`}},
	{name: "question too long", args: withQ(`"Which framework?"`, `"`+strings.Repeat("why ", 251)+`"`), problems: []string{`questions[0].question: must be at most 1000 characters, got 1004`}},
	{name: "header empty", args: withQ(`"Framework"`, `""`), problems: []string{`questions[0].header: must not be empty`}},
	{name: "header blank", args: withQ(`"Framework"`, `"   "`), problems: []string{`questions[0].header: must not be blank`}},
	{name: "header of 13 characters", args: withQ(`"Framework"`, `"Web framework"`), problems: []string{`questions[0].header: must be at most 12 characters, got 13`}},
	{name: "Chinese header of 13 characters", args: withQ(`"Framework"`, `"选择一个合适的前端框架方案"`), problems: []string{`questions[0].header: must be at most 12 characters, got 13`}},
	{name: "multiSelect missing", args: withQ(`,"multiSelect":false`, ``), problems: []string{`questions[0].multiSelect: missing required field "multiSelect"`}},
	{name: "multiSelect a string", args: withQ(`"multiSelect":false`, `"multiSelect":"false"`), problems: []string{`questions[0].multiSelect: must be a boolean, not a string`}},
	{name: "multiSelect null", args: withQ(`"multiSelect":false`, `"multiSelect":null`), problems: []string{`questions[0].multiSelect: must be a boolean, not null`}},

	// Options.
	{name: "options missing", args: `{"questions":[{"question":"Which framework?","header":"Framework","multiSelect":false}]}`, problems: []string{`questions[0].options: missing required field "options"`}},
	{name: "options not an array", args: `{"questions":[{"question":"Which framework?","header":"Framework","options":"Vue, React","multiSelect":false}]}`, problems: []string{`questions[0].options: must be an array, not a string`}},
	{name: "one option", args: withQ(`,{"label":"React","description":"Bigger ecosystem"}`, ``), problems: []string{`questions[0].options: must have 2 to 4 options, got 1`}},
	{name: "five options", args: withQ(`{"label":"React","description":"Bigger ecosystem"}`, `{"label":"React","description":"d"},{"label":"Svelte","description":"d"},{"label":"Solid","description":"d"},{"label":"Lit","description":"d"}`), problems: []string{`questions[0].options: must have 2 to 4 options, got 5`}},
	{name: "an option that is a string", args: withQ(`{"label":"React","description":"Bigger ecosystem"}`, `"React"`), problems: []string{`questions[0].options[1]: must be an object, not a string`}},
	{name: "option without label", args: withQ(`"label":"React",`, ``), problems: []string{`questions[0].options[1].label: missing required field "label"`}},
	{name: "option without description", args: withQ(`,"description":"Bigger ecosystem"`, ``), problems: []string{`questions[0].options[1].description: missing required field "description"`}},
	{name: "unknown option field", args: withQ(`"label":"React",`, `"label":"React","recommended":true,`), problems: []string{`questions[0].options[1].recommended: unknown field; the allowed fields here are label, description, preview`}},
	{name: "label empty", args: withQ(`"React"`, `""`), problems: []string{`questions[0].options[1].label: must not be empty`}},
	{name: "label blank", args: withQ(`"React"`, `" "`), problems: []string{`questions[0].options[1].label: must not be blank`}},
	{name: "label too long", args: withQ(`"React"`, `"`+strings.Repeat("R", 101)+`"`), problems: []string{`questions[0].options[1].label: must be at most 100 characters, got 101`}},
	{name: "label a number", args: withQ(`"React"`, `18`), problems: []string{`questions[0].options[1].label: must be a string, not a number`}},
	{name: "description blank", args: withQ(`"Bigger ecosystem"`, `"\n"`), problems: []string{`questions[0].options[1].description: must not be blank`}},
	{name: "description too long", args: withQ(`"Bigger ecosystem"`, `"`+strings.Repeat("d", 1001)+`"`), problems: []string{`questions[0].options[1].description: must be at most 1000 characters, got 1001`}},
	{name: "preview empty", args: withQ(`"description":"Bigger ecosystem"`, `"description":"Bigger ecosystem","preview":""`), problems: []string{`questions[0].options[1].preview: must not be empty`}},
	{name: "preview blank", args: withQ(`"description":"Bigger ecosystem"`, `"description":"Bigger ecosystem","preview":"  "`), problems: []string{`questions[0].options[1].preview: must not be blank`}},
	{name: "preview too long", args: withQ(`"description":"Bigger ecosystem"`, `"description":"Bigger ecosystem","preview":"`+strings.Repeat("p", 20001)+`"`), problems: []string{`questions[0].options[1].preview: must be at most 20000 characters, got 20001`}},
	{name: "an Other option", args: withQ(`"React"`, `"Other"`), problems: []string{`questions[0].options[1].label: "Other" duplicates the "Other" choice every client adds with a text box; remove this option`}},
	{name: "an other option in lower case with punctuation", args: withQ(`"React"`, `"other..."`), problems: []string{`questions[0].options[1].label: "other..." duplicates the "Other" choice every client adds with a text box; remove this option`}},
	{name: "an Other (please specify) option", args: withQ(`"React"`, `"Other (please specify)"`), problems: []string{`questions[0].options[1].label: "Other (please specify)" duplicates the "Other" choice every client adds with a text box; remove this option`}},
	{name: "a Chinese Other option", args: withQ(`"React"`, `"其他"`), problems: []string{`questions[0].options[1].label: "其他" duplicates the "Other" choice every client adds with a text box; remove this option`}},
	{name: "duplicate labels", args: withQ(`"React"`, `"Vue"`), problems: []string{`questions[0].options[1].label: same label as questions[0].options[0].label; labels must be unique within a question`}},
	{name: "duplicate labels up to white space", args: withQ(`"React"`, `"Vue "`), problems: []string{`questions[0].options[1].label: same label as questions[0].options[0].label; labels must be unique within a question`}},

	{name: "more problems than are listed", args: `{"questions":[` + q1 + `]` + strings.Repeat(`,"x":1`, 1) + func() string {
		var b strings.Builder
		for i := range 30 {
			fmt.Fprintf(&b, `,"extra%02d":1`, i)
		}
		return b.String()
	}() + `}`, problems: func() []string {
		var p []string
		for i := range 20 {
			p = append(p, fmt.Sprintf("extra%02d: unknown field; the allowed fields here are questions, metadata", i))
		}
		return append(p, "arguments: …and 11 more problems, not listed")
	}()},

	// Several problems at once: all are listed, in order.
	{name: "every problem listed at once", args: `{"questions":[` + q1 + `,{"question":"Which tests?","header":"Tests and more","options":[{"label":" ","description":"unit"},{"label":"Other","description":"e2e","color":"red"}],"multiSelect":"yes"}],"extra":1}`, problems: []string{
		`extra: unknown field; the allowed fields here are questions, metadata`,
		`questions[1].header: must be at most 12 characters, got 14`,
		`questions[1].multiSelect: must be a boolean, not a string`,
		`questions[1].options[0].label: must not be blank`,
		`questions[1].options[1].color: unknown field; the allowed fields here are label, description, preview`,
		`questions[1].options[1].label: "Other" duplicates the "Other" choice every client adds with a text box; remove this option`,
	}},
}

// The device-message cases run against session 123 with one pending request "r1" asking
// the single-select q1 and the multi-select "Which extras?" (labels "Router", "Store").
const pendingArgs = `{"questions":[` + q1 + `,{"question":"Which extras?","header":"Extras","options":[{"label":"Router","description":"Routing"},{"label":"Store","description":"State"}],"multiSelect":true}]}`

// result wraps answers JSON in an ask_user_questions_result event for request r1.
func result(answers string) string {
	return `{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r1","answers":` + answers + `}}`
}

const goodExtras = `{"question":"Which extras?","selectedLabels":["Router"],"customInput":null}`

type deviceCase struct {
	name string
	msg  string
	code string // "" when accepted
	err  string // the exact error text
}

var deviceCases = []deviceCase{
	{name: "valid answers", msg: result(`[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":null},` + goodExtras + `]`)},
	{name: "valid Other text", msg: result(`[{"question":"Which framework?","selectedLabels":[],"customInput":"Svelte"},` + goodExtras + `]`)},
	{name: "valid decline", msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r1","declined":true}}`},

	// Not an event.
	{name: "not JSON", msg: `hello`, code: CodeMalformedEvent, err: `askuser: malformed event: not valid JSON: invalid character 'h' at offset 0; expected a value`},
	{name: "empty message", msg: ``, code: CodeMalformedEvent, err: `askuser: malformed event: empty message; an event is a JSON object`},
	{name: "a JSON array", msg: `[]`, code: CodeMalformedEvent, err: `askuser: malformed event: an event is a JSON object, not an array`},
	{name: "missing type", msg: `{"sessionId":123,"data":{}}`, code: CodeMalformedEvent, err: `askuser: malformed event: type: missing; every event has a non-empty "type"`},
	{name: "type not a string", msg: `{"type":7,"sessionId":123}`, code: CodeMalformedEvent, err: `askuser: malformed event: type: must be a string, not a number`},
	{name: "sessionId a fraction", msg: `{"type":"ask_user_questions_result","sessionId":1.5,"data":{}}`, code: CodeMalformedEvent, err: `askuser: malformed event: sessionId: must be an integer or a string, not 1.5`},
	{name: "sessionId an object", msg: `{"type":"ask_user_questions_result","sessionId":{"id":1},"data":{}}`, code: CodeMalformedEvent, err: `askuser: malformed event: sessionId: must be an integer or a string, not an object`},
	{name: "unknown envelope field", msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{},"token":"x"}`, code: CodeMalformedEvent, err: `askuser: malformed event: token: unknown field; the fields of an event are type, sessionId and data`},
	{name: "two events in one message", msg: `{"type":"x"}{"type":"y"}`, code: CodeMalformedEvent, err: `askuser: malformed event: not valid JSON: unexpected data after the JSON value at offset 12`},

	{name: "sessionId -0", msg: `{"type":"ask_user_questions_result","sessionId":-0,"data":{}}`, code: CodeMalformedEvent, err: `askuser: malformed event: sessionId: -0 is not a session id; send 0`},
	{name: "a field given twice", msg: `{"type":"ask_user_questions_result","sessionId":123,"type":"cancel"}`, code: CodeMalformedEvent, err: `askuser: malformed event: type: given twice; give each field once`},
	{name: "a number too deep", msg: strings.Repeat("[", 10001) + strings.Repeat("]", 10001), code: CodeMalformedEvent, err: `askuser: malformed event: not valid JSON: objects and arrays nested more than 10000 deep at offset 10000`},

	// Not an event the dispatcher takes.
	{name: "unknown type", msg: `{"type":"delete_everything","sessionId":123}`, code: CodeUnsupportedEvent, err: `askuser: unsupported event type: "delete_everything"`},
	{name: "a server-to-client type", msg: `{"type":"ask_user_questions","sessionId":123,"data":{}}`, code: CodeUnsupportedEvent, err: `askuser: unsupported event type: "ask_user_questions"`},

	// A result event whose data is malformed.
	{name: "result without data", msg: `{"type":"ask_user_questions_result","sessionId":123}`, code: CodeMalformedEvent, err: `askuser: malformed event: ask_user_questions_result without data`},
	{name: "data not an object", msg: `{"type":"ask_user_questions_result","sessionId":123,"data":"r1"}`, code: CodeMalformedEvent, err: `askuser: malformed event: ask_user_questions_result data: must be an object, not a string`},
	{name: "missing requestId", msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{"answers":[]}}`, code: CodeMalformedEvent, err: `askuser: malformed event: ask_user_questions_result data: missing requestId`},
	{name: "unknown data field", msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r1","answers":[],"score":1}}`, code: CodeMalformedEvent, err: `askuser: malformed event: ask_user_questions_result data: score: unknown field; the fields of a result are requestId, answers and declined`},
	{name: "selectedLabels a string", msg: result(`[{"question":"Which framework?","selectedLabels":"Vue","customInput":null}]`), code: CodeMalformedEvent, err: `askuser: malformed event: ask_user_questions_result data: answers[0].selectedLabels: must be an array of strings, not a string`},
	{name: "customInput a number", msg: result(`[{"question":"Which framework?","selectedLabels":[],"customInput":5}]`), code: CodeMalformedEvent, err: `askuser: malformed event: ask_user_questions_result data: answers[0].customInput: must be a string or null, not a number`},
	{name: "answers an object", msg: result(goodExtras), code: CodeMalformedEvent, err: `askuser: malformed event: ask_user_questions_result data: answers: must be an array of answer objects, not an object`},
	{name: "an answer that is a string", msg: result(`["Vue"]`), code: CodeMalformedEvent, err: `askuser: malformed event: ask_user_questions_result data: answers[0]: must be an object, not a string`},
	{name: "a label that is a number", msg: result(`[{"question":"Which framework?","selectedLabels":[1],"customInput":null}]`), code: CodeMalformedEvent, err: `askuser: malformed event: ask_user_questions_result data: answers[0].selectedLabels[0]: must be a string, not a number`},
	{name: "unknown answer field", msg: result(`[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":null,"confidence":1}]`), code: CodeMalformedEvent, err: `askuser: malformed event: ask_user_questions_result data: answers[0].confidence: unknown field; the fields of an answer are question, selectedLabels and customInput`},
	{name: "decline with answers", msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r1","declined":true,"answers":[` + goodExtras + `]}}`, code: CodeMalformedEvent, err: `askuser: malformed event: ask_user_questions_result data: a decline carries no answers`},

	// A question that is not pending.
	{name: "unknown requestId", msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r2","answers":[]}}`, code: CodeNotPending, err: `askuser: no such pending question`},
	{name: "decline of an unknown requestId", msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r2","declined":true}}`, code: CodeNotPending, err: `askuser: no such pending question`},

	// Answers refused against the question: it stays open.
	{name: "no answers", msg: result(`[]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers: missing; answer each of the 2 question(s)`},
	{name: "answers null", msg: result(`null`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers: missing; answer each of the 2 question(s)`},
	{name: "a question left unanswered", msg: result(`[` + goodExtras + `]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers: no answer for questions[0] "Which framework?"`},
	{name: "a question answered twice", msg: result(`[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":null},` + goodExtras + `,` + goodExtras + `]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers[2].question: "Which extras?" is answered more than once`},
	{name: "an answer to another question", msg: result(`[{"question":"Which database?","selectedLabels":["Vue"],"customInput":null},` + goodExtras + `]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers[0].question: "Which database?" is not a question of this request; answers: no answer for questions[0] "Which framework?"`},
	{name: "a label that is not an option", msg: result(`[{"question":"Which framework?","selectedLabels":["Angular"],"customInput":null},` + goodExtras + `]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers[0].selectedLabels[0]: "Angular" is not an option of this question`},
	{name: "two labels for a single-select question", msg: result(`[{"question":"Which framework?","selectedLabels":["Vue","React"],"customInput":null},` + goodExtras + `]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers[0].selectedLabels: a single-select question takes one label, got 2`},
	{name: "a label and Other text for a single-select question", msg: result(`[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":"Svelte"},` + goodExtras + `]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers[0]: a single-select question takes an option or custom input, not both`},
	{name: "a label selected twice", msg: result(`[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":null},{"question":"Which extras?","selectedLabels":["Store","Store"],"customInput":null}]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers[1].selectedLabels[1]: "Store" is selected more than once`},
	{name: "neither label nor text", msg: result(`[{"question":"Which framework?","selectedLabels":[],"customInput":null},` + goodExtras + `]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers[0]: choose an option or type an answer`},
	{name: "blank Other text", msg: result(`[{"question":"Which framework?","selectedLabels":[],"customInput":"  "},` + goodExtras + `]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers[0].customInput: must not be blank; send null when no text was typed`},
	{name: "more labels than options", msg: result(`[{"question":"Which framework?","selectedLabels":[` + strings.Repeat(`"",`, 21800) + `""],"customInput":null},` + goodExtras + `]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers[0].selectedLabels: 21801 labels, but the question has only 2 options`},
	{name: "many problems, a few listed", msg: result(`[` + strings.Repeat(`{"question":"Which database?","selectedLabels":[],"customInput":null},`, 40) + goodExtras + `]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers[0].question: "Which database?" is not a question of this request; answers[1].question: "Which database?" is not a question of this request; answers[2].question: "Which database?" is not a question of this request; answers[3].question: "Which database?" is not a question of this request; answers[4].question: "Which database?" is not a question of this request; answers: …and 36 more problems, not listed`},
	{name: "Other text too long", msg: result(`[{"question":"Which framework?","selectedLabels":[],"customInput":"` + strings.Repeat("a", DefaultMaxCustomInput+1) + `"},` + goodExtras + `]`), code: CodeInvalidAnswer, err: `askuser: invalid answer for request "r1": answers[0].customInput: 4001 characters is too long; at most 4000 are accepted`},
}
