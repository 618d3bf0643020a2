package askuser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The problems of edited arguments that the tool's own JSON Schema refuses, worded as the
// panel's checker words them (wshub/panel/js/schemacheck.js and the texts of
// approvaltext.js), so that the person reads the same line whether the browser or the
// server found it: "name: must not be empty", "force: is not a field of this tool (it
// takes name)". The facts in them (bounds, fields, values) come from the schema's text,
// found by where the validator says the failing keyword is.

// toolSchemaURL is where a tool's schema is compiled: the validator's keyword locations
// start with it.
const toolSchemaURL = "mem://askuser/tool.json"

// editProblems returns one line per problem of ve, the validation of tree (the edited
// arguments) against schema (the tool's JSON Schema, as given).
func editProblems(ve *jsonschema.ValidationError, schema []byte, tree any) []string {
	var out []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		kw := keywordOf(e)
		if len(e.Causes) > 0 && kw != "anyOf" && kw != "oneOf" && kw != "minContains" {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		out = append(out, describeEditProblem(e, kw, schema, tree)...)
	}
	walk(ve)
	return out
}

// keywordOf is the keyword that failed: the last element of the error's keyword
// location, or for dependentRequired/NAME/INDEX, the keyword itself.
func keywordOf(e *jsonschema.ValidationError) string {
	segs := strings.Split(e.KeywordLocation, "/")
	if n := len(segs); n >= 3 && (segs[n-3] == "dependentRequired" || segs[n-3] == "dependencies") {
		return segs[n-3]
	}
	return segs[len(segs)-1]
}

func describeEditProblem(e *jsonschema.ValidationError, kw string, schema []byte, tree any) []string {
	path := pointerSegments(e.InstanceLocation)
	where := displayPath(path)
	value := lookup(tree, path)
	// sub is the schema object whose keyword failed, and keyword the keyword's value (for
	// dependentRequired, the name it requires); both nil when the location is not in the
	// tool's schema text (a subschema with a $id of its own, say).
	var sub map[string]json.RawMessage
	var keyword json.RawMessage
	var segs []string
	if loc, ok := strings.CutPrefix(e.AbsoluteKeywordLocation, toolSchemaURL+"#"); ok {
		segs = pointerSegments(loc)
		keyword = schemaNodeAt(schema, segs)
		if e.Message == "not allowed" && string(keyword) == "false" {
			return []string{where + ": is not allowed"}
		}
		up := 1
		if kw == "dependentRequired" || kw == "dependencies" {
			up = 3
		}
		if len(segs) >= up {
			_ = json.Unmarshal(schemaNodeAt(schema, segs[:len(segs)-up]), &sub)
		}
	}
	number := func() string { return jsonNumberText(keyword) }
	line := func(what string) []string { return []string{where + ": " + what} }
	switch kw {
	case "type":
		want := strings.TrimPrefix(e.Message, "expected ")
		if i := strings.Index(want, ", but got"); i >= 0 {
			want = want[:i]
		}
		return line(typeMismatch(strings.Split(want, " or "), value))
	case "required":
		obj, _ := value.(map[string]any)
		var names []string
		if err := json.Unmarshal(keyword, &names); err != nil {
			names = quotedNames(strings.TrimPrefix(e.Message, "missing properties: "))
		}
		var out []string
		for _, name := range names {
			if _, ok := obj[name]; !ok {
				out = append(out, joinPath(where, name)+": is required")
			}
		}
		return out
	case "additionalProperties":
		obj, _ := value.(map[string]any)
		fields := orderedKeys(sub["properties"])
		var patterns []*regexp.Regexp
		for _, p := range orderedKeys(sub["patternProperties"]) {
			if re, err := regexp.Compile(p); err == nil {
				patterns = append(patterns, re)
			}
		}
		what := "is not a field of this tool"
		if len(fields) > 0 {
			what += " (it takes " + strings.Join(fields, ", ") + ")"
		}
		var out []string
		if sub == nil {
			names := strings.TrimSuffix(strings.TrimPrefix(e.Message, kw+" "), " not allowed")
			for _, k := range quotedNames(names) {
				out = append(out, joinPath(where, k)+": "+what)
			}
			return out
		}
		for k := range obj {
			if !slices.Contains(fields, k) && !slices.ContainsFunc(patterns, func(re *regexp.Regexp) bool { return re.MatchString(k) }) {
				out = append(out, joinPath(where, k)+": "+what)
			}
		}
		slices.Sort(out)
		return out
	case "minLength":
		if n := number(); n != "" {
			if n == "1" {
				return line("must not be empty")
			}
			return line("must be at least " + n + " characters long")
		}
		return line("is too short")
	case "maxLength":
		return line(bound("must be at most %s characters long", number(), "is too long"))
	case "minimum":
		return line(bound("must be at least %s", number(), "is too small"))
	case "maximum":
		return line(bound("must be at most %s", number(), "is too large"))
	case "exclusiveMinimum":
		return line(bound("must be greater than %s", number(), "is too small"))
	case "exclusiveMaximum":
		return line(bound("must be less than %s", number(), "is too large"))
	case "multipleOf":
		return line(bound("must be a multiple of %s", number(), "is not a multiple the tool takes"))
	case "minItems":
		return line(bound("must have at least %s items", number(), "has too few items"))
	case "maxItems":
		return line(bound("must have at most %s items", number(), "has too many items"))
	case "additionalItems":
		var tuple []json.RawMessage
		if json.Unmarshal(sub["items"], &tuple) == nil {
			return line(fmt.Sprintf("must have at most %d items", len(tuple)))
		}
		return line("has too many items")
	case "minProperties":
		return line(bound("must have at least %s fields", number(), "has too few fields"))
	case "maxProperties":
		return line(bound("must have at most %s fields", number(), "has too many fields"))
	case "uniqueItems":
		return line("must not hold the same item twice")
	case "minContains", "contains":
		return line("has too few of the items it must contain")
	case "maxContains":
		return line("has too many of a kind of item")
	case "enum":
		var values []json.RawMessage
		if json.Unmarshal(keyword, &values) == nil && len(values) > 0 {
			shown := make([]string, len(values))
			for i, v := range values {
				shown[i] = compactText(v)
			}
			return line("must be one of " + strings.Join(shown, ", "))
		}
		return line("is not one of the values this tool takes")
	case "const":
		if len(keyword) > 0 {
			return line("must be " + compactText(keyword))
		}
		return line("is not the value this tool takes")
	case "pattern":
		var p string
		if json.Unmarshal(keyword, &p) == nil {
			return line("must match the pattern " + p)
		}
		return line("does not match the pattern this tool takes")
	case "format":
		var f string
		if json.Unmarshal(keyword, &f) == nil {
			return line("must be a valid " + f)
		}
		return line("is not in the format this tool takes")
	case "dependentRequired", "dependencies":
		var need string
		if json.Unmarshal(keyword, &need) != nil || len(segs) < 2 {
			return line("lacks a field that another of its fields requires")
		}
		return []string{joinPath(where, need) + ": is required when " + segs[len(segs)-2] + " is given"}
	case "anyOf", "oneOf":
		if strings.HasPrefix(e.Message, "valid against schemas") {
			return line("matches more than one of the forms this tool takes; it must match exactly one")
		}
		// A choice of types alone (a string or null, say) reads as one type problem.
		var types []string
		for _, c := range e.Causes {
			if keywordOf(c) != "type" || c.InstanceLocation != e.InstanceLocation {
				types = nil
				break
			}
			want := strings.TrimPrefix(c.Message, "expected ")
			if i := strings.Index(want, ", but got"); i >= 0 {
				want = want[:i]
			}
			types = append(types, strings.Split(want, " or ")...)
		}
		if len(types) > 0 {
			return line(typeMismatch(slices.Compact(types), value))
		}
		return line("matches none of the forms this tool takes")
	case "not":
		return line("is a value this tool does not take")
	}
	return line("does not fit the tool's schema (" + kw + ")")
}

// typeNames are the panel's words for JSON types.
var typeNames = map[string]string{"string": "a string", "number": "a number", "integer": "an integer",
	"object": "an object", "array": "an array", "boolean": "true or false", "null": "null"}

// typeMismatch says that value is none of the types want.
func typeMismatch(want []string, value any) string {
	shown := make([]string, len(want))
	for i, t := range want {
		shown[i] = typeNames[t]
		if shown[i] == "" {
			shown[i] = t
		}
	}
	return "must be " + strings.Join(shown, " or ") + ", not " + typeNames[jsonTypeName(value)]
}

// bound is format with the bound n, or plain when the schema's bound is not known.
func bound(format, n, plain string) string {
	if n == "" {
		return plain
	}
	return fmt.Sprintf(format, n)
}

// jsonNumberText renders a number of the schema as the panel does (JavaScript's
// Number.prototype.toString for ordinary sizes): 1, 0.5, -3; "" for anything else.
func jsonNumberText(raw json.RawMessage) string {
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil {
		return ""
	}
	if f != 0 && (f < 1e-6 && f > -1e-6 || f >= 1e21 || f <= -1e21) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// compactText is a JSON value of the schema, compacted, as it is written there.
func compactText(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// pointerSegments splits a JSON pointer of the validator's (whose segments may also be
// percent-encoded) into its segments.
func pointerSegments(p string) []string {
	if p == "" || p == "/" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		if u, err := url.PathUnescape(s); err == nil {
			s = u
		}
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

// schemaNodeAt returns the text of the schema's value at path; nil when there is none.
func schemaNodeAt(schema []byte, path []string) json.RawMessage {
	node := json.RawMessage(schema)
	for _, p := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(node, &obj) == nil {
			node = obj[p]
			continue
		}
		var arr []json.RawMessage
		i, err := strconv.Atoi(p)
		if json.Unmarshal(node, &arr) != nil || err != nil || i < 0 || i >= len(arr) {
			return nil
		}
		node = arr[i]
	}
	return node
}

// orderedKeys returns the keys of a JSON object's text in the order they are written.
func orderedKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// quotedNames reads the validator's list of names, 'a', 'b', from one of its messages.
func quotedNames(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ", ") {
		part = strings.TrimSpace(part)
		if len(part) >= 2 && part[0] == '\'' && part[len(part)-1] == '\'' {
			if u, err := strconv.Unquote(`"` + strings.ReplaceAll(part[1:len(part)-1], `\'`, `'`) + `"`); err == nil {
				out = append(out, u)
			}
		}
	}
	return out
}
