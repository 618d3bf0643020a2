package askmcp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/askuser-go/askuser"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file maps an askuser question set to an MCP form elicitation and the form's
// content back to answers: the server side, the reverse of form.go.

// elicitParams asks req as one form: for question i (from 1), a property "qi" whose
// choices are the options (a string of titled "oneOf" for a single-select question, an
// array of titled "anyOf" for a multi-select one), and a property "qi_other" for the
// free text every askuser client offers; a question without options, answered in free
// text alone, is the one string property "qi_other". Nothing is required: either
// property of a question may answer it, and askuser checks the answers as it checks any
// device's. problems, when set, say why the form is asked again.
func elicitParams(req *askuser.Request, problems []string) *mcp.ElicitParams {
	props := map[string]any{}
	for i, q := range req.Questions {
		name := "q" + strconv.Itoa(i+1)
		title := titleOf(q)
		if len(q.Options) == 0 {
			p := map[string]any{"type": "string", "title": title, "description": q.Question}
			if q.Placeholder != "" {
				p["description"] = q.Question + " (for example: " + q.Placeholder + ")"
			}
			props[name+"_other"] = p
			continue
		}
		entries := make([]any, len(q.Options))
		for k, o := range q.Options {
			desc := o.Description
			if o.Preview != "" {
				desc += "\n\n" + o.Preview
			}
			entries[k] = map[string]any{"const": o.Label, "title": o.Label, "description": desc}
		}
		other := "Your own answer, instead of a choice"
		if q.MultiSelect {
			props[name] = map[string]any{
				"type": "array", "title": title, "description": q.Question,
				"items": map[string]any{"anyOf": entries}, "uniqueItems": true,
			}
			other = "Your own answer, besides or instead of the choices"
		} else {
			props[name] = map[string]any{"type": "string", "title": title, "description": q.Question, "oneOf": entries}
		}
		props[name+"_other"] = map[string]any{"type": "string", "title": title + ": Other", "description": other}
	}
	var msg strings.Builder
	if len(problems) > 0 {
		msg.WriteString("Please fix your answer: " + strings.Join(problems, "; ") + "\n\n")
	}
	if len(req.Questions) == 1 {
		msg.WriteString(req.Questions[0].Question)
	} else {
		fmt.Fprintf(&msg, "Please answer these %d questions.", len(req.Questions))
		for _, q := range req.Questions {
			if strings.TrimSpace(q.Header) != "" {
				msg.WriteString("\n- " + q.Header + ": " + q.Question)
			} else {
				msg.WriteString("\n- " + q.Question)
			}
		}
	}
	return &mcp.ElicitParams{
		Message:         msg.String(),
		RequestedSchema: map[string]any{"type": "object", "properties": props},
	}
}

// titleOf is a question's title in a form: its header, or its text when it has none.
func titleOf(q askuser.Question) string {
	if strings.TrimSpace(q.Header) != "" {
		return q.Header
	}
	return q.Question
}

// answersOf reads a form's content as the answers to req, one per question, as a device
// would send them; askuser then checks them.
func answersOf(req *askuser.Request, content map[string]any) []askuser.Answer {
	answers := make([]askuser.Answer, len(req.Questions))
	for i, q := range req.Questions {
		name := "q" + strconv.Itoa(i+1)
		a := askuser.Answer{Question: q.Question, SelectedLabels: []string{}}
		switch v := content[name].(type) {
		case string:
			if v != "" {
				a.SelectedLabels = append(a.SelectedLabels, v)
			}
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					a.SelectedLabels = append(a.SelectedLabels, s)
				}
			}
		}
		if s, ok := content[name+"_other"].(string); ok && strings.TrimSpace(s) != "" {
			a.CustomInput = &s
		}
		answers[i] = a
	}
	return answers
}
