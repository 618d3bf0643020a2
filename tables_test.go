package askuser

import (
	"fmt"
	"strings"

	"github.com/askuser-go/askuser/wire"
)

// These tables drive the validation tests and generate docs/ERRORS.md (see
// TestErrorsDocIsCurrent), so that the page is always what the code does.

// Q1 is a valid single-select question; its text is "Which framework?".
const Q1 = `{"question":"Which framework?","header":"Framework","options":[{"label":"Vue","description":"Matches the stack"},{"label":"React","description":"Bigger ecosystem"}],"multiSelect":false}`

// WithQ returns arguments whose only question is Q1 with old replaced by new.
func WithQ(old, new string) string {
	return `{"questions":[` + strings.Replace(Q1, old, new, 1) + `]}`
}

// sevenOptions, in place of Q1's React, make the most options accepted: eight.
const sevenOptions = `{"label":"React","description":"d"},{"label":"Svelte","description":"d"},{"label":"Solid","description":"d"},` +
	`{"label":"Angular","description":"d"},{"label":"Qwik","description":"d"},{"label":"Ember","description":"d"},{"label":"Preact","description":"d"}`

type ArgumentCase struct {
	Name     string
	Args     string
	Problems []string // nil: valid
}

var ArgumentCases = []ArgumentCase{
	// Valid input, including the forgiven encodings.
	{Name: "minimal single-select", Args: `{"questions":[` + Q1 + `]}`},
	{Name: "multi-select", Args: WithQ(`"multiSelect":false`, `"multiSelect":true`)},
	{Name: "previews", Args: WithQ(`"description":"Matches the stack"}`, `"description":"Matches the stack","preview":"# Vue\n<template/>"}`)},
	{Name: "metadata of any shape", Args: `{"questions":[` + Q1 + `],"metadata":{"source":"planner","n":1,"nested":{"x":[1,2]}}}`},
	{Name: "Chinese header of 12 characters", Args: WithQ(`"Framework"`, `"选择一个合适的前端框架方"`)},

	// Valid beyond the advertised schema: read liberally (see accepted.go).
	{Name: "header of 13 characters", Args: WithQ(`"Framework"`, `"Web framework"`)},
	{Name: "Chinese header of 13 characters", Args: WithQ(`"Framework"`, `"选择一个合适的前端框架方案"`)},
	{Name: "header of 28 characters", Args: WithQ(`"Framework"`, `"Operational Context Details?"`)},
	{Name: "header of 100 characters", Args: WithQ(`"Framework"`, `"`+strings.Repeat("h", 100)+`"`)},
	{Name: "one option", Args: WithQ(`,{"label":"React","description":"Bigger ecosystem"}`, ``)},
	{Name: "eight options", Args: WithQ(`{"label":"React","description":"Bigger ecosystem"}`, sevenOptions)},
	{Name: "description empty", Args: WithQ(`"Bigger ecosystem"`, `""`)},
	{Name: "description blank", Args: WithQ(`"Bigger ecosystem"`, `"\n"`)},
	{Name: "description null", Args: WithQ(`"Bigger ecosystem"`, `null`)},
	{Name: "option without description", Args: WithQ(`,"description":"Bigger ecosystem"`, ``)},
	{Name: "arguments double-encoded as a JSON string", Args: `"{\"questions\":[{\"question\":\"Which framework?\",\"header\":\"Framework\",\"options\":[{\"label\":\"Vue\",\"description\":\"d\"},{\"label\":\"React\",\"description\":\"d\"}],\"multiSelect\":false}]}"`},
	{Name: "header empty", Args: WithQ(`"Framework"`, `""`)},
	{Name: "header blank", Args: WithQ(`"Framework"`, `"   "`)},
	{Name: "header missing", Args: WithQ(`"header":"Framework",`, ``)},
	{Name: "multiSelect missing", Args: WithQ(`,"multiSelect":false`, ``)},
	{Name: "multiSelect null", Args: WithQ(`"multiSelect":false`, `"multiSelect":null`)},
	{Name: "no options: free text", Args: WithQ(`[{"label":"Vue","description":"Matches the stack"},{"label":"React","description":"Bigger ecosystem"}]`, `[]`)},
	{Name: "options missing: free text", Args: `{"questions":[{"question":"Which framework?","header":"Framework","multiSelect":false}]}`},
	{Name: "the question alone: free text", Args: `{"questions":[{"question":"Which framework?"}]}`},
	{Name: "a placeholder", Args: `{"questions":[{"question":"Which framework?","placeholder":"Vue, React, ..."}]}`},
	{Name: "type text, without options", Args: `{"questions":[{"question":"Which framework?","type":"text","placeholder":"Vue, React, ..."}]}`},
	{Name: "type choice, with options", Args: WithQ(`"multiSelect":false`, `"type":"choice"`)},
	{Name: "questions as a JSON-encoded string", Args: `{"questions":"[{\"question\":\"Which framework?\",\"header\":\"Framework\",\"options\":[{\"label\":\"Vue\",\"description\":\"d\"},{\"label\":\"React\",\"description\":\"d\"}],\"multiSelect\":false}]"}`},

	// The arguments as a whole.
	{Name: "empty", Args: ``, Problems: []string{`arguments: empty; expected a JSON object like {"questions": [...]}`}},
	{Name: "white space only", Args: "  \n", Problems: []string{`arguments: empty; expected a JSON object like {"questions": [...]}`}},
	{Name: "not JSON", Args: `{questions: []}`, Problems: []string{`arguments: not valid JSON: invalid character 'q' at offset 1`}},
	{Name: "truncated JSON", Args: `{"questions":[`, Problems: []string{`arguments: not valid JSON: unexpected end of input`}},
	{Name: "trailing data", Args: `{"questions":[` + Q1 + `]} {}`, Problems: []string{`arguments: not valid JSON: unexpected data after the JSON value at offset 202`}},
	{Name: "null", Args: `null`, Problems: []string{`arguments: must be an object, not null`}},
	{Name: "an array", Args: `[` + Q1 + `]`, Problems: []string{`arguments: must be an object, not an array`}},
	{Name: "a number", Args: `42`, Problems: []string{`arguments: must be an object, not a number`}},
	{Name: "a string that is not JSON", Args: `"please ask the user"`, Problems: []string{`arguments: a JSON string whose content is not valid JSON: invalid character 'p' at offset 0`}},
	{Name: "a string holding an array", Args: `"[1]"`, Problems: []string{`arguments: must be an object, not an array`}},
	{Name: "too large", Args: `{"questions":[` + Q1 + `],"metadata":{"pad":"` + strings.Repeat("x", wire.MaxArgumentsBytes) + `"}}`, Problems: []string{`arguments: 262367 bytes is too large; at most 262144 bytes are accepted`}},
	{Name: "unknown top-level field", Args: `{"questions":[` + Q1 + `],"question":"Which?"}`, Problems: []string{`question: unknown field; the allowed fields here are questions, metadata`}},
	{Name: "metadata is a string", Args: `{"questions":[` + Q1 + `],"metadata":"run 7"}`, Problems: []string{`metadata: must be an object, not a string`}},
	{Name: "metadata is an array", Args: `{"questions":[` + Q1 + `],"metadata":[]}`, Problems: []string{`metadata: must be an object, not an array`}},

	// The questions array.
	{Name: "questions missing", Args: `{}`, Problems: []string{`questions: missing required field "questions"`}},
	{Name: "questions null", Args: `{"questions":null}`, Problems: []string{`questions: must be an array, not null`}},
	{Name: "questions an object", Args: `{"questions":` + Q1 + `}`, Problems: []string{`questions: must be an array, not an object`}},
	{Name: "questions a string that is not JSON", Args: `{"questions":"Which framework?"}`, Problems: []string{`questions: must be an array of question objects; the string given is not valid JSON: invalid character 'W' at offset 0`}},
	{Name: "no questions", Args: `{"questions":[]}`, Problems: []string{`questions: must have 1 to 4 questions, got 0`}},
	{Name: "five questions", Args: `{"questions":[` + Q1 + `,` + strings.Replace(Q1, "Which", "Two", 1) + `,` + strings.Replace(Q1, "Which", "Three", 1) + `,` + strings.Replace(Q1, "Which", "Four", 1) + `,` + strings.Replace(Q1, "Which", "Five", 1) + `]}`, Problems: []string{`questions: must have 1 to 4 questions, got 5`}},
	{Name: "a question that is a string", Args: `{"questions":["Which framework?"]}`, Problems: []string{`questions[0]: must be an object, not a string`}},
	{Name: "an empty question object", Args: `{"questions":[{}]}`, Problems: []string{
		`questions[0].question: missing required field "question"`,
	}},
	{Name: "duplicate question texts", Args: `{"questions":[` + Q1 + `,` + Q1 + `]}`, Problems: []string{`questions[1].question: same text as questions[0].question; each question must be different`}},
	{Name: "duplicate question texts up to white space", Args: `{"questions":[` + Q1 + `,` + strings.Replace(Q1, `"Which framework?"`, `" Which framework? "`, 1) + `]}`, Problems: []string{`questions[1].question: same text as questions[0].question; each question must be different`}},
	{Name: "unknown question field", Args: WithQ(`"multiSelect":false`, `"multiSelect":false,"allowOther":true`), Problems: []string{`questions[0].allowOther: unknown field; the allowed fields here are question, header, options, multiSelect, placeholder`}},

	{Name: "type text, with options", Args: WithQ(`"multiSelect":false`, `"type":"text"`), Problems: []string{`questions[0].type: a question of type "text" is answered in free text, but it has 2 options; remove them, or make it "choice"`}},
	{Name: "type choice, without options", Args: `{"questions":[{"question":"Which framework?","type":"choice"}]}`, Problems: []string{`questions[0].type: a question of type "choice" needs options to choose from; add them, or make it "text"`}},
	{Name: "type of another kind", Args: WithQ(`"multiSelect":false`, `"type":"rating"`), Problems: []string{`questions[0].type: must be "choice" or "text" (or left out), not "rating"`}},
	{Name: "placeholder of 101 characters", Args: `{"questions":[{"question":"Which framework?","placeholder":"` + strings.Repeat("p", 101) + `"}]}`, Problems: []string{`questions[0].placeholder: must be at most 100 characters, got 101`}},

	// Fields of a question.
	{Name: "question empty", Args: WithQ(`"Which framework?"`, `""`), Problems: []string{`questions[0].question: must not be empty`}},
	{Name: "question blank", Args: WithQ(`"Which framework?"`, `"  \t"`), Problems: []string{`questions[0].question: must not be blank`}},
	{Name: "question a number", Args: WithQ(`"Which framework?"`, `7`), Problems: []string{`questions[0].question: must be a string, not a number`}},
	{Name: "question too long", Args: WithQ(`"Which framework?"`, `"`+strings.Repeat("why ", 251)+`"`), Problems: []string{`questions[0].question: must be at most 1000 characters, got 1004`}},
	{Name: "header of 101 characters", Args: WithQ(`"Framework"`, `"`+strings.Repeat("h", 101)+`"`), Problems: []string{`questions[0].header: must be at most 100 characters, got 101; the tool's schema asks for at most 12`}},
	{Name: "multiSelect a string", Args: WithQ(`"multiSelect":false`, `"multiSelect":"false"`), Problems: []string{`questions[0].multiSelect: must be a boolean, not a string`}},

	// Options.
	{Name: "options not an array", Args: `{"questions":[{"question":"Which framework?","header":"Framework","options":"Vue, React","multiSelect":false}]}`, Problems: []string{`questions[0].options: must be an array, not a string`}},
	{Name: "nine options", Args: WithQ(`{"label":"React","description":"Bigger ecosystem"}`, sevenOptions+`,{"label":"Lit","description":"d"}`), Problems: []string{`questions[0].options: must have at most 8 options, got 9; the tool's schema asks for 2 to 4`}},
	{Name: "an option that is a string", Args: WithQ(`{"label":"React","description":"Bigger ecosystem"}`, `"React"`), Problems: []string{`questions[0].options[1]: must be an object, not a string`}},
	{Name: "option without label", Args: WithQ(`"label":"React",`, ``), Problems: []string{`questions[0].options[1].label: missing required field "label"`}},
	{Name: "unknown option field", Args: WithQ(`"label":"React",`, `"label":"React","recommended":true,`), Problems: []string{`questions[0].options[1].recommended: unknown field; the allowed fields here are label, description, preview`}},
	{Name: "label empty", Args: WithQ(`"React"`, `""`), Problems: []string{`questions[0].options[1].label: must not be empty`}},
	{Name: "label blank", Args: WithQ(`"React"`, `" "`), Problems: []string{`questions[0].options[1].label: must not be blank`}},
	{Name: "label too long", Args: WithQ(`"React"`, `"`+strings.Repeat("R", 101)+`"`), Problems: []string{`questions[0].options[1].label: must be at most 100 characters, got 101`}},
	{Name: "label a number", Args: WithQ(`"React"`, `18`), Problems: []string{`questions[0].options[1].label: must be a string, not a number`}},
	{Name: "description too long", Args: WithQ(`"Bigger ecosystem"`, `"`+strings.Repeat("d", 1001)+`"`), Problems: []string{`questions[0].options[1].description: must be at most 1000 characters, got 1001`}},
	{Name: "preview empty", Args: WithQ(`"description":"Bigger ecosystem"`, `"description":"Bigger ecosystem","preview":""`), Problems: []string{`questions[0].options[1].preview: must not be empty`}},
	{Name: "preview blank", Args: WithQ(`"description":"Bigger ecosystem"`, `"description":"Bigger ecosystem","preview":"  "`), Problems: []string{`questions[0].options[1].preview: must not be blank`}},
	{Name: "preview too long", Args: WithQ(`"description":"Bigger ecosystem"`, `"description":"Bigger ecosystem","preview":"`+strings.Repeat("p", 20001)+`"`), Problems: []string{`questions[0].options[1].preview: must be at most 20000 characters, got 20001`}},
	{Name: "an Other option", Args: WithQ(`"React"`, `"Other"`), Problems: []string{`questions[0].options[1].label: "Other" duplicates the "Other" choice every client adds with a text box; remove this option`}},
	{Name: "an other option in lower case with punctuation", Args: WithQ(`"React"`, `"other..."`), Problems: []string{`questions[0].options[1].label: "other..." duplicates the "Other" choice every client adds with a text box; remove this option`}},
	{Name: "an Other (please specify) option", Args: WithQ(`"React"`, `"Other (please specify)"`), Problems: []string{`questions[0].options[1].label: "Other (please specify)" duplicates the "Other" choice every client adds with a text box; remove this option`}},
	{Name: "a Chinese Other option", Args: WithQ(`"React"`, `"其他"`), Problems: []string{`questions[0].options[1].label: "其他" duplicates the "Other" choice every client adds with a text box; remove this option`}},
	{Name: "duplicate labels", Args: WithQ(`"React"`, `"Vue"`), Problems: []string{`questions[0].options[1].label: same label as questions[0].options[0].label; labels must be unique within a question`}},
	{Name: "duplicate labels up to white space", Args: WithQ(`"React"`, `"Vue "`), Problems: []string{`questions[0].options[1].label: same label as questions[0].options[0].label; labels must be unique within a question`}},

	{Name: "more problems than are listed", Args: `{"questions":[` + Q1 + `]` + strings.Repeat(`,"x":1`, 1) + func() string {
		var b strings.Builder
		for i := range 30 {
			fmt.Fprintf(&b, `,"extra%02d":1`, i)
		}
		return b.String()
	}() + `}`, Problems: func() []string {
		var p []string
		for i := range 20 {
			p = append(p, fmt.Sprintf("extra%02d: unknown field; the allowed fields here are questions, metadata", i))
		}
		return append(p, "arguments: …and 11 more problems, not listed")
	}()},

	// Several problems at once: all are listed, in order.
	{Name: "every problem listed at once", Args: `{"questions":[` + Q1 + `,{"header":"Tests and more","options":[{"label":" ","description":"unit"},{"label":"Other","description":"e2e","color":"red"}],"multiSelect":"yes"}],"extra":1}`, Problems: []string{
		`extra: unknown field; the allowed fields here are questions, metadata`,
		`questions[1].multiSelect: must be a boolean, not a string`,
		`questions[1].options[0].label: must not be blank`,
		`questions[1].options[1].color: unknown field; the allowed fields here are label, description, preview`,
		`questions[1].options[1].label: "Other" duplicates the "Other" choice every client adds with a text box; remove this option`,
		`questions[1].question: missing required field "question"`,
	}},
}

// LimitRow is one limit of the input schema: what the model is told (Definition), what
// is accepted (ParseArguments) and why. The bounds are read from the two schemas, so that
// the table in docs/ERRORS.md is always what the code does.
type LimitRow struct {
	Limit string
	Path  []string // where in the schema, "[]" for an array's items; nil: the arguments' size
	Why   string
}

var LimitRows = []LimitRow{
	{Limit: "questions in a call", Path: []string{fieldQuestions},
		Why: "Kept: a set is answered on one screen, and no real call asks more; more questions belong in a second call."},
	{Limit: "`question`", Path: []string{fieldQuestions, "[]", "question"},
		Why: "Kept: a hard bound. Every device shows the whole text, and every answer echoes it."},
	{Limit: "`header`", Path: []string{fieldQuestions, "[]", "header"},
		Why: "Real headers run to 28 characters, and Claude Code and OpenCode ask such calls. A longer header is shown shortened on the chip, whole on hover and to screen readers, and whole in the terminal. Past 100 characters it is a sentence in the wrong field. Without one (Unity's AskUser writes none), or empty, the question has no chip."},
	{Limit: "`options` of a question", Path: []string{fieldQuestions, "[]", fieldOptions},
		Why: "One option is still a choice: it, or Other. More than four make a longer list, every option shown, then Other (OpenCode asks such calls). Eight keep every choice, Other included, on one digit in the terminal. None, or left out, and the question is answered in free text: the Other box alone, named \"Your answer\" (Unity's AskUser asks such questions)."},
	{Limit: "`multiSelect`", Path: []string{fieldQuestions, "[]", fieldMultiSelect},
		Why: "Left out (OpenCode's and Unity's default), or null, the question is single-select."},
	{Limit: "`type`", Path: []string{fieldQuestions, "[]", "type"},
		Why: "Not advertised. Unity's AskUser says a question's kind so: \"choice\" must have options, \"text\" must have none; then it is dropped, the options saying the same."},
	{Limit: "`placeholder`", Path: []string{fieldQuestions, "[]", "placeholder"},
		Why: "Not advertised. Unity's AskUser writes a hint for the free-text box; it is shown there, in place of the client's own."},
	{Limit: "`label`", Path: append(optionPath[:len(optionPath):len(optionPath)], "label"),
		Why: "Kept: a hard bound. The person picks it, and the answer names it exactly; an option without one cannot be chosen."},
	{Limit: "`description`", Path: append(optionPath[:len(optionPath):len(optionPath)], "description"),
		Why: "Models write \"\" where the label says it all; nothing is shown under the label."},
	{Limit: "`preview`", Path: append(optionPath[:len(optionPath):len(optionPath)], "preview"),
		Why: "Kept: a hard bound on the markdown box beside the options."},
	{Limit: "the arguments", Path: nil,
		Why: "Kept: the bound that protects memory, checked before anything is read."},
}

// Bounds says a limit of LimitRows as the advertised schema or the accepted one has it.
func Bounds(row LimitRow, advertised bool) string {
	if row.Path == nil {
		return fmt.Sprintf("at most %d KiB", wire.MaxArgumentsBytes>>10)
	}
	root := inputSchema()
	if advertised {
		root = loadSchemas().advertised
	}
	s := root.At(row.Path...)
	parent := root.At(row.Path[:len(row.Path)-1]...)
	var b string
	switch {
	case row.Path[len(row.Path)-1] == "type" && !advertised:
		return `"choice" or "text", or none`
	case s == nil:
		return "not in the schema"
	case s.Type == "array":
		b = fmt.Sprintf("%d to %d", s.MinItems, s.MaxItems)
	case s.Type == "boolean":
		b = "true or false"
	default:
		b = fmt.Sprintf("%d to %d characters", s.MinLen, s.MaxLen)
	}
	if parent.Type == "object" && !parent.IsRequired(row.Path[len(row.Path)-1]) {
		b += ", or none"
	}
	return b
}

// The device-message cases run against session 123 with one pending request "r1" asking
// the single-select Q1 and the multi-select "Which extras?" (labels "Router", "Store").
const PendingArgs = `{"questions":[` + Q1 + `,{"question":"Which extras?","header":"Extras","options":[{"label":"Router","description":"Routing"},{"label":"Store","description":"State"}],"multiSelect":true}]}`

// result wraps answers JSON in an ask_user_questions_result event for request r1.
func ResultMsg(answers string) string {
	return `{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r1","answers":` + answers + `}}`
}

const GoodExtras = `{"question":"Which extras?","selectedLabels":["Router"],"customInput":null}`

type DeviceCase struct {
	Name string
	Msg  string
	Code string // "" when accepted
	Err  string // the exact error text
}

var DeviceCases = []DeviceCase{
	{Name: "valid answers", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":null},` + GoodExtras + `]`)},
	{Name: "valid Other text", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":[],"customInput":"Svelte"},` + GoodExtras + `]`)},
	{Name: "valid decline", Msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r1","declined":true}}`},

	// Not an event.
	{Name: "not JSON", Msg: `hello`, Code: "malformed_event", Err: `askuser: malformed event: not valid JSON: invalid character 'h' at offset 0`},
	{Name: "empty message", Msg: ``, Code: "malformed_event", Err: `askuser: malformed event: empty message; an event is a JSON object`},
	{Name: "a JSON array", Msg: `[]`, Code: "malformed_event", Err: `askuser: malformed event: an event is a JSON object, not an array`},
	{Name: "missing type", Msg: `{"sessionId":123,"data":{}}`, Code: "malformed_event", Err: `askuser: malformed event: type: missing; every event has a non-empty "type"`},
	{Name: "type not a string", Msg: `{"type":7,"sessionId":123}`, Code: "malformed_event", Err: `askuser: malformed event: type: must be a string, not a number`},
	{Name: "sessionId a fraction", Msg: `{"type":"ask_user_questions_result","sessionId":1.5,"data":{}}`, Code: "malformed_event", Err: `askuser: malformed event: sessionId: must be an integer or a string, not 1.5`},
	{Name: "sessionId an object", Msg: `{"type":"ask_user_questions_result","sessionId":{"id":1},"data":{}}`, Code: "malformed_event", Err: `askuser: malformed event: sessionId: must be an integer or a string, not an object`},
	{Name: "unknown envelope field", Msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{},"token":"x"}`, Code: "malformed_event", Err: `askuser: malformed event: token: unknown field; the fields of an event are type, sessionId and data`},
	{Name: "two events in one message", Msg: `{"type":"x"}{"type":"y"}`, Code: "malformed_event", Err: `askuser: malformed event: not valid JSON: unexpected data after the JSON value at offset 12`},

	{Name: "sessionId -0", Msg: `{"type":"ask_user_questions_result","sessionId":-0,"data":{}}`, Code: "malformed_event", Err: `askuser: malformed event: sessionId: -0 is not a session id; send 0`},
	{Name: "a field given twice", Msg: `{"type":"ask_user_questions_result","sessionId":123,"type":"cancel"}`, Code: "malformed_event", Err: `askuser: malformed event: type: given twice; give each field once`},
	{Name: "a number too deep", Msg: strings.Repeat("[", 10001) + strings.Repeat("]", 10001), Code: "malformed_event", Err: `askuser: malformed event: not valid JSON: objects and arrays nested more than 10000 deep`},

	// Not an event the dispatcher takes.
	{Name: "unknown type", Msg: `{"type":"delete_everything","sessionId":123}`, Code: "unsupported_event", Err: `askuser: unsupported event type: "delete_everything"`},
	{Name: "a server-to-client type", Msg: `{"type":"ask_user_questions","sessionId":123,"data":{}}`, Code: "unsupported_event", Err: `askuser: unsupported event type: "ask_user_questions"`},

	// A result event whose data is malformed.
	{Name: "result without data", Msg: `{"type":"ask_user_questions_result","sessionId":123}`, Code: "malformed_event", Err: `askuser: malformed event: ask_user_questions_result without data`},
	{Name: "data not an object", Msg: `{"type":"ask_user_questions_result","sessionId":123,"data":"r1"}`, Code: "malformed_event", Err: `askuser: malformed event: ask_user_questions_result data: must be an object, not a string`},
	{Name: "missing requestId", Msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{"answers":[]}}`, Code: "malformed_event", Err: `askuser: malformed event: ask_user_questions_result data: missing requestId`},
	{Name: "unknown data field", Msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r1","answers":[],"score":1}}`, Code: "malformed_event", Err: `askuser: malformed event: ask_user_questions_result data: score: unknown field; the fields of a result are requestId, answers and declined`},
	{Name: "selectedLabels a string", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":"Vue","customInput":null}]`), Code: "malformed_event", Err: `askuser: malformed event: ask_user_questions_result data: answers[0].selectedLabels: must be an array of strings, not a string`},
	{Name: "customInput a number", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":[],"customInput":5}]`), Code: "malformed_event", Err: `askuser: malformed event: ask_user_questions_result data: answers[0].customInput: must be a string or null, not a number`},
	{Name: "answers an object", Msg: ResultMsg(GoodExtras), Code: "malformed_event", Err: `askuser: malformed event: ask_user_questions_result data: answers: must be an array of answer objects, not an object`},
	{Name: "an answer that is a string", Msg: ResultMsg(`["Vue"]`), Code: "malformed_event", Err: `askuser: malformed event: ask_user_questions_result data: answers[0]: must be an object, not a string`},
	{Name: "a label that is a number", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":[1],"customInput":null}]`), Code: "malformed_event", Err: `askuser: malformed event: ask_user_questions_result data: answers[0].selectedLabels[0]: must be a string, not a number`},
	{Name: "unknown answer field", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":null,"confidence":1}]`), Code: "malformed_event", Err: `askuser: malformed event: ask_user_questions_result data: answers[0].confidence: unknown field; the fields of an answer are question, selectedLabels and customInput`},
	{Name: "decline with answers", Msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r1","declined":true,"answers":[` + GoodExtras + `]}}`, Code: "malformed_event", Err: `askuser: malformed event: ask_user_questions_result data: a decline carries no answers`},

	// A question that is not pending.
	{Name: "unknown requestId", Msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r2","answers":[]}}`, Code: "not_pending", Err: `askuser: no such pending question`},
	{Name: "decline of an unknown requestId", Msg: `{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r2","declined":true}}`, Code: "not_pending", Err: `askuser: no such pending question`},

	// Answers refused against the question: it stays open.
	{Name: "no answers", Msg: ResultMsg(`[]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers: missing; answer each of the 2 question(s)`},
	{Name: "answers null", Msg: ResultMsg(`null`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers: missing; answer each of the 2 question(s)`},
	{Name: "a question left unanswered", Msg: ResultMsg(`[` + GoodExtras + `]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers: no answer for questions[0] "Which framework?"`},
	{Name: "a question answered twice", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":null},` + GoodExtras + `,` + GoodExtras + `]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers[2].question: "Which extras?" is answered more than once`},
	{Name: "an answer to another question", Msg: ResultMsg(`[{"question":"Which database?","selectedLabels":["Vue"],"customInput":null},` + GoodExtras + `]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers[0].question: "Which database?" is not a question of this request; answers: no answer for questions[0] "Which framework?"`},
	{Name: "a label that is not an option", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":["Angular"],"customInput":null},` + GoodExtras + `]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers[0].selectedLabels[0]: "Angular" is not an option of this question`},
	{Name: "two labels for a single-select question", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":["Vue","React"],"customInput":null},` + GoodExtras + `]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers[0].selectedLabels: a single-select question takes one label, got 2`},
	{Name: "a label and Other text for a single-select question", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":"Svelte"},` + GoodExtras + `]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers[0]: a single-select question takes an option or custom input, not both`},
	{Name: "a label selected twice", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":null},{"question":"Which extras?","selectedLabels":["Store","Store"],"customInput":null}]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers[1].selectedLabels[1]: "Store" is selected more than once`},
	{Name: "neither label nor text", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":[],"customInput":null},` + GoodExtras + `]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers[0]: choose an option or type an answer`},
	{Name: "blank Other text", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":[],"customInput":"  "},` + GoodExtras + `]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers[0].customInput: must not be blank; send null when no text was typed`},
	{Name: "more labels than options", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":[` + strings.Repeat(`"",`, 21800) + `""],"customInput":null},` + GoodExtras + `]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers[0].selectedLabels: 21801 labels, but the question has only 2 options`},
	{Name: "many problems, a few listed", Msg: ResultMsg(`[` + strings.Repeat(`{"question":"Which database?","selectedLabels":[],"customInput":null},`, 40) + GoodExtras + `]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers[0].question: "Which database?" is not a question of this request; answers[1].question: "Which database?" is not a question of this request; answers[2].question: "Which database?" is not a question of this request; answers[3].question: "Which database?" is not a question of this request; answers[4].question: "Which database?" is not a question of this request; answers: …and 36 more problems, not listed`},
	{Name: "Other text too long", Msg: ResultMsg(`[{"question":"Which framework?","selectedLabels":[],"customInput":"` + strings.Repeat("a", defaultMaxCustomInput+1) + `"},` + GoodExtras + `]`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": answers[0].customInput: 4001 characters is too long; at most 4000 are accepted`},
}

// DecisionArgs are the arguments of the approval the decision cases decide:
// delete_branch of "feature/x", whose schema takes a non-empty name and nothing else.
const DecisionArgs = `{"name":"feature/x"}`

// DecisionSchema is delete_branch's JSON Schema in the decision cases.
const DecisionSchema = `{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}`

// DecisionPolicy asks about delete_branch, with its schema.
func DecisionPolicy() *Policy {
	return &Policy{Tools: []Tool{{Name: "delete_branch", Description: "Deletes a git branch", Schema: []byte(DecisionSchema)}}}
}

// DecisionMsg is a tool_approval_result event of session 123 with data.
func DecisionMsg(data string) string {
	return `{"type":"tool_approval_result","sessionId":123,"data":` + data + `}`
}

// DecisionCases are devices' decisions on the pending approval r1.
var DecisionCases = []DeviceCase{
	{Name: "approve", Msg: DecisionMsg(`{"requestId":"r1","decision":"approve"}`)},
	{Name: "deny with a reason", Msg: DecisionMsg(`{"requestId":"r1","decision":"deny","reason":"Wrong branch"}`)},
	{Name: "edit", Msg: DecisionMsg(`{"requestId":"r1","decision":"edit","arguments":{"name":"feature/y"}}`)},

	{Name: "decision without data", Msg: `{"type":"tool_approval_result","sessionId":123}`, Code: "malformed_event", Err: `askuser: malformed event: tool_approval_result without data`},
	{Name: "data not an object", Msg: DecisionMsg(`"r1"`), Code: "malformed_event", Err: `askuser: malformed event: tool_approval_result data: must be an object, not a string`},
	{Name: "missing requestId", Msg: DecisionMsg(`{"decision":"approve"}`), Code: "malformed_event", Err: `askuser: malformed event: tool_approval_result data: missing requestId`},
	{Name: "missing decision", Msg: DecisionMsg(`{"requestId":"r1"}`), Code: "malformed_event", Err: `askuser: malformed event: tool_approval_result data: missing decision; one of "approve", "deny", "edit" or "always"`},
	{Name: "decision not a string", Msg: DecisionMsg(`{"requestId":"r1","decision":true}`), Code: "malformed_event", Err: `askuser: malformed event: tool_approval_result data: decision: must be a string, not a boolean`},
	{Name: "unknown data field", Msg: DecisionMsg(`{"requestId":"r1","decision":"approve","force":true}`), Code: "malformed_event", Err: `askuser: malformed event: tool_approval_result data: force: unknown field; the fields of a decision are requestId, decision, reason, arguments and digest`},
	{Name: "a field given twice", Msg: DecisionMsg(`{"requestId":"r1","decision":"deny","decision":"approve"}`), Code: "malformed_event", Err: `askuser: malformed event: tool_approval_result data: decision: given twice; give each field once`},

	{Name: "unknown requestId", Msg: DecisionMsg(`{"requestId":"r2","decision":"approve"}`), Code: "not_pending", Err: `askuser: no such pending question`},
	{Name: "the digest of another approval", Msg: DecisionMsg(`{"requestId":"r1","decision":"approve","digest":"00000000000000000000000000000000"}`), Code: "not_pending", Err: `askuser: no such pending question: the decision is for another approval of this id (its digest differs)`},

	{Name: "a decision not offered", Msg: DecisionMsg(`{"requestId":"r1","decision":"always"}`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": decision: "always" is not a decision of this approval; it takes "approve", "deny" or "edit"`},
	{Name: "an unknown decision", Msg: DecisionMsg(`{"requestId":"r1","decision":"later"}`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": decision: "later" is not a decision of this approval; it takes "approve", "deny" or "edit"`},
	{Name: "a reason with approve", Msg: DecisionMsg(`{"requestId":"r1","decision":"approve","reason":"fine"}`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": reason: given only with the decision "deny"`},
	{Name: "arguments with approve", Msg: DecisionMsg(`{"requestId":"r1","decision":"approve","arguments":{"name":"x"}}`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": arguments: given only with the decision "edit"`},
	{Name: "an edit without arguments", Msg: DecisionMsg(`{"requestId":"r1","decision":"edit"}`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": arguments: missing; an edit gives the arguments to run the tool with`},
	{Name: "an edit the schema refuses", Msg: DecisionMsg(`{"requestId":"r1","decision":"edit","arguments":{"name":"","force":true}}`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": force: is not a field of this tool (it takes name); name: must not be empty`},
	{Name: "an edit of the wrong type", Msg: DecisionMsg(`{"requestId":"r1","decision":"edit","arguments":["feature/y"]}`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": arguments: must be an object, not an array`},
	{Name: "a reason too long", Msg: DecisionMsg(`{"requestId":"r1","decision":"deny","reason":"` + strings.Repeat("x", 1001) + `"}`), Code: "invalid_answer", Err: `askuser: invalid answer for request "r1": reason: 1001 characters; at most 1000 are accepted`},
}
