package askotel_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/integrations/askotel"
	"github.com/askuser-go/askuser/wire"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// An observer on a dispatcher: each tool call askuser runs is an execute_tool span,
// which says how a call that got no answer ended.
func Example() {
	spans := tracetest.NewSpanRecorder()
	obs, err := askotel.NewObserver(askotel.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
	if err != nil {
		panic(err)
	}
	devices := askusertest.NewTransport() // a wshub.Hub in a host, given the same observer
	d := askuser.New(devices, &askuser.Options{Observer: obs})
	defer d.Close()

	session := askuser.StringSession("run-1")
	dev := devices.Connect(session)
	defer dev.Close()
	go func() { // the person declines
		ask, _ := dev.Recv(context.Background())
		reply, _ := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: ask.RequestID(), Declined: true})
		_ = dev.Send(context.Background(), reply)
	}()
	res := d.Dispatch(context.Background(), askuser.ToolCall{Session: session, ID: "call_1", Name: askuser.ToolName,
		Arguments: json.RawMessage(`{"questions":[{"question":"Deploy now?","header":"Deploy","options":[{"label":"Yes","description":"Ship it"},{"label":"No","description":"Wait"}]}]}`)})
	fmt.Println(res.Outcome)

	for _, s := range spans.Ended() {
		for _, a := range s.Attributes() {
			if a.Key == askotel.AttrErrorType {
				fmt.Println(s.Name(), "error.type:", a.Value.AsString())
			}
		}
	}
	// Output:
	// declined
	// execute_tool ask_user_questions error.type: declined
}
