package askeino_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// devices is the person's side of a dispatcher in these tests: an wire.Transport
// that records every event sent to the devices; a test answers with
// Dispatcher.HandleEvent, as a device would.
type devices struct {
	mu     sync.Mutex
	events []wire.Event
	wake   chan struct{}
}

func newDevices() *devices { return &devices{wake: make(chan struct{}, 1)} }

func (t *devices) Send(_ context.Context, ev wire.Event) error {
	t.mu.Lock()
	t.events = append(t.events, ev)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
	return nil
}

// count returns how many events of the type were sent.
func (t *devices) count(typ string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, ev := range t.events {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// ask waits for the n-th question asked (from 0).
func (t *devices) ask(tb testing.TB, n int) wire.AskData {
	tb.Helper()
	var a wire.AskData
	if err := json.Unmarshal(t.nth(tb, wire.EventAsk, n).Data, &a); err != nil {
		tb.Fatal(err)
	}
	return a
}

// approval waits for the n-th approval asked (from 0).
func (t *devices) approval(tb testing.TB, n int) wire.ApprovalData {
	tb.Helper()
	var a wire.ApprovalData
	if err := json.Unmarshal(t.nth(tb, wire.EventApproval, n).Data, &a); err != nil {
		tb.Fatal(err)
	}
	return a
}

// approvals returns every approval asked so far, on a closed channel.
func (t *devices) approvals(tb testing.TB) <-chan wire.ApprovalData {
	tb.Helper()
	ch := make(chan wire.ApprovalData, t.count(wire.EventApproval))
	for n := range cap(ch) {
		ch <- t.approval(tb, n)
	}
	close(ch)
	return ch
}

// nth waits for the n-th event of the type sent (from 0).
func (t *devices) nth(tb testing.TB, typ string, n int) wire.Event {
	tb.Helper()
	deadline := time.After(10 * time.Second)
	for {
		t.mu.Lock()
		seen := 0
		for _, ev := range t.events {
			if ev.Type != typ {
				continue
			}
			if seen == n {
				t.mu.Unlock()
				return ev
			}
			seen++
		}
		t.mu.Unlock()
		select {
		case <-t.wake:
		case <-deadline:
			tb.Fatalf("event %s %d was not sent", typ, n)
		}
	}
}

// answer answers a question on a device with the first option of every question.
func answer(tb testing.TB, d *askuser.Dispatcher, session askuser.SessionID, a wire.AskData) {
	tb.Helper()
	data := wire.ResultData{RequestID: a.RequestID, Answers: firstOptions(a.Questions)}
	ev, err := wire.NewEvent(wire.EventResult, session, data)
	if err != nil {
		tb.Fatal(err)
	}
	if err := d.Deliver(context.Background(), ev); err != nil {
		tb.Error(err)
	}
}

func firstOptions(qs []askuser.Question) []askuser.Answer {
	var out []askuser.Answer
	for _, q := range qs {
		out = append(out, askuser.Answer{Question: q.Question, SelectedLabels: []string{q.Options[0].Label}})
	}
	return out
}

// scriptedModel is a model.ToolCallingChatModel that plays a model: its first reply
// calls ask_user_questions (or makes calls, when set); then it answers with the tool
// result it was given.
type scriptedModel struct {
	callID string
	args   string
	calls  []schema.ToolCall

	mu    sync.Mutex
	seen  [][]*schema.Message // every input, in order
	tools []*schema.ToolInfo
}

var _ model.ToolCallingChatModel = (*scriptedModel)(nil)

func (m *scriptedModel) Generate(_ context.Context, input []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = append(m.seen, input)
	last := input[len(input)-1]
	if last.Role == schema.Tool {
		return schema.AssistantMessage("The user said: "+last.Content, nil), nil
	}
	if m.calls != nil {
		return schema.AssistantMessage("", m.calls), nil
	}
	return schema.AssistantMessage("", []schema.ToolCall{{
		ID:       m.callID,
		Function: schema.FunctionCall{Name: askuser.ToolName, Arguments: m.args},
	}}), nil
}

func (m *scriptedModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *scriptedModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tools = tools
	return m, nil
}

// toolMessage returns the tool message the model was given, or fails.
func (m *scriptedModel) toolMessage(tb testing.TB) *schema.Message {
	tb.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, in := range m.seen {
		if last := in[len(in)-1]; last.Role == schema.Tool {
			return last
		}
	}
	tb.Fatal("the model was given no tool result")
	return nil
}

// toolMessages returns the tool messages of the model's last input that has any.
func (m *scriptedModel) toolMessages(tb testing.TB) []*schema.Message {
	tb.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.seen) - 1; i >= 0; i-- {
		var out []*schema.Message
		for _, msg := range m.seen[i] {
			if msg.Role == schema.Tool {
				out = append(out, msg)
			}
		}
		if out != nil {
			return out
		}
	}
	tb.Fatal("the model was given no tool result")
	return nil
}

// memoryStore is a compose.CheckPointStore in memory.
type memoryStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memoryStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	return b, ok, nil
}

func (s *memoryStore) Set(_ context.Context, id string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[id] = b
	return nil
}

var errNoInterrupt = errors.New("the run did not interrupt")
