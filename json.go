package askuser

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
	"strings"
	"sync"
	"unicode/utf8"
)

// marshal encodes v as compact JSON without escaping <, > and &.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return validUTF8(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// jsonString returns s as a JSON string, as marshal writes it.
func jsonString(s string) string {
	b, _ := marshal(s) // a string always encodes
	return string(b)
}

// jsonStrings returns ss as a JSON array of strings, [] for none.
func jsonStrings(ss []string) string {
	if ss == nil {
		ss = []string{}
	}
	b, _ := marshal(ss)
	return string(b)
}

// compactJSON returns the JSON value b without white space between its tokens, its
// members in the order written, or what is wrong with it.
func compactJSON(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, errors.New(syntaxProblem(b))
	}
	return validUTF8(buf.Bytes()), nil
}

// canonicalJSON returns the JSON value b in one form whatever its spelling: compact,
// object members sorted by name (the last of a repeated name kept), numbers as written.
func canonicalJSON(b []byte) ([]byte, error) {
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	return marshal(v)
}

// decodeJSON decodes exactly one JSON value into a tree of map[string]any, []any,
// string, json.Number, bool and nil, the last of a repeated member name winning; its
// error says what is wrong in the library's words.
func decodeJSON(b []byte) (any, error) {
	if !json.Valid(b) {
		return nil, errors.New(syntaxProblem(b))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err // not for valid JSON
	}
	return v, nil
}

// members calls member with each member of the JSON object b, in order, until it
// returns false. b must be valid JSON; a value that is not an object has no members.
func members(b []byte, member func(name string, value json.RawMessage) bool) error {
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

// kind names the JSON type of the valid JSON value b: "object", "array", "string",
// "boolean", "null" or "number".
func kind(b []byte) string {
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
const maxJSONDepth = 10000

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
func syntaxProblem(b []byte) string {
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
		return fmt.Sprintf("objects and arrays nested more than %d deep", maxJSONDepth)
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
func validUTF8(b []byte) []byte {
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
