package askuser_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	. "github.com/askuser-go/askuser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseArguments(t *testing.T) {
	for _, tc := range ArgumentCases {
		t.Run(tc.Name, func(t *testing.T) {
			req, err := ParseArguments([]byte(tc.Args))
			if tc.Problems == nil {
				require.NoError(t, err)
				require.NotEmpty(t, req.Questions)
				// A valid request survives a round trip through its own JSON.
				again, err := json.Marshal(req)
				require.NoError(t, err)
				req2, err := ParseArguments(again)
				require.NoError(t, err)
				assert.Equal(t, req, req2)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidArguments)
			var ae *ArgumentsError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tc.Problems, ae.Problems)
		})
	}
}

func TestParseArgumentsForgivenEncodingsMatchPlain(t *testing.T) {
	plain := `{"questions":[{"question":"Which framework?","header":"Framework","options":[{"label":"Vue","description":"d"},{"label":"React","description":"d"}],"multiSelect":false}]}`
	want, err := ParseArguments([]byte(plain))
	require.NoError(t, err)

	double, _ := json.Marshal(plain)
	got, err := ParseArguments(double)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	var obj map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(plain), &obj))
	inner, _ := json.Marshal(string(obj["questions"]))
	got, err = ParseArguments([]byte(`{"questions":` + string(inner) + `}`))
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// Forgiven once, not forever: a triple encoding is refused.
	triple, _ := json.Marshal(string(double))
	_, err = ParseArguments(triple)
	assert.ErrorIs(t, err, ErrInvalidArguments)
}

func TestParseArgumentsKeepsMetadataAndText(t *testing.T) {
	req, err := ParseArguments([]byte(`{"questions":[{"question":"Layout <b>?","header":"布局","options":[
		{"label":"Sidebar (Recommended)","description":"Fixed & left","preview":"<div>\n  <aside/>\n</div>"},
		{"label":"Top bar","description":"Horizontal"}],"multiSelect":false}],"metadata":{"b":2,"a":{"x":[1.50,"y"]}}}`))
	require.NoError(t, err)
	assert.Equal(t, "Layout <b>?", req.Questions[0].Question)
	assert.Equal(t, "布局", req.Questions[0].Header)
	assert.Equal(t, "<div>\n  <aside/>\n</div>", req.Questions[0].Options[0].Preview)
	assert.JSONEq(t, `{"a":{"x":[1.50,"y"]},"b":2}`, string(req.Metadata))
	assert.Contains(t, string(req.Metadata), "1.50", "numbers are kept as written")
}

func TestRequestValidate(t *testing.T) {
	var nilReq *Request
	assert.ErrorIs(t, nilReq.Validate(), ErrInvalidArguments)
	req := &Request{Questions: []Question{{Question: "Q?", Header: "H", MultiSelect: true, Options: []Option{{Label: "A", Description: "a"}, {Label: "A", Description: "b"}}}}}
	var ae *ArgumentsError
	require.ErrorAs(t, req.Validate(), &ae)
	assert.Equal(t, []string{`questions[0].options[1].label: same label as questions[0].options[0].label; labels must be unique within a question`}, ae.Problems)
	req.Questions[0].Options[1].Label = "B"
	assert.NoError(t, req.Validate())
}

func TestDefinition(t *testing.T) {
	def := Definition()
	assert.Equal(t, "ask_user_questions", def.Name)
	for _, note := range []string{`"Other"`, "multiSelect: true", "(Recommended)", "monospace box", "single-select questions", "side-by-side"} {
		assert.Contains(t, def.Description, note)
	}
	var in, out map[string]any
	require.NoError(t, json.Unmarshal(def.InputSchema, &in))
	require.NoError(t, json.Unmarshal(def.OutputSchema, &out))
	assert.Equal(t, []any{"questions"}, in["required"])
	// The copy is the caller's.
	def.InputSchema[0] = 'X'
	assert.Equal(t, byte('{'), Definition().InputSchema[0])
}

// FuzzParseArguments: any bytes from the model give a request or a list of problems,
// never a panic; a request that passes survives its own JSON, and a refusal always says
// what is wrong, in a result the model can parse.
func FuzzParseArguments(f *testing.F) {
	for _, tc := range ArgumentCases {
		if len(tc.Args) < 4096 {
			f.Add([]byte(tc.Args))
		}
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		req, err := ParseArguments(args)
		if err != nil {
			var ae *ArgumentsError
			if !errors.As(err, &ae) || len(ae.Problems) == 0 {
				t.Fatalf("refusal without problems: %v", err)
			}
			for _, p := range ae.Problems {
				if strings.TrimSpace(p) == "" || !strings.Contains(p, ": ") {
					t.Fatalf("problem without a location: %q", p)
				}
			}
			if !json.Valid([]byte(InvalidResult(ae.Problems))) {
				t.Fatalf("invalid result is not JSON: %s", InvalidResult(ae.Problems))
			}
			return
		}
		if n := len(req.Questions); n < 1 || n > 4 {
			t.Fatalf("accepted %d questions", n)
		}
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseArguments(again); err != nil {
			t.Fatalf("an accepted request does not survive its JSON: %v\n%s", err, again)
		}
	})
}
