package askuser

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/askuser-go/askuser/internal/jsonx"
)

// The shape of the tool's input in one place. schema/input.json says which members there
// are, which are required and their bounds; the tables below say which Go field holds
// each member, in the schema's order. ParseArguments, Validate and the problem messages
// go through these two, and TestFieldsMatchSchema fails when the tables, the struct tags
// and the schema disagree. Adding a text field to options takes the schema, the struct
// field and one row here.

// Members of the arguments and of a question that are not text.
const (
	fieldQuestions   = "questions"
	fieldMetadata    = "metadata"
	fieldOptions     = "options"
	fieldMultiSelect = "multiSelect"
)

// textField is a string member of an object of type T.
type textField[T any] struct {
	name string
	get  func(*T) *string
}

// questionTexts are the string members of a question before its options and
// multiSelect.
var questionTexts = [...]textField[Question]{
	{"question", func(q *Question) *string { return &q.Question }},
	{"header", func(q *Question) *string { return &q.Header }},
}

// questionTail are the string members of a question after options and multiSelect.
var questionTail = [...]textField[Question]{
	{"placeholder", func(q *Question) *string { return &q.Placeholder }},
}

// questionStrings are all the string members of a question.
var questionStrings = append(questionTexts[:len(questionTexts):len(questionTexts)], questionTail[:]...)

// optionTexts are the members of an option, all strings.
var optionTexts = [...]textField[Option]{
	{"label", func(o *Option) *string { return &o.Label }},
	{"description", func(o *Option) *string { return &o.Description }},
	{"preview", func(o *Option) *string { return &o.Preview }},
}

// shape is a (sub)schema of schema/input.json as far as the library reads it itself:
// the facts its problem messages state (the members in order, the required ones, the
// bounds) and which members are optional, which a model may give as null. Validation is
// the JSON Schema validator's.
type shape struct {
	Type     string
	Required []string
	Props    map[string]*shape
	Fields   []string // the names of Props, in the schema's order
	Items    *shape
	// MinItems and MaxItems bound an array's length, MinLen and MaxLen a string's in
	// characters.
	MinItems, MaxItems, MinLen, MaxLen int
}

// UnmarshalJSON reads a schema object, keeping the order of its properties.
func (s *shape) UnmarshalJSON(b []byte) error {
	var raw struct {
		Type       string          `json:"type"`
		Required   []string        `json:"required"`
		Properties json.RawMessage `json:"properties"`
		Items      *shape          `json:"items"`
		MinItems   int             `json:"minItems"`
		MaxItems   int             `json:"maxItems"`
		MinLength  int             `json:"minLength"`
		MaxLength  int             `json:"maxLength"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*s = shape{Type: raw.Type, Required: raw.Required, Items: raw.Items, MinItems: raw.MinItems, MaxItems: raw.MaxItems, MinLen: raw.MinLength, MaxLen: raw.MaxLength}
	if len(raw.Properties) == 0 {
		return nil
	}
	s.Props = map[string]*shape{}
	var err error
	merr := jsonx.Members(raw.Properties, func(name string, v json.RawMessage) bool {
		p := &shape{}
		if err = json.Unmarshal(v, p); err != nil {
			return false
		}
		s.Fields = append(s.Fields, name)
		s.Props[name] = p
		return true
	})
	if err == nil {
		err = merr
	}
	return err
}

// At returns the shape at a path of member names, where "[]" steps into an array's
// items, or nil when there is none.
func (s *shape) At(path ...string) *shape {
	for _, p := range path {
		if s == nil {
			return nil
		}
		if p == "[]" {
			s = s.Items
		} else {
			s = s.Props[p]
		}
	}
	return s
}

// IsRequired reports whether name is a required member of an object.
func (s *shape) IsRequired(name string) bool { return slices.Contains(s.Required, name) }

// inputSchema is the shape of the accepted input schema (schema/input.json widened, see
// accepted.go).
func inputSchema() *shape { return loadSchemas().shape }

// advertisedAt is schemaAt in the schema advertised, schema/input.json, where some
// bounds are narrower than those accepted (see accepted.go).
func advertisedAt(path []string) *shape {
	return loadSchemas().advertised.At(schemaPath(path)...)
}

// optionPath is where an option's schema is in inputSchema.
var optionPath = []string{fieldQuestions, "[]", fieldOptions, "[]"}

// schemaAt returns the schema at a location of the arguments given as JSON pointer
// segments ("questions", "1", "options"), or nil.
func schemaAt(path []string) *shape {
	return inputSchema().At(schemaPath(path)...)
}

// schemaPath turns JSON pointer segments into a path of shape.At: "[]" for an index.
func schemaPath(path []string) []string {
	p := make([]string, len(path))
	for i, seg := range path {
		if _, err := strconv.Atoi(seg); err == nil {
			p[i] = "[]"
		} else {
			p[i] = seg
		}
	}
	return p
}
