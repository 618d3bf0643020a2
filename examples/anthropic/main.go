// Command anthropic is an agent loop on the Anthropic Messages API whose model asks the
// person with ask_user_questions, and the person answers in a browser panel.
//
//	ANTHROPIC_API_KEY=sk-ant-... go run ./examples/anthropic   # the real API
//	go run ./examples/anthropic                                # no key: a recorded exchange
//
// It serves the askuser WebSocket hub, the browser panel and a small page on a local
// port, prints the page's address, and runs the loop: each model turn that stops for
// tool use, its ask_user_questions calls go to askanthropic.ToolResults, which blocks
// until the person answers (or declines, or time runs out) and gives the tool_result
// blocks, is_error set when there is no answer. It prints each tool result and the
// model's last message, and exits.
//
// Without ANTHROPIC_API_KEY it says so and replays a recorded exchange from an
// in-process server that speaks the API's wire format, so that it runs offline; the
// question, the panel and the answer are real. Every connection acts for session 1: it
// is an example, not a deployment.
package main

import (
	"context"
	"embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/examples/internal/replay"
	"github.com/askuser-go/askuser/integrations/askanthropic"
	"github.com/askuser-go/askuser/wshub"
)

//go:embed page replay.json
var files embed.FS

// config is what a run needs; main fills it from the flags and the environment.
type config struct {
	addr    string        // where to serve the panel
	apiKey  string        // "" replays the recorded exchange
	model   string        // the model, with an API key
	prompt  string        // the person's request
	timeout time.Duration // how long each question waits
}

func main() {
	cfg := config{apiKey: os.Getenv("ANTHROPIC_API_KEY")}
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:8083", "address to serve the browser panel on (port 0 picks a free one)")
	flag.StringVar(&cfg.model, "model", string(anthropic.ModelClaudeSonnet4_6), "the model, when ANTHROPIC_API_KEY is set")
	flag.StringVar(&cfg.prompt, "prompt", "Scaffold a new admin module for our web app. Ask me what you need to know first.", "the request to the agent")
	flag.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "how long each question waits for an answer")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "anthropic:", err)
		os.Exit(1)
	}
}

// session is the one session of this example.
var session = askuser.IntSession(1)

func run(ctx context.Context, cfg config, out io.Writer) error {
	// The person's side: a dispatcher whose transport is the WebSocket hub, and the page.
	hub := wshub.New(&wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) {
		return []askuser.SessionID{session}, nil // anyone: an example, not a deployment
	}})
	d := askuser.New(hub, &askuser.Options{Timeout: cfg.timeout})
	hub.Bind(d)
	page, _ := fs.Sub(files, "page")
	mux := http.NewServeMux()
	mux.Handle("GET /ws", hub)
	mux.Handle("GET /askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	mux.Handle("GET /", http.FileServerFS(page))
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		d.Close()       // ends any question still waiting, telling every device
		_ = hub.Close() // then the connections
		_ = srv.Close()
	}()
	fmt.Fprintf(out, "Answer the agent's questions at http://%s/\n", ln.Addr())

	// The model's side: the real API, or the recorded exchange.
	opts := []option.RequestOption{option.WithAPIKey(cfg.apiKey)}
	model := cfg.model
	if cfg.apiKey == "" {
		fmt.Fprintln(out, "ANTHROPIC_API_KEY is not set: replaying a recorded exchange (the question and your answer are real).")
		srv, err := replay.New(files, "replay.json", "/v1/messages", toolResultIsError, apiErrors)
		if err != nil {
			return err
		}
		defer srv.Close()
		opts = []option.RequestOption{option.WithBaseURL(srv.URL), option.WithAPIKey("replay"), option.WithMaxRetries(0)}
		model = string(anthropic.ModelClaudeSonnet4_6)
	}
	client := anthropic.NewClient(opts...)
	return agent(ctx, client, d, model, cfg.prompt, out)
}

// toolResultIsError reports whether a Messages request's last message carries a
// tool_result with is_error set, for the replay.
func toolResultIsError(request []byte) bool {
	var req struct {
		Messages []struct {
			Content []struct {
				Type    string `json:"type"`
				IsError bool   `json:"is_error"`
			} `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(request, &req) != nil || len(req.Messages) == 0 {
		return false
	}
	for _, block := range req.Messages[len(req.Messages)-1].Content {
		if block.Type == "tool_result" && block.IsError {
			return true
		}
	}
	return false
}

// maxTurns bounds the loop, whatever the model does.
const maxTurns = 10

// agent is the loop: a turn of the model, then the results of its tool calls, until it
// stops for another reason than tool use.
func agent(ctx context.Context, client anthropic.Client, d *askuser.Dispatcher, model, prompt string, out io.Writer) error {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(model),
		MaxTokens: 2048,
		System:    []anthropic.TextBlockParam{{Text: "You are a software agent. When a decision is the user's, ask with ask_user_questions rather than guessing."}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
		Tools:     []anthropic.ToolUnionParam{askanthropic.Tool()},
	}
	fmt.Fprintf(out, "user: %s\n", prompt)
	for range maxTurns {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			return err
		}
		params.Messages = append(params.Messages, msg.ToParam())
		for _, block := range msg.Content {
			if block.Type == "text" {
				fmt.Fprintf(out, "assistant: %s\n", block.Text)
			}
		}
		if msg.StopReason != anthropic.StopReasonToolUse {
			return nil
		}
		fmt.Fprintln(out, "(waiting for your answer in the browser)")
		results := askanthropic.ToolResults(ctx, d, session, msg)
		for _, r := range results {
			fmt.Fprintf(out, "tool result (is_error %v): %s\n", r.OfToolResult.IsError.Value, r.OfToolResult.Content[0].OfText.Text)
		}
		// This agent has no other tool; a call of one gets an error the model can read.
		for _, block := range msg.Content {
			if block.Type == "tool_use" && block.Name != askuser.ToolName {
				results = append(results, anthropic.NewToolResultBlock(block.ID, `{"error": "no such tool"}`, true))
			}
		}
		params.Messages = append(params.Messages, anthropic.NewUserMessage(results...))
		if ctx.Err() != nil {
			return nil // interrupted
		}
	}
	return fmt.Errorf("the model was still calling tools after %d turns", maxTurns)
}
