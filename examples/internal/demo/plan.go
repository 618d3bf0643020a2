package demo

import (
	"encoding/json"

	"github.com/askuser-go/askuser"
)

// The scripted agent's script, for demos that run it their own way (examples/cluster
// keeps its runs in NATS, so that they outlive a replica).

// Plan is what the scripted agent does for a message: what it says first, its calls,
// and whether it ends with a summary of the notes its reactions made.
type Plan struct {
	Intro string
	Steps []Step
	Outro bool
}

// Step is one ask_user_questions call: what the agent says first (may be empty), and the
// arguments it emits, as a model would. The web demo's calls of its host tools, which its
// policy gates (the tour's list_files and delete_branch, and /tool), are not steps of a
// Plan: a demo without that policy has no host tools to call.
type Step struct {
	Say       string
	Arguments json.RawMessage
}

// PlanFor returns the plan for a person's message: its ask_user_questions calls. It is
// deterministic: a run resumed with the same message makes the same calls.
func PlanFor(text string) Plan {
	p := planFor(text)
	out := Plan{Intro: p.intro, Outro: p.outro}
	dropped := false
	for _, s := range p.steps {
		if s.tool != "" {
			dropped = true
			continue
		}
		out.Steps = append(out.Steps, Step{Say: s.say, Arguments: s.arguments})
	}
	if dropped && len(out.Steps) == 0 {
		out.Intro = "This demo has no host tools to call; examples/web has them."
	}
	return out
}

// Reaction is the agent's reading of a call's result: what it says, a note for its
// summary (empty when none), and whether the run goes on. req is the call's request
// (nil when its arguments were invalid).
func Reaction(res askuser.Result, req *askuser.Request) (say, note string, goOn bool) {
	return reaction(res, req)
}
