package askuser_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/askuser-go/askuser"
)

// A scripted device answers the question the model asks; the tool result is what the
// model reads next.
func Example() {
	mt := askuser.NewMemoryTransport()
	d := askuser.New(mt, &askuser.Options{NewRequestID: func() string { return "req-1" }})
	mt.Bind(d)
	defer d.Close()

	session := askuser.IntSession(123)
	phone := mt.Connect(session)
	go func() {
		ev, _ := phone.Recv(context.Background()) // the ask_user_questions event
		var ask askuser.AskData
		_ = json.Unmarshal(ev.Data, &ask)
		reply, _ := askuser.NewEvent(askuser.EventResult, session, askuser.ResultData{
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
	fmt.Println(res.Summary("en"), "/", res.Summary("zh-CN"))
	// Output:
	// answered
	// {"answers":[{"question":"Which framework should we use?","selectedLabels":["Vue 3 (Recommended)"],"customInput":null}]}
	// Answered 1 question / 回答了 1 个问题
}

// Invalid arguments end the call at once with every problem listed for the model.
func ExampleParseArguments() {
	_, err := askuser.ParseArguments([]byte(`{"questions":[{"question":"Pick one?","header":"A header that is too long",
		"options":[{"label":"Other","description":"x"},{"label":" ","description":"y"}],"multiSelect":false,"extra":1}]}`))
	for _, p := range err.(*askuser.ArgumentsError).Problems {
		fmt.Println(p)
	}
	// Output:
	// questions[0].extra: unknown field; the allowed fields here are question, header, options, multiSelect
	// questions[0].header: must be at most 12 characters, got 25
	// questions[0].options[0].label: "Other" duplicates the "Other" choice every client adds with a text box; remove this option
	// questions[0].options[1].label: must not be blank
}
