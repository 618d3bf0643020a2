package askuser

import (
	"encoding/json"
	"unicode/utf8"
)

// quickSchema is the subset of JSON Schema that schema/input.json uses (type, required,
// properties, additionalProperties: false, items, minItems, maxItems, minLength,
// maxLength), compiled from that same file. It only answers "valid or not": the general
// validator spends most of the time and memory of a call on bookkeeping for error
// reports, so a valid call, the common case, skips it, and an invalid one still gets
// its detailed problems from it. Being compiled from the file, it cannot drift from it;
// a keyword outside the subset turns it off (compileQuick returns nil).
type quickSchema struct {
	typ                string // "" (any), "object", "array", "string" or "boolean"
	required           []string
	props              map[string]*quickSchema
	closed             bool // additionalProperties: false
	items              *quickSchema
	minItems, maxItems int // maxItems -1: no bound
	minLen, maxLen     int // maxLen -1: no bound
}

// compileQuick compiles a schema document, or returns nil when it uses anything outside
// the subset.
func compileQuick(raw []byte) *quickSchema {
	var doc any
	if json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	q, ok := quickFrom(doc)
	if !ok {
		return nil
	}
	return q
}

func quickFrom(v any) (*quickSchema, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	q := &quickSchema{maxItems: -1, maxLen: -1}
	count := func(x any) (int, bool) {
		f, ok := x.(float64)
		return int(f), ok && f >= 0 && f == float64(int(f))
	}
	for k, x := range obj {
		switch k {
		case "$schema", "$id", "$comment", "title", "description":
			// Identifiers and annotations: no effect on validity.
		case "type":
			t, _ := x.(string)
			switch t {
			case "object", "array", "string", "boolean":
				q.typ = t
			default:
				return nil, false
			}
		case "required":
			list, ok := x.([]any)
			if !ok {
				return nil, false
			}
			for _, r := range list {
				name, ok := r.(string)
				if !ok {
					return nil, false
				}
				q.required = append(q.required, name)
			}
		case "properties":
			props, ok := x.(map[string]any)
			if !ok {
				return nil, false
			}
			q.props = make(map[string]*quickSchema, len(props))
			for name, p := range props {
				if q.props[name], ok = quickFrom(p); !ok {
					return nil, false
				}
			}
		case "additionalProperties":
			if b, ok := x.(bool); !ok || b {
				return nil, false
			}
			q.closed = true
		case "items":
			if q.items, ok = quickFrom(x); !ok {
				return nil, false
			}
		case "minItems":
			if q.minItems, ok = count(x); !ok {
				return nil, false
			}
		case "maxItems":
			if q.maxItems, ok = count(x); !ok {
				return nil, false
			}
		case "minLength":
			if q.minLen, ok = count(x); !ok {
				return nil, false
			}
		case "maxLength":
			if q.maxLen, ok = count(x); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return q, true
}

// valid reports whether v, a tree from decodeJSON, is valid for the schema. Each keyword
// applies to the values of its kind only, as in JSON Schema.
func (q *quickSchema) valid(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if q.typ != "" && q.typ != "object" {
			return false
		}
		for _, r := range q.required {
			if _, ok := v[r]; !ok {
				return false
			}
		}
		for k, x := range v {
			p, ok := q.props[k]
			if !ok {
				if q.closed {
					return false
				}
				continue
			}
			if !p.valid(x) {
				return false
			}
		}
	case []any:
		if q.typ != "" && q.typ != "array" || len(v) < q.minItems || q.maxItems >= 0 && len(v) > q.maxItems {
			return false
		}
		if q.items != nil {
			for _, x := range v {
				if !q.items.valid(x) {
					return false
				}
			}
		}
	case string:
		return q.validString(v)
	case bool:
		return q.typ == "" || q.typ == "boolean"
	default: // null and numbers: no type of the subset admits them
		return q.typ == ""
	}
	return true
}

// validString is valid for a string.
func (q *quickSchema) validString(s string) bool {
	if !q.isType("string") {
		return false
	}
	if q.minLen > 0 || q.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if n < q.minLen || q.maxLen >= 0 && n > q.maxLen {
			return false
		}
	}
	return true
}

// isType reports whether the schema admits values of JSON type t, as far as "type" says.
func (q *quickSchema) isType(t string) bool { return q.typ == "" || q.typ == t }

// validCount is valid's length check for an array of n items.
func (q *quickSchema) validCount(n int) bool {
	return n >= q.minItems && (q.maxItems < 0 || n <= q.maxItems)
}

// hasRequired reports whether every required name of an object is present.
func (q *quickSchema) hasRequired(present func(name string) bool) bool {
	for _, r := range q.required {
		if !present(r) {
			return false
		}
	}
	return true
}
