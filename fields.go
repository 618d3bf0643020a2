package askuser

import (
	"strconv"

	"github.com/askuser-go/askuser/internal/quickschema"
)

// The shape of the tool's input in one place. schema/input.json says which members there
// are, which are required and their bounds; the tables below say which Go field holds
// each member, in the schema's order. The readers (the fast path and the reference),
// the encoder, Validate and the problem messages all go through these two, and
// TestFieldsMatchSchema fails when the tables and the schema disagree. Adding a text
// field to options takes the schema, the struct field and one row here.

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

// questionTexts are the string members of a question; its other members are options and
// multiSelect.
var questionTexts = [...]textField[Question]{
	{"question", func(q *Question) *string { return &q.Question }},
	{"header", func(q *Question) *string { return &q.Header }},
}

// optionTexts are the members of an option, all strings.
var optionTexts = [...]textField[Option]{
	{"label", func(o *Option) *string { return &o.Label }},
	{"description", func(o *Option) *string { return &o.Description }},
	{"preview", func(o *Option) *string { return &o.Preview }},
}

// inputSchema is the accepted input schema compiled (schema/input.json widened, see
// accepted.go): the facts of the shape (required members, bounds, the order of the
// fields) and the quick validity check.
func inputSchema() *quickschema.Schema { return loadSchemas().quick }

// advertisedAt is schemaAt in the schema advertised, schema/input.json, where some
// bounds are narrower than those accepted (see accepted.go).
func advertisedAt(path []string) *quickschema.Schema {
	return loadSchemas().advertised.At(schemaPath(path)...)
}

// optionPath is where an option's schema is in inputSchema.
var optionPath = []string{fieldQuestions, "[]", fieldOptions, "[]"}

// schemaAt returns the schema at a location of the arguments given as JSON pointer
// segments ("questions", "1", "options"), or nil.
func schemaAt(path []string) *quickschema.Schema {
	return inputSchema().At(schemaPath(path)...)
}

// schemaPath turns JSON pointer segments into a quickschema path: "[]" for an index.
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
