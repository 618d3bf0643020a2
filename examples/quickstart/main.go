// Command quickstart is the smallest complete host: a scripted agent calls
// ask_user_questions, the question is asked in this terminal, and the tool result the
// model would read is printed.
//
//	go run ./examples/quickstart
//
// Type an option's number (several, comma-separated, for a multi-select question), or
// any other text as your own answer, or "d" to decline. With no terminal input (end of
// file), the device declines.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/wire"
)

// The arguments a model would emit.
const arguments = `{
  "questions": [
    {
      "question": "Which framework should we use for the new module?",
      "header": "Framework",
      "options": [
        {"label": "Vue 3 (Recommended)", "description": "Composition API + TypeScript, matches the existing stack"},
        {"label": "React", "description": "Larger ecosystem but different from the current codebase"}
      ],
      "multiSelect": false
    },
    {
      "question": "Which features should we include?",
      "header": "Features",
      "options": [
        {"label": "Dark mode", "description": "Toggle between light and dark themes"},
        {"label": "i18n support", "description": "Multi-language internationalization"},
        {"label": "Export to PDF", "description": "Generate PDF reports"}
      ],
      "multiSelect": true
    }
  ]
}`

func main() {
	timeout := flag.Duration("timeout", 5*time.Minute, "how long to wait for an answer")
	flag.Parse()

	transport := askusertest.NewTransport()
	d := askuser.New(transport, &askuser.Options{Timeout: *timeout})
	defer d.Close()

	session := askuser.IntSession(1)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	terminal := transport.Connect(session)
	go runTerminal(ctx, terminal, bufio.NewReader(os.Stdin), os.Stdout)

	fmt.Println("agent: calling ask_user_questions")
	res := d.Dispatch(ctx, askuser.ToolCall{Session: session, ID: "call_1", Name: askuser.ToolName, Arguments: json.RawMessage(arguments)})
	fmt.Println()
	fmt.Println("tool result:", res.Content)
	fmt.Println("outcome:    ", res.Outcome)
	fmt.Println("summary:    ", askuser.Summary(res.Content, "en"), "/", askuser.Summary(res.Content, "zh"))
	fmt.Println()
	fmt.Print(askuser.Transcript(arguments, res.Content))
}

// runTerminal is a device: it shows each question set and sends what the person types.
func runTerminal(ctx context.Context, dev *askusertest.Device, in *bufio.Reader, out io.Writer) {
	for {
		ev, err := dev.Recv(ctx)
		if err != nil {
			return
		}
		switch ev.Type {
		case wire.EventAsk:
			var ask wire.AskData
			if err := json.Unmarshal(ev.Data, &ask); err != nil {
				fmt.Fprintln(out, "bad ask event:", err)
				continue
			}
			reply := prompt(ask, in, out)
			if err := dev.Send(ctx, reply); err != nil {
				// The refusal also arrives as an ask_user_questions_error event below.
				continue
			}
		case wire.EventError:
			var e wire.ErrorData
			_ = json.Unmarshal(ev.Data, &e)
			fmt.Fprintln(out, "refused:", strings.Join(e.Problems, "; "), e.Message)
		case wire.EventResolved:
			var r wire.ResolvedData
			_ = json.Unmarshal(ev.Data, &r)
			fmt.Fprintf(out, "(question %s ended: %s)\n", r.RequestID, r.Outcome)
		}
	}
}

// prompt asks every question of the set and returns the result event to send.
func prompt(ask wire.AskData, in *bufio.Reader, out io.Writer) wire.Event {
	data := wire.ResultData{RequestID: ask.RequestID}
	fmt.Fprintf(out, "\nThe agent wants to know (answer by %s):\n", ask.ExpiresAt.Local().Format(time.Kitchen))
	for _, q := range ask.Questions {
		fmt.Fprintf(out, "\n[%s] %s\n", q.Header, q.Question)
		for i, o := range q.Options {
			fmt.Fprintf(out, "  %d. %s — %s\n", i+1, o.Label, o.Description)
		}
		hint := "a number"
		if q.MultiSelect {
			hint = "numbers, comma-separated"
		}
		fmt.Fprintf(out, "  Other: type your own answer. Choose with %s, or d to decline: ", hint)
		line, err := in.ReadString('\n')
		line = strings.TrimSpace(line)
		if line == "d" || (line == "" && errors.Is(err, io.EOF)) {
			if line == "" {
				fmt.Fprintln(out, "(no input: declining)")
			}
			return wire.Event{Type: wire.EventResult, Data: mustJSON(wire.ResultData{RequestID: ask.RequestID, Declined: true})}
		}
		data.Answers = append(data.Answers, parseChoice(q, line))
	}
	return wire.Event{Type: wire.EventResult, Data: mustJSON(data)}
}

// parseChoice reads "1" or "1,3" as option numbers, and anything else as Other text.
func parseChoice(q askuser.Question, line string) askuser.Answer {
	a := askuser.Answer{Question: q.Question, SelectedLabels: []string{}}
	for _, f := range strings.Split(line, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > len(q.Options) {
			a.SelectedLabels = []string{}
			a.CustomInput = &line
			return a
		}
		a.SelectedLabels = append(a.SelectedLabels, q.Options[n-1].Label)
	}
	return a
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
