package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/examples/internal/demo"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The durable agent: the scripted agent of examples/web, whose state lives in a NATS
// key-value bucket instead of its memory. Each session is one key holding its transcript
// (the events devices are shown, numbered), its queued messages, and its run: the message
// it runs, the step it is at, and the tool-call id of the call it is waiting for. Every
// change is a compare-and-set of that key, so replicas that take messages for the same
// session at once never lose one.
//
// A run belongs to the replica that started it. It makes each call with the id saved
// before the call, so that when the replica is killed and started again it resumes the
// run, makes the same call with the same id and arguments, and gets the answer given
// meanwhile on any replica, or waits for the same question: never a second ask.

const (
	runsBucket      = "askuser_demo_runs"
	maxQueue        = 20
	maxHistory      = 300
	maxHistoryBytes = 256 << 10
)

// sessionState is one session's key.
type sessionState struct {
	Session askuser.SessionID `json:"session"`
	Seq     int64             `json:"seq"`
	History []json.RawMessage `json:"history"`
	Queue   []string          `json:"queue,omitempty"`
	Run     *runState         `json:"run,omitempty"`
}

// runState is where a run stands.
type runState struct {
	Owner string `json:"owner"`
	Text  string `json:"text"`
	// Started is set once the run's first words are said.
	Started bool `json:"started,omitempty"`
	// Step is the call the run is at; CallID its tool-call id once chosen, before the
	// call is made: the id a resumed run calls again with.
	Step      int      `json:"step"`
	CallID    string   `json:"callId,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	Cancelled bool     `json:"cancelled,omitempty"`
}

type agents struct {
	name string
	kv   jetstream.KeyValue
	d    *askuser.Dispatcher
	send askuser.Transport // the cluster transport: every replica's devices

	wg      sync.WaitGroup
	mu      sync.Mutex
	closed  bool
	running map[askuser.SessionID]bool
}

func newAgents(ctx context.Context, nc *nats.Conn, name string, copies int, d *askuser.Dispatcher, send askuser.Transport) (*agents, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	if copies <= 0 {
		copies = 1
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: runsBucket, Description: "askuser demo: transcripts and runs", Replicas: copies, TTL: 24 * time.Hour,
	})
	if err != nil {
		return nil, fmt.Errorf("opening the runs bucket: %w", err)
	}
	return &agents{name: name, kv: kv, d: d, send: send, running: make(map[askuser.SessionID]bool)}, nil
}

func runKey(s askuser.SessionID) string {
	kind := "s"
	if s.IsNumeric() {
		kind = "n"
	}
	var b strings.Builder
	b.WriteString(kind)
	for _, c := range []byte(s.String()) {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "_%02X", c)
		}
	}
	return b.String()
}

// update applies f to the session's state and saves it with a compare-and-set, trying
// again on a conflict; it returns the events f published, to send once saved.
func (a *agents) update(s askuser.SessionID, f func(st *sessionState, pub func(typ string, data map[string]any)) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := runKey(s)
	for {
		var st sessionState
		var rev uint64
		e, err := a.kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			st.Session = s
		case err != nil:
			return err
		default:
			if err := json.Unmarshal(e.Value(), &st); err != nil {
				return err
			}
			rev = e.Revision()
		}
		var events []askuser.Event
		pub := func(typ string, data map[string]any) {
			st.Seq++
			data["seq"] = st.Seq
			ev, err := askuser.NewEvent(typ, s, data)
			if err != nil {
				return
			}
			b, err := ev.Encode()
			if err != nil {
				return
			}
			st.History = append(st.History, b)
			size := 0
			for _, h := range st.History {
				size += len(h)
			}
			for len(st.History) > maxHistory || size > maxHistoryBytes {
				size -= len(st.History[0])
				st.History = st.History[1:]
			}
			events = append(events, ev)
		}
		if err := f(&st, pub); err != nil {
			return err
		}
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		if rev == 0 {
			_, err = a.kv.Create(ctx, key, b)
		} else {
			_, err = a.kv.Update(ctx, key, b, rev)
		}
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			continue // another replica changed it meanwhile: again, from its state
		}
		if err != nil {
			return err
		}
		for _, ev := range events {
			_ = a.send.Send(context.Background(), ev)
		}
		return nil
	}
}

func (a *agents) load(s askuser.SessionID) (sessionState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := sessionState{Session: s}
	e, err := a.kv.Get(ctx, runKey(s))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	err = json.Unmarshal(e.Value(), &st)
	return st, err
}

// history is the session's transcript as one history event.
func (a *agents) history(s askuser.SessionID) (askuser.Event, error) {
	st, err := a.load(s)
	if err != nil {
		return askuser.Event{}, err
	}
	data := []byte(`{"events":[`)
	for i, h := range st.History {
		if i > 0 {
			data = append(data, ',')
		}
		data = append(data, h...)
	}
	data = append(data, "]}"...)
	return askuser.Event{Type: demo.EventHistory, SessionID: s, Data: data}, nil
}

func (a *agents) waitingState(s askuser.SessionID, queued int) map[string]any {
	state := "running"
	if a.d.Waiting(s) {
		state = "waiting"
	}
	return map[string]any{"state": state, "queued": queued}
}

// message takes a person's message, on whichever replica: it starts a run here, or
// queues the message for the run going on (here or on another replica).
func (a *agents) message(s askuser.SessionID, text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return fmt.Errorf("%w: empty message", askuser.ErrMalformedEvent)
	}
	if len(text) > askuser.MaxArgumentsBytes+1024 {
		return fmt.Errorf("%w: message too long", askuser.ErrMalformedEvent)
	}
	start := false
	err := a.update(s, func(st *sessionState, pub func(string, map[string]any)) error {
		start = false
		if st.Run != nil {
			if len(st.Queue) >= maxQueue {
				return fmt.Errorf("demo: %d messages are already queued; wait for the agent", maxQueue)
			}
			st.Queue = append(st.Queue, text)
			pub(demo.EventUserMessage, map[string]any{"text": text, "queued": true})
			pub(demo.EventStatus, a.waitingState(s, len(st.Queue)))
			return nil
		}
		st.Run = &runState{Owner: a.name, Text: text}
		pub(demo.EventUserMessage, map[string]any{"text": text, "queued": false})
		start = true
		return nil
	})
	if err == nil && start {
		a.spawn(s)
	}
	return err
}

// cancel stops the session's run, wherever it runs, drops its queued messages and ends
// its questions on every replica.
func (a *agents) cancel(s askuser.SessionID) error {
	err := a.update(s, func(st *sessionState, pub func(string, map[string]any)) error {
		dropped := len(st.Queue)
		st.Queue = nil
		if st.Run == nil {
			return nil
		}
		st.Run.Cancelled = true
		if dropped > 0 {
			pub(demo.EventAgentMessage, map[string]any{"text": fmt.Sprintf("Cancelling; %d queued message(s) dropped.", dropped)})
		}
		return nil
	})
	if a.d.CancelSession(s) == 0 {
		if st, lerr := a.load(s); lerr == nil && st.Run == nil {
			_ = a.update(s, func(st *sessionState, pub func(string, map[string]any)) error {
				pub(demo.EventAgentMessage, map[string]any{"text": "Nothing to cancel."})
				return nil
			})
		}
	}
	return err
}

// resume starts again every run this replica owned: after a restart, or a kill.
func (a *agents) resume() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys, err := a.kv.ListKeys(ctx)
	if err != nil {
		return
	}
	for key := range keys.Keys() {
		e, err := a.kv.Get(ctx, key)
		if err != nil {
			continue
		}
		var st sessionState
		if json.Unmarshal(e.Value(), &st) == nil && st.Run != nil && st.Run.Owner == a.name {
			a.spawn(st.Session)
		}
	}
}

// spawn runs the session's run in a goroutine, unless it is already running here.
func (a *agents) spawn(s askuser.SessionID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || a.running[s] {
		return
	}
	a.running[s] = true
	a.wg.Go(func() {
		defer func() {
			a.mu.Lock()
			delete(a.running, s)
			a.mu.Unlock()
		}()
		a.loop(s)
	})
}

func (a *agents) close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.wg.Wait()
}

// errNotMine stops a run that this replica no longer owns.
var errNotMine = errors.New("the run is not this replica's")

// step changes the run, if it is still this replica's; f may publish.
func (a *agents) step(s askuser.SessionID, f func(st *sessionState, run *runState, pub func(string, map[string]any))) (runState, error) {
	var out runState
	err := a.update(s, func(st *sessionState, pub func(string, map[string]any)) error {
		if st.Run == nil || st.Run.Owner != a.name {
			return errNotMine
		}
		f(st, st.Run, pub)
		if st.Run != nil {
			out = *st.Run
		}
		return nil
	})
	return out, err
}

// loop carries out the session's run, then each queued message, until none is left.
func (a *agents) loop(s askuser.SessionID) {
	for a.runOnce(s) {
	}
}

// runOnce carries out the run from where it stands and reports whether another run
// (a queued message) follows.
func (a *agents) runOnce(s askuser.SessionID) bool {
	st, err := a.load(s)
	if err != nil || st.Run == nil || st.Run.Owner != a.name {
		return false
	}
	plan := demo.PlanFor(st.Run.Text)
	run, err := a.step(s, func(st *sessionState, run *runState, pub func(string, map[string]any)) {
		if !run.Started {
			run.Started = true
			pub(demo.EventStatus, map[string]any{"state": "running", "queued": len(st.Queue)})
			if plan.Intro != "" {
				pub(demo.EventAgentMessage, map[string]any{"text": plan.Intro})
			}
		} else if run.CallID != "" {
			pub(demo.EventAgentMessage, map[string]any{"text": "Resumed on replica " + a.name + " after a restart: waiting for the same question, with the same tool-call id."})
		}
	})
	if err != nil {
		return false
	}
	for run.Step < len(plan.Steps) && !run.Cancelled {
		s0 := plan.Steps[run.Step]
		if run.CallID == "" {
			run, err = a.step(s, func(st *sessionState, run *runState, pub func(string, map[string]any)) {
				run.CallID = "call_" + rand.Text()
				if s0.Say != "" {
					pub(demo.EventAgentMessage, map[string]any{"text": s0.Say})
				}
				var shown any = s0.Arguments
				if !json.Valid(s0.Arguments) {
					shown = string(s0.Arguments)
				}
				pub(demo.EventToolCall, map[string]any{"requestId": run.CallID, "name": askuser.ToolName, "arguments": shown})
				pub(demo.EventStatus, map[string]any{"state": "waiting", "queued": len(st.Queue)})
			})
			if err != nil {
				return false
			}
		}
		res := a.d.Dispatch(context.Background(), askuser.ToolCall{Session: s, ID: run.CallID, Name: askuser.ToolName, Arguments: s0.Arguments})
		if res.Outcome == askuser.Shutdown {
			return false // this replica is stopping: the run resumes when it starts again
		}
		req, _ := askuser.ParseArguments(s0.Arguments)
		say, note, goOn := demo.Reaction(res, req)
		run, err = a.step(s, func(st *sessionState, run *runState, pub func(string, map[string]any)) {
			pub(demo.EventToolResult, map[string]any{
				"requestId": run.CallID, "content": res.Content, "outcome": res.Outcome.String(),
				"isError": res.IsError(), "summary": res.Summary("en"),
			})
			pub(demo.EventAgentMessage, map[string]any{"text": say})
			if note != "" {
				run.Notes = append(run.Notes, note)
			}
			run.Step++
			run.CallID = ""
			if !goOn {
				run.Step = len(plan.Steps) + 1 // stopped
			}
			pub(demo.EventStatus, map[string]any{"state": "running", "queued": len(st.Queue)})
		})
		if err != nil {
			return false
		}
	}
	next := false
	_, err = a.step(s, func(st *sessionState, run *runState, pub func(string, map[string]any)) {
		switch {
		case run.Cancelled && run.Step <= len(plan.Steps):
			pub(demo.EventAgentMessage, map[string]any{"text": "Run cancelled."})
		case plan.Outro && run.Step == len(plan.Steps) && len(run.Notes) > 0:
			pub(demo.EventAgentMessage, map[string]any{"text": "Thanks! Here is the plan:\n" + strings.Join(run.Notes, "\n")})
		}
		if len(st.Queue) > 0 {
			text := st.Queue[0]
			st.Queue = st.Queue[1:]
			st.Run = &runState{Owner: a.name, Text: text}
			pub(demo.EventAgentMessage, map[string]any{"text": fmt.Sprintf("Now reading the message you sent while I was busy: %q", text)})
			next = true
			return
		}
		st.Run = nil
		pub(demo.EventStatus, map[string]any{"state": "idle", "queued": 0})
	})
	return err == nil && next
}
