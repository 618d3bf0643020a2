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

	"github.com/askuser-go/askuser/internal/jsonread"
	"github.com/askuser-go/askuser/internal/jsonwrite"
	"github.com/askuser-go/askuser/internal/quickschema"
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

// Definition returns the ask_user_questions tool definition. The schemas are the files
// under schema/ in this module, embedded. The returned value is a fresh copy.
func Definition() ToolDefinition {
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
	// quick is acceptedRaw compiled for its facts and the quick validity check;
	// advertised is inputRaw compiled for its facts, which a refusal tells the model.
	quick, advertised *quickschema.Schema
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
	s.quick = quickschema.Compile(s.acceptedRaw)
	s.advertised = quickschema.Compile(s.inputRaw)
	if s.quick == nil || s.advertised == nil {
		panic("askuser: embedded schema input.json uses a keyword outside the quick subset")
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
// (every client adds its own), no blank strings but an option's description. Unknown
// keys are refused everywhere except inside "metadata".
//
// The schema it validates against is the advertised one ([Definition]) read liberally: a
// header of up to 100 characters (advertised: 12), 1 to 8 options (advertised: 2 to 4),
// an option's description empty or left out (advertised: required). docs/ERRORS.md says
// why, limit by limit. An optional member given as null (an option's "preview",
// "metadata"), as strict schema dialects make models write it, is taken as absent.
//
// Two common model mistakes are forgiven: arguments double-encoded as a JSON string, and
// "questions" sent as a JSON-encoded string.
//
// On failure the error is an [*ArgumentsError] listing the problems, each with where it
// is: every one, up to twenty, then how many more there were.
func ParseArguments(arguments []byte) (*Request, error) {
	if req, ok := parseArgumentsFast(arguments); ok {
		return req, nil
	}
	return parseArgumentsSlow(arguments)
}

// parseArgumentsSlow is ParseArguments by way of a generic JSON tree and the general
// JSON Schema validator: the reference, and the way of every input the fast path does
// not take, so of every problem message.
func parseArgumentsSlow(arguments []byte) (*Request, error) {
	tree, problems := decodeArguments(arguments)
	if problems != nil {
		return nil, &ArgumentsError{Problems: problems}
	}
	s := loadSchemas()
	if fastPaths && s.quick.Valid(tree) {
		// Valid for the schema: the general validator would find nothing.
	} else if err := s.input.Validate(tree); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, &ArgumentsError{Problems: []string{"arguments: " + err.Error()}}
		}
		problems = schemaProblems(ve, tree)
	}
	req := requestFromTree(tree)
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
		for _, f := range questionTexts {
			text(*f.get(q), func() string { return questionLoc(i) + "." + f.name })
		}
		for k := range q.Options {
			for _, f := range optionTexts {
				text(*f.get(&q.Options[k]), func() string { return optionLoc(i, k) + "." + f.name })
			}
		}
	}
	if len(r.Metadata) > 0 {
		if _, err := jsonread.Decode(r.Metadata); err != nil {
			problems = append(problems, fieldMetadata+": not valid JSON: "+err.Error())
		}
	}
	if problems != nil {
		return nil, &ArgumentsError{Problems: capProblems(sortProblems(problems))}
	}
	return ParseArguments(encodeRequest(r))
}

// questionLoc and optionLoc are locations for problem messages.
func questionLoc(i int) string { return fieldQuestions + "[" + strconv.Itoa(i) + "]" }
func optionLoc(i, k int) string {
	return questionLoc(i) + "." + fieldOptions + "[" + strconv.Itoa(k) + "]"
}

// decodeArguments decodes the arguments into a generic JSON tree, unwrapping the two
// forgiven encodings and dropping optional members given as null.
func decodeArguments(arguments []byte) (any, []string) {
	if len(arguments) > MaxArgumentsBytes {
		return nil, []string{fmt.Sprintf("arguments: %d bytes is too large; at most %d bytes are accepted", len(arguments), MaxArgumentsBytes)}
	}
	if len(bytes.TrimSpace(arguments)) == 0 {
		return nil, []string{`arguments: empty; expected a JSON object like {"questions": [...]}`}
	}
	tree, err := jsonread.Decode(arguments)
	if err != nil {
		return nil, []string{"arguments: not valid JSON: " + err.Error()}
	}
	if s, ok := tree.(string); ok { // double-encoded
		if tree, err = jsonread.Decode([]byte(s)); err != nil {
			return nil, []string{"arguments: a JSON string whose content is not valid JSON: " + err.Error()}
		}
	}
	if obj, ok := tree.(map[string]any); ok {
		if s, ok := obj[fieldQuestions].(string); ok {
			q, err := jsonread.Decode([]byte(s))
			if err != nil {
				return nil, []string{fieldQuestions + ": must be an array of question objects; the string given is not valid JSON: " + err.Error()}
			}
			obj[fieldQuestions] = q
		}
	}
	dropOptionalNulls(tree, inputSchema())
	return tree, nil
}

// dropOptionalNulls removes, from every object the schema describes, the members that
// are not required and are null: "absent", as strict dialects make a model say it.
func dropOptionalNulls(v any, s *quickschema.Schema) {
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
// schema refused, and every problem is reported at once.
func requestFromTree(tree any) *Request {
	obj, _ := tree.(map[string]any)
	req := &Request{}
	qs, _ := obj[fieldQuestions].([]any)
	if len(qs) > 0 {
		req.Questions = make([]Question, 0, len(qs))
	}
	for _, qv := range qs {
		qo, _ := qv.(map[string]any)
		q := Question{}
		for _, f := range questionTexts {
			*f.get(&q), _ = qo[f.name].(string)
		}
		q.MultiSelect, _ = qo[fieldMultiSelect].(bool)
		opts, _ := qo[fieldOptions].([]any)
		if len(opts) > 0 {
			q.Options = make([]Option, 0, len(opts))
		}
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
	if md, ok := obj[fieldMetadata].(map[string]any); ok {
		req.Metadata = jsonwrite.AppendValue(nil, md)
	}
	return req
}

// validateOutput checks a tool result against the output schema; used in tests and fuzzing.
func validateOutput(content []byte) error {
	v, err := jsonread.Decode(content)
	if err != nil {
		return err
	}
	return loadSchemas().output.Validate(v)
}
