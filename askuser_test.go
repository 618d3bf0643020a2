package askuser

import (
	"encoding/json"
	"testing"

	"github.com/askuser-go/askuser/internal/jsonx"
	"github.com/askuser-go/askuser/wire"
)

// The tests of askuser.go: the bounds it exports and the JSON shape of the types it
// declares, which are the tool's input and output as the model and devices see them.

// TestLimitsMatchSchema: the exported bounds are the advertised schema's.
func TestLimitsMatchSchema(t *testing.T) {
	s := loadSchemas().advertised
	qs, opts := s.At(fieldQuestions), s.At(fieldQuestions, "[]", fieldOptions)
	for name, pair := range map[string][2]int{
		"MaxQuestions":    {wire.MaxQuestions, qs.MaxItems},
		"MinOptions":      {wire.MinOptions, opts.MinItems},
		"MaxOptions":      {wire.MaxOptions, opts.MaxItems},
		"MaxHeaderLength": {wire.MaxHeaderLength, s.At(fieldQuestions, "[]", "header").MaxLen},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s is %d; the schema says %d", name, pair[0], pair[1])
		}
	}
}

// TestTypesSpeakTheSchemas: a Request built in Go encodes as arguments the input schema
// takes and ParseArguments reads back the same; a response encodes as the output
// schema's shape, with customInput null when nothing was typed and a preview left out
// when there is none.
func TestTypesSpeakTheSchemas(t *testing.T) {
	req := Request{
		Questions: []Question{{
			Question: "Which database should the service use?",
			Header:   "Database",
			Options: []Option{
				{Label: "PostgreSQL (Recommended)", Description: "Relational", Preview: "```sql\nCREATE TABLE t (id int);\n```"},
				{Label: "SQLite", Description: "Embedded"},
			},
		}},
		Metadata: json.RawMessage(`{"source":"planner"}`),
	}
	args, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"questions":[{"question":"Which database should the service use?","header":"Database","options":[{"label":"PostgreSQL (Recommended)","description":"Relational","preview":"` + "```sql\\nCREATE TABLE t (id int);\\n```" + `"},{"label":"SQLite","description":"Embedded"}],"multiSelect":false}],"metadata":{"source":"planner"}}`; string(args) != want {
		t.Errorf("Request encodes as\n%s\nwant\n%s", args, want)
	}
	back, err := ParseArguments(args)
	if err != nil {
		t.Fatalf("the input schema refuses what Request encodes to: %v", err)
	}
	if !sameQuestions(wire.AskData{Questions: back.Questions, Metadata: back.Metadata}, &req) {
		t.Errorf("ParseArguments read back %+v, want %+v", back, req)
	}

	other := "MySQL"
	out, err := jsonx.Marshal(response{Answers: []Answer{
		{Question: "Which database should the service use?", SelectedLabels: []string{"SQLite"}},
		{Question: "Anything else?", SelectedLabels: []string{}, CustomInput: &other},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"answers":[{"question":"Which database should the service use?","selectedLabels":["SQLite"],"customInput":null},{"question":"Anything else?","selectedLabels":[],"customInput":"MySQL"}]}`; string(out) != want {
		t.Errorf("response encodes as\n%s\nwant\n%s", out, want)
	}
	if err := validateOutput(out); err != nil {
		t.Errorf("the output schema refuses a response: %v", err)
	}
}
