package main

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/askuser-go/askuser/examples/internal/browsertest"
	"github.com/askuser-go/askuser/examples/internal/exampletest"
	"github.com/askuser-go/askuser/internal/leakcheck"
)

// TestMain fails the run when goroutines started by the tests outlive them.
func TestMain(m *testing.M) { leakcheck.Main(m, 5*time.Second, nil) }

// The recorded question's answer, and the results of the recorded turn of three tool
// calls: list_files ran; write_file ran once the person had moved it to another path
// on the panel; drop_table was refused by the Policy.
const (
	answered    = `tool result (ask_user_questions): {"answers":[{"question":"Which layout should the settings page use?","selectedLabels":["Sidebar (Recommended)"],"customInput":null}]}`
	listed      = `tool result (list_files): {"files":["index.tsx","profile.tsx","security.tsx"]}`
	written     = `tool result (write_file): {"notice": "The user edited the arguments of this tool call before it ran: it ran with the arguments given here, not with yours.", "arguments": {"path":"web/src/pages/settings/index.tsx","content":"export default function Settings() {\n  return <SettingsLayout />;\n}\n"}, "result": {"wrote":"web/src/pages/settings/index.tsx","bytes":68}}`
	dropRefused = `tool result (drop_table): {"error": "This tool call is not allowed here; the tool did not run. Do not call it again."}`
	// edit is the person's edit of the recorded write_file call: another path.
	edit = `{"path":"web/src/pages/settings/index.tsx","content":"export default function Settings() {\n  return <SettingsLayout />;\n}\n"}`
)

// TestReplayEndToEnd runs the example without an API key, as a person would: it
// replays the recorded exchange, serves the page, a browser device (a WebSocket client
// here) answers the question, or declines, and edits the write_file call it is asked to
// approve; then the same in headless Chromium, the person clicking on the page's panel
// and its approval card; and the example prints every tool result the model was sent and the model's
// last message, and returns.
func TestReplayEndToEnd(t *testing.T) {
	approval := &exampletest.Approval{CallID: "call_Jd2Pu9Mc5Fo1Gx7Sh4Ki0Nw3", Tool: "write_file", Shows: "web/src/pages/settings.tsx", Edit: json.RawMessage(edit)}
	for _, tc := range []struct {
		name     string
		decline  bool
		approval *exampletest.Approval
		results  []string
		final    string
		browser  func(context.Context, *testing.T, string, exampletest.Replay)
	}{
		{"answered", false, approval, []string{answered, listed, written, dropRefused}, "assistant: Thanks, that settles it.", nil},
		{"in Chromium", false, approval, []string{answered, listed, written, dropRefused}, "assistant: Thanks, that settles it.", browsertest.Device},
		{"declined", true, nil, []string{`tool result (ask_user_questions): {"error": "User declined to answer"}`}, "assistant: No answer, so", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exampletest.Check(t, exampletest.Replay{
				Run: func(ctx context.Context, out io.Writer) error {
					return run(ctx, config{addr: "127.0.0.1:0", timeout: time.Minute, prompt: "Plan the settings page."}, out)
				},
				KeyVar:       "OPENAI_API_KEY",
				CallID:       "call_Dn2RJJSxzDm49vlVTehseJ0k",
				Decline:      tc.decline,
				Approval:     tc.approval,
				ResultPrefix: "tool result ",
				Results:      tc.results,
				Final:        tc.final,
				Browser:      tc.browser,
			})
		})
	}
}
