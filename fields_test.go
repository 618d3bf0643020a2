package askuser

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestFieldsMatchSchema: the Go side of the shape (fields.go, and the struct tags of
// Request, Question and Option) names exactly the members of the input schema, in its
// order; the JSON it writes leaves out no member the schema requires and writes no empty
// member the schema refuses; so that neither can change without the other.
func TestFieldsMatchSchema(t *testing.T) {
	s := inputSchema()
	if got, want := s.Fields, []string{fieldQuestions, fieldMetadata}; !slices.Equal(got, want) {
		t.Errorf("arguments: schema has %v, fields.go %v", got, want)
	}
	var question []string
	for _, f := range questionTexts {
		question = append(question, f.name)
	}
	question = append(question, fieldOptions, fieldMultiSelect)
	for _, f := range questionTail {
		question = append(question, f.name)
	}
	if got := s.At(fieldQuestions, "[]").Fields; !slices.Equal(got, question) {
		t.Errorf("question: schema has %v, fields.go %v", got, question)
	}
	var option []string
	for _, f := range optionTexts {
		option = append(option, f.name)
		if typ := s.At(optionPath...).Props[f.name].Type; typ != "string" {
			t.Errorf("option member %s is a %s in the schema, a string in fields.go", f.name, typ)
		}
	}
	if got := s.At(optionPath...).Fields; !slices.Equal(got, option) {
		t.Errorf("option: schema has %v, fields.go %v", got, option)
	}
	for _, f := range questionStrings {
		if typ := s.At(fieldQuestions, "[]").Props[f.name].Type; typ != "string" {
			t.Errorf("question member %s is a %s in the schema, a string in fields.go", f.name, typ)
		}
	}
	for _, c := range []struct {
		typ reflect.Type
		at  *shape
	}{{reflect.TypeFor[Request](), s}, {reflect.TypeFor[Question](), s.At(fieldQuestions, "[]")}, {reflect.TypeFor[Option](), s.At(optionPath...)}} {
		var names []string
		for f := range c.typ.Fields() {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, name)
			omit, required := strings.Contains(opts, "omit"), c.at.IsRequired(name)
			switch p := c.at.Props[name]; {
			case omit && required:
				t.Errorf("%s.%s: left out when empty, but the schema requires %s", c.typ.Name(), f.Name, name)
			case !omit && !required && p.Type == "string" && p.MinLen > 0:
				t.Errorf("%s.%s: written when empty, which the schema refuses: leave it out (omitempty)", c.typ.Name(), f.Name)
			}
		}
		if !slices.Equal(names, c.at.Fields) {
			t.Errorf("%s encodes as %v; the schema has %v", c.typ.Name(), names, c.at.Fields)
		}
	}
}
