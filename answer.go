package askuser

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CheckAnswers validates a device's answers against the question set they answer and
// returns them in canonical form: one answer per question in the order asked,
// SelectedLabels never nil. maxCustomInput bounds free text in characters (0 means
// [DefaultMaxCustomInput]).
//
// The rules: every question is answered exactly once, matched by its text; every selected
// label is one of that question's options, at most once; a single-select question has one
// label or a custom input, not both and not two labels; customInput, when present, is not
// blank and not longer than the bound; no answer is empty.
//
// The returned problems, each with where it is, are nil when the answers are valid.
func CheckAnswers(req *Request, answers []Answer, maxCustomInput int) ([]Answer, []string) {
	if maxCustomInput <= 0 {
		maxCustomInput = DefaultMaxCustomInput
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	byText := make(map[string]int, len(req.Questions))
	for i, q := range req.Questions {
		byText[q.Question] = i
	}
	out := make([]Answer, len(req.Questions))
	answered := make([]bool, len(req.Questions))
	if len(answers) == 0 {
		add("answers: missing; answer each of the %d question(s)", len(req.Questions))
	}
	for i, a := range answers {
		where := answerPath(i) // formatted only into a problem
		qi, ok := byText[a.Question]
		if !ok {
			add("%s.question: %q is not a question of this request", where, truncate(a.Question, 80))
			continue
		}
		if answered[qi] {
			add("%s.question: %q is answered more than once", where, truncate(a.Question, 80))
			continue
		}
		answered[qi] = true
		q := req.Questions[qi]
		labels := a.SelectedLabels
		if labels == nil {
			labels = []string{}
		}
		for k, l := range labels {
			if !slices.ContainsFunc(q.Options, func(o Option) bool { return o.Label == l }) {
				add("%s.selectedLabels[%d]: %q is not an option of this question", where, k, truncate(l, 80))
			} else if slices.Index(labels, l) < k {
				add("%s.selectedLabels[%d]: %q is selected more than once", where, k, truncate(l, 80))
			}
		}
		if a.CustomInput != nil {
			text := *a.CustomInput
			switch n := utf8.RuneCountInString(text); {
			case !utf8.ValidString(text):
				add("%s.customInput: is not valid UTF-8", where)
			case strings.TrimSpace(text) == "":
				add("%s.customInput: must not be blank; send null when no text was typed", where)
			case n > maxCustomInput:
				add("%s.customInput: %d characters is too long; at most %d are accepted", where, n, maxCustomInput)
			}
		}
		switch {
		case len(labels) == 0 && a.CustomInput == nil:
			add("%s: choose an option or type an answer", where)
		case !q.MultiSelect && len(labels) > 1:
			add("%s.selectedLabels: a single-select question takes one label, got %d", where, len(labels))
		case !q.MultiSelect && len(labels) == 1 && a.CustomInput != nil:
			add("%s: a single-select question takes an option or custom input, not both", where)
		}
		out[qi] = Answer{Question: q.Question, SelectedLabels: labels, CustomInput: a.CustomInput}
	}
	for i, ok := range answered {
		if !ok && len(answers) > 0 {
			add("answers: no answer for questions[%d] %q", i, truncate(req.Questions[i].Question, 80))
		}
	}
	if problems != nil {
		return nil, problems
	}
	return out, nil
}

// answerPath is the location answers[i], for problem messages: formatting it only when a
// problem is found keeps a valid answer, the common case, free of formatting.
type answerPath int

func (p answerPath) String() string { return "answers[" + strconv.Itoa(int(p)) + "]" }

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
