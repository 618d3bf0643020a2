package askuser

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/askuser-go/askuser/internal/jsonx"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The problems of invalid arguments: the wording of those the JSON Schema validator
// finds, one actionable line each, with where it is (the facts in them, fields, required
// members and bounds, come from the schema itself; see fields.go), and the rules a schema
// cannot say.

// schemaProblems turns a schema validation error into one actionable line per problem.
func schemaProblems(ve *jsonschema.ValidationError, tree any) []string {
	var out []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		out = append(out, describeSchemaError(e, tree)...)
	}
	walk(ve)
	return out
}

func describeSchemaError(e *jsonschema.ValidationError, tree any) []string {
	path := splitPointer(e.InstanceLocation)
	where := displayPath(path)
	value := lookup(tree, path)
	keyword := e.KeywordLocation[strings.LastIndexByte(e.KeywordLocation, '/')+1:]
	switch keyword {
	case "required":
		obj, _ := value.(map[string]any)
		var out []string
		for _, f := range schemaAt(path).Required {
			if _, ok := obj[f]; !ok {
				out = append(out, fmt.Sprintf("%s: missing required field %q", joinPath(where, f), f))
			}
		}
		return out
	case "additionalProperties":
		obj, _ := value.(map[string]any)
		allowed := schemaAt(path).Fields
		var out []string
		for k := range obj {
			if !slices.Contains(allowed, k) {
				out = append(out, fmt.Sprintf("%s: unknown field; the allowed fields here are %s", joinPath(where, k), strings.Join(allowed, ", ")))
			}
		}
		slices.Sort(out)
		return out
	case "type":
		want := strings.TrimPrefix(e.Message, "expected ")
		if i := strings.Index(want, ", but got"); i >= 0 {
			want = want[:i]
		}
		return []string{fmt.Sprintf("%s: must be %s, not %s", where, jsonx.Article(want), jsonx.Article(jsonTypeName(value)))}
	case "minItems", "maxItems":
		arr, _ := value.([]any)
		s, adv := schemaAt(path), advertisedAt(path)
		p := fmt.Sprintf("%s: must have %d to %d %s, got %d", where, s.MinItems, s.MaxItems, path[len(path)-1], len(arr))
		if s.MinItems == 0 {
			p = fmt.Sprintf("%s: must have at most %d %s, got %d", where, s.MaxItems, path[len(path)-1], len(arr))
		}
		if adv != nil && (adv.MinItems != s.MinItems || adv.MaxItems != s.MaxItems) {
			p += fmt.Sprintf("; the tool's schema asks for %d to %d", adv.MinItems, adv.MaxItems)
		}
		return []string{p}
	case "minLength":
		return []string{where + ": must not be empty"}
	case "maxLength":
		str, _ := value.(string)
		s, adv := schemaAt(path), advertisedAt(path)
		p := fmt.Sprintf("%s: must be at most %d characters, got %d", where, s.MaxLen, utf8.RuneCountInString(str))
		if adv != nil && adv.MaxLen != s.MaxLen {
			p += fmt.Sprintf("; the tool's schema asks for at most %d", adv.MaxLen)
		}
		return []string{p}
	}
	return []string{where + ": " + e.Message}
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func splitPointer(p string) []string {
	if p == "" || p == "/" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

func lookup(v any, path []string) any {
	for _, p := range path {
		switch t := v.(type) {
		case map[string]any:
			v = t[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

// displayPath renders a JSON pointer's segments as questions[1].options[0].label.
func displayPath(path []string) string {
	if len(path) == 0 {
		return "arguments"
	}
	var b strings.Builder
	for _, p := range path {
		if _, err := strconv.Atoi(p); err == nil {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func joinPath(where, field string) string {
	if where == "arguments" {
		return field
	}
	return where + "." + field
}

// problems checks the rules the schema cannot express. Empty strings are the schema's to
// report; this reports strings that are only white space, where the schema refuses an
// empty one (an option's description may be either). Locations are formatted only for a
// problem found: a valid request, the common case, costs no formatting.
func (r *Request) problems() []string {
	var out []string
	blank := func(s string, of *shape, name string, where func() string) {
		if s != "" && strings.TrimSpace(s) == "" && of.Props[name].MinLen > 0 {
			out = append(out, where()+": must not be blank")
		}
	}
	question, option := inputSchema().At(fieldQuestions, "[]"), inputSchema().At(optionPath...)
	seenQ := make(map[string]int, len(r.Questions))
	for i := range r.Questions {
		q := &r.Questions[i]
		for _, f := range questionStrings {
			blank(*f.get(q), question, f.name, func() string { return questionLoc(i) + "." + f.name })
		}
		if t := strings.TrimSpace(q.Question); t != "" {
			if j, dup := seenQ[t]; dup {
				out = append(out, fmt.Sprintf("%s.question: same text as questions[%d].question; each question must be different", questionLoc(i), j))
			} else {
				seenQ[t] = i
			}
		}
		seenL := make(map[string]int, len(q.Options))
		for k := range q.Options {
			o := &q.Options[k]
			for _, f := range optionTexts {
				blank(*f.get(o), option, f.name, func() string { return optionLoc(i, k) + "." + f.name })
			}
			t := strings.TrimSpace(o.Label)
			if t == "" {
				continue
			}
			if isOtherLabel(t) {
				out = append(out, fmt.Sprintf("%s.label: %q duplicates the \"Other\" choice every client adds with a text box; remove this option", optionLoc(i, k), o.Label))
			}
			if j, dup := seenL[t]; dup {
				out = append(out, fmt.Sprintf("%s.label: same label as %s.options[%d].label; labels must be unique within a question", optionLoc(i, k), questionLoc(i), j))
			} else {
				seenL[t] = k
			}
		}
	}
	return out
}

// isOtherLabel reports whether a label is the client's own "Other" choice, in any case,
// with trailing punctuation, or in Chinese.
func isOtherLabel(label string) bool {
	t := strings.TrimRightFunc(label, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
	if strings.EqualFold(t, "other") || t == "其他" || t == "其它" {
		return true
	}
	// "Other (please specify)" and the like.
	lower := strings.ToLower(t)
	return strings.HasPrefix(lower, "other (") || strings.HasPrefix(lower, "other:")
}

// sortProblems orders problems by where they are, numbers compared as numbers, so that
// the list reads top to bottom and is the same on every run.
func sortProblems(p []string) []string {
	slices.SortStableFunc(p, naturalCompare)
	return slices.Compact(p)
}

func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			na, _ := strconv.Atoi(a[:da])
			nb, _ := strconv.Atoi(b[:db])
			if na != nb {
				return na - nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitPrefix(s string) int {
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// maxArgumentProblems bounds the problems listed for invalid arguments: enough to fix
// any call a model means, few enough that junk arguments cannot flood its context.
const maxArgumentProblems = 20

// capProblems keeps the first maxArgumentProblems and says how many more there were.
func capProblems(p []string) []string {
	if len(p) <= maxArgumentProblems {
		return p
	}
	return append(p[:maxArgumentProblems:maxArgumentProblems], moreProblems("arguments", len(p)-maxArgumentProblems))
}
