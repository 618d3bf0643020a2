package bench

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// typicalArgs is one single-select question of three options, as a model emits it.
var typicalArgs = []byte(`{"questions":[{"question":"Which framework should we use for the new module?","header":"Framework","options":[{"label":"Vue 3 (Recommended)","description":"Composition API + TypeScript, matches existing stack"},{"label":"React","description":"Larger ecosystem but different from current codebase"},{"label":"Svelte","description":"Smallest bundles, least familiar to the team"}],"multiSelect":false}]}`)

// The most questions a call may ask, and options a question may have (schema/input.json).
const maxQuestions, maxOptions = wire.MaxQuestions, wire.MaxOptions

// preview is a markdown preview of about 300 bytes, the size of a small code mock-up.
const preview = "```go\nfunc (s *Server) Handle(w http.ResponseWriter, r *http.Request) {\n\tctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)\n\tdefer cancel()\n\tres, err := s.store.Get(ctx, r.PathValue(\"id\"))\n\tif err != nil {\n\t\thttp.Error(w, err.Error(), http.StatusNotFound)\n\t\treturn\n\t}\n\tjson.NewEncoder(w).Encode(res)\n}\n```"

// fourQuestions builds the largest shape a call may have: four single-select questions of
// four options, each option with a description and a preview of previewLen bytes.
func fourQuestions(previewLen int) *askuser.Request {
	p := strings.Repeat(preview, previewLen/len(preview)+1)[:previewLen]
	req := &askuser.Request{Metadata: json.RawMessage(`{"source":"planner","step":7}`)}
	for i := range maxQuestions {
		q := askuser.Question{
			Question: fmt.Sprintf("Question %d: which handler layout should the service use for part %d?", i+1, i+1),
			Header:   fmt.Sprintf("Layout %d", i+1),
		}
		for k := range maxOptions {
			q.Options = append(q.Options, askuser.Option{
				Label:       fmt.Sprintf("Layout %c", 'A'+k),
				Description: fmt.Sprintf("Handlers grouped the %d-th way, with the trade-offs that brings", k+1),
				Preview:     p,
			})
		}
		req.Questions = append(req.Questions, q)
	}
	return req
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

var (
	// fourArgs: four questions of four options with ~300-byte previews.
	fourArgs = mustJSON(fourQuestions(len(preview)))
	// maxArgs: the same shape with previews grown to just under the 256 KiB bound.
	maxArgs = func() []byte {
		// Escaping makes the encoding longer than the previews; shrink until it fits.
		n := wire.MaxArgumentsBytes / (maxQuestions * maxOptions)
		for {
			if b := mustJSON(fourQuestions(n)); len(b) <= wire.MaxArgumentsBytes {
				return b
			}
			n -= 64
		}
	}()
)

func TestFixturesAreValid(t *testing.T) {
	for name, args := range map[string][]byte{"typical": typicalArgs, "four": fourArgs, "max": maxArgs} {
		if _, err := askuser.ParseArguments(args); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if len(args) > wire.MaxArgumentsBytes {
			t.Errorf("%s: %d bytes", name, len(args))
		}
	}
}
