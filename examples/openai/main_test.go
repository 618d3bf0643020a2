package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/askuser-go/askuser/examples/internal/exampletest"
	"github.com/askuser-go/askuser/internal/leakcheck"
)

// TestMain fails the run when goroutines started by the tests outlive them.
func TestMain(m *testing.M) { leakcheck.Main(m, 5*time.Second, nil) }

// TestReplayEndToEnd runs the example without an API key, as a person would: it
// replays the recorded exchange, serves the page, a browser device (a WebSocket client
// here) answers the question, and the example prints the tool result the model was sent
// and the model's last message, and returns.
func TestReplayEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name          string
		decline       bool
		result, final string
	}{
		{"answered", false, `tool result: {"answers":[{"question":"Which layout should the settings page use?","selectedLabels":["Sidebar (Recommended)"],"customInput":null}]}`, "assistant: Thanks, that settles it."},
		{"declined", true, `tool result: {"error": "User declined to answer"}`, "assistant: No answer, so"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exampletest.Check(t, exampletest.Replay{
				Run: func(ctx context.Context, out io.Writer) error {
					return run(ctx, config{addr: "127.0.0.1:0", timeout: time.Minute, prompt: "Plan the settings page."}, out)
				},
				KeyVar:       "OPENAI_API_KEY",
				CallID:       "call_Dn2RJJSxzDm49vlVTehseJ0k",
				Decline:      tc.decline,
				ResultPrefix: "tool result: ",
				Result:       tc.result,
				Final:        tc.final,
			})
		})
	}
}
