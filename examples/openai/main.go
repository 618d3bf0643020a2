// Command openai is an agent loop on the OpenAI Chat Completions API whose model asks
// the person with ask_user_questions, and calls tools of the host's that the person
// approves first: the person answers and approves in a browser panel.
//
//	OPENAI_API_KEY=sk-... go run ./examples/openai     # the real API
//	go run ./examples/openai                           # no key: a recorded exchange
//
// It serves the askuser WebSocket hub, the browser panel and a small page on a local
// port, prints the page's address, and runs the loop: each model turn, every tool call
// goes to askopenai.ChatToolResults, which asks the ask_user_questions calls on the
// panel and runs the host's own tools (a small repository in memory: list_files,
// write_file, drop_table) through the dispatcher's Policy: list_files runs, write_file
// waits for the person's approval (who may edit the call, or deny it), drop_table is
// refused. It blocks until every call has ended and gives the tool messages for the
// next turn. It prints each tool result and the model's last message, and exits.
//
// Without OPENAI_API_KEY it says so and replays a recorded exchange from an in-process
// server that speaks the API's wire format, so that it runs offline: the model asks a
// question, then, once answered, calls the three tools in one turn. The question, the
// approval, the panel and the person's answers are real. Every connection acts for
// session 1: it is an example, not a deployment.
package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/examples/internal/hosttools"
	"github.com/askuser-go/askuser/examples/internal/replay"
	"github.com/askuser-go/askuser/integrations/askopenai"
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
	cfg := config{apiKey: os.Getenv("OPENAI_API_KEY")}
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:8082", "address to serve the browser panel on (port 0 picks a free one)")
	flag.StringVar(&cfg.model, "model", string(openai.ChatModelGPT5_2), "the model, when OPENAI_API_KEY is set")
	flag.StringVar(&cfg.prompt, "prompt", "I want to add a settings page to our web app. Ask me what you need to know before you plan it.", "the request to the agent")
	flag.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "how long each question waits for an answer, and each tool call for its approval")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "openai:", err)
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
		fmt.Fprintln(out, "OPENAI_API_KEY is not set: replaying a recorded exchange (the question, the approval and your decisions are real).")
		srv, err := replay.New(files, "replay.json", "/chat/completions", questionUnanswered, apiErrors)
		if err != nil {
			return err
		}
		defer srv.Close()
		opts = []option.RequestOption{option.WithBaseURL(srv.URL), option.WithAPIKey("replay"), option.WithMaxRetries(0)}
		model = string(openai.ChatModelGPT5_2)
	}
	client := openai.NewClient(opts...)
	return agent(ctx, client, d, model, cfg.prompt, out)
}

// questionUnanswered reports whether a Chat Completions request carries, after the last
// assistant message, a tool message for one of its ask_user_questions calls whose
// content is an error result, for the replay.
func questionUnanswered(request []byte) bool {
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if json.Unmarshal(request, &req) != nil {
		return false
	}
	asks := map[string]bool{}
	for _, m := range req.Messages {
		content, _ := m.Content.(string)
		switch {
		case m.Role == "assistant":
			clear(asks)
			for _, c := range m.ToolCalls {
				asks[c.ID] = c.Function.Name == askuser.ToolName
			}
		case m.Role == "tool" && asks[m.ToolCallID] && strings.HasPrefix(content, `{"error"`):
			return true
		}
	}
	return false
}

// maxTurns bounds the loop, whatever the model does.
const maxTurns = 10

// chatTools are the tools the model is given: ask_user_questions and the host's own,
// as strict function tools.
func chatTools() []openai.ChatCompletionToolUnionParam {
	tools := []openai.ChatCompletionToolUnionParam{askopenai.ChatTool()}
	for _, t := range hosttools.Tools {
		var params map[string]any
		_ = json.Unmarshal(t.Schema, &params) // the schemas are JSON objects
		tools = append(tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  params,
			Strict:      openai.Bool(true),
		}))
	}
	return tools
}

// agent is the loop: a turn of the model, then the results of its tool calls, until it
// answers without calling a tool.
func agent(ctx context.Context, client openai.Client, d *askuser.Dispatcher, model, prompt string, out io.Writer) error {
	params := openai.ChatCompletionNewParams{
		Model: model,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are a software agent working in the user's repository. When a decision is the user's, ask with ask_user_questions rather than guessing."),
			openai.UserMessage(prompt),
		},
		Tools: chatTools(),
	}
	repo := hosttools.NewRepo()
	fmt.Fprintf(out, "user: %s\n", prompt)
	for range maxTurns {
		completion, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return err
		}
		if len(completion.Choices) == 0 {
			return errors.New("the model gave no choice")
		}
		msg := completion.Choices[0].Message
		params.Messages = append(params.Messages, msg.ToParam())
		if msg.Content != "" {
			fmt.Fprintf(out, "assistant: %s\n", msg.Content)
		}
		if len(msg.ToolCalls) == 0 {
			return nil
		}
		fmt.Fprintln(out, "(questions and tool calls to approve wait for you in the browser)")
		results := askopenai.ChatToolResults(ctx, d, session, msg, repo.Run)
		for i, r := range results {
			name := msg.ToolCalls[i].Function.Name
			if msg.ToolCalls[i].Type == "custom" {
				name = msg.ToolCalls[i].Custom.Name
			}
			fmt.Fprintf(out, "tool result (%s): %s\n", name, r.OfTool.Content.OfString.Value)
		}
		params.Messages = append(params.Messages, results...)
		if ctx.Err() != nil {
			return nil // interrupted
		}
	}
	return fmt.Errorf("the model was still calling tools after %d turns", maxTurns)
}
