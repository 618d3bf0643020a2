package demo

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// Limits of one session's agent.
const (
	// maxQueue bounds the messages waiting for the current run to end.
	maxQueue = 20
	// maxHistory and maxHistoryBytes bound the events kept to replay to a device that
	// connects: the most recent ones, as many as fit both. An event bigger than
	// maxHistoryBytes on its own is sent but not kept.
	maxHistory      = 300
	maxHistoryBytes = 256 << 10
	// maxMessageBytes bounds a message: enough for /ask with the largest valid arguments.
	maxMessageBytes = wire.MaxArgumentsBytes + 1024
)

// asker is what the agent needs of an [askuser.Dispatcher].
type asker interface {
	Dispatch(ctx context.Context, call askuser.ToolCall) askuser.Result
	Approve(ctx context.Context, call askuser.ToolCall, o *askuser.ApprovalOptions) askuser.ApprovalResult
	Pending(session askuser.SessionID) []store.Record
	CancelSession(session askuser.SessionID) int
}

// agent is the scripted, deterministic "model" of one session. A message starts a run
// when none is going; a message that arrives during a run (typically while the run waits
// for the person's answer, §6.5) is queued and starts the next run once this one ends.
// Everything it does is published to the session's devices as events, and kept to replay
// to a device that connects later.
type agent struct {
	session askuser.SessionID
	tools   asker
	// send delivers an event to every device of the session; it must not block for long.
	send func(wire.Event) error
	// newCallID makes the id of each tool call, as a model would; it becomes the requestId.
	newCallID func() string
	// parent ends every run when the server shuts down; spawn runs a run's goroutine, or
	// reports false when the server is shutting down.
	parent context.Context
	spawn  func(func()) bool

	mu      sync.Mutex
	running bool
	queue   []queued
	stop    context.CancelFunc // cancels the current run
	used    time.Time          // last activity, to evict idle sessions
	// user is who sent the message of the current (or last) run: the Requester of its
	// host tool calls, whose own approval does not count where duties are separate.
	user string

	pub          sync.Mutex // orders publishing: seq, history and the sends follow one order
	seq          int64
	history      [][]byte // the events kept, each encoded once, oldest first
	historyBytes int
	// historyEvent is the EventHistory of history, built on the first replay after a
	// publish and shared by every device that connects until the next one.
	historyEvent *wire.Event
}

func newAgent(parent context.Context, spawn func(func()) bool, session askuser.SessionID, tools asker, send func(wire.Event) error) *agent {
	return &agent{
		session:   session,
		tools:     tools,
		send:      send,
		newCallID: newCallID,
		parent:    parent,
		spawn:     spawn,
		used:      time.Now(),
	}
}

// newCallID returns an unguessable tool-call id, like the ids models give their calls:
// a device that knows a requestId of its session can answer it.
func newCallID() string {
	return "call_" + rand.Text()
}

// publish sends an event of the given type to the session's devices and records it.
// Each event's data carries a "seq", increasing per session, so that a device can tell
// the replayed history from live events.
func (a *agent) publish(typ string, data map[string]any) {
	a.pub.Lock()
	defer a.pub.Unlock()
	a.seq++
	data["seq"] = a.seq
	ev, err := wire.NewEvent(typ, a.session, data)
	if err != nil {
		return // every value published here encodes
	}
	if b, err := ev.Encode(); err == nil && len(b) <= maxHistoryBytes {
		a.history = append(a.history, b)
		a.historyBytes += len(b)
		drop := 0
		for len(a.history)-drop > maxHistory || a.historyBytes > maxHistoryBytes {
			a.historyBytes -= len(a.history[drop])
			drop++
		}
		if drop > 0 {
			a.history = append(a.history[:0:0], a.history[drop:]...)
		}
		a.historyEvent = nil
	}
	_ = a.send(ev) // no device now is fine: one that connects gets the history
}

// replay sends one device, through send, every event kept so far as one EventHistory.
// It holds the publishing lock meanwhile, so that the history and the live events that
// follow it reach the device in order; the status events in it tell the current state.
// The history event is built once and shared until the next event is published.
func (a *agent) replay(send func(wire.Event) error) error {
	a.pub.Lock()
	defer a.pub.Unlock()
	if a.historyEvent == nil {
		data := make([]byte, 0, a.historyBytes+len(a.history)+16)
		data = append(data, `{"events":[`...)
		for i, b := range a.history {
			if i > 0 {
				data = append(data, ',')
			}
			data = append(data, b...)
		}
		data = append(data, "]}"...)
		a.historyEvent = &wire.Event{Type: EventHistory, SessionID: a.session, Data: data}
	}
	return send(*a.historyEvent)
}

func (a *agent) say(text string) {
	a.publish(EventAgentMessage, map[string]any{"text": text})
}

// status returns the agent's state: "idle", "running", or "waiting" (for the person), and
// how many messages are queued.
func (a *agent) status() (string, int) {
	a.mu.Lock()
	running, queued := a.running, len(a.queue)
	a.mu.Unlock()
	switch {
	case !running:
		return "idle", queued
	case len(a.tools.Pending(a.session)) > 0:
		return "waiting", queued
	}
	return "running", queued
}

func (a *agent) publishStatus(state string, queued int) {
	a.publish(EventStatus, map[string]any{"state": state, "queued": queued})
}

// queued is a message that waits for the current run to end, and who sent it.
type queued struct{ user, text string }

// message takes a message from no one in particular: see messageAs.
func (a *agent) message(text string) error { return a.messageAs("", text) }

// messageAs takes a message from user (the person the device is: "" when the transport
// names none): it starts a run, or queues the message while one is going.
func (a *agent) messageAs(user, text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return fmt.Errorf("%w: empty message", wire.ErrMalformedEvent)
	}
	if len(text) > maxMessageBytes {
		return fmt.Errorf("%w: message longer than %d bytes", wire.ErrMalformedEvent, maxMessageBytes)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.used = time.Now()
	if a.parent.Err() != nil {
		return askuser.ErrClosed
	}
	if a.running {
		if len(a.queue) >= maxQueue {
			return fmt.Errorf("demo: %d messages are already queued; wait for the agent", maxQueue)
		}
		a.queue = append(a.queue, queued{user, text})
		a.publish(EventUserMessage, map[string]any{"text": text, "queued": true})
		// Waiting tells why it is queued: the agent waits for the person's answer (§6.5).
		state := "running"
		if len(a.tools.Pending(a.session)) > 0 {
			state = "waiting"
		}
		a.publishStatus(state, len(a.queue))
		return nil
	}
	a.publish(EventUserMessage, map[string]any{"text": text, "queued": false})
	ctx, stop := context.WithCancel(a.parent)
	a.running = true
	a.stop = stop
	a.user = user
	// The run starts with a.mu held here, so it sees itself running.
	if !a.spawn(func() { a.loop(ctx, text) }) {
		a.running = false
		a.stop = nil
		stop()
		return askuser.ErrClosed
	}
	return nil
}

// cancel stops the current run, ends the session's pending questions, and drops the
// queued messages.
func (a *agent) cancel() {
	a.mu.Lock()
	a.used = time.Now()
	dropped := len(a.queue)
	a.queue = nil
	stop, running := a.stop, a.running
	a.stop = nil
	a.mu.Unlock()
	if running && dropped > 0 {
		// Said before stopping, so that it comes before the run's own last words.
		a.say(fmt.Sprintf("Cancelling; %d queued message(s) dropped.", dropped))
	}
	if stop != nil {
		stop()
	}
	// The run's waiting call ends as cancelled either way; CancelSession also ends any
	// question of the session asked by someone else than this run.
	ended := a.tools.CancelSession(a.session)
	if !running && ended == 0 {
		a.say("Nothing to cancel.")
	}
}

// loop runs text, then each queued message in turn, until the queue is empty.
func (a *agent) loop(ctx context.Context, text string) {
	for {
		a.run(ctx, text)
		a.mu.Lock()
		a.used = time.Now()
		if len(a.queue) == 0 || a.parent.Err() != nil {
			a.running = false
			if a.stop != nil {
				a.stop()
				a.stop = nil
			}
			a.publishStatus("idle", 0)
			a.mu.Unlock()
			return
		}
		if ctx.Err() != nil {
			// Cancelled, and messages came after the cancel: they get a fresh run.
			var stop context.CancelFunc
			ctx, stop = context.WithCancel(a.parent)
			a.stop = stop
		}
		text = a.queue[0].text
		a.user = a.queue[0].user
		a.queue = a.queue[1:]
		a.mu.Unlock()
		a.say(fmt.Sprintf("Now reading the message you sent while I was busy: %q", text))
	}
}

// run carries out the plan for one message.
func (a *agent) run(ctx context.Context, text string) {
	p := planFor(text)
	_, queued := a.status()
	a.publishStatus("running", queued)
	if p.intro != "" {
		a.say(p.intro)
	}
	var notes []string
	for _, s := range p.steps {
		if ctx.Err() != nil {
			a.say("Run cancelled.")
			return
		}
		if s.say != "" {
			a.say(s.say)
		}
		stepNotes, goOn := a.turn(ctx, append([]step{s}, s.with...))
		notes = append(notes, stepNotes...)
		if !goOn {
			return
		}
	}
	if p.outro && len(notes) > 0 {
		a.say("Thanks! Here is the plan:\n" + strings.Join(notes, "\n"))
	}
}

// publishCall publishes a tool call as a transcript shows it, with the arguments as the
// "model" wrote them (a string when they are not JSON), and returns its id.
func (a *agent) publishCall(name string, arguments json.RawMessage) string {
	id := a.newCallID()
	var shown any = arguments
	if !json.Valid(arguments) {
		shown = string(arguments)
	}
	a.publish(EventToolCall, map[string]any{
		"requestId": id,
		"name":      name,
		"arguments": shown,
	})
	return id
}

// turn makes a step's calls together, as a model's parallel tool calls of one turn:
// every call is published first, then they are made at once, and the agent reads their
// results in order once all have come. It returns the notes for the plan, and whether
// the run goes on.
func (a *agent) turn(ctx context.Context, calls []step) (notes []string, goOn bool) {
	ids := make([]string, len(calls))
	for i, c := range calls {
		name := c.tool
		if name == "" {
			name = askuser.ToolName
		}
		ids[i] = a.publishCall(name, c.arguments)
	}
	type reading struct {
		say, note string
		goOn      bool
	}
	readings := make([]reading, len(calls))
	read := func(i int) {
		r := &readings[i]
		if calls[i].tool == "" {
			r.say, r.note, r.goOn = a.ask(ctx, ids[i], calls[i].arguments)
		} else {
			r.say, r.note, r.goOn = a.callTool(ctx, ids[i], calls[i].tool, calls[i].arguments)
		}
	}
	if len(calls) == 1 {
		read(0)
	} else {
		var wg sync.WaitGroup
		for i := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				read(i)
			}()
		}
		wg.Wait()
	}
	goOn = true
	for _, r := range readings {
		a.say(r.say)
		if r.note != "" {
			notes = append(notes, r.note)
		}
		goOn = goOn && r.goOn
	}
	return notes, goOn
}

// ask makes the ask_user_questions call id through the dispatcher, publishing its
// result as a transcript would show it, and returns the agent's reading of it.
func (a *agent) ask(ctx context.Context, id string, arguments json.RawMessage) (say, note string, goOn bool) {
	_, queued := a.status()
	a.publishStatus("waiting", queued)
	res := a.tools.Dispatch(ctx, askuser.ToolCall{
		Session:   a.session,
		ID:        id,
		Name:      askuser.ToolName,
		Arguments: arguments,
	})
	a.publish(EventToolResult, map[string]any{
		"requestId": id,
		"content":   res.Content,
		"outcome":   res.Outcome.String(),
		"isError":   res.IsError(),
		"summary":   askuser.Summary(res.Content, "en"),
	})
	a.publishStatus(a.status())
	req, _ := askuser.ParseArguments(arguments)
	return reaction(res, req)
}

// callTool makes the call id of a host tool: through the gate of the dispatcher's
// policy ([askuser.Dispatcher.Approve]), and, when it may run, the tool itself with the
// arguments it may run with. It publishes the result the model reads, and returns the
// agent's reading of it. The dispatcher tells the devices when the call waits for the
// person (see Server's transport).
func (a *agent) callTool(ctx context.Context, id, name string, arguments json.RawMessage) (say, note string, goOn bool) {
	requester := a.requester()
	r := a.tools.Approve(ctx, askuser.ToolCall{Session: a.session, ID: id, Name: name, Arguments: arguments, Requester: requester}, nil)
	data, say, note, goOn := callTool(id, name, requester, r)
	a.publish(EventToolResult, data)
	a.publishStatus(a.status())
	return say, note, goOn
}

// reaction is the scripted agent's reading of a question's tool result: what it says,
// the note for its plan, and whether it goes on.
func reaction(res askuser.Result, req *askuser.Request) (say, note string, goOn bool) {
	switch res.Outcome {
	case askuser.Answered:
		note := describeAnswers(res.Answers, req)
		return "Noted: " + note + ".", note, true
	case askuser.Declined:
		return "You would rather not answer that; I will go with my recommendation.", headersOf(req) + ": my recommendation (you declined)", true
	case askuser.TimedOut:
		return "No answer in time; I will go with my recommendation.", headersOf(req) + ": my recommendation (no answer in time)", true
	case askuser.Invalid:
		return "My call was invalid, so nobody was asked:\n- " + strings.Join(res.Problems, "\n- "), "", false
	case askuser.Cancelled:
		return "Run cancelled.", "", false
	}
	return "Stopping: " + res.Content, "", false
}

// describeAnswers renders answers as "Header → choice, choice; Header → Other: text".
func describeAnswers(answers []askuser.Answer, req *askuser.Request) string {
	headers := make(map[string]string)
	if req != nil {
		for _, q := range req.Questions {
			headers[q.Question] = q.Header
		}
	}
	parts := make([]string, 0, len(answers))
	for _, ans := range answers {
		choices := append([]string(nil), ans.SelectedLabels...)
		if ans.CustomInput != nil {
			choices = append(choices, fmt.Sprintf("Other: %q", *ans.CustomInput))
		}
		name := headers[ans.Question]
		if name == "" {
			name = ans.Question
		}
		parts = append(parts, name+" → "+strings.Join(choices, ", "))
	}
	return strings.Join(parts, "; ")
}

func headersOf(req *askuser.Request) string {
	if req == nil {
		return "?"
	}
	hs := make([]string, 0, len(req.Questions))
	for _, q := range req.Questions {
		if q.Header == "" { // a question without a header goes by its text
			hs = append(hs, q.Question)
			continue
		}
		hs = append(hs, q.Header)
	}
	return strings.Join(hs, ", ")
}

// requester returns who sent the message of the current, or last, run.
func (a *agent) requester() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.user
}

// idleSince reports whether the agent has no run and when it was last used.
func (a *agent) idleSince() (bool, time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.running, a.used
}
