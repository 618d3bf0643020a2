// Package jsonscan is the scanning machinery of the library's JSON fast paths: a strict,
// allocation-light reader of the few shapes the protocol has, which gives up (returns
// false) on anything it does not expect, so that the caller falls back to the reference
// reading. It knows no shape itself; the root package's fastpath.go holds one entry point
// per shape.
package jsonscan

import (
	"strings"
	"unicode/utf8"

	"github.com/askuser-go/askuser/internal/jsonread"
)

// Scanner reads the few JSON shapes of the fast paths (the model's arguments, a
// device's result), strictly: any byte it does not expect makes the caller give up. B is
// the input and I the offset; Names, when set, interns member names (see Name).
type Scanner struct {
	B     []byte
	I     int
	Names map[string]string
}

// Peek skips white space and returns the next byte, or 0 at the end.
func (sc *Scanner) Peek() byte {
	for sc.I < len(sc.B) {
		switch c := sc.B[sc.I]; c {
		case ' ', '\t', '\n', '\r':
			sc.I++
		default:
			return c
		}
	}
	return 0
}

// Eat consumes c, after white space, when it is next.
func (sc *Scanner) Eat(c byte) bool {
	if sc.Peek() == c && sc.I < len(sc.B) {
		sc.I++
		return true
	}
	return false
}

// AtEnd reports whether only white space is left.
func (sc *Scanner) AtEnd() bool {
	sc.Peek()
	return sc.I == len(sc.B)
}

// Literal consumes word (true, false, null) when it is next.
func (sc *Scanner) Literal(word string) bool {
	sc.Peek()
	if len(sc.B)-sc.I >= len(word) && string(sc.B[sc.I:sc.I+len(word)]) == word {
		sc.I += len(word)
		return true
	}
	return false
}

// Bool reads true or false.
func (sc *Scanner) Bool() (v, ok bool) {
	if sc.Literal("true") {
		return true, true
	}
	return false, sc.Literal("false")
}

// Str reads a string. One without escapes, control characters or invalid UTF-8 is taken
// as it is; any other is checked and unquoted as jsonread.Decode does, so that both read it alike.
func (sc *Scanner) Str() (string, bool) {
	if sc.Peek() != '"' {
		return "", false
	}
	start := sc.I
	plain, ascii := true, true
	for j := start + 1; j < len(sc.B); j++ {
		switch c := sc.B[j]; {
		case c == '"':
			sc.I = j + 1
			raw := sc.B[start+1 : j]
			if plain && (ascii || utf8.Valid(raw)) {
				return string(raw), true
			}
			if s, ok := unescapeSimple(raw); ok {
				return s, true
			}
			token := sc.B[start : j+1]
			if jsonread.SyntaxError(token) != "" {
				return "", false
			}
			return jsonread.Unquote(token), true
		case c == '\\':
			plain = false
			j++ // the escaped byte, which may be a quote
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// Name reads a member name. A name of Names, spelt without escapes, comes back as the
// interned string, so that reading it allocates nothing.
func (sc *Scanner) Name() (string, bool) {
	if sc.Peek() != '"' {
		return "", false
	}
	for j := sc.I + 1; j < len(sc.B); j++ {
		c := sc.B[j]
		if c == '"' {
			if n, ok := sc.Names[string(sc.B[sc.I+1:j])]; ok {
				sc.I = j + 1
				return n, true
			}
			break
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	return sc.Str()
}

// unescapeSimple unquotes the contents of a JSON string whose escapes are all of one
// character (\n, \", ...), the escapes of multi-line previews, as encoding/json would. It
// returns false for \u escapes, control characters and invalid UTF-8, which it leaves to
// encoding/json.
func unescapeSimple(raw []byte) (string, bool) {
	if !utf8.Valid(raw) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(raw))
	start := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c < 0x20 {
			return "", false
		}
		if c != '\\' {
			continue
		}
		if i+1 == len(raw) {
			return "", false
		}
		b.Write(raw[start:i])
		i++
		switch raw[i] {
		case '"', '\\', '/':
			b.WriteByte(raw[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		default:
			return "", false
		}
		start = i + 1
	}
	b.Write(raw[start:])
	return b.String(), true
}

// Object reads an object, calling member for each name with the scanner at its value,
// which member must consume.
func (sc *Scanner) Object(member func(name string) bool) bool {
	if !sc.Eat('{') {
		return false
	}
	if sc.Eat('}') {
		return true
	}
	for {
		name, ok := sc.Name()
		if !ok || !sc.Eat(':') || !member(name) {
			return false
		}
		if !sc.Eat(',') {
			return sc.Eat('}')
		}
	}
}

// Array reads an array, calling elem with the scanner at each element.
func (sc *Scanner) Array(elem func() bool) bool {
	if !sc.Eat('[') {
		return false
	}
	if sc.Eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if !sc.Eat(',') {
			return sc.Eat(']')
		}
	}
}

// SkipComposite moves past the object or array that starts here, matching brackets
// outside strings without checking anything else: the caller decodes what it skipped.
func (sc *Scanner) SkipComposite() bool {
	depth := 0
	for ; sc.I < len(sc.B); sc.I++ {
		switch sc.B[sc.I] {
		case '"':
			for sc.I++; sc.I < len(sc.B) && sc.B[sc.I] != '"'; sc.I++ {
				if sc.B[sc.I] == '\\' {
					sc.I++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				sc.I++
				return true
			}
		}
	}
	return false
}
