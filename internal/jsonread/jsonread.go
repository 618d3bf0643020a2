// Package jsonread is the library's own JSON reading: a syntax check that words its
// errors itself, a compaction, and a walker that decodes what the check accepted.
// Problems shown to models and devices come from here rather than from encoding/json,
// whose wording, and whose handling of invalid UTF-8, change between Go releases.
package jsonread

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// Decode decodes exactly one JSON value into a tree of map[string]any, []any, string,
// json.Number, bool and nil, the last of a repeated member name winning. Its error says
// what is wrong in the library's own words (see SyntaxError).
func Decode(b []byte) (any, error) {
	if problem := SyntaxError(b); problem != "" {
		return nil, errors.New(problem)
	}
	w := NewWalker(b)
	return w.Value(), nil
}

// NewWalker returns a walker at the start of b, which SyntaxError must have accepted.
func NewWalker(b []byte) *Walker { return &Walker{b: b} }

// Pos returns the walker's offset in its input.
func (w *Walker) Pos() int { return w.i }

// Peek returns the byte the next value starts with, after white space.
func (w *Walker) Peek() byte {
	w.Space()
	return w.b[w.i]
}

// maxJSONDepth is how deep objects and arrays may nest, as in encoding/json.
const maxJSONDepth = 10000

// SyntaxError describes, in the library's own words, the first reason b is not
// exactly one JSON value (white space around it allowed), or returns "" when it is.
// Problems reported to models and devices use it rather than encoding/json's errors,
// whose wording is not part of any contract and changes between Go releases.
//
// The words name the offending character and its byte offset, and what was expected
// there: "invalid character 'q' at offset 1; expected a member name in double quotes".
func SyntaxError(b []byte) string {
	p := syntaxChecker{b: b}
	return p.check()
}

// AppendCompact appends src to dst without the white space between its tokens,
// after checking that src is exactly one JSON value; when it is not, it returns dst
// unchanged and what is wrong, as SyntaxError says it. Strings are copied as they
// are.
func AppendCompact(dst, src []byte) ([]byte, string) {
	p := syntaxChecker{b: src, out: dst, compact: true}
	if msg := p.check(); msg != "" {
		return dst, msg
	}
	return append(p.out, src[p.last:]...), ""
}

type syntaxChecker struct {
	b     []byte
	i     int
	stack []byte // '{' or '[' for each open container

	// With compact set, out collects b without white space: b[last:i] is what is not
	// yet copied.
	compact bool
	out     []byte
	last    int
}

func (p *syntaxChecker) check() string {
	p.space()
	if p.i == len(p.b) {
		return "no JSON value; the input is empty"
	}
	if msg := p.value(); msg != "" {
		return msg
	}
	p.space()
	if p.i < len(p.b) {
		return fmt.Sprintf("unexpected data after the JSON value at offset %d", p.i)
	}
	return ""
}

// space skips white space, which can only be between tokens.
func (p *syntaxChecker) space() {
	start := p.i
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
			continue
		}
		break
	}
	if p.compact && p.i > start {
		p.out = append(p.out, p.b[p.last:start]...)
		p.last = p.i
	}
}

// value checks one value and, for a container, everything in it. It loops instead of
// recursing, so that deep nesting costs heap, not stack.
func (p *syntaxChecker) value() string {
	for {
		// At the start of a value.
		p.space()
		if p.i == len(p.b) {
			return "unexpected end of input; expected a value"
		}
		switch c := p.b[p.i]; {
		case c == '{' || c == '[':
			if len(p.stack) == maxJSONDepth {
				return fmt.Sprintf("objects and arrays nested more than %d deep at offset %d", maxJSONDepth, p.i)
			}
			p.stack = append(p.stack, c)
			p.i++
			p.space()
			if p.i < len(p.b) && p.b[p.i] == c+2 { // '}' or ']': empty
				p.i++
				p.stack = p.stack[:len(p.stack)-1]
				break
			}
			if c == '{' {
				if msg := p.memberName(); msg != "" {
					return msg
				}
			}
			continue // to the first element or member value
		case c == '"':
			if msg := p.str(); msg != "" {
				return msg
			}
		case c == '-' || c >= '0' && c <= '9':
			if msg := p.number(); msg != "" {
				return msg
			}
		case c == 't':
			if msg := p.literal("true"); msg != "" {
				return msg
			}
		case c == 'f':
			if msg := p.literal("false"); msg != "" {
				return msg
			}
		case c == 'n':
			if msg := p.literal("null"); msg != "" {
				return msg
			}
		default:
			return p.unexpected("a value")
		}
		// After a complete value: close containers, or go on to the next element.
		for {
			if len(p.stack) == 0 {
				return ""
			}
			p.space()
			top := p.stack[len(p.stack)-1]
			closer := top + 2
			if p.i == len(p.b) {
				return fmt.Sprintf("unexpected end of input; expected ',' or '%c'", closer)
			}
			switch p.b[p.i] {
			case ',':
				p.i++
				if top == '{' {
					if msg := p.memberName(); msg != "" {
						return msg
					}
				}
			case closer:
				p.i++
				p.stack = p.stack[:len(p.stack)-1]
				continue
			default:
				return p.unexpected(fmt.Sprintf("',' or '%c'", closer))
			}
			break
		}
	}
}

// memberName checks a member name and the colon after it.
func (p *syntaxChecker) memberName() string {
	p.space()
	if p.i == len(p.b) {
		return "unexpected end of input; expected a member name in double quotes"
	}
	if p.b[p.i] != '"' {
		return p.unexpected("a member name in double quotes")
	}
	if msg := p.str(); msg != "" {
		return msg
	}
	p.space()
	if p.i == len(p.b) {
		return "unexpected end of input; expected ':'"
	}
	if p.b[p.i] != ':' {
		return p.unexpected("':'")
	}
	p.i++
	return ""
}

// str checks a string starting at its opening quote. Invalid UTF-8 is allowed, as
// decoders replace it.
func (p *syntaxChecker) str() string {
	start := p.i
	for p.i++; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return ""
		case c < 0x20:
			return fmt.Sprintf("control character %s in a string at offset %d; it must be escaped", describeByte(p.b, p.i), p.i)
		case c >= utf8.RuneSelf && p.compact:
			r, size := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && size == 1 { // written as U+FFFD, the library's spelling
				p.out = append(p.out, p.b[p.last:p.i]...)
				p.out = append(p.out, "\uFFFD"...)
				p.last = p.i + 1
				continue
			}
			p.i += size - 1
		case c == '\\':
			if p.i+1 == len(p.b) {
				break
			}
			p.i++
			switch p.b[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 1; k <= 4; k++ {
					if p.i+k == len(p.b) {
						return fmt.Sprintf("unexpected end of input in the string at offset %d", start)
					}
					if !isHex(p.b[p.i+k]) {
						return fmt.Sprintf("invalid \\u escape at offset %d; expected 4 hexadecimal digits", p.i-1)
					}
				}
				p.i += 4
			default:
				return fmt.Sprintf("invalid escape '\\%s' in a string at offset %d", printable(p.b, p.i), p.i-1)
			}
		}
	}
	return fmt.Sprintf("unexpected end of input in the string at offset %d", start)
}

// number checks a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *syntaxChecker) number() string {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	bad := func() string { return fmt.Sprintf("invalid number at offset %d", start) }
	if p.b[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return bad()
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return bad()
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return bad()
		}
	}
	return ""
}

func (p *syntaxChecker) literal(word string) string {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return fmt.Sprintf("invalid literal at offset %d; expected a value such as true, false or null", p.i)
	}
	p.i += len(word)
	return ""
}

func (p *syntaxChecker) unexpected(want string) string {
	return fmt.Sprintf("invalid character %s at offset %d; expected %s", describeByte(p.b, p.i), p.i, want)
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

// printable is the character at b[i] for a message: itself when printable ASCII.
func printable(b []byte, i int) string {
	if c := b[i]; c >= 0x20 && c < 0x7f {
		return string(c)
	}
	return describeByte(b, i)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Walker walks JSON that jsonSyntaxError has accepted, so it checks nothing.
type Walker struct {
	b []byte
	i int
}

// Space skips white space.
func (w *Walker) Space() {
	for w.i < len(w.b) && (w.b[w.i] == ' ' || w.b[w.i] == '\t' || w.b[w.i] == '\n' || w.b[w.i] == '\r') {
		w.i++
	}
}

// Kind names the type of the value at w.i for a message: "an object", "null", ...
func (w *Walker) Kind() string {
	w.Space()
	switch w.b[w.i] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// Skip moves past the value at w.i.
func (w *Walker) Skip() {
	w.Space()
	switch w.b[w.i] {
	case '"':
		w.skipString()
	case '{', '[':
		for depth := 0; ; w.i++ {
			switch w.b[w.i] {
			case '"':
				w.skipString()
				w.i-- // the loop steps past the closing quote
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					w.i++
					return
				}
			}
		}
	default: // a number or a literal
		for w.i < len(w.b) && !isDelimiter(w.b[w.i]) {
			w.i++
		}
	}
}

func isDelimiter(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// skipString moves past the string whose opening quote is at w.i.
func (w *Walker) skipString() {
	for w.i++; w.b[w.i] != '"'; w.i++ {
		if w.b[w.i] == '\\' {
			w.i++
		}
	}
	w.i++
}

// Members calls member for each member of the object at w.i, with w at its value, which
// member must consume; it stops early when member returns false.
func (w *Walker) Members(member func(name string) bool) {
	w.Space()
	w.i++ // {
	for {
		w.Space()
		if w.b[w.i] == '}' {
			w.i++
			return
		}
		if w.b[w.i] == ',' {
			w.i++
			w.Space()
		}
		start := w.i
		w.skipString()
		name := Unquote(w.b[start:w.i])
		w.Space()
		w.i++ // :
		w.Space()
		if !member(name) {
			return
		}
	}
}

// Elements calls elem for each element of the array at w.i, with w at the element, which
// elem must consume.
func (w *Walker) Elements(elem func()) {
	w.Space()
	w.i++ // [
	for {
		w.Space()
		switch w.b[w.i] {
		case ']':
			w.i++
			return
		case ',':
			w.i++
			w.Space()
		}
		elem()
	}
}

// Value decodes the value at the walker as Decode does.
func (w *Walker) Value() any {
	w.Space()
	switch c := w.b[w.i]; c {
	case '{':
		obj := map[string]any{}
		w.Members(func(name string) bool {
			obj[name] = w.Value()
			return true
		})
		return obj
	case '[':
		arr := []any{}
		w.Elements(func() { arr = append(arr, w.Value()) })
		return arr
	case '"':
		start := w.i
		w.skipString()
		return Unquote(w.b[start:w.i])
	case 't':
		w.i += 4
		return true
	case 'f':
		w.i += 5
		return false
	case 'n':
		w.i += 4
		return nil
	}
	start := w.i
	for w.i < len(w.b) && !isDelimiter(w.b[w.i]) {
		w.i++
	}
	return json.Number(w.b[start:w.i])
}

// Unquote returns the text of a valid JSON string token, quotes included in raw. Each
// byte of invalid UTF-8, and each \u escape of a lone surrogate, becomes U+FFFD.
func Unquote(raw []byte) string {
	body := raw[1 : len(raw)-1]
	plain := true
	for _, c := range body {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(body)
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			i++
			switch e := body[i]; e {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(body[i+1:])
				i += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 < len(body) && body[i+1] == '\\' && body[i+2] == 'u' {
						r2 = hex4(body[i+3:])
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default: // " \ /
				out = append(out, e)
			}
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, "\uFFFD"...)
			} else {
				out = append(out, body[i:i+size]...)
			}
			i += size
		}
	}
	return string(out)
}

// hex4 reads the 4 hexadecimal digits of a \u escape.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
