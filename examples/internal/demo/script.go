package demo

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/askuser-go/askuser"
)

// A step is one tool call of the scripted agent: what it says first, and the arguments
// it "emits" as a model would: of ask_user_questions, or, when tool is set, of that host
// tool (which the policy gates). The calls of with are made together with it, as a
// model's parallel tool calls.
type step struct {
	say       string
	tool      string
	arguments json.RawMessage
	with      []step
}

// Commands a person can type instead of an ordinary message.
const (
	cmdAsk      = "/ask"
	cmdSingle   = "/single"
	cmdMulti    = "/multi"
	cmdPreview  = "/preview"
	cmdSeveral  = "/several"
	cmdTool     = "/tool"
	cmdParallel = "/parallel"
	cmdDrop     = "/drop"
	cmdHelp     = "/help"
)

// helpText is what /help answers. The page shows it in a proportional font, so nothing in
// it is aligned with spaces: each command begins its own line.
const helpText = `Send any message to start the tour: four questions, asked the way a model would ask them, then a look at the repository and a branch to delete, which waits for your approval.

Commands:
/single: only the single-select question.
/multi: only the multi-select question.
/preview: only the question with previews.
/several: only the set of several questions in one call.
/ask JSON: call ask_user_questions with exactly these arguments, e.g.
/ask {"questions":[{"question":"Tea or coffee?","header":"Drink","multiSelect":false,"options":[{"label":"Tea","description":"Hot leaves"},{"label":"Coffee","description":"Hot beans"}]}]}
/tool NAME JSON: call the host tool NAME with exactly these arguments, through the policy: list_files runs without asking, delete_branch waits for your approval, drop_database waits for two DBAs (see /drop), and any other name is asked about, e.g.
/tool delete_branch {"name":"feature/old-login"}
/parallel: the single-select question and a call of delete_branch at once, as a model's parallel tool calls: the question above, the approval below it.
/drop: call drop_database {"name":"staging"}, which two of the DBAs, alice and bob, must approve, and which reaches the lead too once it has waited 30 seconds. This page is the developer's; open /?as=alice, /?as=bob and /?as=lead, each in a tab of its own: the call comes to their pages, and waits here until two DBAs approve (or the lead and one of them). Only the production database is never dropped.
/help: this text.

Messages sent while the agent waits for an answer are queued and read after the run. Cancel stops the run.`

var (
	singleQuestion = askuser.Question{
		Header:   "Framework",
		Question: "Which framework should we use for the new module?",
		Options: []askuser.Option{
			{Label: "Vue 3 (Recommended)", Description: "Composition API + TypeScript, matches the existing stack"},
			{Label: "React", Description: "Larger ecosystem, but different from the current codebase"},
			{Label: "Svelte", Description: "Compiles the framework away; the smallest bundles"},
		},
	}

	multiQuestion = askuser.Question{
		Header:      "Features",
		Question:    "Which features should the first release include?",
		MultiSelect: true,
		Options: []askuser.Option{
			{Label: "Dark mode", Description: "Toggle between light and dark themes"},
			{Label: "i18n support", Description: "Multi-language internationalization"},
			{Label: "Export to PDF", Description: "Generate PDF reports"},
			{Label: "Offline mode", Description: "Keep working without a network connection"},
		},
	}

	previewQuestion = askuser.Question{
		Header:   "Layout",
		Question: "Which layout should the dashboard use?",
		Options: []askuser.Option{
			{
				Label:       "Sidebar (Recommended)",
				Description: "Fixed navigation panel on the left",
				Preview: "## Sidebar layout\n\n```\n+--------+-------------------------+\n| Home   |  Dashboard              |\n| Orders |  +-------+ +-------+    |\n| Stock  |  | chart | | table |    |\n| Admin  |  +-------+ +-------+    |\n+--------+-------------------------+\n```\n\n" +
					"- Navigation always **visible**\n- Room for *many* sections\n- Costs `220px` of width",
			},
			{
				Label:       "Top bar",
				Description: "Horizontal navigation across the top",
				Preview: "## Top bar layout\n\n```\n+----------------------------------+\n| Home  Orders  Stock  Admin       |\n+----------------------------------+\n|  Dashboard                       |\n|  +-------+ +-------+ +-------+   |\n|  | chart | | table | | list  |   |\n|  +-------+ +-------+ +-------+   |\n+----------------------------------+\n```\n\n" +
					"- Full width for **content**\n- Fits *five or six* sections",
			},
			{
				Label:       "Split view",
				Description: "List on the left, details on the right",
				Preview: "## Split view\n\n```\n+-------------+--------------------+\n| Order #1042 |  Order #1042       |\n| Order #1041 |  Status: shipped   |\n| Order #1040 |  Items: 3          |\n+-------------+--------------------+\n```\n\n" +
					"1. Pick an item on the left\n2. Read and edit it on the right",
			},
		},
	}

	severalQuestions = []askuser.Question{
		{
			Header:   "Database",
			Question: "Which database should store the orders?",
			Options: []askuser.Option{
				{Label: "PostgreSQL (Recommended)", Description: "Relational, already run by the ops team"},
				{Label: "SQLite", Description: "One file, no server; fine for a single instance"},
			},
		},
		{
			Header:      "Testing",
			Question:    "Which kinds of tests should I write?",
			MultiSelect: true,
			Options: []askuser.Option{
				{Label: "Unit tests", Description: "Fast, for the business rules"},
				{Label: "End-to-end tests", Description: "In a real browser, for the main flows"},
				{Label: "Visual regression", Description: "Screenshots compared on every change"},
			},
		},
		{
			Header:   "Deploy",
			Question: "Where will it be deployed?",
			Options: []askuser.Option{
				{Label: "Kubernetes", Description: "The company cluster"},
				{Label: "Serverless", Description: "Functions behind an API gateway"},
				{Label: "Single VM", Description: "One machine with systemd"},
			},
		},
	}
)

func mustArguments(questions ...askuser.Question) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(askuser.Request{Questions: questions}); err != nil {
		panic(err)
	}
	return json.RawMessage(bytes.TrimSpace(buf.Bytes()))
}

var (
	stepSingle  = step{say: "First, the framework.", arguments: mustArguments(singleQuestion)}
	stepMulti   = step{say: "Next, the scope of the first release.", arguments: mustArguments(multiQuestion)}
	stepPreview = step{say: "Now the layout; each option has a sketch.", arguments: mustArguments(previewQuestion)}
	stepSeveral = step{say: "A few last details, all at once.", arguments: mustArguments(severalQuestions...)}

	stepListFiles    = step{say: "Now let me look at the repository.", tool: toolListFiles, arguments: json.RawMessage(`{}`)}
	stepDeleteBranch = step{say: "feature/old-login is merged into main. May I delete it?", tool: toolDeleteBranch, arguments: json.RawMessage(`{"name":"feature/old-login"}`)}

	stepDrop = step{say: "The staging database is no longer used. Dropping it needs two DBAs: I have asked them.", tool: toolDropDatabase, arguments: json.RawMessage(`{"name":"staging"}`)}

	stepParallel = step{say: "Two things at once: a question, and a branch to delete.", arguments: stepSingle.arguments,
		with: []step{{tool: toolDeleteBranch, arguments: stepDeleteBranch.arguments}}}

	tour = []step{stepSingle, stepMulti, stepPreview, stepSeveral, stepListFiles, stepDeleteBranch}
)

// plan is what a run will do for a message: say something, then make its calls.
type plan struct {
	intro string
	steps []step
	// outro is whether the run ends with a summary of every answer.
	outro bool
}

// planFor turns a person's message into the scripted agent's plan. It is deterministic.
func planFor(text string) plan {
	text = strings.TrimSpace(text)
	var first string
	if f := strings.Fields(text); len(f) > 0 {
		first = f[0]
	}
	switch first {
	case cmdAsk:
		return plan{
			intro: "Asking exactly what you wrote.",
			steps: []step{{arguments: json.RawMessage(strings.TrimSpace(text[len(cmdAsk):]))}},
		}
	case cmdTool:
		return toolPlan(strings.TrimSpace(text[len(cmdTool):]))
	case cmdParallel:
		return plan{steps: []step{stepParallel}}
	case cmdDrop:
		return plan{steps: []step{stepDrop}}
	case cmdSingle:
		return plan{steps: []step{stepSingle}}
	case cmdMulti:
		return plan{steps: []step{stepMulti}}
	case cmdPreview:
		return plan{steps: []step{stepPreview}}
	case cmdSeveral:
		return plan{steps: []step{stepSeveral}}
	case cmdHelp:
		return plan{intro: helpText}
	}
	return plan{
		intro: "Before I set up the new module, I need a few decisions from you, and then your approval to tidy up a branch.",
		steps: tour,
		outro: true,
	}
}

// toolPlan is the plan of "/tool NAME JSON": one call of the host tool NAME with the rest
// of the message, verbatim, as its arguments. NAME ask_user_questions asks them.
func toolPlan(rest string) plan {
	name, arguments := rest, ""
	if i := strings.IndexFunc(rest, unicode.IsSpace); i >= 0 {
		name, arguments = rest[:i], strings.TrimSpace(rest[i:])
	}
	if name == "" {
		return plan{intro: "Usage: /tool NAME JSON, for example /tool list_files {}"}
	}
	s := step{tool: name, arguments: json.RawMessage(arguments)}
	if name == askuser.ToolName {
		s.tool = ""
	}
	return plan{intro: "Calling " + name + " with exactly what you wrote.", steps: []step{s}}
}
