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
		return nil, &ArgumentsError{Problems: sortProblems(problems)}
	}
	return req, nil
}

// Validate checks a Request built in Go by the same rules as [ParseArguments].
func (r *Request) Validate() error {
	if r == nil {
		return &ArgumentsError{Problems: []string{"arguments: missing"}}
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return &ArgumentsError{Problems: []string{"arguments: " + err.Error()}}
	}
	_, err = ParseArguments(raw)
	return err
}

// parseArgumentsFast reads valid arguments straight into a Request, in one pass, without
// the generic tree of parseArgumentsSlow (whose maps and boxed strings are most of a
// call's cost). It takes only what it can tell is valid: every member is a field of the
// Request with a value of that field's type, no name is repeated, and q, the quick
// schema, and Request.problems find nothing. Anything else (unknown or repeated names,
// nulls, invalid JSON, any problem) returns false, and the slow path decides and words
// the problems; when both accept, they return the same Request, which
// FuzzParseArgumentsFastAgreesWithSlow checks. The forgiven encodings are unwrapped as
// the slow path does; metadata, being free-form, is decoded and re-encoded as there.
func parseArgumentsFast(arguments []byte, q *quickSchema) (*Request, bool) {
	if len(arguments) > MaxArgumentsBytes {
		return nil, false
	}
	sc := jsonScanner{b: arguments}
	if sc.peek() == '"' { // double-encoded
		inner, ok := sc.str()
		if !ok || !sc.atEnd() {
			return nil, false
		}
		sc = jsonScanner{b: []byte(inner)}
	}
	req := &Request{}
	if !sc.request(req, q) || !sc.atEnd() || req.problems() != nil {
		return nil, false
	}
	return req, true
}

// request reads the arguments object, checked against q.
func (sc *jsonScanner) request(req *Request, q *quickSchema) bool {
	if !q.isType("object") {
		return false
	}
	var seen [2]bool // questions, metadata
	ok := sc.object(func(name string) bool {
		p := q.props[name]
		if p == nil {
			return false
		}
		switch name {
		case "questions":
			if seen[0] {
				return false
			}
			seen[0] = true
			if sc.peek() == '"' { // questions sent as a JSON-encoded string
				s, ok := sc.str()
				if !ok {
					return false
				}
				inner := jsonScanner{b: []byte(s)}
				return inner.questions(req, p) && inner.atEnd()
			}
			return sc.questions(req, p)
		case "metadata":
			if seen[1] {
				return false
			}
			seen[1] = true
			return sc.metadata(req, p)
		}
		return false
	})
	return ok && q.hasRequired(func(name string) bool {
		return name == "questions" && seen[0] || name == "metadata" && seen[1]
	})
}

func (sc *jsonScanner) questions(req *Request, p *quickSchema) bool {
	if !p.isType("array") || p.items == nil || !p.items.isType("object") {
		return false
	}
	qs := p.items
	ok := sc.array(func() bool {
		var q Question
		var seen [4]bool // question, header, options, multiSelect
		ok := sc.object(func(name string) bool {
			f := qs.props[name]
			if f == nil {
				return false
			}
			var i int
			var ok bool
			switch name {
			case "question":
				i = 0
				q.Question, ok = sc.str()
				ok = ok && f.validString(q.Question)
			case "header":
				i = 1
				q.Header, ok = sc.str()
				ok = ok && f.validString(q.Header)
			case "options":
				i = 2
				ok = sc.options(&q, f)
			case "multiSelect":
				i = 3
				q.MultiSelect, ok = sc.boolean()
				ok = ok && f.isType("boolean")
			default:
				return false
			}
			if !ok || seen[i] {
				return false
			}
			seen[i] = true
			return true
		})
		if !ok || !qs.hasRequired(func(name string) bool {
			i := slices.Index([]string{"question", "header", "options", "multiSelect"}, name)
			return i >= 0 && seen[i]
		}) {
			return false
		}
		req.Questions = append(req.Questions, q)
		return true
	})
	return ok && p.validCount(len(req.Questions))
}

func (sc *jsonScanner) options(q *Question, p *quickSchema) bool {
	if !p.isType("array") || p.items == nil || !p.items.isType("object") {
		return false
	}
	os := p.items
	q.Options = make([]Option, 0, MaxOptions) // one allocation for the usual 2 to 4
	ok := sc.array(func() bool {
		var o Option
		var seen [3]bool // label, description, preview
		ok := sc.object(func(name string) bool {
			f := os.props[name]
			if f == nil {
				return false
			}
			var i int
			var s string
			var ok bool
			switch name {
			case "label":
				i = 0
				s, ok = sc.str()
				o.Label = s
			case "description":
				i = 1
				s, ok = sc.str()
				o.Description = s
			case "preview":
				i = 2
				s, ok = sc.str()
				o.Preview = s
			default:
				return false
			}
			if !ok || seen[i] || !f.validString(s) {
				return false
			}
			seen[i] = true
			return true
		})
		if !ok || !os.hasRequired(func(name string) bool {
			i := slices.Index([]string{"label", "description", "preview"}, name)
			return i >= 0 && seen[i]
		}) {
			return false
		}
		q.Options = append(q.Options, o)
		return true
	})
	if len(q.Options) == 0 {
		q.Options = nil // as the slow path has it
	}
	return ok && p.validCount(len(q.Options))
}

// metadata decodes and re-encodes the metadata object exactly as the slow path does.
func (sc *jsonScanner) metadata(req *Request, p *quickSchema) bool {
	if sc.peek() != '{' {
		return false
	}
	start := sc.i
	if !sc.skipComposite() {
		return false
	}
	tree, err := decodeJSON(sc.b[start:sc.i])
	md, ok := tree.(map[string]any)
	if err != nil || !ok || !p.valid(md) {
		return false
	}
	req.Metadata, err = marshal(md)
	return err == nil
}

// jsonScanner reads the few JSON shapes of the fast paths (the model's arguments, a
// device's result), strictly: any byte it does not expect makes the caller give up.
type jsonScanner struct {
	b []byte
	i int
}

// peek skips white space and returns the next byte, or 0 at the end.
func (sc *jsonScanner) peek() byte {
	for sc.i < len(sc.b) {
		switch c := sc.b[sc.i]; c {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return c
		}
	}
	return 0
}

// eat consumes c, after white space, when it is next.
func (sc *jsonScanner) eat(c byte) bool {
	if sc.peek() == c && sc.i < len(sc.b) {
		sc.i++
		return true
	}
	return false
}

// atEnd reports whether only white space is left.
func (sc *jsonScanner) atEnd() bool {
	sc.peek()
	return sc.i == len(sc.b)
}

// literal consumes word (true, false, null) when it is next.
func (sc *jsonScanner) literal(word string) bool {
	sc.peek()
	if len(sc.b)-sc.i >= len(word) && string(sc.b[sc.i:sc.i+len(word)]) == word {
		sc.i += len(word)
		return true
	}
	return false
}

func (sc *jsonScanner) boolean() (v, ok bool) {
	if sc.literal("true") {
		return true, true
	}
	return false, sc.literal("false")
}

// str reads a string. One without escapes, control characters or invalid UTF-8 is taken
// as it is; any other is unquoted by encoding/json, so that both read it alike.
func (sc *jsonScanner) str() (string, bool) {
	if sc.peek() != '"' {
		return "", false
	}
	start := sc.i
	plain, ascii := true, true
	for j := start + 1; j < len(sc.b); j++ {
		switch c := sc.b[j]; {
		case c == '"':
			sc.i = j + 1
			raw := sc.b[start+1 : j]
			if plain && (ascii || utf8.Valid(raw)) {
				return string(raw), true
			}
			if s, ok := unescapeSimple(raw); ok {
				return s, true
			}
			var s string
			if json.Unmarshal(sc.b[start:j+1], &s) != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			plain = false
			j++ // the escaped byte, which may be a quote
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// name reads a member name. The names of the protocol, spelt without escapes, come back
// as constants, so that reading them allocates nothing.
func (sc *jsonScanner) name() (string, bool) {
	if sc.peek() != '"' {
		return "", false
	}
	for j := sc.i + 1; j < len(sc.b); j++ {
		c := sc.b[j]
		if c == '"' {
			if n, ok := protocolNames[string(sc.b[sc.i+1:j])]; ok {
				sc.i = j + 1
				return n, true
			}
			break
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	return sc.str()
}

// protocolNames interns the member names of the protocol for jsonScanner.name.
var protocolNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{"questions", "metadata", "question", "header", "options", "multiSelect", "label",
		"description", "preview", "requestId", "answers", "declined", "selectedLabels", "customInput"} {
		m[n] = n
	}
	return m
}()

// unescapeSimple unquotes the contents of a JSON string whose escapes are all of one
// character (\n, \", ...), the escapes of multi-line previews, as encoding/json would. It
// returns false for \u escapes, control characters and invalid UTF-8, which it leaves to
// encoding/json.
func unescapeSimple(raw []byte) (string, bool) {
	if !utf8.Valid(raw) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(raw))
	start := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c < 0x20 {
			return "", false
		}
		if c != '\\' {
			continue
		}
		if i+1 == len(raw) {
			return "", false
		}
		b.Write(raw[start:i])
		i++
		switch raw[i] {
		case '"', '\\', '/':
			b.WriteByte(raw[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		default:
			return "", false
		}
		start = i + 1
	}
	b.Write(raw[start:])
	return b.String(), true
}

// object reads an object, calling member for each name with the scanner at its value,
// which member must consume.
func (sc *jsonScanner) object(member func(name string) bool) bool {
	if !sc.eat('{') {
		return false
	}
	if sc.eat('}') {
		return true
	}
	for {
		name, ok := sc.name()
		if !ok || !sc.eat(':') || !member(name) {
			return false
		}
		if !sc.eat(',') {
			return sc.eat('}')
		}
	}
}

// array reads an array, calling elem with the scanner at each element.
func (sc *jsonScanner) array(elem func() bool) bool {
	if !sc.eat('[') {
		return false
	}
	if sc.eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if !sc.eat(',') {
			return sc.eat(']')
		}
	}
}

// skipComposite moves past the object or array that starts here, matching brackets
// outside strings without checking anything else: the caller decodes what it skipped.
func (sc *jsonScanner) skipComposite() bool {
	depth := 0
	for ; sc.i < len(sc.b); sc.i++ {
		switch sc.b[sc.i] {
		case '"':
			for sc.i++; sc.i < len(sc.b) && sc.b[sc.i] != '"'; sc.i++ {
				if sc.b[sc.i] == '\\' {
					sc.i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				sc.i++
				return true
			}
		}
	}
	return false
}

// quickSchema is the subset of JSON Schema that schema/input.json uses (type, required,
// properties, additionalProperties: false, items, minItems, maxItems, minLength,
// maxLength), compiled from that same file. It only answers "valid or not": the general
// validator spends most of the time and memory of a call on bookkeeping for error
// reports, so a valid call, the common case, skips it, and an invalid one still gets
// its detailed problems from it. Being compiled from the file, it cannot drift from it;
// a keyword outside the subset turns it off (compileQuick returns nil).
type quickSchema struct {
	typ                string // "" (any), "object", "array", "string" or "boolean"
	required           []string
	props              map[string]*quickSchema
	closed             bool // additionalProperties: false
	items              *quickSchema
	minItems, maxItems int // maxItems -1: no bound
	minLen, maxLen     int // maxLen -1: no bound
}

// compileQuick compiles a schema document, or returns nil when it uses anything outside
// the subset.
func compileQuick(raw []byte) *quickSchema {
	var doc any
	if json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	q, ok := quickFrom(doc)
	if !ok {
		return nil
	}
	return q
}

func quickFrom(v any) (*quickSchema, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	q := &quickSchema{maxItems: -1, maxLen: -1}
	count := func(x any) (int, bool) {
		f, ok := x.(float64)
		return int(f), ok && f >= 0 && f == float64(int(f))
	}
	for k, x := range obj {
		switch k {
		case "$schema", "$id", "$comment", "title", "description":
			// Identifiers and annotations: no effect on validity.
		case "type":
			t, _ := x.(string)
			switch t {
			case "object", "array", "string", "boolean":
				q.typ = t
			default:
				return nil, false
			}
		case "required":
			list, ok := x.([]any)
			if !ok {
				return nil, false
			}
			for _, r := range list {
				name, ok := r.(string)
				if !ok {
					return nil, false
				}
				q.required = append(q.required, name)
			}
		case "properties":
			props, ok := x.(map[string]any)
			if !ok {
				return nil, false
			}
			q.props = make(map[string]*quickSchema, len(props))
			for name, p := range props {
				if q.props[name], ok = quickFrom(p); !ok {
					return nil, false
				}
			}
		case "additionalProperties":
			if b, ok := x.(bool); !ok || b {
				return nil, false
			}
			q.closed = true
		case "items":
			if q.items, ok = quickFrom(x); !ok {
				return nil, false
			}
		case "minItems":
			if q.minItems, ok = count(x); !ok {
				return nil, false
			}
		case "maxItems":
			if q.maxItems, ok = count(x); !ok {
				return nil, false
			}
		case "minLength":
			if q.minLen, ok = count(x); !ok {
				return nil, false
			}
		case "maxLength":
			if q.maxLen, ok = count(x); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return q, true
}

// valid reports whether v, a tree from decodeJSON, is valid for the schema. Each keyword
// applies to the values of its kind only, as in JSON Schema.
func (q *quickSchema) valid(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if q.typ != "" && q.typ != "object" {
			return false
		}
		for _, r := range q.required {
			if _, ok := v[r]; !ok {
				return false
			}
		}
		for k, x := range v {
			p, ok := q.props[k]
			if !ok {
				if q.closed {
					return false
				}
				continue
			}
			if !p.valid(x) {
				return false
			}
		}
	case []any:
		if q.typ != "" && q.typ != "array" || len(v) < q.minItems || q.maxItems >= 0 && len(v) > q.maxItems {
			return false
		}
		if q.items != nil {
			for _, x := range v {
				if !q.items.valid(x) {
					return false
				}
			}
		}
	case string:
		return q.validString(v)
	case bool:
		return q.typ == "" || q.typ == "boolean"
	default: // null and numbers: no type of the subset admits them
		return q.typ == ""
	}
	return true
}

// validString is valid for a string.
func (q *quickSchema) validString(s string) bool {
	if !q.isType("string") {
		return false
	}
	if q.minLen > 0 || q.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if n < q.minLen || q.maxLen >= 0 && n > q.maxLen {
			return false
		}
	}
	return true
}

// isType reports whether the schema admits values of JSON type t, as far as "type" says.
func (q *quickSchema) isType(t string) bool { return q.typ == "" || q.typ == t }

// validCount is valid's length check for an array of n items.
func (q *quickSchema) validCount(n int) bool {
	return n >= q.minItems && (q.maxItems < 0 || n <= q.maxItems)
}

// hasRequired reports whether every required name of an object is present.
func (q *quickSchema) hasRequired(present func(name string) bool) bool {
	for _, r := range q.required {
		if !present(r) {
			return false
		}
	}
	return true
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

// decodeJSON decodes exactly one JSON value, keeping numbers as json.Number.
//
// Input without a number, the common case, goes to json.Unmarshal, which reads it in
// place, where a json.Decoder copies it into a buffer grown by doubling (about three
// times its size, allocated on every call). Unmarshal has no UseNumber, so input with a
// number, and input Unmarshal refuses, go the Decoder's way: the tree, and any error, are
// the same either way.
func decodeJSON(b []byte) (any, error) {
	if !mayHaveNumber(b) {
		var v any
		if json.Unmarshal(b, &v) == nil {
			return v, nil
		}
	}
	return decodeJSONNumbers(b)
}

// mayHaveNumber reports whether b, read as JSON, has a character that starts a number
// outside every string. It skips each string with bytes.IndexByte, so that long texts
// (previews) cost little.
func mayHaveNumber(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for { // to the closing quote: one after an even run of backslashes
				j := bytes.IndexByte(b[i+1:], '"')
				if j < 0 {
					return false // unterminated: not JSON, which Unmarshal will say
				}
				i += 1 + j
				k := i - 1
				for b[k] == '\\' {
					k--
				}
				if (i-1-k)%2 == 0 {
					break
				}
			}
		case c == '-' || c >= '0' && c <= '9':
			return true
		}
	}
	return false
}

func decodeJSONNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
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
		req.Metadata, _ = marshal(md)
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
