package main

// The scripted agent's calls: the arguments a model would emit, one call per step.
var script = []struct {
	say       string
	arguments string
}{
	{"First, the framework.", `{"questions":[{"question":"Which framework should we use for the new module?","header":"Framework","multiSelect":false,"options":[
		{"label":"Vue 3 (Recommended)","description":"Composition API + TypeScript, matches the existing stack"},
		{"label":"React","description":"Larger ecosystem, but different from the current codebase"},
		{"label":"Svelte","description":"Compiles the framework away; the smallest bundles"}]}]}`},
	{"Which features go in the first release?", `{"questions":[{"question":"Which features should the first release include?","header":"Features","multiSelect":true,"options":[
		{"label":"Dark mode","description":"Toggle between light and dark themes"},
		{"label":"i18n support","description":"Multi-language internationalization"},
		{"label":"Export to PDF","description":"Generate PDF reports"},
		{"label":"Offline mode","description":"Keep working without a network connection"}]}]}`},
	{"Now the layout; each option has a preview.", `{"questions":[{"question":"Which layout should the dashboard use?","header":"Layout","multiSelect":false,"options":[
		{"label":"Sidebar (Recommended)","description":"Navigation on the left, content on the right","preview":"## Sidebar\n\n` + "```" + `\n+--------+----------------+\n| Home   | Dashboard      |\n| Reports|  [chart]       |\n| Admin  |                |\n+--------+----------------+\n` + "```" + `\n\n- Room for **many** sections\n- Familiar from admin tools"},
		{"label":"Top bar","description":"Navigation across the top","preview":"## Top bar\n\n` + "```" + `\n+-------------------------+\n| Home  Reports  Admin    |\n+-------------------------+\n|  Dashboard  [chart]     |\n+-------------------------+\n` + "```" + `\n\n- More width for content\n- Fits *few* sections"}]}]}`},
	{"Last, three things at once.", `{"questions":[
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
}
