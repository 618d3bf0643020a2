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
		{"answered", false, `tool result (is_error false): {"answers":[{"question":"Which framework should we use for the new module?","selectedLabels":["Vue 3 (Recommended)"],"customInput":null}]}`, "assistant: Thanks, that settles it."},
		{"declined", true, `tool result (is_error true): {"error": "User declined to answer"}`, "assistant: No answer, so"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exampletest.Check(t, exampletest.Replay{
				Run: func(ctx context.Context, out io.Writer) error {
					return run(ctx, config{addr: "127.0.0.1:0", timeout: time.Minute, prompt: "Scaffold the admin module."}, out)
				},
				KeyVar:       "ANTHROPIC_API_KEY",
				CallID:       "toolu_01A09q90qw90lq917835lq9",
				Decline:      tc.decline,
				ResultPrefix: "tool result ",
				Result:       tc.result,
				Final:        tc.final,
			})
		})
	}
}
