package askuser

// The hand-written JSON writing of the library's events and results, in one spelling on
// every Go release (see appendJSONString), read back by encoding/json as it reads
// json.Marshal's output (FuzzEncodersAgreeWithMarshal).

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// encodeAskData encodes a without reflection: the questions, with their previews, are
// most of every ask event. Metadata is re-encoded in the library's spelling; invalid
// metadata or a time outside RFC 3339 is an error.
func encodeAskData(a *AskData) ([]byte, error) {
	var metadata []byte
	if len(a.Metadata) > 0 {
		var err error
		if metadata, err = normalizeJSON(a.Metadata); err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
	}
	var expires []byte
	if !a.ExpiresAt.IsZero() {
		t, err := a.ExpiresAt.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("expiresAt: %w", err)
		}
		expires = t
	}
	n := len(a.RequestID) + len(metadata) + 96
	for _, q := range a.Questions {
		n += len(q.Question) + len(q.Header) + 64
		for _, o := range q.Options {
			n += len(o.Label) + len(o.Description) + len(o.Preview) + 48
		}
	}
	b := make([]byte, 0, n+n/16)
	b = append(b, `{"requestId":`...)
	b = appendJSONString(b, a.RequestID)
	b = append(b, `,"questions":`...)
	b = appendQuestions(b, a.Questions)
	if metadata != nil {
		b = append(b, `,"metadata":`...)
		b = append(b, metadata...)
	}
	if expires != nil {
		b = append(b, `,"expiresAt":`...)
		b = append(b, expires...)
	}
	return append(b, '}'), nil
}

// normalizeJSON re-encodes one JSON value in the library's spelling: compact, object
// members sorted by name (the last of a repeated name kept), numbers as written.
func normalizeJSON(raw []byte) ([]byte, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	return appendJSONValue(nil, v), nil
}

// appendJSONValue appends a decoded JSON tree (as decodeJSON returns it) in the
// library's spelling, object members sorted by name.
func appendJSONValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case string:
		return appendJSONString(b, v)
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
			b = appendJSONValue(b, e)
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
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONValue(b, v[k])
		}
		return append(b, '}')
	}
	return append(b, "null"...) // not a type decodeJSON returns
}

// encodeResolvedData encodes r; an unknown outcome is an error.
func encodeResolvedData(r ResolvedData) ([]byte, error) {
	if r.Outcome <= 0 || int(r.Outcome) >= len(outcomeNames) {
		return nil, fmt.Errorf("outcome: unknown outcome %d", int(r.Outcome))
	}
	b := make([]byte, 0, len(r.RequestID)+48)
	b = append(b, `{"requestId":`...)
	b = appendJSONString(b, r.RequestID)
	b = append(b, `,"outcome":`...)
	b = appendJSONString(b, outcomeNames[r.Outcome])
	if len(r.Answers) > 0 {
		b = append(b, `,"answers":`...)
		b = appendAnswers(b, r.Answers)
	}
	return append(b, '}'), nil
}

// appendQuestions appends qs, field by field as encoding/json would encode a []Question.
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
		b = appendJSONString(b, q.Question)
		b = append(b, `,"header":`...)
		b = appendJSONString(b, q.Header)
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
				b = appendJSONString(b, o.Label)
				b = append(b, `,"description":`...)
				b = appendJSONString(b, o.Description)
				if o.Preview != "" {
					b = append(b, `,"preview":`...)
					b = appendJSONString(b, o.Preview)
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

// encodeResponse encodes r, the tool result of every answered call.
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
	b = appendAnswers(b, r.Answers)
	return append(b, '}')
}

// appendAnswers appends answers as a JSON array; nil is null.
func appendAnswers(b []byte, answers []Answer) []byte {
	if answers == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, a := range answers {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"question":`...)
		b = appendJSONString(b, a.Question)
		b = append(b, `,"selectedLabels":`...)
		b = appendStrings(b, a.SelectedLabels)
		b = append(b, `,"customInput":`...)
		if a.CustomInput == nil {
			b = append(b, "null"...)
		} else {
			b = appendJSONString(b, *a.CustomInput)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendJSONString appends s as a JSON string in the library's one spelling, the same
// on every Go release: ", \ and the control characters escaped (\n, \t, ... where JSON
// has a short escape, \u00XX otherwise); U+2028 and U+2029 escaped, so that the text is
// also valid JavaScript; <, > and & as themselves; every byte of invalid UTF-8 replaced
// by U+FFFD, written as the character itself. encoding/json reads it back as json.Marshal's
// output (FuzzEncodersAgreeWithMarshal).
func appendJSONString(b []byte, s string) []byte {
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

// encodeResultData encodes a device's result: answers, or a decline.
func encodeResultData(r *ResultData) []byte {
	b := make([]byte, 0, 64)
	b = append(b, `{"requestId":`...)
	b = appendJSONString(b, r.RequestID)
	if len(r.Answers) > 0 {
		b = append(b, `,"answers":`...)
		b = appendAnswers(b, r.Answers)
	}
	if r.Declined {
		b = append(b, `,"declined":true`...)
	}
	return append(b, '}')
}

// encodeErrorData encodes the data of an error event.
func encodeErrorData(e *ErrorData) []byte {
	n := len(e.RequestID) + len(e.Code) + len(e.Message) + 48
	for _, p := range e.Problems {
		n += len(p) + 3
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	if e.RequestID != "" {
		b = append(b, `"requestId":`...)
		b = appendJSONString(b, e.RequestID)
		b = append(b, ',')
	}
	b = append(b, `"code":`...)
	b = appendJSONString(b, e.Code)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, e.Message)
	if len(e.Problems) > 0 {
		b = append(b, `,"problems":`...)
		b = appendStrings(b, e.Problems)
	}
	return append(b, '}')
}

// appendStrings appends ss as a JSON array of strings; nil is null.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}
