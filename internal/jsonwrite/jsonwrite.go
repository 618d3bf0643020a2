// Package jsonwrite writes JSON in the library's one spelling, the same on every Go
// release.
package jsonwrite

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendValue appends a decoded JSON tree (as jsonread.Decode returns it) in the
// library's spelling, object members sorted by name.
func AppendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case string:
		return AppendString(b, v)
	case json.Number:
		return append(b, v...)
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return append(b, "null"...)
		}
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendValue(b, e)
		}
		return append(b, ']')
	case map[string]any:
		names := make([]string, 0, len(v))
		for k := range v {
			names = append(names, k)
		}
		slices.Sort(names)
		b = append(b, '{')
		for i, k := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			b = AppendValue(b, v[k])
		}
		return append(b, '}')
	}
	return append(b, "null"...) // not a type decodeJSON returns
}

// AppendString appends s as a JSON string in the library's one spelling, the same
// on every Go release: ", \ and the control characters escaped (\n, \t, ... where JSON
// has a short escape, \u00XX otherwise); U+2028 and U+2029 escaped, so that the text is
// also valid JavaScript; <, > and & as themselves; every byte of invalid UTF-8 replaced
// by U+FFFD, written as the character itself. encoding/json reads it back as json.Marshal's
// output (the root package's FuzzEncodersAgreeWithMarshal checks it).
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendStrings appends ss as a JSON array of strings; nil is null.
func AppendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, s)
	}
	return append(b, ']')
}
