package askuser_test

import (
	"strings"
	"testing"

	. "github.com/askuser-go/askuser"
)

// FuzzCheckAnswers: validation is total, canonical answers are stable, and an accepted
// answer really answers every question with existing labels.
func FuzzCheckAnswers(f *testing.F) {
	f.Add("Vue", "", false, "Router", "Store", true)
	f.Add("", "Svelte", true, "", "", false)
	f.Add("React", " ", true, "Store", "Store", true)
	f.Add("Angular", "x", false, "Router", "Nope", true)
	req := mustParse(f, PendingArgs)
	f.Fuzz(func(t *testing.T, label1, custom1 string, hasCustom1 bool, label2a, label2b string, answerSecond bool) {
		var labels1 []string
		if label1 != "" {
			labels1 = []string{label1}
		}
		a := []Answer{{Question: "Which framework?", SelectedLabels: labels1}}
		if hasCustom1 {
			a[0].CustomInput = &custom1
		}
		if answerSecond {
			a = append(a, Answer{Question: "Which extras?", SelectedLabels: []string{label2a, label2b}})
		}
		out, problems := CheckAnswers(req.Questions, a, 0)
		if problems != nil {
			if out != nil {
				t.Fatal("answers returned with problems")
			}
			return
		}
		if len(out) != len(req.Questions) {
			t.Fatalf("%d answers for %d questions", len(out), len(req.Questions))
		}
		for i, ans := range out {
			q := req.Questions[i]
			if ans.Question != q.Question || ans.SelectedLabels == nil {
				t.Fatalf("not canonical: %+v", ans)
			}
			if !q.MultiSelect && len(ans.SelectedLabels) > 1 {
				t.Fatal("two labels on a single-select question")
			}
			if len(ans.SelectedLabels) == 0 && (ans.CustomInput == nil || strings.TrimSpace(*ans.CustomInput) == "") {
				t.Fatal("an empty answer was accepted")
			}
		}
		again, problems := CheckAnswers(req.Questions, out, 0)
		if problems != nil || !equalJSON(t, again, out) {
			t.Fatalf("canonical answers changed on a second check: %v", problems)
		}
	})
}
