package askuser

// The encoding of the protocol's data and of the tool results, written by hand in the
// library's one spelling (see internal/jsonwrite): encoding/json's bytes differ between
// Go releases, and reflection costs most of an ask. FuzzEncodersAgreeWithMarshal checks
// that encoding/json reads each back as it reads json.Marshal's output.

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/askuser-go/askuser/internal/jsonread"
	"github.com/askuser-go/askuser/internal/jsonwrite"
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
	b = jsonwrite.AppendString(b, a.RequestID)
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
	v, err := jsonread.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	return jsonwrite.AppendValue(nil, v), nil
}

// encodeResolvedData encodes r; an unknown outcome is an error.
func encodeResolvedData(r ResolvedData) ([]byte, error) {
	e := endingOf(r.Outcome, nil)
	if e == nil {
		return nil, fmt.Errorf("outcome: unknown outcome %d", int(r.Outcome))
	}
	b := make([]byte, 0, len(r.RequestID)+48+answersSize(r.Answers))
	b = append(b, `{"requestId":`...)
	b = jsonwrite.AppendString(b, r.RequestID)
	b = append(b, `,"outcome":`...)
	b = jsonwrite.AppendString(b, e.name)
	if len(r.Answers) > 0 {
		b = append(b, `,"answers":`...)
		b = appendAnswers(b, r.Answers)
	}
	return append(b, '}'), nil
}

// keys are the members of a question and of an option as the encoder writes them
// ("question": and so on), in the schema's order, made once from the tables of fields.go.
var keys = sync.OnceValue(func() (k struct {
	question, option []string
	optional         []bool // per option member: left out when empty
}) {
	for _, f := range questionTexts {
		k.question = append(k.question, string(jsonwrite.AppendString(nil, f.name))+":")
	}
	opt := inputSchema().At(optionPath...)
	for _, f := range optionTexts {
		k.option = append(k.option, string(jsonwrite.AppendString(nil, f.name))+":")
		k.optional = append(k.optional, !opt.IsRequired(f.name))
	}
	return k
})

// appendQuestions appends qs, members in the schema's order (see fields.go); an option's
// empty optional text is left out.
func appendQuestions(b []byte, qs []Question) []byte {
	if qs == nil {
		return append(b, "null"...)
	}
	k := keys()
	b = append(b, '[')
	for i := range qs {
		q := &qs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		for n, f := range questionTexts {
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, k.question[n]...)
			b = jsonwrite.AppendString(b, *f.get(q))
		}
		b = append(b, `,"`+fieldOptions+`":`...)
		if q.Options == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for j := range q.Options {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, '{')
				first := true
				for n, f := range optionTexts {
					v := *f.get(&q.Options[j])
					if v == "" && k.optional[n] {
						continue
					}
					if !first {
						b = append(b, ',')
					}
					first = false
					b = append(b, k.option[n]...)
					b = jsonwrite.AppendString(b, v)
				}
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, `,"`+fieldMultiSelect+`":`...)
		b = strconv.AppendBool(b, q.MultiSelect)
		b = append(b, '}')
	}
	return append(b, ']')
}

// encodeRequest encodes r as the model would send it.
func encodeRequest(r *Request) []byte {
	b := append([]byte(nil), `{"`+fieldQuestions+`":`...)
	b = appendQuestions(b, r.Questions)
	if len(r.Metadata) > 0 {
		b = append(b, `,"`+fieldMetadata+`":`...)
		b = append(b, r.Metadata...)
	}
	return append(b, '}')
}

// encodeResponse encodes r, the tool result of every answered call.
func encodeResponse(r response) []byte {
	b := make([]byte, 0, answersSize(r.Answers))
	b = append(b, `{"answers":`...)
	b = appendAnswers(b, r.Answers)
	return append(b, '}')
}

// answersSize is about how many bytes appendAnswers writes for answers (a little more
// when nothing needs escaping), so that a buffer made for them need not grow.
func answersSize(answers []Answer) int {
	n := 16
	for _, a := range answers {
		n += len(a.Question) + 48
		for _, l := range a.SelectedLabels {
			n += len(l) + 3
		}
		if a.CustomInput != nil {
			n += len(*a.CustomInput)
		}
	}
	return n + n/16
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
		b = jsonwrite.AppendString(b, a.Question)
		b = append(b, `,"selectedLabels":`...)
		b = jsonwrite.AppendStrings(b, a.SelectedLabels)
		b = append(b, `,"customInput":`...)
		if a.CustomInput == nil {
			b = append(b, "null"...)
		} else {
			b = jsonwrite.AppendString(b, *a.CustomInput)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// encodeResultData encodes a device's result: answers, or a decline.
func encodeResultData(r *ResultData) []byte {
	b := make([]byte, 0, len(r.RequestID)+48+answersSize(r.Answers))
	b = append(b, `{"requestId":`...)
	b = jsonwrite.AppendString(b, r.RequestID)
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
		b = jsonwrite.AppendString(b, e.RequestID)
		b = append(b, ',')
	}
	b = append(b, `"code":`...)
	b = jsonwrite.AppendString(b, e.Code)
	b = append(b, `,"message":`...)
	b = jsonwrite.AppendString(b, e.Message)
	if len(e.Problems) > 0 {
		b = append(b, `,"problems":`...)
		b = jsonwrite.AppendStrings(b, e.Problems)
	}
	return append(b, '}')
}
