package askuser

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/askuser-go/askuser/internal/jsonx"
	"github.com/askuser-go/askuser/wire"
)

// Members of a device's result and of an answer.
const (
	fieldRequestID      = "requestId"
	fieldAnswers        = "answers"
	fieldDeclined       = "declined"
	fieldQuestion       = "question"
	fieldSelectedLabels = "selectedLabels"
	fieldCustomInput    = "customInput"
)

// checkAnswers validates a device's answers against the questions they answer and
// returns them in canonical form: one answer per question in the order asked,
// SelectedLabels never nil. maxCustomInput bounds free text in characters (0 means
// 4000).
//
// The rules: every question is answered exactly once, matched by its text; every selected
// label is one of that question's options, at most once; a single-select question has one
// label or a custom input, not both and not two labels; customInput, when present, is not
// blank and not longer than the bound; no answer is empty.
//
// The returned problems, each with where it is, are nil when the answers are valid. Its
// cost is bounded by what was asked, not by what was sent: an answer naming more labels
// than its question has options is refused without looking at each label, and at most
// [maxReportedProblems] problems are listed, then how many more there were.
func checkAnswers(questions []Question, answers []Answer, maxCustomInput int) ([]Answer, []string) {
	if maxCustomInput <= 0 {
		maxCustomInput = defaultMaxCustomInput
	}
	problems := problemList{max: maxReportedProblems, where: fieldAnswers}
	byText := make(map[string]int, len(questions))
	for i, q := range questions {
		byText[q.Question] = i
	}
	out := make([]Answer, len(questions))
	answered := make([]bool, len(questions))
	if len(answers) == 0 {
		problems.addf("answers: missing; answer each of the %d question(s)", len(questions))
	}
	for i, a := range answers {
		where := answerPath(i) // formatted only into a problem
		qi, ok := byText[a.Question]
		if !ok {
			problems.addf("%s.question: %q is not a question of this request", where, jsonx.Truncate(a.Question, 80))
			continue
		}
		if answered[qi] {
			problems.addf("%s.question: %q is answered more than once", where, jsonx.Truncate(a.Question, 80))
			continue
		}
		answered[qi] = true
		q := questions[qi]
		labels := a.SelectedLabels
		if labels == nil {
			labels = []string{}
		}
		if len(labels) > len(q.Options) {
			problems.addf("%s.selectedLabels: %d labels, but the question has only %d options", where, len(labels), len(q.Options))
			continue
		}
		for k, l := range labels {
			if !slices.ContainsFunc(q.Options, func(o Option) bool { return o.Label == l }) {
				problems.addf("%s.selectedLabels[%d]: %q is not an option of this question", where, k, jsonx.Truncate(l, 80))
			} else if slices.Index(labels, l) < k {
				problems.addf("%s.selectedLabels[%d]: %q is selected more than once", where, k, jsonx.Truncate(l, 80))
			}
		}
		if a.CustomInput != nil {
			text := *a.CustomInput
			switch n := utf8.RuneCountInString(text); {
			case !utf8.ValidString(text):
				problems.addf("%s.customInput: is not valid UTF-8", where)
			case strings.TrimSpace(text) == "":
				problems.addf("%s.customInput: must not be blank; send null when no text was typed", where)
			case n > maxCustomInput:
				problems.addf("%s.customInput: %d characters is too long; at most %d are accepted", where, n, maxCustomInput)
			}
		}
		switch {
		case len(labels) == 0 && a.CustomInput == nil:
			problems.addf("%s: choose an option or type an answer", where)
		case !q.MultiSelect && len(labels) > 1:
			problems.addf("%s.selectedLabels: a single-select question takes one label, got %d", where, len(labels))
		case !q.MultiSelect && len(labels) == 1 && a.CustomInput != nil:
			problems.addf("%s: a single-select question takes an option or custom input, not both", where)
		}
		out[qi] = Answer{Question: q.Question, SelectedLabels: labels, CustomInput: a.CustomInput}
	}
	for i, ok := range answered {
		if !ok && len(answers) > 0 {
			problems.addf("answers: no answer for questions[%d] %q", i, jsonx.Truncate(questions[i].Question, 80))
		}
	}
	if list := problems.list(); list != nil {
		return nil, list
	}
	return out, nil
}

// maxReportedProblems bounds the problems listed for a refused answer, so that the reply
// to a device stays small whatever it sent.
const maxReportedProblems = 5

// problemList collects problems, formatting only the first max and counting the rest.
type problemList struct {
	max   int
	where string // the location of the last problem, which says how many more there were
	items []string
	more  int
}

func (p *problemList) addf(format string, args ...any) {
	if len(p.items) >= p.max {
		p.more++
		return
	}
	p.items = append(p.items, fmt.Sprintf(format, args...))
}

// list returns the problems, ending with one that says how many more there were; nil
// when there are none.
func (p *problemList) list() []string {
	if p.more > 0 {
		return append(p.items, moreProblems(p.where, p.more))
	}
	return p.items
}

// moreProblems is the last problem of a list that was cut short.
func moreProblems(where string, n int) string {
	if n == 1 {
		return where + ": …and 1 more problem, not listed"
	}
	return fmt.Sprintf("%s: …and %d more problems, not listed", where, n)
}

// answerPath is the location answers[i], for problem messages: formatting it only when a
// problem is found keeps a valid answer, the common case, free of formatting.
type answerPath int

func (p answerPath) String() string { return "answers[" + strconv.Itoa(int(p)) + "]" }

// decodeResultData decodes a device's result strictly, from its JSON tree, wording
// every refusal: unknown names, wrong types and trailing data are refused.
func decodeResultData(b []byte) (wire.ResultData, error) {
	tree, err := jsonx.Decode(b)
	if err != nil {
		return wire.ResultData{}, fmt.Errorf("%w: %s data: not valid JSON: %v", wire.ErrMalformedEvent, wire.EventResult, err)
	}
	data, problem := resultDataFromTree(tree)
	if problem != "" {
		return wire.ResultData{}, fmt.Errorf("%w: %s data: %s", wire.ErrMalformedEvent, wire.EventResult, problem)
	}
	return data, nil
}

// resultDataFromTree reads a device's result from its decoded tree, or says what is
// wrong with it, where: "answers[0].selectedLabels: must be an array of strings, not a
// string". Null answers, selectedLabels and customInput are absent.
func resultDataFromTree(tree any) (wire.ResultData, string) {
	obj, ok := tree.(map[string]any)
	if !ok {
		return wire.ResultData{}, "must be an object, not " + jsonx.Article(jsonTypeName(tree))
	}
	var data wire.ResultData
	for _, name := range sortedNames(obj) {
		switch v := obj[name]; name {
		case fieldRequestID:
			s, ok := v.(string)
			if !ok {
				return wire.ResultData{}, "requestId: must be a string, not " + jsonx.Article(jsonTypeName(v))
			}
			data.RequestID = s
		case fieldDeclined:
			b, ok := v.(bool)
			if !ok {
				return wire.ResultData{}, "declined: must be a boolean, not " + jsonx.Article(jsonTypeName(v))
			}
			data.Declined = b
		case fieldAnswers:
			if v == nil {
				continue
			}
			arr, ok := v.([]any)
			if !ok {
				return wire.ResultData{}, "answers: must be an array of answer objects, not " + jsonx.Article(jsonTypeName(v))
			}
			data.Answers = make([]Answer, 0, min(len(arr), 4))
			for i, av := range arr {
				a, problem := answerFromTree(av)
				if problem != "" {
					return wire.ResultData{}, answerPath(i).String() + problem
				}
				data.Answers = append(data.Answers, a)
			}
		default:
			return wire.ResultData{}, jsonx.Truncate(name, 40) + ": unknown field; the fields of a result are requestId, answers and declined"
		}
	}
	return data, ""
}

// answerFromTree reads one answer; a problem starts with the location within the answer.
func answerFromTree(v any) (Answer, string) {
	obj, ok := v.(map[string]any)
	if !ok {
		return Answer{}, ": must be an object, not " + jsonx.Article(jsonTypeName(v))
	}
	var a Answer
	for _, name := range sortedNames(obj) {
		switch v := obj[name]; name {
		case fieldQuestion:
			s, ok := v.(string)
			if !ok {
				return Answer{}, ".question: must be a string, not " + jsonx.Article(jsonTypeName(v))
			}
			a.Question = s
		case fieldSelectedLabels:
			if v == nil {
				continue
			}
			arr, ok := v.([]any)
			if !ok {
				return Answer{}, ".selectedLabels: must be an array of strings, not " + jsonx.Article(jsonTypeName(v))
			}
			a.SelectedLabels = make([]string, 0, min(len(arr), 4))
			for k, lv := range arr {
				l, ok := lv.(string)
				if !ok {
					return Answer{}, fmt.Sprintf(".selectedLabels[%d]: must be a string, not %s", k, jsonx.Article(jsonTypeName(lv)))
				}
				a.SelectedLabels = append(a.SelectedLabels, l)
			}
		case fieldCustomInput:
			if v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return Answer{}, ".customInput: must be a string or null, not " + jsonx.Article(jsonTypeName(v))
			}
			a.CustomInput = &s
		default:
			return Answer{}, fmt.Sprintf(".%s: unknown field; the fields of an answer are question, selectedLabels and customInput", jsonx.Truncate(name, 40))
		}
	}
	return a, ""
}

// sortedNames returns the member names of obj in order, so that the first problem
// reported is the same on every run.
func sortedNames(obj map[string]any) []string {
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
