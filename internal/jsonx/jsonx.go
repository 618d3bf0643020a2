package jsonx

// The library's JSON is encoding/json's, with three choices made once here: <, > and &
// are written as themselves (models and people read them better so); invalid UTF-8
// never goes out, as encoding/json already makes sure for strings and validUTF8 for
// JSON passed through as it is (a model's arguments, metadata); and what is wrong with
// input that is not JSON is said in the library's words (syntaxProblem), which name
// where it is.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// marshal encodes v as compact JSON without escaping <, > and &.
func Marshal(v any) ([]byte, error) {
	e := encoders.Get().(*encoder)
	defer e.put()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))
	if !utf8.Valid(b) {
		return ValidUTF8(b), nil
	}
	return bytes.Clone(b), nil
}

// encoder is a buffer and an encoder that writes to it, kept for use again: every
// event and tool result is encoded by one.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// put returns e to the pool, unless its buffer grew past what a question's events need.
func (e *encoder) put() {
	if e.buf.Cap() <= 64<<10 {
		e.buf.Reset()
		encoders.Put(e)
	}
}

// jsonString returns s as a JSON string, as marshal writes it.
func String(s string) string {
	b, _ := Marshal(s) // a string always encodes
	return string(b)
}

// jsonStrings returns ss as a JSON array of strings, [] for none.
func Strings(ss []string) string {
	if ss == nil {
		ss = []string{}
	}
	b, _ := Marshal(ss)
	return string(b)
}

// compactJSON returns the JSON value b without white space between its tokens, its
// members in the order written, or what is wrong with it.
func Compact(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, errors.New(SyntaxProblem(b))
	}
	return ValidUTF8(buf.Bytes()), nil
}

// canonicalJSON returns the JSON value b in one form whatever its spelling: compact,
// object members sorted by name (the last of a repeated name kept), numbers as written.
func Canonical(b []byte) ([]byte, error) {
	if !json.Valid(b) {
		return nil, errors.New(SyntaxProblem(b))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers as written
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err // not for valid JSON
	}
	return Marshal(v)
}

// decodeJSON decodes exactly one JSON value into a tree of map[string]any, []any,
// string, float64, bool and nil, the last of a repeated member name winning; its error
// says what is wrong in the library's words.
func Decode(b []byte) (any, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, errors.New(SyntaxProblem(b))
	}
	return v, nil
}

// members calls member with each member of the JSON object b, in order, until it
// returns false. b must be valid JSON; a value that is not an object has no members.
func Members(b []byte, member func(name string, value json.RawMessage) bool) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return err
		}
		if !member(name, value) {
			return nil
		}
	}
	return nil
}

// decodeObject decodes b, which a device sent, into its members by name (the last of
// a repeated name kept), or says what is wrong: "not valid JSON: …", or, for a value
// that is not an object, "not " and its type ("not an array").
func DecodeObject(b []byte) (map[string]json.RawMessage, string) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil && !json.Valid(b) {
		return nil, "not valid JSON: " + SyntaxProblem(b)
	}
	if k := Kind(b); k != "object" {
		return nil, "not " + Article(k)
	}
	return m, ""
}

// unknownName returns the first name of m, in sorted order, that is not one of names.
func UnknownName(m map[string]json.RawMessage, names ...string) string {
	var unknown string
	for name := range m {
		if !slices.Contains(names, name) && (unknown == "" || name < unknown) {
			unknown = name
		}
	}
	return unknown
}

// given counts the times a member is given in an object: decoding an object into a
// struct of them finds a name given twice, which encoding/json otherwise lets the last
// of win silently. (It matches names in any case; a caller refuses the names that are
// not exactly its own first.)
type Given int

func (g *Given) UnmarshalJSON([]byte) error {
	*g++
	return nil
}

// kind names the JSON type of the valid JSON value b: "object", "array", "string",
// "boolean", "null" or "number".
func Kind(b []byte) string {
	switch b = bytes.TrimLeft(b, " \t\r\n"); {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		return "object"
	case b[0] == '[':
		return "array"
	case b[0] == '"':
		return "string"
	case b[0] == 't' || b[0] == 'f':
		return "boolean"
	case b[0] == 'n':
		return "null"
	}
	return "number"
}

// maxJSONDepth is how deeply encoding/json lets objects and arrays nest.
const MaxDepth = 10000

// offsetBias is what json.SyntaxError.Offset counts beyond the offset of the offending
// byte: 1 where encoding/json counts the bytes read, that one included (Go's own
// implementation), 0 where it gives the byte's offset (encoding/json built on
// encoding/json/v2). Measured once, on a value whose first byte is wrong.
var offsetBias = sync.OnceValue(func() int64 {
	var se *json.SyntaxError
	if errors.As(json.Unmarshal([]byte("x"), new(json.RawMessage)), &se) {
		return se.Offset
	}
	return 1 // not reached
})

// syntaxProblem says, in the library's words, why b is not one JSON value, and where:
// "invalid character 'q' at offset 1", with the offset counted from 0 in bytes. Only
// where encoding/json stopped comes from it, not its words, which are no contract.
func SyntaxProblem(b []byte) string {
	if len(bytes.TrimSpace(b)) == 0 {
		return "no JSON value; the input is empty"
	}
	se := syntaxError(b)
	if se == nil {
		return ""
	}
	// The input ends too early when more of it would move the error.
	at := se.Offset - offsetBias()
	if more := syntaxError(append(b[:len(b):len(b)], 0)); more == nil || more.Offset != se.Offset || at < 0 || at >= int64(len(b)) {
		return "unexpected end of input"
	}
	switch {
	case strings.Contains(se.Error(), "depth"):
		return fmt.Sprintf("objects and arrays nested more than %d deep", MaxDepth)
	case json.Valid(b[:at]):
		return fmt.Sprintf("unexpected data after the JSON value at offset %d", at)
	}
	return fmt.Sprintf("invalid character %s at offset %d", describeByte(b, int(at)), at)
}

// syntaxError is encoding/json's error for b, or nil when b is one JSON value.
func syntaxError(b []byte) *json.SyntaxError {
	err := json.Unmarshal(b, new(json.RawMessage))
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		se = &json.SyntaxError{Offset: int64(len(b)) + offsetBias()} // not from Unmarshal
	}
	return se
}

// describeByte names the character at b[i]: 'q' for printable ASCII, U+000A for a
// control character or any other valid character, byte 0xFF for invalid UTF-8.
func describeByte(b []byte, i int) string {
	c := b[i]
	if c >= 0x20 && c < 0x7f {
		return "'" + string(c) + "'"
	}
	if c < utf8.RuneSelf {
		return fmt.Sprintf("U+%04X", c)
	}
	r, size := utf8.DecodeRune(b[i:])
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("byte 0x%02X", c)
	}
	return fmt.Sprintf("U+%04X", r)
}

// validUTF8 returns b with each byte of invalid UTF-8 replaced by U+FFFD, as
// encoding/json reads such a byte in a string (in valid JSON, the only place it can
// be); b itself when it is valid.
func ValidUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func Article(typ string) string {
	switch typ {
	case "object", "array", "integer":
		return "an " + typ
	case "null":
		return "null"
	}
	return "a " + typ
}

// truncateBytes cuts s to at most n bytes without splitting a character.
func TruncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
