// Command anthropic is an agent loop on the Anthropic Messages API whose model asks the
// person with ask_user_questions, and calls tools of the host's that the person
// approves first: the person answers and approves in a browser panel.
//
//	ANTHROPIC_API_KEY=sk-ant-... go run ./examples/anthropic   # the real API
//	go run ./examples/anthropic                                # no key: a recorded exchange
//
// It serves the askuser WebSocket hub, the browser panel and a small page on a local
// port, prints the page's address, and runs the loop: each model turn that stops for
// tool use, every tool_use goes to askanthropic.ToolResultBlocks, which asks the
// ask_user_questions calls on the panel and runs the host's own tools (a small
// repository in memory: list_files, write_file, drop_table) through the dispatcher's
// Policy: list_files runs, write_file waits for the person's approval (who may edit
// the call, or deny it), drop_table is refused. It blocks until every call has ended
// and gives the tool_result blocks, is_error set for every call that gave no answer or
// did not run. It prints each tool result and the model's last message, and exits.
//
// Without ANTHROPIC_API_KEY it says so and replays a recorded exchange from an
// in-process server that speaks the API's wire format, so that it runs offline: the
// model asks a question, then, once answered, calls the three tools in one turn. The
// question, the approval, the panel and the person's answers are real. Every
// connection acts for session 1: it is an example, not a deployment.
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
	"github.com/askuser-go/askuser/examples/internal/hosttools"
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
	timeout time.Duration // how long each question and approval waits
}

func main() {
	cfg := config{apiKey: os.Getenv("ANTHROPIC_API_KEY")}
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:8083", "address to serve the browser panel on (port 0 picks a free one)")
	flag.StringVar(&cfg.model, "model", string(anthropic.ModelClaudeSonnet4_6), "the model, when ANTHROPIC_API_KEY is set")
	flag.StringVar(&cfg.prompt, "prompt", "Scaffold a new admin module for our web app. Ask me what you need to know first.", "the request to the agent")
	flag.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "how long each question waits for an answer, and each tool call for its approval")
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
	d := askuser.New(hub, &askuser.Options{Timeout: cfg.timeout, Policy: hosttools.Policy()})
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
		fmt.Fprintln(out, "ANTHROPIC_API_KEY is not set: replaying a recorded exchange (the question, the approval and your decisions are real).")
		srv, err := replay.New(files, "replay.json", "/v1/messages", questionUnanswered, apiErrors)
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

// questionUnanswered reports whether a Messages request's last message carries a
// tool_result with is_error set for one of the ask_user_questions tool_use blocks of
// the assistant message before it, for the replay.
func questionUnanswered(request []byte) bool {
	var req struct {
		Messages []struct {
			Content []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				Name      string `json:"name"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
			} `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(request, &req) != nil || len(req.Messages) < 2 {
		return false
	}
	asks := map[string]bool{}
	for _, block := range req.Messages[len(req.Messages)-2].Content {
		asks[block.ID] = block.Type == "tool_use" && block.Name == askuser.ToolName
	}
	for _, block := range req.Messages[len(req.Messages)-1].Content {
		if block.Type == "tool_result" && block.IsError && asks[block.ToolUseID] {
			return true
		}
	}
	return false
}

// maxTurns bounds the loop, whatever the model does.
const maxTurns = 10

// tools are the tools the model is given: ask_user_questions and the host's own.
func tools() []anthropic.ToolUnionParam {
	out := []anthropic.ToolUnionParam{askanthropic.Tool()}
	for _, t := range hosttools.Tools {
		var schema struct {
			Properties any      `json:"properties"`
			Required   []string `json:"required"`
		}
		_ = json.Unmarshal(t.Schema, &schema) // the schemas are JSON objects
		out = append(out, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name:        t.Name,
			Description: anthropic.String(t.Description),
			InputSchema: anthropic.ToolInputSchemaParam{
				Properties:  schema.Properties,
				Required:    schema.Required,
				ExtraFields: map[string]any{"additionalProperties": false},
			},
			Strict: anthropic.Bool(true),
		}})
	}
	return out
}

// agent is the loop: a turn of the model, then the results of its tool calls, until it
// stops for another reason than tool use.
func agent(ctx context.Context, client anthropic.Client, d *askuser.Dispatcher, model, prompt string, out io.Writer) error {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(model),
		MaxTokens: 2048,
		System:    []anthropic.TextBlockParam{{Text: "You are a software agent working in the user's repository. When a decision is the user's, ask with ask_user_questions rather than guessing."}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
		Tools:     tools(),
	}
	repo := hosttools.NewRepo()
	fmt.Fprintf(out, "user: %s\n", prompt)
	for range maxTurns {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			return err
		}
		params.Messages = append(params.Messages, msg.ToParam())
		var names []string // of the tool_use blocks, in order
		for _, block := range msg.Content {
			switch block.Type {
			case "text":
				fmt.Fprintf(out, "assistant: %s\n", block.Text)
			case "tool_use":
				names = append(names, block.Name)
			}
		}
		if msg.StopReason != anthropic.StopReasonToolUse {
			return nil
		}
		fmt.Fprintln(out, "(questions and tool calls to approve wait for you in the browser)")
		results := askanthropic.ToolResultBlocks(ctx, d, session, msg, repo.Run)
		for i, r := range results {
			text := ""
			if c := r.OfToolResult.Content; len(c) > 0 {
				text = c[0].OfText.Text
			}
			fmt.Fprintf(out, "tool result (%s, is_error %v): %s\n", names[i], r.OfToolResult.IsError.Value, text)
		}
		params.Messages = append(params.Messages, anthropic.NewUserMessage(results...))
		if ctx.Err() != nil {
			return nil // interrupted
		}
	}
	return fmt.Errorf("the model was still calling tools after %d turns", maxTurns)
}
