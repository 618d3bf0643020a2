package askmcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// streamable serves s over go-sdk's streamable HTTP handler (stateful) on httptest and
// connects a client with opts to it at 2025-11-25.
func (s *server) streamable(t *testing.T, client *mcp.Client) *mcp.ClientSession {
	t.Helper()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, nil))
	t.Cleanup(hs.Close)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestDeviceAnswerCancelsFormOverStreamableHTTP: a device answers while the calling
// client's form is open, call after call, over streamable HTTP. Every call must reach
// the client as notifications/cancelled for its form, and end the client's handler.
// go-sdk sends that notification on the call's own stream, asynchronously, and drops
// it once the call is answered, so a tool that answers as soon as its handler returns
// loses most of them; in-memory transports, which have no streams, hide this.
func TestDeviceAnswerCancelsFormOverStreamableHTTP(t *testing.T) {
	const calls = 8
	s := newServer(t, nil)
	var notified, ended atomic.Int32
	opened, release := make(chan struct{}, calls), make(chan struct{})
	client := mcp.NewClient(impl, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		opened <- struct{}{}
		select { // the form stays open until the server cancels it
		case <-ctx.Done():
			ended.Add(1)
			return nil, ctx.Err()
		case <-release: // the test is over, and failed
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
	}})
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/cancelled" {
				notified.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	cs := s.streamable(t, client)
	t.Cleanup(func() { close(release) }) // before the session closes, which waits for handlers
	session := askuser.StringSession(cs.ID())
	after := 0
	for i := range calls {
		answered := make(chan int, 1)
		go func(after int) {
			a, n := s.devices.ask(t, after)
			<-opened // the person answers on a device while the client's form is open
			if err := answer(t, s.d, session, a.RequestID, pick(a.Questions[0].Question, "React")); err != nil {
				t.Error(err)
			}
			answered <- n
		}(after)
		res, err := cs.CallTool(t.Context(), callParams(frameworkArgs, ""))
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || !strings.Contains(text(t, res), `"selectedLabels":["React"]`) {
			t.Fatalf("call %d: result %q", i, text(t, res))
		}
		after = <-answered
	}
	// The notifications come before each result; the client handles them on its own
	// goroutines, so give it a moment to count the last one. A lost one never comes.
	deadline := time.Now().Add(10 * time.Second)
	for (notified.Load() < calls || ended.Load() < calls) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if notified.Load() != calls || ended.Load() != calls {
		t.Fatalf("of %d forms, the client was told %d were cancelled, and %d handlers ended", calls, notified.Load(), ended.Load())
	}
}
