package main

import (
	"encoding/json"

	"github.com/askuser-go/askuser"
)

// The scripted agent's calls: the tool and arguments a model would emit, one call per
// step. A step without a tool asks the person questions (ask_user_questions); the last
// calls one of the host's own tools, which the policy asks the person to approve.
var script = []struct {
	say       string
	tool      string
	arguments string
}{
	{"First, the framework.", "", `{"questions":[{"question":"Which framework should we use for the new module?","header":"Framework","multiSelect":false,"options":[
		{"label":"Vue 3 (Recommended)","description":"Composition API + TypeScript, matches the existing stack"},
		{"label":"React","description":"Larger ecosystem, but different from the current codebase"},
		{"label":"Svelte","description":"Compiles the framework away; the smallest bundles"}]}]}`},
	{"Which features go in the first release?", "", `{"questions":[{"question":"Which features should the first release include?","header":"Features","multiSelect":true,"options":[
		{"label":"Dark mode","description":"Toggle between light and dark themes"},
		{"label":"i18n support","description":"Multi-language internationalization"},
		{"label":"Export to PDF","description":"Generate PDF reports"},
		{"label":"Offline mode","description":"Keep working without a network connection"}]}]}`},
	{"Now the layout; each option has a preview.", "", `{"questions":[{"question":"Which layout should the dashboard use?","header":"Layout","multiSelect":false,"options":[
		{"label":"Sidebar (Recommended)","description":"Navigation on the left, content on the right","preview":"## Sidebar\n\n` + "```" + `\n+--------+----------------+\n| Home   | Dashboard      |\n| Reports|  [chart]       |\n| Admin  |                |\n+--------+----------------+\n` + "```" + `\n\n- Room for **many** sections\n- Familiar from admin tools"},
		{"label":"Top bar","description":"Navigation across the top","preview":"## Top bar\n\n` + "```" + `\n+-------------------------+\n| Home  Reports  Admin    |\n+-------------------------+\n|  Dashboard  [chart]     |\n+-------------------------+\n` + "```" + `\n\n- More width for content\n- Fits *few* sections"}]}]}`},
	{"Now three things at once.", "", `{"questions":[
		{"question":"Which database should we start with?","header":"Database","multiSelect":false,"options":[
			{"label":"Postgres (Recommended)","description":"Relational, the team knows it"},
			{"label":"SQLite","description":"Embedded, nothing to run"}]},
		{"question":"Which checks should CI run?","header":"CI","multiSelect":true,"options":[
			{"label":"Unit tests","description":"Fast, on every push"},
			{"label":"Browser tests","description":"Headless Chromium"},
			{"label":"Fuzzing","description":"A few seconds per target"}]},
		{"question":"How should we name the service?","header":"Name","multiSelect":false,"options":[
			{"label":"atlas","description":"Short and neutral"},
			{"label":"beacon","description":"Says what it does"}]}]}`},
	{"Last, I clean up the old branch; that needs your approval.", "delete_branch", `{"name": "feature/old-login", "force": false}`},
}

// policy is the host's: its one tool that the agent may call, delete_branch, waits for
// the person's approval (edits must fit its schema).
var policy = &askuser.Policy{
	Ask: []askuser.Rule{{Tool: "delete_branch"}},
	Tools: []askuser.Tool{{
		Name:        "delete_branch",
		Description: "Deletes a branch of the repository",
		Schema:      json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1},"force":{"type":"boolean"}},"required":["name"],"additionalProperties":false}`),
	}},
	Reasons: []string{"Not now", "Keep that branch"},
}

// deleteBranch stands for the host's tool: it only says what it would have done.
func deleteBranch(arguments json.RawMessage) string {
	var args struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(arguments, &args)
	b, _ := json.Marshal(map[string]string{"deleted": args.Name})
	return string(b)
}
