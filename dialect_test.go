package askuser

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/askuser-go/askuser/internal/jsonx"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateDialects = flag.Bool("update-dialects", false, "rewrite testdata/dialects/*.json")

var allDialects = []Dialect{JSONSchema, OpenAIStrict, AnthropicStrict, Gemini}

// schemaNode is one schema object of a tree, with where it is.
type schemaNode struct {
	path string
	node map[string]any
	// property is the node's name in its parent's "properties", and optional whether
	// the parent leaves it out of "required"; "" and false for other nodes.
	property string
	optional bool
}

// walkSchema lists every schema object of a tree, the root first.
func walkSchema(t *testing.T, raw []byte) []schemaNode {
	t.Helper()
	var root map[string]any
	require.NoError(t, json.Unmarshal(raw, &root))
	var out []schemaNode
	var walk func(n schemaNode)
	walk = func(n schemaNode) {
		out = append(out, n)
		required := stringList(n.node["required"])
		if props, ok := n.node["properties"].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(props)) {
				p, ok := props[name].(map[string]any)
				require.True(t, ok, "%s.properties.%s is not an object", n.path, name)
				walk(schemaNode{path: n.path + ".properties." + name, node: p, property: name, optional: !slices.Contains(required, name)})
			}
		}
		if items, ok := n.node["items"].(map[string]any); ok {
			walk(schemaNode{path: n.path + ".items", node: items})
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			list, _ := n.node[k].([]any)
			for i, v := range list {
				if s, ok := v.(map[string]any); ok {
					walk(schemaNode{path: fmt.Sprintf("%s.%s[%d]", n.path, k, i), node: s})
				}
			}
		}
		if defs, ok := n.node["$defs"].(map[string]any); ok {
			for name, v := range defs {
				if s, ok := v.(map[string]any); ok {
					walk(schemaNode{path: n.path + ".$defs." + name, node: s})
				}
			}
		}
	}
	walk(schemaNode{path: "$", node: root})
	return out
}

func isObjectType(n map[string]any) bool {
	switch t := n["type"].(type) {
	case string:
		return strings.EqualFold(t, "object")
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

func TestDefinitionWithJSONSchemaIsDefinition(t *testing.T) {
	assert.Equal(t, Definition(), Definition(JSONSchema))
	for _, d := range allDialects {
		def := Definition(d)
		assert.Equal(t, ToolName, def.Name, d)
		assert.Equal(t, Definition().Description, def.Description, d)
		assert.Equal(t, Definition().OutputSchema, def.OutputSchema, d, "the output schema is the same in every dialect")
		assert.True(t, json.Valid(def.InputSchema), d)
	}
}

func TestDefinitionWithReturnsCopies(t *testing.T) {
	for _, d := range allDialects {
		a := Definition(d)
		want := bytes.Clone(a.InputSchema)
		for i := range a.InputSchema {
			a.InputSchema[i] = 'x'
		}
		assert.Equal(t, string(want), string(Definition(d).InputSchema), d)
	}
}

func TestDefinitionWithUnknownDialectPanics(t *testing.T) {
	assert.PanicsWithValue(t, "askuser: Definition: unknown Dialect(4)", func() { Definition(Dialect(4)) })
	assert.PanicsWithValue(t, "askuser: Definition: unknown Dialect(-1)", func() { Definition(Dialect(-1)) })
	assert.Equal(t, "openai-strict", OpenAIStrict.name())
}

// The derived schemas, indented, are kept under testdata/dialects so that a change to
// schema/input.json or to the rewriting shows in review. Run
// `go test -run TestDialectGoldenFiles -update-dialects` to rewrite them.
func TestDialectGoldenFiles(t *testing.T) {
	for _, d := range allDialects[1:] {
		var b bytes.Buffer
		require.NoError(t, json.Indent(&b, Definition(d).InputSchema, "", "  "))
		b.WriteByte('\n')
		path := filepath.Join("testdata", "dialects", d.name()+".json")
		if *updateDialects {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run: go test -run TestDialectGoldenFiles -update-dialects")
		assert.Equal(t, string(want), b.String(), "%s is stale; run: go test -run TestDialectGoldenFiles -update-dialects", path)
	}
}

// OpenAI Structured Outputs, "Supported schemas" (function calling with strict: true):
//   - the root is an object, not anyOf;
//   - every object has "additionalProperties": false;
//   - every property is in "required"; an optional field is a union with null;
//   - only the supported keywords: type, enum, const, anyOf, $ref/$defs, description,
//     title, string pattern and format, number bounds, array minItems and maxItems
//     (minLength and maxLength are not among them);
//   - at most 5000 properties in all, at most 10 levels of object nesting.
func TestOpenAIStrictRules(t *testing.T) {
	nodes := walkSchema(t, Definition(OpenAIStrict).InputSchema)
	plain := optionalProperties(t, JSONSchema)
	root := nodes[0].node
	assert.Equal(t, "object", root["type"], "the root is an object")
	assert.NotContains(t, root, "anyOf", "the root is not anyOf")
	properties, depth := 0, 0
	for _, n := range nodes {
		for k := range n.node {
			switch k {
			case "properties", "items", "required", "additionalProperties":
				continue
			}
			assert.True(t, openAIKeywords[k], "%s: keyword %q is not in OpenAI's strict subset", n.path, k)
		}
		if isObjectType(n.node) {
			assert.Equal(t, false, n.node["additionalProperties"], "%s: every object must be closed", n.path)
			props, _ := n.node["properties"].(map[string]any)
			assert.ElementsMatch(t, slices.Collect(maps.Keys(props)), stringList(n.node["required"]), "%s: every property must be required", n.path)
			properties += len(props)
			depth = max(depth, strings.Count(n.path, ".properties."))
		}
		if n.optional {
			t.Errorf("%s: optional; strict mode requires every property", n.path)
		}
		if plain[n.path] {
			assert.Contains(t, n.node["type"], "null", "%s: optional in the plain schema, so it must admit null", n.path)
		}
	}
	assert.LessOrEqual(t, properties, 5000)
	assert.LessOrEqual(t, depth, 10)
}

// Anthropic strict tool use, "JSON Schema limitations":
//   - every object has "additionalProperties": false;
//   - no minLength, maxLength, maxItems, numeric bounds; minItems only 0 or 1;
//   - only the keys the SDKs keep (the Go SDK's supportedSchemaKeys);
//   - at most 24 optional parameters, and 16 using anyOf or type arrays, over all strict tools.
func TestAnthropicStrictRules(t *testing.T) {
	nodes := walkSchema(t, Definition(AnthropicStrict).InputSchema)
	optional, unions := 0, 0
	for _, n := range nodes {
		for k, v := range n.node {
			switch k {
			case "properties", "items", "required", "additionalProperties":
				continue
			case "minItems":
				assert.Contains(t, []any{0.0, 1.0}, v, "%s: minItems must be 0 or 1", n.path)
			}
			assert.True(t, anthropicKeywords[k], "%s: keyword %q is refused by strict tool use", n.path, k)
		}
		if isObjectType(n.node) {
			assert.Equal(t, false, n.node["additionalProperties"], "%s: every object must be closed", n.path)
		}
		if n.optional {
			optional++
		}
		if _, ok := n.node["anyOf"]; ok {
			unions++
		} else if _, ok := n.node["type"].([]any); ok {
			unions++
		}
	}
	assert.LessOrEqual(t, optional, 24)
	assert.LessOrEqual(t, unions, 16)
}

// Gemini's FunctionDeclaration.Parameters is a genai.Schema: an OpenAPI subset that
// refuses any other key (additionalProperties, $schema, $id) with a 400, spells types
// in capitals, and refuses an OBJECT without properties. (askgenai's tests decode this
// schema into genai.Schema, refusing unknown fields.)
func TestGeminiRules(t *testing.T) {
	nodes := walkSchema(t, Definition(Gemini).InputSchema)
	assert.Equal(t, "OBJECT", nodes[0].node["type"])
	types := []any{"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
	for _, n := range nodes {
		for k := range n.node {
			switch k {
			case "properties", "items", "required":
				continue
			}
			assert.True(t, geminiKeywords[k], "%s: %q is not a field of Gemini's Schema", n.path, k)
		}
		assert.Contains(t, types, n.node["type"], "%s: type", n.path)
		if n.node["type"] == "OBJECT" {
			props, _ := n.node["properties"].(map[string]any)
			assert.NotEmpty(t, props, "%s: an OBJECT needs properties", n.path)
			for _, r := range stringList(n.node["required"]) {
				assert.Contains(t, props, r, "%s: required names a property", n.path)
			}
		}
	}
}

// optionalProperties returns the paths of the optional properties of a dialect's schema.
func optionalProperties(t *testing.T, d Dialect) map[string]bool {
	out := map[string]bool{}
	for _, n := range walkSchema(t, Definition(d).InputSchema) {
		if n.optional {
			out[n.path] = true
		}
	}
	return out
}

// Every constraint of the plain schema is, in every dialect, either kept as it is or
// written into the description of the same node; only metadata, which no dialect here
// can express, is left out.
func TestDialectConstraintsKeptOrDescribed(t *testing.T) {
	plain := walkSchema(t, Definition().InputSchema)
	for _, d := range allDialects[1:] {
		byPath := map[string]map[string]any{}
		for _, n := range walkSchema(t, Definition(d).InputSchema) {
			byPath[n.path] = n.node
		}
		for _, p := range plain {
			got, ok := byPath[p.path]
			if p.property == "metadata" {
				assert.False(t, ok, "%v: metadata is left out", d)
				continue
			}
			if !assert.True(t, ok, "%v: %s is missing", d, p.path) {
				continue
			}
			desc, _ := got["description"].(string)
			for k, v := range p.node {
				switch k {
				case "$schema", "$id", "properties", "items", "required", "description", "type":
					continue
				case "additionalProperties":
					if d == Gemini {
						continue // dropped, not described (see Gemini)
					}
				}
				if kept, ok := got[k]; ok {
					assert.Equal(t, v, kept, "%v: %s.%s", d, p.path, k)
					continue
				}
				assert.Contains(t, desc, fmt.Sprintf("%s: %v", k, v), "%v: %s: %s is neither kept nor described", d, p.path, k)
			}
			if want, _ := p.node["description"].(string); want != "" {
				assert.True(t, strings.HasPrefix(desc, want), "%v: %s: the description still starts with the original", d, p.path)
			}
		}
	}
}

// The constraints that moved into descriptions are still enforced, as widened (see
// accepted.go): ParseArguments is the same for every dialect.
func TestDescribedConstraintsStillEnforced(t *testing.T) {
	option := func(label string) string { return `{"label":"` + label + `","description":"d"}` }
	question := func(q, header string, options ...string) string {
		return `{"question":"` + q + `","header":"` + header + `","options":[` + strings.Join(options, ",") + `],"multiSelect":false}`
	}
	two := []string{option("A"), option("B")}
	for _, tc := range []struct {
		name, args, problem string
	}{
		{"header maxLength", `{"questions":[` + question("Q?", strings.Repeat("h", 101), two...) + `]}`, "questions[0].header: must be at most 100 characters, got 101; the tool's schema asks for at most 12"},
		{"label minLength", `{"questions":[` + question("Q?", "H", option(""), option("B")) + `]}`, "questions[0].options[0].label: must not be empty"},
		{"options maxItems", `{"questions":[` + question("Q?", "H", option("A"), option("B"), option("C"), option("D"), option("E"), option("F"), option("G"), option("H"), option("I")) + `]}`, "questions[0].options: must have at most 8 options, got 9; the tool's schema asks for 2 to 4"},
		{"questions maxItems", `{"questions":[` + strings.Join([]string{question("1?", "H", two...), question("2?", "H", two...), question("3?", "H", two...), question("4?", "H", two...), question("5?", "H", two...)}, ",") + `]}`, "questions: must have 1 to 4 questions, got 5"},
		{"preview maxLength", `{"questions":[` + question("Q?", "H", `{"label":"A","description":"d","preview":"`+strings.Repeat("x", 20001)+`"}`, option("B")) + `]}`, "questions[0].options[0].preview: must be at most 20000 characters, got 20001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseArguments([]byte(tc.args))
			var ae *ArgumentsError
			require.ErrorAs(t, err, &ae)
			assert.Contains(t, ae.Problems, tc.problem)
		})
	}
}

// compileDialect compiles a dialect's input schema as JSON Schema, to check that a
// sample is what a model held to that schema can emit. Gemini's types are written in
// capitals; they are JSON Schema's types otherwise.
func compileDialect(t *testing.T, d Dialect) *jsonschema.Schema {
	t.Helper()
	raw := Definition(d).InputSchema
	if d == Gemini {
		for _, typ := range []string{"OBJECT", "ARRAY", "STRING", "BOOLEAN"} {
			raw = bytes.ReplaceAll(raw, []byte(`"type":"`+typ+`"`), []byte(`"type":"`+strings.ToLower(typ)+`"`))
		}
	}
	c := jsonschema.NewCompiler()
	url := "mem://askuser/" + d.name() + ".json"
	require.NoError(t, c.AddResource(url, bytes.NewReader(raw)))
	s, err := c.Compile(url)
	require.NoError(t, err)
	return s
}

func validFor(t *testing.T, s *jsonschema.Schema, args string) {
	t.Helper()
	v, err := jsonx.Decode([]byte(args))
	require.NoError(t, err)
	require.NoError(t, s.Validate(v), "the sample must be valid for the dialect's schema")
}

// The canonical request of the samples below, without any null.
const dialectSampleArgs = `{"questions":[{"question":"Which framework should we use?","header":"Framework",
	"options":[{"label":"Vue 3 (Recommended)","description":"Matches the existing stack"},
	           {"label":"React","description":"Larger ecosystem"}],"multiSelect":false}]}`

// What a model held to each dialect emits, when it writes no null, parses as the
// request it means. Under OpenAI strict that needs a preview on every option.
func TestDialectOutputParses(t *testing.T) {
	withPreviews := `{"questions":[{"question":"Which layout should the page use?","header":"Layout",
		"options":[{"label":"Sidebar","description":"Navigation on the left","preview":"+--+-----+\n|nav|body|\n+--+-----+"},
		           {"label":"Top bar","description":"Navigation on top","preview":"+--------+\n|  nav   |\n+--------+"}],"multiSelect":false}]}`
	for _, tc := range []struct {
		d    Dialect
		args string
	}{
		{OpenAIStrict, withPreviews},
		{AnthropicStrict, dialectSampleArgs},
		{AnthropicStrict, withPreviews},
		{Gemini, dialectSampleArgs},
		{Gemini, withPreviews},
	} {
		t.Run(tc.d.name(), func(t *testing.T) {
			validFor(t, compileDialect(t, tc.d), tc.args)
			req, err := ParseArguments([]byte(tc.args))
			require.NoError(t, err)
			require.NotEmpty(t, req.Questions)
		})
	}
}

// NEEDS THE CORE CHANGE (ParseArguments accepting null for optional fields): this test
// fails until ParseArguments reads "preview": null as no preview and "metadata": null
// as no metadata. Run it after that change: go test -run TestNullsFromStrictModelsParse
//
// Under OpenAI strict mode every option carries "preview", null when it has none; a
// model may also write "metadata": null (it is optional in the plain schema, and
// strict transforms of other tools, like OpenAI's own, make optional fields nullable).
// Each parses as the same request without the nulls.
func TestNullsFromStrictModelsParse(t *testing.T) {
	want, err := ParseArguments([]byte(dialectSampleArgs))
	require.NoError(t, err)
	nullPreviews := strings.ReplaceAll(dialectSampleArgs, `"description":"Matches the existing stack"`, `"description":"Matches the existing stack","preview":null`)
	nullPreviews = strings.ReplaceAll(nullPreviews, `"description":"Larger ecosystem"`, `"description":"Larger ecosystem","preview":null`)
	validFor(t, compileDialect(t, OpenAIStrict), nullPreviews)
	nullMetadata := strings.TrimSuffix(dialectSampleArgs, "}") + `,"metadata":null}`
	both := strings.TrimSuffix(nullPreviews, "}") + `,"metadata":null}`
	for name, args := range map[string]string{
		"preview null":              nullPreviews,
		"metadata null":             nullMetadata,
		"preview and metadata null": both,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseArguments([]byte(args))
			require.NoError(t, err, "needs the core change: ParseArguments accepting null for optional fields")
			assert.Equal(t, want, got)
		})
	}
}

// withOptionalNull rewrites the plain schema so that every optional property's type
// admits null ([T, "null"]), or, with add false, admits it nowhere.
func withOptionalNull(t *testing.T, add bool) []byte {
	t.Helper()
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(Definition().InputSchema))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&root))
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		required := stringList(n["required"])
		props, _ := n["properties"].(map[string]any)
		for name, p := range props {
			ps := p.(map[string]any)
			if !slices.Contains(required, name) {
				splitNull(ps)
				if add {
					ps["type"] = []any{ps["type"], "null"}
				}
			}
			walk(ps)
		}
		if items, ok := n["items"].(map[string]any); ok {
			walk(items)
		}
	}
	walk(root)
	b, err := json.Marshal(root)
	require.NoError(t, err)
	return b
}

// Whether schema/input.json lets an optional property be null or not, every dialect is
// the same: the core may spell "preview": null as valid in the schema or in its own
// reading, and the providers see no difference.
func TestDialectsSameWhetherOptionalAdmitsNull(t *testing.T) {
	without, with := withOptionalNull(t, false), withOptionalNull(t, true)
	require.NotEqual(t, string(without), string(with))
	for _, d := range allDialects[1:] {
		assert.JSONEq(t, string(deriveInput(without, d)), string(deriveInput(with, d)), d.name())
		assert.JSONEq(t, string(Definition(d).InputSchema), string(deriveInput(with, d)), d.name())
	}
}
