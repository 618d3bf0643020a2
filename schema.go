package askuser

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

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
	inputRaw, outputRaw []byte
	input, output       *jsonschema.Schema
	// quickInput recognises valid arguments without the general validator; nil when the
	// input schema uses a keyword it does not know.
	quickInput *quickSchema
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
	s.input = mustCompile("input.json", s.inputRaw)
	s.quickInput = compileQuick(s.inputRaw)
	s.output = mustCompile("output.json", s.outputRaw)
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
// within the call, option labels unique within a question, headers of at most 12
// characters, no option named "Other" (every client adds its own), no blank strings.
// Unknown keys are refused everywhere except inside "metadata".
//
// Two common model mistakes are forgiven: arguments double-encoded as a JSON string, and
// "questions" sent as a JSON-encoded string.
//
// On failure the error is an [*ArgumentsError] listing every problem, each with where it is.
func ParseArguments(arguments []byte) (*Request, error) {
	if q := loadSchemas().quickInput; q != nil {
		if req, ok := parseArgumentsFast(arguments, q); ok {
			return req, nil
		}
	}
	return parseArgumentsSlow(arguments)
}

// parseArgumentsSlow is ParseArguments by way of a generic JSON tree: the reference, and
// the way of every input the fast path does not take, so of every problem message.
func parseArgumentsSlow(arguments []byte) (*Request, error) {
	tree, problems := decodeArguments(arguments)
	if problems != nil {
		return nil, &ArgumentsError{Problems: problems}
	}
	s := loadSchemas()
	if s.quickInput != nil && s.quickInput.valid(tree) {
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

// maxArgumentProblems bounds the problems listed for invalid arguments: enough to fix
// any call a model means, few enough that junk arguments cannot flood its context.
const maxArgumentProblems = 20

// capProblems keeps the first maxArgumentProblems and says how many more there were.
func capProblems(p []string) []string {
	if len(p) <= maxArgumentProblems {
		return p
	}
	return append(p[:maxArgumentProblems:maxArgumentProblems], moreProblems("arguments", len(p)-maxArgumentProblems))
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
	for i, q := range r.Questions {
		qp := func() string { return "questions[" + strconv.Itoa(i) + "]" }
		text(q.Question, func() string { return qp() + ".question" })
		text(q.Header, func() string { return qp() + ".header" })
		for k, o := range q.Options {
			op := func() string { return qp() + ".options[" + strconv.Itoa(k) + "]" }
			text(o.Label, func() string { return op() + ".label" })
			text(o.Description, func() string { return op() + ".description" })
			text(o.Preview, func() string { return op() + ".preview" })
		}
	}
	if len(r.Metadata) > 0 {
		if _, err := decodeJSON(r.Metadata); err != nil {
			problems = append(problems, "metadata: not valid JSON: "+err.Error())
		}
	}
	if problems != nil {
		return nil, &ArgumentsError{Problems: capProblems(sortProblems(problems))}
	}
	return ParseArguments(encodeRequest(r))
}

// encodeRequest encodes r as the model would send it.
func encodeRequest(r *Request) []byte {
	b := append([]byte(nil), `{"questions":`...)
	b = appendQuestions(b, r.Questions)
	if len(r.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		b = append(b, r.Metadata...)
	}
	return append(b, '}')
}

// equal reports whether r and o ask the same: the same questions, options and metadata.
func (r *Request) equal(o *Request) bool {
	return bytes.Equal(r.Metadata, o.Metadata) && slices.EqualFunc(r.Questions, o.Questions, func(a, b Question) bool {
		return a.Question == b.Question && a.Header == b.Header && a.MultiSelect == b.MultiSelect && slices.Equal(a.Options, b.Options)
	})
}

// decodeArguments decodes the arguments into a generic JSON tree, unwrapping the two
// forgiven encodings.
func decodeArguments(arguments []byte) (any, []string) {
	if len(arguments) > MaxArgumentsBytes {
		return nil, []string{fmt.Sprintf("arguments: %d bytes is too large; at most %d bytes are accepted", len(arguments), MaxArgumentsBytes)}
	}
	if len(bytes.TrimSpace(arguments)) == 0 {
		return nil, []string{`arguments: empty; expected a JSON object like {"questions": [...]}`}
	}
	tree, err := decodeJSON(arguments)
	if err != nil {
		return nil, []string{"arguments: not valid JSON: " + err.Error()}
	}
	if s, ok := tree.(string); ok { // double-encoded
		if tree, err = decodeJSON([]byte(s)); err != nil {
			return nil, []string{"arguments: a JSON string whose content is not valid JSON: " + err.Error()}
		}
	}
	if obj, ok := tree.(map[string]any); ok {
		if s, ok := obj["questions"].(string); ok {
			q, err := decodeJSON([]byte(s))
			if err != nil {
				return nil, []string{"questions: must be an array of question objects; the string given is not valid JSON: " + err.Error()}
			}
			obj["questions"] = q
		}
	}
	return tree, nil
}

// decodeJSON decodes exactly one JSON value into a tree of map[string]any, []any,
// string, json.Number, bool and nil, the last of a repeated member name winning. Its
// error says what is wrong in the library's own words (see jsonSyntaxError).
func decodeJSON(b []byte) (any, error) {
	if problem := jsonSyntaxError(b); problem != "" {
		return nil, errors.New(problem)
	}
	w := jsonWalker{b: b}
	return w.value(), nil
}

// fieldsAt lists the fields allowed at an instance location, for error messages.
func fieldsAt(path []string) []string {
	switch {
	case len(path) == 0:
		return []string{"questions", "metadata"}
	case len(path) == 2 && path[0] == "questions":
		return []string{"question", "header", "options", "multiSelect"}
	case len(path) == 4 && path[2] == "options":
		return []string{"label", "description", "preview"}
	}
	return nil
}

// schemaProblems turns a schema validation error into one actionable line per problem.
func schemaProblems(ve *jsonschema.ValidationError, tree any) []string {
	var out []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		out = append(out, describeSchemaError(e, tree)...)
	}
	walk(ve)
	return out
}

func describeSchemaError(e *jsonschema.ValidationError, tree any) []string {
	path := splitPointer(e.InstanceLocation)
	where := displayPath(path)
	value := lookup(tree, path)
	keyword := e.KeywordLocation[strings.LastIndexByte(e.KeywordLocation, '/')+1:]
	switch keyword {
	case "required":
		obj, _ := value.(map[string]any)
		var out []string
		for _, f := range requiredAt(path) {
			if _, ok := obj[f]; !ok {
				out = append(out, fmt.Sprintf("%s: missing required field %q", joinPath(where, f), f))
			}
		}
		return out
	case "additionalProperties":
		obj, _ := value.(map[string]any)
		allowed := fieldsAt(path)
		var out []string
		for k := range obj {
			if !slices.Contains(allowed, k) {
				out = append(out, fmt.Sprintf("%s: unknown field; the allowed fields here are %s", joinPath(where, k), strings.Join(allowed, ", ")))
			}
		}
		slices.Sort(out)
		return out
	case "type":
		want := strings.TrimPrefix(e.Message, "expected ")
		if i := strings.Index(want, ", but got"); i >= 0 {
			want = want[:i]
		}
		return []string{fmt.Sprintf("%s: must be %s, not %s", where, article(want), article(jsonTypeName(value)))}
	case "minItems", "maxItems":
		arr, _ := value.([]any)
		name, lo, hi := "questions", MinQuestions, MaxQuestions
		if len(path) > 0 && path[len(path)-1] == "options" {
			name, lo, hi = "options", MinOptions, MaxOptions
		}
		return []string{fmt.Sprintf("%s: must have %d to %d %s, got %d", where, lo, hi, name, len(arr))}
	case "minLength":
		return []string{where + ": must not be empty"}
	case "maxLength":
		s, _ := value.(string)
		return []string{fmt.Sprintf("%s: must be at most %d characters, got %d", where, maxLengthAt(path), utf8.RuneCountInString(s))}
	}
	return []string{where + ": " + e.Message}
}

func requiredAt(path []string) []string {
	switch len(path) {
	case 0:
		return []string{"questions"}
	case 2:
		return []string{"question", "header", "options", "multiSelect"}
	case 4:
		return []string{"label", "description"}
	}
	return nil
}

// maxLengthAt mirrors the maxLength bounds of schema/input.json, for messages.
func maxLengthAt(path []string) int {
	switch path[len(path)-1] {
	case "header":
		return MaxHeaderLength
	case "label":
		return 100
	case "preview":
		return 20000
	}
	return 1000
}

func article(typ string) string {
	switch typ {
	case "object", "array", "integer":
		return "an " + typ
	case "null":
		return "null"
	}
	return "a " + typ
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func splitPointer(p string) []string {
	if p == "" || p == "/" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

func lookup(v any, path []string) any {
	for _, p := range path {
		switch t := v.(type) {
		case map[string]any:
			v = t[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

// displayPath renders a JSON pointer's segments as questions[1].options[0].label.
func displayPath(path []string) string {
	if len(path) == 0 {
		return "arguments"
	}
	var b strings.Builder
	for _, p := range path {
		if _, err := strconv.Atoi(p); err == nil {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func joinPath(where, field string) string {
	if where == "arguments" {
		return field
	}
	return where + "." + field
}

// requestFromTree builds a Request from a decoded tree, taking whatever has the right
// type and leaving the rest zero, so that the rules below can run even on input the
// schema refused, and every problem is reported at once.
func requestFromTree(tree any) *Request {
	obj, _ := tree.(map[string]any)
	req := &Request{}
	qs, _ := obj["questions"].([]any)
	if len(qs) > 0 {
		req.Questions = make([]Question, 0, len(qs))
	}
	for _, qv := range qs {
		qo, _ := qv.(map[string]any)
		q := Question{}
		q.Question, _ = qo["question"].(string)
		q.Header, _ = qo["header"].(string)
		q.MultiSelect, _ = qo["multiSelect"].(bool)
		opts, _ := qo["options"].([]any)
		if len(opts) > 0 {
			q.Options = make([]Option, 0, len(opts))
		}
		for _, ov := range opts {
			oo, _ := ov.(map[string]any)
			o := Option{}
			o.Label, _ = oo["label"].(string)
			o.Description, _ = oo["description"].(string)
			o.Preview, _ = oo["preview"].(string)
			q.Options = append(q.Options, o)
		}
		req.Questions = append(req.Questions, q)
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		req.Metadata = appendJSONValue(nil, md)
	}
	return req
}

// problems checks the rules the schema cannot express. Empty strings are the schema's to
// report; this reports strings that are only white space. Locations are formatted only
// for a problem found: a valid request, the common case, costs no formatting.
func (r *Request) problems() []string {
	var out []string
	blank := func(s string, where func() string) {
		if s != "" && strings.TrimSpace(s) == "" {
			out = append(out, where()+": must not be blank")
		}
	}
	seenQ := make(map[string]int, len(r.Questions))
	for i, q := range r.Questions {
		qp := func() string { return "questions[" + strconv.Itoa(i) + "]" }
		blank(q.Question, func() string { return qp() + ".question" })
		blank(q.Header, func() string { return qp() + ".header" })
		if t := strings.TrimSpace(q.Question); t != "" {
			if j, dup := seenQ[t]; dup {
				out = append(out, fmt.Sprintf("%s.question: same text as questions[%d].question; each question must be different", qp(), j))
			} else {
				seenQ[t] = i
			}
		}
		seenL := make(map[string]int, len(q.Options))
		for k, o := range q.Options {
			op := func() string { return qp() + ".options[" + strconv.Itoa(k) + "]" }
			blank(o.Label, func() string { return op() + ".label" })
			blank(o.Description, func() string { return op() + ".description" })
			blank(o.Preview, func() string { return op() + ".preview" })
			t := strings.TrimSpace(o.Label)
			if t == "" {
				continue
			}
			if isOtherLabel(t) {
				out = append(out, fmt.Sprintf("%s.label: %q duplicates the \"Other\" choice every client adds with a text box; remove this option", op(), o.Label))
			}
			if j, dup := seenL[t]; dup {
				out = append(out, fmt.Sprintf("%s.label: same label as %s.options[%d].label; labels must be unique within a question", op(), qp(), j))
			} else {
				seenL[t] = k
			}
		}
	}
	return out
}

// isOtherLabel reports whether a label is the client's own "Other" choice, in any case,
// with trailing punctuation, or in Chinese.
func isOtherLabel(label string) bool {
	t := strings.TrimRightFunc(label, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
	if strings.EqualFold(t, "other") || t == "其他" || t == "其它" {
		return true
	}
	// "Other (please specify)" and the like.
	lower := strings.ToLower(t)
	return strings.HasPrefix(lower, "other (") || strings.HasPrefix(lower, "other:")
}

// sortProblems orders problems by where they are, numbers compared as numbers, so that
// the list reads top to bottom and is the same on every run.
func sortProblems(p []string) []string {
	slices.SortStableFunc(p, naturalCompare)
	return slices.Compact(p)
}

func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			na, _ := strconv.Atoi(a[:da])
			nb, _ := strconv.Atoi(b[:db])
			if na != nb {
				return na - nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitPrefix(s string) int {
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// validateOutput checks a tool result against the output schema; used in tests and fuzzing.
func validateOutput(content []byte) error {
	v, err := decodeJSON(content)
	if err != nil {
		return err
	}
	return loadSchemas().output.Validate(v)
}
