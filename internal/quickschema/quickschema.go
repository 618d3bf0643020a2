// Package quickschema compiles the subset of JSON Schema that the tool's input schema uses
// (type, required, properties, additionalProperties: false, items, minItems, maxItems,
// minLength, maxLength) into a checker that only answers "valid or not", and keeps the
// schema's facts (fields in order, required sets, bounds) for the messages that explain
// a refusal. A general validator spends most of the time and memory of a call on
// bookkeeping for error reports; a valid call, the common case, can skip it, and an
// invalid one still gets its detailed problems from it. Being compiled from the schema
// file, neither the checker nor the facts can drift from it.
package quickschema

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/askuser-go/askuser/internal/jsonread"
)

// Schema is one compiled (sub)schema.
type Schema struct {
	// Type is "" (any), "object", "array", "string" or "boolean".
	Type string
	// Required lists the required member names of an object.
	Required []string
	// Props holds the schemas of an object's members; Fields names them in the order the
	// schema lists them.
	Props  map[string]*Schema
	Fields []string
	// Closed is additionalProperties: false.
	Closed bool
	// Items is the schema of an array's items.
	Items *Schema
	// MinItems and MaxItems bound an array's length; MaxItems -1 is no bound.
	MinItems, MaxItems int
	// MinLen and MaxLen bound a string's length in characters; MaxLen -1 is no bound.
	MinLen, MaxLen int
	// Description is the schema's description, if any.
	Description string
}

// Compile compiles a schema document, or returns nil when it uses anything outside the
// subset or is not valid JSON.
func Compile(raw []byte) *Schema {
	if jsonread.SyntaxError(raw) != "" {
		return nil
	}
	s, ok := compile(jsonread.NewWalker(raw))
	if !ok {
		return nil
	}
	return s
}

// compile reads the schema object at w.
func compile(w *jsonread.Walker) (*Schema, bool) {
	if w.Peek() != '{' {
		return nil, false
	}
	s := &Schema{MaxItems: -1, MaxLen: -1}
	ok := true
	w.Members(func(name string) bool {
		switch name {
		case "properties":
			if w.Peek() != '{' {
				ok = false
				return false
			}
			s.Props = map[string]*Schema{}
			w.Members(func(field string) bool {
				p, good := compile(w)
				if !good {
					ok = false
					return false
				}
				if _, dup := s.Props[field]; !dup {
					s.Fields = append(s.Fields, field)
				}
				s.Props[field] = p
				return true
			})
		case "items":
			s.Items, ok = compile(w)
		default:
			ok = s.keyword(name, w.Value())
		}
		return ok
	})
	return s, ok
}

// keyword records one keyword other than properties and items.
func (s *Schema) keyword(name string, v any) bool {
	count := func() (int, bool) {
		n, ok := v.(json.Number)
		if !ok {
			return 0, false
		}
		i, err := n.Int64()
		return int(i), err == nil && i >= 0
	}
	var ok bool
	switch name {
	case "$schema", "$id", "$comment", "title":
		return true // identifiers and annotations: no effect on validity
	case "description":
		s.Description, ok = v.(string)
	case "type":
		t, _ := v.(string)
		switch t {
		case "object", "array", "string", "boolean":
			s.Type, ok = t, true
		}
	case "required":
		list, isList := v.([]any)
		ok = isList
		for _, r := range list {
			n, isString := r.(string)
			if !isString {
				return false
			}
			s.Required = append(s.Required, n)
		}
	case "additionalProperties":
		b, isBool := v.(bool)
		s.Closed, ok = true, isBool && !b
	case "minItems":
		s.MinItems, ok = count()
	case "maxItems":
		s.MaxItems, ok = count()
	case "minLength":
		s.MinLen, ok = count()
	case "maxLength":
		s.MaxLen, ok = count()
	}
	return ok
}

// At returns the schema at a path of member names, where "[]" steps into an array's
// items, or nil when there is none.
func (s *Schema) At(path ...string) *Schema {
	for _, p := range path {
		if s == nil {
			return nil
		}
		if p == "[]" {
			s = s.Items
		} else {
			s = s.Props[p]
		}
	}
	return s
}

// IsRequired reports whether name is a required member of an object.
func (s *Schema) IsRequired(name string) bool {
	for _, r := range s.Required {
		if r == name {
			return true
		}
	}
	return false
}

// Valid reports whether v, a tree from jsonread.Decode, is valid for the schema. Each
// keyword applies to the values of its kind only, as in JSON Schema.
func (s *Schema) Valid(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if !s.IsType("object") {
			return false
		}
		for _, r := range s.Required {
			if _, ok := v[r]; !ok {
				return false
			}
		}
		for k, x := range v {
			p, ok := s.Props[k]
			if !ok {
				if s.Closed {
					return false
				}
				continue
			}
			if !p.Valid(x) {
				return false
			}
		}
	case []any:
		if !s.IsType("array") || !s.ValidCount(len(v)) {
			return false
		}
		if s.Items != nil {
			for _, x := range v {
				if !s.Items.Valid(x) {
					return false
				}
			}
		}
	case string:
		return s.ValidString(v)
	case bool:
		return s.IsType("boolean")
	default: // null and numbers: no type of the subset admits them
		return s.Type == ""
	}
	return true
}

// ValidString reports whether s is valid for the schema.
func (s *Schema) ValidString(str string) bool {
	if !s.IsType("string") {
		return false
	}
	if s.MinLen > 0 || s.MaxLen >= 0 {
		n := utf8.RuneCountInString(str)
		if n < s.MinLen || s.MaxLen >= 0 && n > s.MaxLen {
			return false
		}
	}
	return true
}

// IsType reports whether the schema admits values of JSON type t, as far as "type" says.
func (s *Schema) IsType(t string) bool { return s.Type == "" || s.Type == t }

// ValidCount is Valid's length check for an array of n items.
func (s *Schema) ValidCount(n int) bool {
	return n >= s.MinItems && (s.MaxItems < 0 || n <= s.MaxItems)
}

// HasRequired reports whether every required name of an object is present.
func (s *Schema) HasRequired(present func(name string) bool) bool {
	for _, r := range s.Required {
		if !present(r) {
			return false
		}
	}
	return true
}
