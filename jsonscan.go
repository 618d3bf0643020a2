package askuser

// The hand-written JSON reading of the hot path: the model's arguments straight into a
// Request, and a device's result into a ResultData, each in one pass. Anything these
// readers do not take falls back to encoding/json, so results and messages are the same;
// fastpath_test.go fuzzes every reader against encoding/json.

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// parseArgumentsFast reads valid arguments straight into a Request, in one pass, without
// the generic tree of parseArgumentsSlow (whose maps and boxed strings are most of a
// call's cost). It takes only what it can tell is valid: every member is a field of the
// Request with a value of that field's type, no name is repeated, and q, the quick
// schema, and Request.problems find nothing. Anything else (unknown or repeated names,
// nulls, invalid JSON, any problem) returns false, and the slow path decides and words
// the problems; when both accept, they return the same Request, which
// FuzzParseArgumentsFastAgreesWithSlow checks. The forgiven encodings are unwrapped as
// the slow path does; metadata, being free-form, is decoded and re-encoded as there.
func parseArgumentsFast(arguments []byte, q *quickSchema) (*Request, bool) {
	if len(arguments) > MaxArgumentsBytes {
		return nil, false
	}
	sc := jsonScanner{b: arguments}
	if sc.peek() == '"' { // double-encoded
		inner, ok := sc.str()
		if !ok || !sc.atEnd() {
			return nil, false
		}
		sc = jsonScanner{b: []byte(inner)}
	}
	req := &Request{}
	if !sc.request(req, q) || !sc.atEnd() || req.problems() != nil {
		return nil, false
	}
	return req, true
}

// request reads the arguments object, checked against q.
func (sc *jsonScanner) request(req *Request, q *quickSchema) bool {
	if !q.isType("object") {
		return false
	}
	var seen [2]bool // questions, metadata
	ok := sc.object(func(name string) bool {
		p := q.props[name]
		if p == nil {
			return false
		}
		switch name {
		case "questions":
			if seen[0] {
				return false
			}
			seen[0] = true
			if sc.peek() == '"' { // questions sent as a JSON-encoded string
				s, ok := sc.str()
				if !ok {
					return false
				}
				inner := jsonScanner{b: []byte(s)}
				return inner.questions(req, p) && inner.atEnd()
			}
			return sc.questions(req, p)
		case "metadata":
			if seen[1] {
				return false
			}
			seen[1] = true
			return sc.metadata(req, p)
		}
		return false
	})
	return ok && q.hasRequired(func(name string) bool {
		return name == "questions" && seen[0] || name == "metadata" && seen[1]
	})
}

func (sc *jsonScanner) questions(req *Request, p *quickSchema) bool {
	if !p.isType("array") || p.items == nil || !p.items.isType("object") {
		return false
	}
	qs := p.items
	ok := sc.array(func() bool {
		var q Question
		var seen [4]bool // question, header, options, multiSelect
		ok := sc.object(func(name string) bool {
			f := qs.props[name]
			if f == nil {
				return false
			}
			var i int
			var ok bool
			switch name {
			case "question":
				i = 0
				q.Question, ok = sc.str()
				ok = ok && f.validString(q.Question)
			case "header":
				i = 1
				q.Header, ok = sc.str()
				ok = ok && f.validString(q.Header)
			case "options":
				i = 2
				ok = sc.options(&q, f)
			case "multiSelect":
				i = 3
				q.MultiSelect, ok = sc.boolean()
				ok = ok && f.isType("boolean")
			default:
				return false
			}
			if !ok || seen[i] {
				return false
			}
			seen[i] = true
			return true
		})
		if !ok || !qs.hasRequired(func(name string) bool {
			i := slices.Index([]string{"question", "header", "options", "multiSelect"}, name)
			return i >= 0 && seen[i]
		}) {
			return false
		}
		req.Questions = append(req.Questions, q)
		return true
	})
	return ok && p.validCount(len(req.Questions))
}

func (sc *jsonScanner) options(q *Question, p *quickSchema) bool {
	if !p.isType("array") || p.items == nil || !p.items.isType("object") {
		return false
	}
	os := p.items
	q.Options = make([]Option, 0, MaxOptions) // one allocation for the usual 2 to 4
	ok := sc.array(func() bool {
		var o Option
		var seen [3]bool // label, description, preview
		ok := sc.object(func(name string) bool {
			f := os.props[name]
			if f == nil {
				return false
			}
			var i int
			var s string
			var ok bool
			switch name {
			case "label":
				i = 0
				s, ok = sc.str()
				o.Label = s
			case "description":
				i = 1
				s, ok = sc.str()
				o.Description = s
			case "preview":
				i = 2
				s, ok = sc.str()
				o.Preview = s
			default:
				return false
			}
			if !ok || seen[i] || !f.validString(s) {
				return false
			}
			seen[i] = true
			return true
		})
		if !ok || !os.hasRequired(func(name string) bool {
			i := slices.Index([]string{"label", "description", "preview"}, name)
			return i >= 0 && seen[i]
		}) {
			return false
		}
		q.Options = append(q.Options, o)
		return true
	})
	if len(q.Options) == 0 {
		q.Options = nil // as the slow path has it
	}
	return ok && p.validCount(len(q.Options))
}

// metadata decodes and re-encodes the metadata object exactly as the slow path does.
func (sc *jsonScanner) metadata(req *Request, p *quickSchema) bool {
	if sc.peek() != '{' {
		return false
	}
	start := sc.i
	if !sc.skipComposite() {
		return false
	}
	tree, err := decodeJSON(sc.b[start:sc.i])
	md, ok := tree.(map[string]any)
	if err != nil || !ok || !p.valid(md) {
		return false
	}
	req.Metadata = appendJSONValue(nil, md)
	return true
}

// jsonScanner reads the few JSON shapes of the fast paths (the model's arguments, a
// device's result), strictly: any byte it does not expect makes the caller give up.
type jsonScanner struct {
	b []byte
	i int
}

// peek skips white space and returns the next byte, or 0 at the end.
func (sc *jsonScanner) peek() byte {
	for sc.i < len(sc.b) {
		switch c := sc.b[sc.i]; c {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return c
		}
	}
	return 0
}

// eat consumes c, after white space, when it is next.
func (sc *jsonScanner) eat(c byte) bool {
	if sc.peek() == c && sc.i < len(sc.b) {
		sc.i++
		return true
	}
	return false
}

// atEnd reports whether only white space is left.
func (sc *jsonScanner) atEnd() bool {
	sc.peek()
	return sc.i == len(sc.b)
}

// literal consumes word (true, false, null) when it is next.
func (sc *jsonScanner) literal(word string) bool {
	sc.peek()
	if len(sc.b)-sc.i >= len(word) && string(sc.b[sc.i:sc.i+len(word)]) == word {
		sc.i += len(word)
		return true
	}
	return false
}

func (sc *jsonScanner) boolean() (v, ok bool) {
	if sc.literal("true") {
		return true, true
	}
	return false, sc.literal("false")
}

// str reads a string. One without escapes, control characters or invalid UTF-8 is taken
// as it is; any other is checked and unquoted as decodeJSON does, so that both read it alike.
func (sc *jsonScanner) str() (string, bool) {
	if sc.peek() != '"' {
		return "", false
	}
	start := sc.i
	plain, ascii := true, true
	for j := start + 1; j < len(sc.b); j++ {
		switch c := sc.b[j]; {
		case c == '"':
			sc.i = j + 1
			raw := sc.b[start+1 : j]
			if plain && (ascii || utf8.Valid(raw)) {
				return string(raw), true
			}
			if s, ok := unescapeSimple(raw); ok {
				return s, true
			}
			token := sc.b[start : j+1]
			if jsonSyntaxError(token) != "" {
				return "", false
			}
			return unquote(token), true
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

// name reads a member name. The names of the protocol, spelt without escapes, come back
// as constants, so that reading them allocates nothing.
func (sc *jsonScanner) name() (string, bool) {
	if sc.peek() != '"' {
		return "", false
	}
	for j := sc.i + 1; j < len(sc.b); j++ {
		c := sc.b[j]
		if c == '"' {
			if n, ok := protocolNames[string(sc.b[sc.i+1:j])]; ok {
				sc.i = j + 1
				return n, true
			}
			break
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	return sc.str()
}

// protocolNames interns the member names of the protocol for jsonScanner.name.
var protocolNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{"questions", "metadata", "question", "header", "options", "multiSelect", "label",
		"description", "preview", "requestId", "answers", "declined", "selectedLabels", "customInput"} {
		m[n] = n
	}
	return m
}()

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

// object reads an object, calling member for each name with the scanner at its value,
// which member must consume.
func (sc *jsonScanner) object(member func(name string) bool) bool {
	if !sc.eat('{') {
		return false
	}
	if sc.eat('}') {
		return true
	}
	for {
		name, ok := sc.name()
		if !ok || !sc.eat(':') || !member(name) {
			return false
		}
		if !sc.eat(',') {
			return sc.eat('}')
		}
	}
}

// array reads an array, calling elem with the scanner at each element.
func (sc *jsonScanner) array(elem func() bool) bool {
	if !sc.eat('[') {
		return false
	}
	if sc.eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if !sc.eat(',') {
			return sc.eat(']')
		}
	}
}

// skipComposite moves past the object or array that starts here, matching brackets
// outside strings without checking anything else: the caller decodes what it skipped.
func (sc *jsonScanner) skipComposite() bool {
	depth := 0
	for ; sc.i < len(sc.b); sc.i++ {
		switch sc.b[sc.i] {
		case '"':
			for sc.i++; sc.i < len(sc.b) && sc.b[sc.i] != '"'; sc.i++ {
				if sc.b[sc.i] == '\\' {
					sc.i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				sc.i++
				return true
			}
		}
	}
	return false
}

// decodeResultDataFast reads a result whose members are spelt exactly as ResultData's and
// Answer's fields, each once, with values of their fields' types (null where
// encoding/json leaves a field nil), and nothing after it. It returns false for anything
// else, which then goes to encoding/json (case-insensitive names, repeated names, nulls
// elsewhere, errors); when both accept, they decode the same ResultData, which
// FuzzResultDataFastAgreesWithDecoder checks. It spares each answer a json.Decoder, its
// buffer copy, and reflection.
func decodeResultDataFast(b []byte) (ResultData, bool) {
	sc := jsonScanner{b: b}
	var data ResultData
	var seen [3]bool // requestId, answers, declined
	ok := sc.object(func(name string) bool {
		var i int
		var ok bool
		switch name {
		case "requestId":
			i = 0
			data.RequestID, ok = sc.str()
		case "answers":
			i = 1
			ok = sc.answers(&data)
		case "declined":
			i = 2
			data.Declined, ok = sc.boolean()
		default:
			return false
		}
		if !ok || seen[i] {
			return false
		}
		seen[i] = true
		return true
	})
	if !ok || !sc.atEnd() {
		return ResultData{}, false
	}
	return data, true
}

func (sc *jsonScanner) answers(data *ResultData) bool {
	if sc.literal("null") {
		return true
	}
	data.Answers = []Answer{} // as encoding/json makes of []
	return sc.array(func() bool {
		var a Answer
		var seen [3]bool // question, selectedLabels, customInput
		ok := sc.object(func(name string) bool {
			var i int
			var ok bool
			switch name {
			case "question":
				i = 0
				a.Question, ok = sc.str()
			case "selectedLabels":
				i = 1
				ok = true
				if !sc.literal("null") {
					a.SelectedLabels = []string{}
					ok = sc.array(func() bool {
						l, ok := sc.str()
						a.SelectedLabels = append(a.SelectedLabels, l)
						return ok
					})
				}
			case "customInput":
				i = 2
				ok = true
				if !sc.literal("null") {
					var s string
					s, ok = sc.str()
					a.CustomInput = &s
				}
			default:
				return false
			}
			if !ok || seen[i] {
				return false
			}
			seen[i] = true
			return true
		})
		data.Answers = append(data.Answers, a)
		return ok
	})
}
