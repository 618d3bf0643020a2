// Command openai is an agent loop on the OpenAI Chat Completions API whose model asks
// the person with ask_user_questions, and the person answers in a browser panel.
//
//	OPENAI_API_KEY=sk-... go run ./examples/openai     # the real API
//	go run ./examples/openai                           # no key: a recorded exchange
//
// It serves the askuser WebSocket hub, the browser panel and a small page on a local
// port, prints the page's address, and runs the loop: each model turn, every
// ask_user_questions call goes to askopenai.ChatToolMessages, which blocks until the
// person answers (or declines, or time runs out) and gives the tool messages for the
// next turn. It prints each tool result and the model's last message, and exits.
//
// Without OPENAI_API_KEY it says so and replays a recorded exchange from an in-process
// server that speaks the API's wire format, so that it runs offline; the question, the
// panel and the answer are real. Every connection acts for session 1: it is an example,
// not a deployment.
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

	"github.com/askuser-go/askuser"
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
	timeout time.Duration // how long each question waits
}

func main() {
	cfg := config{apiKey: os.Getenv("OPENAI_API_KEY")}
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:8082", "address to serve the browser panel on (port 0 picks a free one)")
	flag.StringVar(&cfg.model, "model", string(openai.ChatModelGPT5_2), "the model, when OPENAI_API_KEY is set")
	flag.StringVar(&cfg.prompt, "prompt", "I want to add a settings page to our web app. Ask me what you need to know before you plan it.", "the request to the agent")
	flag.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "how long each question waits for an answer")
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
		fmt.Fprintln(out, "OPENAI_API_KEY is not set: replaying a recorded exchange (the question and your answer are real).")
		srv, err := replay.New(files, "replay.json", "/chat/completions", toolResultIsError, apiErrors)
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

// toolResultIsError reports whether a Chat Completions request's last message is a tool
// message whose content is an error result, for the replay.
func toolResultIsError(request []byte) bool {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(request, &req) != nil || len(req.Messages) == 0 {
		return false
	}
	last := req.Messages[len(req.Messages)-1]
	content, _ := last.Content.(string)
	return last.Role == "tool" && strings.HasPrefix(content, `{"error"`)
}

// maxTurns bounds the loop, whatever the model does.
const maxTurns = 10

// agent is the loop: a turn of the model, then the results of its tool calls, until it
// answers without calling a tool.
func agent(ctx context.Context, client openai.Client, d *askuser.Dispatcher, model, prompt string, out io.Writer) error {
	params := openai.ChatCompletionNewParams{
		Model: model,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are a software agent. When a decision is the user's, ask with ask_user_questions rather than guessing."),
			openai.UserMessage(prompt),
		},
		Tools: []openai.ChatCompletionToolUnionParam{askopenai.ChatTool()},
	}
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
		fmt.Fprintln(out, "(waiting for your answer in the browser)")
		results := askopenai.ChatToolMessages(ctx, d, session, msg)
		for _, r := range results {
			fmt.Fprintf(out, "tool result: %s\n", r.OfTool.Content.OfString.Value)
		}
		params.Messages = append(params.Messages, results...)
		// This agent has no other tool; a call of one gets an error the model can read.
		for _, tc := range msg.ToolCalls {
			if tc.Function.Name != askuser.ToolName {
				params.Messages = append(params.Messages, openai.ToolMessage(`{"error": "no such tool"}`, tc.ID))
			}
		}
		if ctx.Err() != nil {
			return nil // interrupted
		}
	}
	return fmt.Errorf("the model was still calling tools after %d turns", maxTurns)
}
