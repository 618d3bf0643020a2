package askuser

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/askuser-go/askuser/internal/jsonx"
	"github.com/askuser-go/askuser/wire"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

//go:embed schema/input.json schema/output.json
var schemaFiles embed.FS

// description is the tool description the model reads: the design's usage notes.
const description = `Use this tool when you need to ask the user questions during execution. ` +
	`This allows you to gather user preferences or requirements, clarify ambiguous instructions, ` +
	`get decisions on implementation choices as you work, or offer choices to the user about what direction to take.

Usage notes:
- Ask 1 to 4 questions in one call; each has a short header (at most 12 characters) and 2 to 4 options
- Users will always be able to select "Other" to provide custom text input; do not add an "Other" option yourself
- Use multiSelect: true to allow multiple answers to be selected
- If you recommend a specific option, make it the first in the list and add "(Recommended)" at the end of the label
- preview supports rendered markdown in a monospace box, multi-line with newlines
- Previews only render for single-select questions (not multiSelect)
- When any option has preview, UI switches to side-by-side layout
- The call waits for the user's answer; the result is {"answers":[...]} or {"error": "..."} when the user did not answer`

// ToolDefinition is what a host advertises to the model: the tool's name, description
// and JSON Schemas, in the shape most LLM APIs take.
type ToolDefinition struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// definition returns the ask_user_questions tool definition with its JSON Schemas as
// they are, a fresh copy.
func definition() ToolDefinition {
	s := loadSchemas()
	return ToolDefinition{
		Name:         ToolName,
		Description:  description,
		InputSchema:  bytes.Clone(s.inputRaw),
		OutputSchema: bytes.Clone(s.outputRaw),
	}
}

type schemas struct {
	// inputRaw is the input schema advertised (schema/input.json); acceptedRaw the one
	// calls are validated against (see accepted.go).
	inputRaw, acceptedRaw, outputRaw []byte
	// input is acceptedRaw compiled; output is outputRaw compiled.
	input, output *jsonschema.Schema
	// shape is what the library reads of acceptedRaw itself, advertised of inputRaw,
	// whose narrower bounds a refusal tells the model (see schemafields.go).
	shape, advertised *shape
}

// loadSchemas compiles the embedded schemas once. They are part of the library, so a
// failure is a bug in this package, reported by a panic on first use and by every test.
var loadSchemas = sync.OnceValue(func() *schemas {
	s := &schemas{}
	var err error
	if s.inputRaw, err = schemaFiles.ReadFile("schema/input.json"); err != nil {
		panic(err)
	}
	if s.outputRaw, err = schemaFiles.ReadFile("schema/output.json"); err != nil {
		panic(err)
	}
	if s.acceptedRaw, err = acceptedSchema(s.inputRaw); err != nil {
		panic("askuser: embedded schema input.json: " + err.Error())
	}
	s.input = mustCompile("accepted.json", s.acceptedRaw)
	s.output = mustCompile("output.json", s.outputRaw)
	s.shape, s.advertised = &shape{}, &shape{}
	if err := json.Unmarshal(s.acceptedRaw, s.shape); err != nil {
		panic(fmt.Sprintf("askuser: embedded schema input.json: %v", err))
	}
	if err := json.Unmarshal(s.inputRaw, s.advertised); err != nil {
		panic(fmt.Sprintf("askuser: embedded schema input.json: %v", err))
	}
	return s
})

func mustCompile(name string, raw []byte) *jsonschema.Schema {
	c := jsonschema.NewCompiler()
	url := "mem://askuser/" + name
	if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
		panic(fmt.Sprintf("askuser: embedded schema %s: %v", name, err))
	}
	sch, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("askuser: embedded schema %s: %v", name, err))
	}
	return sch
}

// ParseArguments turns the model's arguments into a [Request], validating them against
// the input schema and against the rules a schema cannot say: question texts unique
// within the call, option labels unique within a question, no option named "Other"
// (every client adds its own), no blank question or label. Unknown keys are refused
// everywhere except inside "metadata".
//
// The schema it validates against is the advertised one ([Definition]) read liberally:
// only a question's text is required; a header of up to 100 characters (advertised: 12),
// or none; 0 to 8 options (advertised: 2 to 4), where none is a question answered in free
// text; multiSelect left out for single-select; an option's description empty or left
// out; and the "placeholder" and "type" ("text" or "choice", checked against the options,
// then dropped) of Unity's AskUser. docs/ERRORS.md says why, limit by limit. An optional
// member given as null (an option's "preview", "metadata"), as strict schema dialects
// make models write it, is taken as absent.
//
// Two common model mistakes are forgiven: arguments double-encoded as a JSON string, and
// "questions" sent as a JSON-encoded string.
//
// On failure the error is an [*ArgumentsError] listing the problems, each with where it
// is: every one, up to twenty, then how many more there were.
func ParseArguments(arguments []byte) (*Request, error) {
	tree, text, problems := decodeArguments(arguments)
	if problems != nil {
		return nil, &ArgumentsError{Problems: problems}
	}
	problems = dropKinds(tree)
	if err := loadSchemas().input.Validate(tree); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, &ArgumentsError{Problems: []string{"arguments: " + err.Error()}}
		}
		problems = append(problems, schemaProblems(ve, tree)...)
	}
	req := requestFromTree(tree, text)
	problems = append(problems, req.problems()...)
	if len(problems) > 0 {
		return nil, &ArgumentsError{Problems: capProblems(sortProblems(problems))}
	}
	return req, nil
}

// Validate checks a Request built in Go by the same rules as [ParseArguments], so that
// whatever can be asked can be answered: every text must also be valid UTF-8 (a device
// is shown U+FFFD for a byte that is not, and could never echo the text asked), and
// Metadata, when set, a JSON object.
func (r *Request) Validate() error {
	_, err := r.validated()
	return err
}

// validated validates r as Validate does and returns the request as ParseArguments
// reads it: a copy that shares nothing with r, its metadata in the library's spelling.
func (r *Request) validated() (*Request, error) {
	if r == nil {
		return nil, &ArgumentsError{Problems: []string{"arguments: missing"}}
	}
	var problems []string
	text := func(s string, where func() string) {
		if !utf8.ValidString(s) {
			problems = append(problems, where()+": is not valid UTF-8")
		}
	}
	for i := range r.Questions {
		q := &r.Questions[i]
		for _, f := range questionStrings {
			text(*f.get(q), func() string { return questionLoc(i) + "." + f.name })
		}
		for k := range q.Options {
			for _, f := range optionTexts {
				text(*f.get(&q.Options[k]), func() string { return optionLoc(i, k) + "." + f.name })
			}
		}
	}
	if len(r.Metadata) > 0 {
		if !json.Valid(r.Metadata) {
			problems = append(problems, fieldMetadata+": not valid JSON: "+jsonx.SyntaxProblem(r.Metadata))
		}
	}
	if problems != nil {
		return nil, &ArgumentsError{Problems: capProblems(sortProblems(problems))}
	}
	args, err := jsonx.Marshal(r)
	if err != nil { // not for a request whose metadata is valid JSON
		return nil, &ArgumentsError{Problems: []string{"arguments: " + err.Error()}}
	}
	return ParseArguments(args)
}

// questionLoc and optionLoc are locations for problem messages.
func questionLoc(i int) string { return fieldQuestions + "[" + strconv.Itoa(i) + "]" }
func optionLoc(i, k int) string {
	return questionLoc(i) + "." + fieldOptions + "[" + strconv.Itoa(k) + "]"
}

// decodeArguments decodes the arguments into a generic JSON tree, unwrapping the two
// forgiven encodings and dropping optional members given as null. It returns the
// tree and the JSON text the tree's object was read from, whose metadata is kept as
// written.
func decodeArguments(arguments []byte) (any, []byte, []string) {
	if len(arguments) > wire.MaxArgumentsBytes {
		return nil, nil, []string{fmt.Sprintf("arguments: %d bytes is too large; at most %d bytes are accepted", len(arguments), wire.MaxArgumentsBytes)}
	}
	if len(bytes.TrimSpace(arguments)) == 0 {
		return nil, nil, []string{`arguments: empty; expected a JSON object like {"questions": [...]}`}
	}
	tree, err := jsonx.Decode(arguments)
	if err != nil {
		return nil, nil, []string{"arguments: not valid JSON: " + err.Error()}
	}
	if s, ok := tree.(string); ok { // double-encoded
		arguments = []byte(s)
		if tree, err = jsonx.Decode(arguments); err != nil {
			return nil, nil, []string{"arguments: a JSON string whose content is not valid JSON: " + err.Error()}
		}
	}
	if obj, ok := tree.(map[string]any); ok {
		if s, ok := obj[fieldQuestions].(string); ok {
			q, err := jsonx.Decode([]byte(s))
			if err != nil {
				return nil, nil, []string{fieldQuestions + ": must be an array of question objects; the string given is not valid JSON: " + err.Error()}
			}
			obj[fieldQuestions] = q
		}
	}
	dropOptionalNulls(tree, inputSchema())
	return tree, arguments, nil
}

// dropOptionalNulls removes, from every object the schema describes, the members that
// are not required and are null: "absent", as strict dialects make a model say it.
func dropOptionalNulls(v any, s *shape) {
	if s == nil {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x == nil && s.Props[k] != nil && !s.IsRequired(k) {
				delete(v, k)
				continue
			}
			dropOptionalNulls(x, s.Props[k])
		}
	case []any:
		for _, x := range v {
			dropOptionalNulls(x, s.Items)
		}
	}
}

// requestFromTree builds a Request from a decoded tree, taking whatever has the right
// type and leaving the rest zero, so that the rules below can run even on input the
// schema refused, and every problem is reported at once. Metadata is taken from text,
// the JSON the tree was read from, so that its numbers stay as written.
func requestFromTree(tree any, text []byte) *Request {
	obj, _ := tree.(map[string]any)
	req := &Request{}
	qs, _ := obj[fieldQuestions].([]any)
	if len(qs) > 0 {
		req.Questions = make([]Question, 0, len(qs))
	}
	for _, qv := range qs {
		qo, _ := qv.(map[string]any)
		q := Question{}
		for _, f := range questionStrings {
			*f.get(&q), _ = qo[f.name].(string)
		}
		q.MultiSelect, _ = qo[fieldMultiSelect].(bool)
		opts, _ := qo[fieldOptions].([]any)
		q.Options = make([]Option, 0, len(opts)) // [] for a free-text question, never null
		for _, ov := range opts {
			oo, _ := ov.(map[string]any)
			o := Option{}
			for _, f := range optionTexts {
				*f.get(&o), _ = oo[f.name].(string)
			}
			q.Options = append(q.Options, o)
		}
		req.Questions = append(req.Questions, q)
	}
	if _, ok := obj[fieldMetadata].(map[string]any); ok {
		// The only member named so in any case, or the schema refused the rest; the
		// last of them, as in the tree.
		var m struct {
			Metadata json.RawMessage `json:"metadata"`
		}
		_ = json.Unmarshal(text, &m)
		req.Metadata, _ = jsonx.Canonical(m.Metadata)
	}
	return req
}

// validateOutput checks a tool result against the output schema; used in tests and fuzzing.
func validateOutput(content []byte) error {
	v, err := jsonx.Decode(content)
	if err != nil {
		return err
	}
	return loadSchemas().output.Validate(v)
}
