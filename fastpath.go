//go:build !askuser_nofast

package askuser

// The JSON fast paths: one entry point per shape, each taking only input it can tell is
// valid and giving up (false) on anything else, which then goes the reference way
// (jsonread's tree, the JSON Schema validator), where every refusal is worded. They
// exist for speed (a call's JSON work is most of its cost) and are fenced: the build
// tag askuser_nofast turns them off (fastpath_off.go), and the test command runs the
// root module's tests once that way, so that the reference paths stay tested alone.
// fastpath_test.go fuzzes each against its reference.

import (
	"github.com/askuser-go/askuser/internal/jsonread"
	"github.com/askuser-go/askuser/internal/jsonscan"
	"github.com/askuser-go/askuser/internal/jsonwrite"
	"github.com/askuser-go/askuser/internal/quickschema"
)

// fastPaths reports whether the fast paths are built in.
const fastPaths = true

// names interns the member names of the protocol for jsonscan.Scanner.Name.
var names = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{fieldQuestions, fieldMetadata, fieldOptions, fieldMultiSelect,
		fieldRequestID, fieldAnswers, fieldDeclined, fieldQuestion, fieldSelectedLabels, fieldCustomInput} {
		m[n] = n
	}
	for _, f := range questionTexts {
		m[f.name] = f.name
	}
	for _, f := range optionTexts {
		m[f.name] = f.name
	}
	return m
}()

// parseArgumentsFast reads valid arguments straight into a Request, in one pass, without
// the generic tree of parseArgumentsSlow (whose maps and boxed strings are most of a
// call's cost). It takes only what it can tell is valid: every member is a field of the
// Request with a value of that field's type (or null for an optional member), no name is
// repeated, and the quick schema and Request.problems find nothing. When both paths
// accept, they return the same Request (FuzzParseArgumentsFastAgreesWithSlow). The
// forgiven encodings are unwrapped as the slow path does; metadata, being free-form, is
// decoded and re-encoded as there.
func parseArgumentsFast(arguments []byte) (*Request, bool) {
	if len(arguments) > MaxArgumentsBytes {
		return nil, false
	}
	sc := jsonscan.Scanner{B: arguments, Names: names}
	if sc.Peek() == '"' { // double-encoded
		inner, ok := sc.Str()
		if !ok || !sc.AtEnd() {
			return nil, false
		}
		sc = jsonscan.Scanner{B: []byte(inner), Names: names}
	}
	req := &Request{}
	if !readRequest(&sc, req, inputSchema()) || !sc.AtEnd() || req.problems() != nil {
		return nil, false
	}
	return req, true
}

// readRequest reads the arguments object, checked against s.
func readRequest(sc *jsonscan.Scanner, req *Request, s *quickschema.Schema) bool {
	if !s.IsType("object") {
		return false
	}
	var seenQ, seenM bool
	ok := sc.Object(func(name string) bool {
		switch name {
		case fieldQuestions:
			if seenQ {
				return false
			}
			seenQ = true
			p := s.Props[name]
			if sc.Peek() == '"' { // questions sent as a JSON-encoded string
				str, ok := sc.Str()
				if !ok {
					return false
				}
				inner := jsonscan.Scanner{B: []byte(str), Names: names}
				return readQuestions(&inner, req, p) && inner.AtEnd()
			}
			return readQuestions(sc, req, p)
		case fieldMetadata:
			if seenM {
				return false
			}
			seenM = true
			if sc.Literal("null") {
				return !s.IsRequired(name)
			}
			return readMetadata(sc, req, s.Props[name])
		}
		return false
	})
	return ok && s.HasRequired(func(name string) bool {
		return name == fieldQuestions && seenQ || name == fieldMetadata && seenM
	})
}

func readQuestions(sc *jsonscan.Scanner, req *Request, p *quickschema.Schema) bool {
	if p == nil || !p.IsType("array") || p.Items == nil || !p.Items.IsType("object") {
		return false
	}
	qs := p.Items
	ok := sc.Array(func() bool {
		// Read in place, into the slice: a question read through the field table would
		// otherwise escape to the heap, once more for every question.
		req.Questions = append(req.Questions, Question{})
		q := &req.Questions[len(req.Questions)-1]
		var seen [len(questionTexts) + 2]bool // the texts, options, multiSelect
		ok := sc.Object(func(name string) bool {
			i := -1
			ok := false
			switch name {
			case fieldOptions:
				i = len(questionTexts)
				ok = readOptions(sc, q, qs.Props[name])
			case fieldMultiSelect:
				i = len(questionTexts) + 1
				q.MultiSelect, ok = sc.Bool()
			default:
				for k, f := range questionTexts {
					if f.name == name {
						i = k
						ok = readText(sc, f.get(q), qs.Props[name])
						break
					}
				}
			}
			if i < 0 || !ok || seen[i] {
				return false
			}
			seen[i] = true
			return true
		})
		return ok && qs.HasRequired(func(name string) bool { return seen[questionMember(name)] })
	})
	return ok && p.ValidCount(len(req.Questions))
}

// questionMember is the index of a question's member in readQuestions' seen.
func questionMember(name string) int {
	switch name {
	case fieldOptions:
		return len(questionTexts)
	case fieldMultiSelect:
		return len(questionTexts) + 1
	}
	for k, f := range questionTexts {
		if f.name == name {
			return k
		}
	}
	return 0
}

// readText reads a string member into *dst, valid for its schema p.
func readText(sc *jsonscan.Scanner, dst *string, p *quickschema.Schema) bool {
	s, ok := sc.Str()
	*dst = s
	return ok && p != nil && p.ValidString(s)
}

func readOptions(sc *jsonscan.Scanner, q *Question, p *quickschema.Schema) bool {
	if p == nil || !p.IsType("array") || p.Items == nil || !p.Items.IsType("object") {
		return false
	}
	os := p.Items
	q.Options = make([]Option, 0, MaxOptions) // one allocation for the usual 2 to 4
	ok := sc.Array(func() bool {
		q.Options = append(q.Options, Option{}) // read in place, as questions are
		o := &q.Options[len(q.Options)-1]
		var seen [len(optionTexts)]bool
		ok := sc.Object(func(name string) bool {
			for k, f := range optionTexts {
				if f.name != name {
					continue
				}
				if seen[k] {
					return false
				}
				seen[k] = true
				if sc.Literal("null") { // absent, when optional
					return !os.IsRequired(name)
				}
				return readText(sc, f.get(o), os.Props[name])
			}
			return false
		})
		return ok && os.HasRequired(func(name string) bool {
			for k, f := range optionTexts {
				if f.name == name {
					return seen[k]
				}
			}
			return false
		})
	})
	if len(q.Options) == 0 {
		q.Options = nil // as the slow path has it
	}
	return ok && p.ValidCount(len(q.Options))
}

// readMetadata decodes and re-encodes the metadata object exactly as the slow path does.
func readMetadata(sc *jsonscan.Scanner, req *Request, p *quickschema.Schema) bool {
	if p == nil || sc.Peek() != '{' {
		return false
	}
	start := sc.I
	if !sc.SkipComposite() {
		return false
	}
	tree, err := jsonread.Decode(sc.B[start:sc.I])
	md, ok := tree.(map[string]any)
	if err != nil || !ok || !p.Valid(md) {
		return false
	}
	req.Metadata = jsonwrite.AppendValue(nil, md)
	return true
}

// decodeResultDataFast reads a result whose members are spelt exactly as ResultData's and
// Answer's fields, each once, with values of their fields' types (null where the
// reference leaves a field nil), and nothing after it. It returns false for anything
// else, which then goes the reference way (resultDataFromTree); when both accept, they
// decode the same ResultData (FuzzResultDataFastAgreesWithTree). It spares each answer a
// tree of maps.
func decodeResultDataFast(b []byte) (ResultData, bool) {
	sc := jsonscan.Scanner{B: b, Names: names}
	var data ResultData
	var seen [3]bool // requestId, answers, declined
	ok := sc.Object(func(name string) bool {
		var i int
		var ok bool
		switch name {
		case fieldRequestID:
			i = 0
			data.RequestID, ok = sc.Str()
		case fieldAnswers:
			i = 1
			ok = readAnswers(&sc, &data)
		case fieldDeclined:
			i = 2
			data.Declined, ok = sc.Bool()
		default:
			return false
		}
		if !ok || seen[i] {
			return false
		}
		seen[i] = true
		return true
	})
	if !ok || !sc.AtEnd() {
		return ResultData{}, false
	}
	return data, true
}

func readAnswers(sc *jsonscan.Scanner, data *ResultData) bool {
	if sc.Literal("null") {
		return true
	}
	data.Answers = []Answer{} // as the reference makes of []
	return sc.Array(func() bool {
		var a Answer
		var seen [3]bool // question, selectedLabels, customInput
		ok := sc.Object(func(name string) bool {
			var i int
			var ok bool
			switch name {
			case fieldQuestion:
				i = 0
				a.Question, ok = sc.Str()
			case fieldSelectedLabels:
				i = 1
				ok = true
				if !sc.Literal("null") {
					a.SelectedLabels = []string{}
					ok = sc.Array(func() bool {
						l, ok := sc.Str()
						a.SelectedLabels = append(a.SelectedLabels, l)
						return ok
					})
				}
			case fieldCustomInput:
				i = 2
				ok = true
				if !sc.Literal("null") {
					var s string
					s, ok = sc.Str()
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
