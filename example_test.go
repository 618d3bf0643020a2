package askuser_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/wire"
)

// A scripted device answers the question the model asks; the tool result is what the
// model reads next.
func Example() {
	mt := askusertest.NewTransport()
	d := askuser.New(mt, &askuser.Options{NewRequestID: func() string { return "req-1" }})
	defer d.Close()

	session := askuser.IntSession(123)
	phone := mt.Connect(session)
	go func() {
		ev, _ := phone.Recv(context.Background()) // the ask_user_questions event
		var ask wire.AskData
		_ = json.Unmarshal(ev.Data, &ask)
		reply, _ := wire.NewEvent(wire.EventResult, session, wire.ResultData{
			RequestID: ask.RequestID,
			Answers: []askuser.Answer{{
				Question:       ask.Questions[0].Question,
				SelectedLabels: []string{ask.Questions[0].Options[0].Label},
			}},
		})
		_ = phone.Send(context.Background(), reply)
	}()

	res := d.Dispatch(context.Background(), askuser.ToolCall{
		Session: session,
		Name:    askuser.ToolName,
		Arguments: json.RawMessage(`{"questions":[{"question":"Which framework should we use?","header":"Framework",
			"options":[{"label":"Vue 3 (Recommended)","description":"Matches the existing stack"},
			           {"label":"React","description":"Larger ecosystem"}],"multiSelect":false}]}`),
	})
	fmt.Println(res.Outcome)
	fmt.Println(res.Content)
	fmt.Println(askuser.Summary(res.Content, "en"), "/", askuser.Summary(res.Content, "zh-CN"))
	// Output:
	// answered
	// {"answers":[{"question":"Which framework should we use?","selectedLabels":["Vue 3 (Recommended)"],"customInput":null}]}
	// Answered 1 question / 回答了 1 个问题
}

// Invalid arguments end the call at once with every problem listed for the model.
func ExampleParseArguments() {
	_, err := askuser.ParseArguments([]byte(`{"questions":[{"header":"A header longer than advertised",
		"options":[{"label":"Other","description":"x"},{"label":" ","description":"y"}],"multiSelect":false,"extra":1}]}`))
	for _, p := range err.(*askuser.ArgumentsError).Problems {
		fmt.Println(p)
	}
	// Output:
	// questions[0].extra: unknown field; the allowed fields here are question, header, options, multiSelect, placeholder
	// questions[0].options[0].label: "Other" duplicates the "Other" choice every client adds with a text box; remove this option
	// questions[0].options[1].label: must not be blank
	// questions[0].question: missing required field "question"
}

// answerFirst answers every question the device is shown with each question's first
// option, as a person who always takes the recommendation would.
func answerFirst(dev *askusertest.Device) {
	for {
		ev, err := dev.Recv(context.Background())
		if err != nil {
			return
		}
		if ev.Type != wire.EventAsk {
			continue
		}
		var ask wire.AskData
		_ = json.Unmarshal(ev.Data, &ask)
		var answers []askuser.Answer
		for _, q := range ask.Questions {
			answers = append(answers, askuser.Answer{Question: q.Question, SelectedLabels: []string{q.Options[0].Label}})
		}
		reply, _ := wire.NewEvent(wire.EventResult, dev.Session(), wire.ResultData{RequestID: ask.RequestID, Answers: answers})
		_ = dev.Send(context.Background(), reply)
	}
}

// Dispatch one tool call of the model and give its result back with the model's call id
// and the error flag most LLM APIs take.
func ExampleDispatcher_Dispatch() {
	t := askusertest.NewTransport()
	d := askuser.New(t, nil)
	defer d.Close()
	dev := t.Connect(askuser.IntSession(7))
	defer dev.Close()
	go answerFirst(dev)

	// As the model emitted it: a tool call with an id and JSON arguments.
	callID, args := "call_abc", `{"questions":[{"question":"Ship it today?","header":"Release",
		"options":[{"label":"Yes","description":"Deploy now"},{"label":"No","description":"Wait for Monday"}],"multiSelect":false}]}`
	res := d.Dispatch(context.Background(), askuser.ToolCall{Session: askuser.IntSession(7), ID: callID, Arguments: json.RawMessage(args)})
	fmt.Printf("tool result for %s (error: %v): %s\n", callID, res.IsError(), res.Content)
	// Output:
	// tool result for call_abc (error: false): {"answers":[{"question":"Ship it today?","selectedLabels":["Yes"],"customInput":null}]}
}

// RunTools runs the tool calls of one model turn: the host's own tools as before, and
// ask_user_questions through the dispatcher; a call that ends without an answer is an
// error result for the model.
func ExampleDispatcher_RunTools() {
	t := askusertest.NewTransport()
	d := askuser.New(t, &askuser.Options{FailWithoutDevice: true}) // nobody is connected
	defer d.Close()

	hostTools := func(ctx context.Context, call askuser.ToolCall) (string, error) {
		return "contents of " + call.Name, nil
	}
	outs := d.RunTools(context.Background(), []askuser.ToolCall{
		{Session: askuser.IntSession(1), ID: "call_1", Name: "read_file"},
		{Session: askuser.IntSession(1), ID: "call_2", Name: askuser.ToolName,
			Arguments: json.RawMessage(`{"questions":[{"question":"Ok?","header":"Ok","options":[{"label":"Yes","description":"y"},{"label":"No","description":"n"}],"multiSelect":false}]}`)},
	}, hostTools)
	for _, o := range outs {
		fmt.Println(o.Call.ID, o.IsError, o.Content)
	}
	fmt.Println(errors.Is(outs[1].Err, askuser.ErrUndelivered), outs[1].Refused)
	// Output:
	// call_1 false contents of read_file
	// call_2 true {"error": "No device of the user is connected; the question was not asked"}
	// true true
}

// CancelSession ends a session's waiting questions when the person stops the run; the
// waiting call returns at once with the cancelled result.
func ExampleDispatcher_CancelSession() {
	t := askusertest.NewTransport()
	d := askuser.New(t, nil)
	defer d.Close()
	session := askuser.StringSession("run-42")
	dev := t.Connect(session) // shown the question; never answers
	defer dev.Close()

	done := make(chan askuser.Result)
	go func() {
		done <- d.Dispatch(context.Background(), askuser.ToolCall{Session: session, Arguments: json.RawMessage(
			`{"questions":[{"question":"Which region?","header":"Region","options":[{"label":"EU","description":"Frankfurt"},{"label":"US","description":"Virginia"}],"multiSelect":false}]}`)})
	}()
	_, _ = dev.Recv(context.Background()) // the question has reached the device
	fmt.Println("cancelled:", d.CancelSession(session))
	res := <-done
	fmt.Println(res.Outcome, res.Content)
	// Output:
	// cancelled: 1
	// cancelled {"error": "Session cancelled"}
}
