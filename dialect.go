package askuser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Dialect is a form of JSON Schema that an LLM provider accepts for a tool's input.
// Providers accept subsets of JSON Schema, and each refuses with a 400 what it does not
// accept, so [Definition] gives the tool definition in the dialect of each.
//
// Every dialect is derived from the one input schema, schema/input.json. A constraint
// that a dialect cannot express moves into the description of its property, written as
// the providers' SDKs write it ("{maxLength: 12, minLength: 1}"), so the model still
// reads it; and [ParseArguments], which is the same for every dialect, still enforces
// it, read as liberally as in every dialect (a longer header, more or fewer options; see
// [ParseArguments]). A model that breaks such a constraint gets an [Invalid] result
// saying what to fix.
type Dialect int

const (
	// JSONSchema is plain JSON Schema (draft 2020-12): schema/input.json as it is, the
	// schema [Definition] returns. For MCP, for OpenAI and Anthropic without strict mode,
	// and for Gemini's FunctionDeclaration.ParametersJsonSchema.
	JSONSchema Dialect = iota

	// OpenAIStrict is for OpenAI function calling with "strict": true, in Chat
	// Completions and in Responses (which applies strict mode unless told "strict":
	// false). Strict mode requires every object to be closed ("additionalProperties":
	// false) and every property to be listed in "required"; an optional property is
	// written as a union with null. So:
	//   - "preview" is required and of type ["string", "null"]: the model writes
	//     "preview": null on an option without one, which ParseArguments reads as no
	//     preview.
	//   - "metadata" is left out. Strict mode cannot express a free-form object: a
	//     closed object without properties only admits {}, and a required one would have
	//     the model write "metadata": null on every call for nothing. Metadata is a
	//     host's tracking channel, not something the model needs to be offered; a host
	//     that wants the model to send it uses [JSONSchema] without strict mode.
	//   - minLength and maxLength, which strict mode does not support, move into the
	//     descriptions; minItems and maxItems, which it supports, stay.
	//   - "$schema" and "$id" are dropped.
	OpenAIStrict

	// AnthropicStrict is for Anthropic tool use with "strict": true. Strict tool use
	// refuses minLength, maxLength, maxItems and a minItems other than 0 or 1, and
	// requires every object to be closed; optional properties are allowed. So:
	//   - minLength, maxLength, maxItems, and the options' minItems of 2 move into the
	//     descriptions, as the Anthropic SDKs move them; the questions' minItems of 1 stays.
	//   - "metadata" is left out, for the reason given at [OpenAIStrict]: under strict
	//     tool use a free-form object can only be {}.
	//   - "preview" stays optional.
	//   - "$schema" and "$id" are dropped.
	// The Go SDK's own schema transform (anthropic.BetaToolInputSchema) leaves this
	// schema as it is.
	AnthropicStrict

	// Gemini is the OpenAPI subset that Gemini's FunctionDeclaration.Parameters takes
	// (the fields of genai.Schema), which refuses unknown keywords such as
	// "additionalProperties", "$schema" and "$id" with a 400, and an object schema
	// without properties. So:
	//   - types are written in Gemini's spelling: "OBJECT", "ARRAY", "STRING", "BOOLEAN".
	//   - "additionalProperties": false is dropped, and not described: the schema names
	//     every field the model may write, and a model that adds another is told by
	//     ParseArguments which fields are allowed.
	//   - "metadata" is left out: an object without properties is refused.
	//   - minLength, maxLength, minItems and maxItems stay: Gemini's subset has them.
	//   - "$schema" and "$id" are dropped.
	Gemini

	dialectCount
)

var dialectNames = [dialectCount]string{
	JSONSchema:      "json-schema",
	OpenAIStrict:    "openai-strict",
	AnthropicStrict: "anthropic-strict",
	Gemini:          "gemini",
}

// name returns the dialect's name: "json-schema", "openai-strict",
// "anthropic-strict" or "gemini".
func (d Dialect) name() string {
	if d >= 0 && d < dialectCount {
		return dialectNames[d]
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// Definition returns the ask_user_questions tool definition: its name, description and
// JSON Schemas, the files under schema/ in this module, embedded. With a dialect, the
// input schema is in that dialect of a model API (see each [Dialect] for what it changes
// and why); the name, the description and the output schema are the same in every
// dialect (the output schema describes the tool result for the host, and no provider
// receives it). Definition() is Definition(JSONSchema). The returned value is a fresh
// copy.
//
// Definition panics when given more than one dialect, or one that is not one of the
// Dialect constants.
func Definition(dialect ...Dialect) ToolDefinition {
	d := JSONSchema
	switch len(dialect) {
	case 0:
	case 1:
		d = dialect[0]
	default:
		panic("askuser: Definition: more than one dialect")
	}
	if d < 0 || d >= dialectCount {
		panic(fmt.Sprintf("askuser: Definition: unknown Dialect(%d)", int(d)))
	}
	def := definition()
	if d != JSONSchema {
		def.InputSchema = bytes.Clone(dialectInputs()[d])
	}
	return def
}

// dialectInputs derives the input schema of every dialect once, from the embedded file.
var dialectInputs = sync.OnceValue(func() [dialectCount][]byte {
	var out [dialectCount][]byte
	src := definition().InputSchema
	for d := OpenAIStrict; d < dialectCount; d++ {
		out[d] = deriveInput(src, d)
	}
	return out
})

// deriveInput rewrites the JSON Schema src for dialect d. The schema is part of the
// library, so a failure is a bug in this package, reported by a panic that every test
// would meet.
func deriveInput(src []byte, d Dialect) []byte {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber() // bounds are written back as they are in the file
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		panic(fmt.Sprintf("askuser: embedded input schema: %v", err))
	}
	rewrite(root, d, false)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		panic(fmt.Sprintf("askuser: %v input schema: %v", d, err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Keywords each dialect accepts, besides the structural "properties", "items",
// "required" and "additionalProperties", which rewrite handles itself. Anything else is
// moved into the description.
var (
	// OpenAI's Structured Outputs subset: type, enum/const, composition and references,
	// string pattern and format, number bounds, array minItems and maxItems.
	openAIKeywords = keywordSet("type", "description", "title", "enum", "const", "anyOf",
		"$ref", "$defs", "pattern", "format", "minItems", "maxItems", "minimum", "maximum",
		"exclusiveMinimum", "exclusiveMaximum", "multipleOf")
	// The keys the Anthropic Go SDK keeps (supportedSchemaKeys in its schemautil.go);
	// minItems only as 0 or 1.
	anthropicKeywords = keywordSet("type", "description", "title", "enum", "const", "anyOf",
		"oneOf", "allOf", "$ref", "$defs", "format", "pattern", "minItems")
	// The fields of genai.Schema.
	geminiKeywords = keywordSet("type", "description", "title", "enum", "format", "pattern",
		"anyOf", "default", "example", "nullable", "minimum", "maximum", "minLength",
		"maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "propertyOrdering")
)

func keywordSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// rewrite rewrites one schema node, and the nodes under it, for dialect d. optional
// says whether the node is a property its parent does not require.
func rewrite(node map[string]any, d Dialect, optional bool) {
	// Identifiers and comments are no constraint: dropped, not described.
	delete(node, "$schema")
	delete(node, "$id")
	delete(node, "$comment")
	// A type that admits null ("type": [T, "null"]) is rewritten as T, and null is added
	// back below in the dialect's own way where it is needed.
	orNull := splitNull(node)

	if props, ok := node["properties"].(map[string]any); ok {
		required := stringList(node["required"])
		for name, p := range props {
			ps, ok := p.(map[string]any)
			if !ok {
				panic(fmt.Sprintf("askuser: input schema: property %q is not a schema object", name))
			}
			optional := !slices.Contains(required, name)
			if freeForm(ps) {
				// No dialect here can express an object of any members (see Dialect).
				if !optional {
					panic(fmt.Sprintf("askuser: input schema: required free-form object %q has no %v form", name, d))
				}
				delete(props, name)
				continue
			}
			rewrite(ps, d, optional)
		}
		// Required names that are still properties, in the file's order; under OpenAI
		// strict, then every other property, in name order.
		kept := slices.DeleteFunc(required, func(n string) bool { _, ok := props[n]; return !ok })
		if d == OpenAIStrict {
			for _, n := range slices.Sorted(maps.Keys(props)) {
				if !slices.Contains(kept, n) {
					kept = append(kept, n)
				}
			}
		}
		node["required"] = kept
	}
	if items, ok := node["items"].(map[string]any); ok {
		rewrite(items, d, false)
	}

	if node["type"] == "object" {
		switch d {
		case OpenAIStrict, AnthropicStrict:
			node["additionalProperties"] = false // both require every object closed
		case Gemini:
			delete(node, "additionalProperties")
		}
	}

	extras := map[string]any{}
	for k, v := range node {
		switch k {
		case "properties", "items", "required", "additionalProperties":
			continue
		}
		if !allowed(d, k, v) {
			extras[k] = v
			delete(node, k)
		}
	}
	describe(node, extras)

	// Null: OpenAI strict writes an optional property as a union with null; elsewhere an
	// optional property is simply left out, and only a required one that admits null
	// says so.
	switch {
	case d == OpenAIStrict && (optional || orNull):
		nullable(node)
	case d == AnthropicStrict && orNull && !optional:
		nullable(node)
	case d == Gemini && orNull && !optional:
		node["nullable"] = true
	}
	if t, ok := node["type"].(string); ok && d == Gemini {
		node["type"] = strings.ToUpper(t) // genai.TypeObject and the others
	}
}

// splitNull rewrites "type": [T, "null"] as "type": T and reports whether it did.
func splitNull(node map[string]any) bool {
	types, ok := node["type"].([]any)
	if !ok || !slices.Contains(types, any("null")) {
		return false
	}
	rest := slices.DeleteFunc(slices.Clone(types), func(t any) bool { return t == "null" })
	switch len(rest) {
	case 0:
		panic("askuser: input schema: a property of type null has no dialect form")
	case 1:
		node["type"] = rest[0]
	default:
		node["type"] = rest
	}
	return true
}

// allowed reports whether dialect d accepts keyword k with value v.
func allowed(d Dialect, k string, v any) bool {
	switch d {
	case OpenAIStrict:
		return openAIKeywords[k]
	case AnthropicStrict:
		if k == "minItems" {
			n, _ := v.(json.Number)
			return n == "0" || n == "1"
		}
		return anthropicKeywords[k]
	case Gemini:
		return geminiKeywords[k]
	}
	return true
}

// describe appends the keywords a dialect cannot express to the node's description, in
// the form the Anthropic SDKs use, keys sorted: "\n\n{maxLength: 12, minLength: 1}".
func describe(node map[string]any, extras map[string]any) {
	if len(extras) == 0 {
		return
	}
	parts := make([]string, 0, len(extras))
	for _, k := range slices.Sorted(maps.Keys(extras)) {
		parts = append(parts, k+": "+extraValue(extras[k]))
	}
	s := "{" + strings.Join(parts, ", ") + "}"
	if desc, _ := node["description"].(string); desc != "" {
		s = desc + "\n\n" + s
	}
	node["description"] = s
}

// extraValue renders a keyword's value for a description: numbers and strings as they
// are, anything else as JSON.
func extraValue(v any) string {
	switch t := v.(type) {
	case json.Number:
		return t.String()
	case string:
		return t
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// freeForm reports whether a schema is an object whose members are not described: one
// the strict dialects and Gemini cannot express. (Its type, [T, "null"] included, is
// read before rewrite changes it.)
func freeForm(s map[string]any) bool {
	_, hasProps := s["properties"]
	isObject := s["type"] == "object"
	if types, ok := s["type"].([]any); ok {
		isObject = slices.Contains(types, any("object"))
	}
	return isObject && !hasProps
}

// nullable lets a schema also be null: OpenAI strict mode's form of an optional property.
func nullable(s map[string]any) {
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
	case []any:
		if !slices.Contains(t, any("null")) {
			s["type"] = append(t, "null")
		}
	default:
		panic("askuser: input schema: an optional property without a type has no OpenAI strict form")
	}
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
