package askuser

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/askuser-go/askuser/internal/jsonx"
)

// Summary returns a one-line summary of an ask_user_questions tool result for a UI,
// such as "Answered 2 questions", or in Chinese "回答了 2 个问题" (§3.8). locale is a BCP 47
// tag or the like: one starting with "zh" gives Chinese, anything else English. The
// content is read as JSON, so a result that went through a JSON encoder on its way to a
// history (other spacing, escapes) is summarized alike. Content that is not a result of
// this tool is summarized as such, never an error.
func Summary(content, locale string) string {
	zh := strings.HasPrefix(strings.ToLower(strings.TrimSpace(locale)), "zh")
	pick := func(en, cn string) string {
		if zh {
			return cn
		}
		return en
	}
	var v struct {
		Answers  []json.RawMessage `json:"answers"`
		Error    *string           `json:"error"`
		Problems []string          `json:"problems"`
	}
	if err := json.Unmarshal([]byte(content), &v); err != nil {
		return pick("Unrecognized result", "无法识别的结果")
	}
	switch {
	case v.Answers != nil:
		n := len(v.Answers)
		if zh {
			return fmt.Sprintf("回答了 %d 个问题", n)
		}
		if n == 1 {
			return "Answered 1 question"
		}
		return fmt.Sprintf("Answered %d questions", n)
	case v.Error != nil && v.Problems != nil:
		n := len(v.Problems)
		if zh {
			return fmt.Sprintf("提问无效(%d 处错误)", n)
		}
		if n == 1 {
			return "Invalid question (1 problem)"
		}
		return fmt.Sprintf("Invalid question (%d problems)", n)
	case v.Error != nil:
		for _, e := range endings {
			if e.content != "" && e.content == `{"error": `+jsonx.String(*v.Error)+`}` {
				return pick(e.en, e.zh)
			}
		}
	}
	return pick("Unrecognized result", "无法识别的结果")
}

// Transcript renders a finished call as plain text for a history view (§5): each
// question with its header (when it has one) and options, then what the person chose
// or why there is no answer. arguments and content are the tool call's arguments and its result, as stored.
// It re-opens nothing; it only reads.
//
//	[Framework] Which framework should we use?
//	  - Vue 3 (Recommended): Composition API + TypeScript
//	  - React: Larger ecosystem
//	  > Vue 3 (Recommended)
func Transcript(arguments, content string) string {
	var b strings.Builder
	req, err := ParseArguments([]byte(arguments))
	if err != nil {
		b.WriteString("ask_user_questions (invalid arguments)\n")
		b.WriteString("  " + Summary(content, "en") + "\n")
		return b.String()
	}
	var resp response
	answered := json.Unmarshal([]byte(content), &resp) == nil && resp.Answers != nil
	byQuestion := make(map[string]Answer, len(resp.Answers))
	for _, a := range resp.Answers {
		byQuestion[a.Question] = a
	}
	for i, q := range req.Questions {
		if i > 0 {
			b.WriteByte('\n')
		}
		kind := ""
		if q.MultiSelect {
			kind = " (multiple choice)"
		}
		if h := oneLine(q.Header); h != "" {
			fmt.Fprintf(&b, "[%s] ", h)
		}
		fmt.Fprintf(&b, "%s%s\n", oneLine(q.Question), kind)
		for _, o := range q.Options {
			if d := oneLine(o.Description); d != "" {
				fmt.Fprintf(&b, "  - %s: %s\n", oneLine(o.Label), d)
			} else {
				fmt.Fprintf(&b, "  - %s\n", oneLine(o.Label)) // a description may be empty
			}
		}
		if !answered {
			continue
		}
		a, ok := byQuestion[q.Question]
		if !ok {
			b.WriteString("  > (no answer)\n")
			continue
		}
		for _, l := range a.SelectedLabels {
			fmt.Fprintf(&b, "  > %s\n", oneLine(l))
		}
		switch {
		case a.CustomInput != nil && len(q.Options) == 0: // a question answered in free text
			fmt.Fprintf(&b, "  > %s\n", oneLine(*a.CustomInput))
		case a.CustomInput != nil:
			fmt.Fprintf(&b, "  > Other: %s\n", oneLine(*a.CustomInput))
		}
	}
	if !answered {
		b.WriteString("  " + Summary(content, "en") + "\n")
	}
	return b.String()
}

// oneLine folds line breaks so that model- or person-written text cannot forge lines of
// the transcript.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)), " ")
}
