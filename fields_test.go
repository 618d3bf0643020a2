package askuser

import (
	"slices"
	"testing"
)

// TestFieldsMatchSchema: the Go side of the shape (fields.go) names exactly the members of
// schema/input.json, in its order, so that neither can change without the other.
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
	for _, f := range questionTexts {
		if typ := s.At(fieldQuestions, "[]").Props[f.name].Type; typ != "string" {
			t.Errorf("question member %s is a %s in the schema, a string in fields.go", f.name, typ)
		}
	}
}
