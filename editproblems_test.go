package askuser_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/askuser-go/askuser"
)

// editCase is a tool's schema, an edit of its arguments, and the problems the edit has.
type editCase struct {
	Name      string          `json:"name"`
	Schema    json.RawMessage `json:"schema"`
	Arguments json.RawMessage `json:"arguments"`
	Problems  []string        `json:"problems"`
}

// TestEditProblemsAsThePanelWordsThem: the server words the problems of an edit as the
// panel's checker does, line for line, for every case of testdata/edits.json (which the
// e2e module's TestEditProblemsSameInBrowser gives the panel in Chromium).
func TestEditProblemsAsThePanelWordsThem(t *testing.T) {
	b, err := os.ReadFile("testdata/edits.json")
	require.NoError(t, err)
	var cases []editCase
	require.NoError(t, json.Unmarshal(b, &cases))
	require.NotEmpty(t, cases)
	for _, c := range cases {
		assert.Equal(t, c.Problems, SchemaCheck(c.Schema, c.Arguments), c.Name)
	}
}

// TestEditProblems: the keywords the panel leaves to the server, and the places the
// panel's checker does not go, are worded in the library's words too; never in the
// validator's.
func TestEditProblems(t *testing.T) {
	for _, c := range []editCase{
		{Name: "anyOf of types", Schema: json.RawMessage(`{"properties": {"x": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}`),
			Arguments: json.RawMessage(`{"x": 1}`), Problems: []string{"x: must be a string or null, not a number"}},
		{Name: "anyOf of forms", Schema: json.RawMessage(`{"properties": {"x": {"anyOf": [{"type": "string", "minLength": 2}, {"type": "integer"}]}}}`),
			Arguments: json.RawMessage(`{"x": "a"}`), Problems: []string{"x: matches none of the forms this tool takes"}},
		{Name: "oneOf matched twice", Schema: json.RawMessage(`{"properties": {"x": {"oneOf": [{"type": "integer"}, {"minimum": 0}]}}}`),
			Arguments: json.RawMessage(`{"x": 1}`), Problems: []string{"x: matches more than one of the forms this tool takes; it must match exactly one"}},
		{Name: "not", Schema: json.RawMessage(`{"properties": {"x": {"not": {"const": "main"}}}}`),
			Arguments: json.RawMessage(`{"x": "main"}`), Problems: []string{"x: is a value this tool does not take"}},
		{Name: "dependentRequired", Schema: json.RawMessage(`{"dependentRequired": {"to": ["from"]}}`),
			Arguments: json.RawMessage(`{"to": 1}`), Problems: []string{"from: is required when to is given"}},
		{Name: "uniqueItems", Schema: json.RawMessage(`{"properties": {"tags": {"uniqueItems": true}}}`),
			Arguments: json.RawMessage(`{"tags": ["a", "b", "a"]}`), Problems: []string{"tags: must not hold the same item twice"}},
		{Name: "multipleOf", Schema: json.RawMessage(`{"properties": {"n": {"multipleOf": 0.5}}}`),
			Arguments: json.RawMessage(`{"n": 0.7}`), Problems: []string{"n: must be a multiple of 0.5"}},
		{Name: "minProperties and maxProperties", Schema: json.RawMessage(`{"properties": {"a": {"minProperties": 1}, "b": {"maxProperties": 1}}}`),
			Arguments: json.RawMessage(`{"a": {}, "b": {"x": 1, "y": 2}}`), Problems: []string{"a: must have at least 1 fields", "b: must have at most 1 fields"}},
		{Name: "contains", Schema: json.RawMessage(`{"properties": {"tags": {"contains": {"const": "x"}}}}`),
			Arguments: json.RawMessage(`{"tags": ["a"]}`), Problems: []string{"tags: has too few of the items it must contain"}},
		{Name: "through a $ref", Schema: json.RawMessage(`{"$defs": {"branch": {"type": "string", "minLength": 1}}, "properties": {"name": {"$ref": "#/$defs/branch"}}}`),
			Arguments: json.RawMessage(`{"name": ""}`), Problems: []string{"name: must not be empty"}},
		{Name: "if and then", Schema: json.RawMessage(`{"if": {"required": ["force"]}, "then": {"required": ["reason"]}}`),
			Arguments: json.RawMessage(`{"force": true}`), Problems: []string{"reason: is required"}},
		{Name: "names with a slash, a tilde and a space", Schema: json.RawMessage(`{"properties": {"a/b c~d": {"type": "string"}}, "additionalProperties": false}`),
			Arguments: json.RawMessage(`{"a/b c~d": 1, "x y": 2}`), Problems: []string{"a/b c~d: must be a string, not a number", "x y: is not a field of this tool (it takes a/b c~d)"}},
		{Name: "patternProperties beside additionalProperties", Schema: json.RawMessage(`{"properties": {"name": {}}, "patternProperties": {"^x-": {}}, "additionalProperties": false}`),
			Arguments: json.RawMessage(`{"name": 1, "x-trace": 2, "force": 3}`), Problems: []string{"force: is not a field of this tool (it takes name)"}},
		{Name: "a const object", Schema: json.RawMessage(`{"properties": {"o": {"const": {"a": [1, 2]}}}}`),
			Arguments: json.RawMessage(`{"o": {}}`), Problems: []string{`o: must be {"a":[1,2]}`}},
		{Name: "a subschema with a $id of its own", Schema: json.RawMessage(`{"properties": {"a": {"$id": "http://example.com/a.json", "type": "string", "minLength": 2}}}`),
			Arguments: json.RawMessage(`{"a": "x"}`), Problems: []string{"a: must be at least 2 characters long"}},
		{Name: "tuples", Schema: json.RawMessage(`{"prefixItems": [{"type": "string"}], "items": false}`),
			Arguments: json.RawMessage(`["a", 1]`), Problems: []string{"[1]: is not allowed"}},
		{Name: "draft-07: format, additionalItems, dependencies", Schema: json.RawMessage(`{"$schema": "http://json-schema.org/draft-07/schema#",
			"properties": {"mail": {"format": "email"}, "pair": {"items": [{"type": "string"}], "additionalItems": false}}, "dependencies": {"to": ["from"]}}`),
			Arguments: json.RawMessage(`{"mail": "x", "pair": ["a", 1], "to": 1}`),
			Problems:  []string{"from: is required when to is given", "mail: must be a valid email", "pair: must have at most 1 items"}},
		{Name: "natural order, and at most five", Schema: json.RawMessage(`{"items": {"type": "string"}}`),
			Arguments: json.RawMessage(`[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]`),
			Problems: []string{"[0]: must be a string, not a number", "[1]: must be a string, not a number", "[2]: must be a string, not a number",
				"[3]: must be a string, not a number", "[4]: must be a string, not a number", "arguments: …and 6 more problems, not listed"}},
	} {
		got := SchemaCheck(c.Schema, c.Arguments)
		assert.Equal(t, c.Problems, got, c.Name)
		for _, p := range got {
			for _, v := range []string{"length must be", "additionalProperties", "expected ", "but got", "failed", "doesn't validate"} {
				assert.NotContains(t, p, v, "%s: the validator's words", c.Name)
			}
		}
	}
	assert.Nil(t, SchemaCheck(json.RawMessage(`{"type": "object"}`), json.RawMessage(`{"a": 1}`)), "valid arguments have no problems")
	assert.Nil(t, SchemaCheck(nil, json.RawMessage(`1`)), "a tool without a schema takes any edit")
	assert.True(t, strings.HasPrefix(SchemaCheck(json.RawMessage(`{"type": 3}`), json.RawMessage(`1`))[0], "argumentsSchema: the tool's schema "))
}
