package tui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// A tool call's arguments as the terminal shows them: the JSON value pretty-printed,
// members in the model's order, with every character that could act on the terminal or
// hide itself written as a JSON escape, and, on screen, long strings folded and long
// lines wrapped.

// prettyJSON writes the JSON value raw with indent per level (on one line, with ", "
// and ": ", when indent is ""), members in their order, numbers as written, and an
// array of nothing but strings, numbers, booleans and nulls on one line. Strings are
// written again with escapes for every character a person could not see or that the
// terminal would act on: control characters (so every escape sequence), formatting
// characters (bidirectional overrides, zero-width spaces, tag characters), line
// separators and U+FFFD. The escapes mean the same to a JSON reader, so with fold 0
// the text is the same JSON value. With fold > 0, a string of more than fold
// characters is cut there and followed by how many were left out: text for reading,
// no longer JSON.
func prettyJSON(raw []byte, indent string, fold int) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return "", err
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", errors.New("more than one JSON value")
	}
	p := printer{indent: indent, fold: fold}
	p.value(v, 0)
	return p.b.String(), nil
}

// jsonValue is a JSON value as written: an object's members in their order.
type jsonValue struct {
	delim rune // '{' or '[', or 0 for a scalar
	keys  []string
	elems []*jsonValue
	tok   json.Token // a scalar: string, json.Number, bool or nil
}

func readValue(dec *json.Decoder) (*jsonValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return &jsonValue{tok: tok}, nil
	}
	v := &jsonValue{delim: rune(d)}
	for dec.More() {
		if v.delim == '{' {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			name, _ := k.(string)
			v.keys = append(v.keys, name)
		}
		e, err := readValue(dec)
		if err != nil {
			return nil, err
		}
		v.elems = append(v.elems, e)
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return nil, err
	}
	return v, nil
}

// flat reports whether v is an array of scalars, written on one line.
func (v *jsonValue) flat() bool {
	if v.delim != '[' {
		return false
	}
	for _, e := range v.elems {
		if e.delim != 0 {
			return false
		}
	}
	return true
}

type printer struct {
	b      strings.Builder
	indent string
	fold   int
}

func (p *printer) value(v *jsonValue, depth int) {
	switch t := v.tok.(type) {
	case string:
		p.str(t, p.fold)
		return
	case json.Number:
		p.b.WriteString(t.String())
		return
	case bool:
		p.b.WriteString(strconv.FormatBool(t))
		return
	}
	if v.delim == 0 {
		p.b.WriteString("null")
		return
	}
	multiline := p.indent != "" && !v.flat()
	p.b.WriteRune(v.delim)
	for i, e := range v.elems {
		if i > 0 {
			p.b.WriteByte(',')
			if !multiline {
				p.b.WriteByte(' ')
			}
		}
		if multiline {
			p.newline(depth + 1)
		}
		if v.delim == '{' {
			p.str(v.keys[i], 0)
			p.b.WriteString(": ")
		}
		p.value(e, depth+1)
	}
	if multiline && len(v.elems) > 0 {
		p.newline(depth)
	}
	if v.delim == '{' {
		p.b.WriteByte('}')
	} else {
		p.b.WriteByte(']')
	}
}

// newline starts a line at depth.
func (p *printer) newline(depth int) {
	p.b.WriteByte('\n')
	for range depth {
		p.b.WriteString(p.indent)
	}
}

// str writes s as a JSON string, cut after fold characters when fold > 0.
func (p *printer) str(s string, fold int) {
	left := 0
	if fold > 0 {
		if n := utf8.RuneCountInString(s); n > fold {
			i := 0
			for range fold {
				_, size := utf8.DecodeRuneInString(s[i:])
				i += size
			}
			s, left = s[:i], n-fold
		}
	}
	p.b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			p.b.WriteString(`\"`)
		case '\\':
			p.b.WriteString(`\\`)
		case '\n':
			p.b.WriteString(`\n`)
		case '\r':
			p.b.WriteString(`\r`)
		case '\t':
			p.b.WriteString(`\t`)
		default:
			if !hidden(r) {
				p.b.WriteRune(r)
				break
			}
			if r > 0xFFFF {
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&p.b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(&p.b, `\u%04x`, r)
			}
		}
	}
	if left > 0 {
		p.b.WriteString(`…"`)
		fmt.Fprintf(&p.b, " (%d more %s)", left, plural(left, "character"))
		return
	}
	p.b.WriteByte('"')
}

// hidden reports whether r is written as an escape in shown arguments: what clean
// drops, every character that acts on the terminal or takes no room on screen.
func hidden(r rune) bool { return unsafeRune(r, false) }

// wrapLines lays text out in width columns: each line wrapped, its continuation lines
// indented two more than the line, so that a wrapped value still reads as one.
func wrapLines(text string, width int) []string {
	width = max(width, 20)
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if ansi.StringWidth(line) <= width {
			out = append(out, line)
			continue
		}
		body := strings.TrimLeft(line, " ")
		ind := min(len(line)-len(body), width/2)
		first, _, _ := strings.Cut(ansi.Wrap(body, width-ind, ""), "\n")
		if !strings.HasPrefix(body, first) || first == "" {
			first = ""
		}
		out = append(out, line[:ind]+first)
		pad := strings.Repeat(" ", ind+2)
		for _, part := range strings.Split(ansi.Wrap(strings.TrimLeft(body[len(first):], " "), width-len(pad), ""), "\n") {
			out = append(out, pad+part)
		}
	}
	return out
}

// capLines keeps at most limit lines, the last of them saying how many more there are.
func capLines(lines []string, limit int, more string) []string {
	if limit < 1 || len(lines) <= limit {
		return lines
	}
	n := len(lines) - (limit - 1)
	return append(lines[:limit-1:limit-1], fmt.Sprintf("… %d more %s%s", n, plural(n, "line"), more))
}

// oneLine is a JSON value on one line for a note, strings folded, at most max characters.
func oneLine(raw []byte, max int) string {
	s, err := prettyJSON(raw, "", 40)
	if err != nil {
		s = clean(string(raw), false)
	}
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max-1]) + "…"
	}
	return s
}
