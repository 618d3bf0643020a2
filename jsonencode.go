package askuser

// The hand-written JSON writing of the hot path: ask and resolved data, and the answers
// tool result, byte for byte what encoding/json writes (FuzzEncodersAgreeWithMarshal).

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// encodeAskData encodes a as marshal(a) would, byte for byte, without reflection: the
// questions, with their previews, are most of every ask event. Metadata is compacted as
// encoding/json compacts a json.RawMessage; anything this cannot encode (invalid
// metadata, a time outside RFC 3339) goes to marshal, for its error.
func encodeAskData(a *AskData) ([]byte, error) {
	n := len(a.RequestID) + len(a.Metadata) + 96
	for _, q := range a.Questions {
		n += len(q.Question) + len(q.Header) + 64
		for _, o := range q.Options {
			n += len(o.Label) + len(o.Description) + len(o.Preview) + 48
		}
	}
	b := make([]byte, 0, n+n/16)
	b = append(b, `{"requestId":`...)
	b = appendJSONString(b, a.RequestID, false)
	b = append(b, `,"questions":`...)
	b = appendQuestions(b, a.Questions)
	if len(a.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		buf := bytes.NewBuffer(b)
		if json.Compact(buf, a.Metadata) != nil {
			return marshal(a)
		}
		b = buf.Bytes()
	}
	if !a.ExpiresAt.IsZero() {
		t, err := a.ExpiresAt.MarshalJSON()
		if err != nil {
			return marshal(a)
		}
		b = append(b, `,"expiresAt":`...)
		b = append(b, t...)
	}
	return append(b, '}'), nil
}

// encodeResolvedData encodes r as marshal(r) would, byte for byte.
func encodeResolvedData(r ResolvedData) ([]byte, error) {
	if r.Outcome <= 0 || int(r.Outcome) >= len(outcomeNames) {
		return marshal(r) // for its error
	}
	b := make([]byte, 0, len(r.RequestID)+48)
	b = append(b, `{"requestId":`...)
	b = appendJSONString(b, r.RequestID, false)
	b = append(b, `,"outcome":`...)
	b = appendJSONString(b, outcomeNames[r.Outcome], false)
	return append(b, '}'), nil
}

// appendQuestions appends qs encoded as encoding/json encodes a []Question.
func appendQuestions(b []byte, qs []Question) []byte {
	if qs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, q := range qs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"question":`...)
		b = appendJSONString(b, q.Question, false)
		b = append(b, `,"header":`...)
		b = appendJSONString(b, q.Header, false)
		b = append(b, `,"options":`...)
		if q.Options == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for k, o := range q.Options {
				if k > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"label":`...)
				b = appendJSONString(b, o.Label, false)
				b = append(b, `,"description":`...)
				b = appendJSONString(b, o.Description, false)
				if o.Preview != "" {
					b = append(b, `,"preview":`...)
					b = appendJSONString(b, o.Preview, false)
				}
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, `,"multiSelect":`...)
		b = strconv.AppendBool(b, q.MultiSelect)
		b = append(b, '}')
	}
	return append(b, ']')
}

// encodeResponse encodes r as marshal(r) would, byte for byte: the tool result of every
// answered call.
func encodeResponse(r Response) []byte {
	n := 16
	for _, a := range r.Answers {
		n += len(a.Question) + 48
		for _, l := range a.SelectedLabels {
			n += len(l) + 3
		}
		if a.CustomInput != nil {
			n += len(*a.CustomInput)
		}
	}
	b := make([]byte, 0, n+n/16)
	b = append(b, `{"answers":`...)
	if r.Answers == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, a := range r.Answers {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"question":`...)
			b = appendJSONString(b, a.Question, false)
			b = append(b, `,"selectedLabels":`...)
			if a.SelectedLabels == nil {
				b = append(b, "null"...)
			} else {
				b = append(b, '[')
				for k, l := range a.SelectedLabels {
					if k > 0 {
						b = append(b, ',')
					}
					b = appendJSONString(b, l, false)
				}
				b = append(b, ']')
			}
			b = append(b, `,"customInput":`...)
			if a.CustomInput == nil {
				b = append(b, "null"...)
			} else {
				b = appendJSONString(b, *a.CustomInput, false)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string exactly as encoding/json writes it: invalid
// UTF-8 becomes \ufffd, U+2028 and U+2029 are escaped, and so are <, > and & when
// escapeHTML is set (json.Marshal) and not otherwise (marshal above).
func appendJSONString(b []byte, s string, escapeHTML bool) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
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
			b = append(b, `\ufffd`...)
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
