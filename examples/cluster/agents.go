package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/examples/internal/demo"
	"github.com/askuser-go/askuser/wire"
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
	// maxWrites is how many of its last writes a session's key remembers: see update.
	maxWrites = 16
)

// How long the runs bucket is waited for. A stream whose leader dies elects another 4 to
// 9 s later (nats-server's Raft election timeout), and writes and leader reads meanwhile
// get no answer: each request gets tryTimeout, and is tried again until updateTimeout,
// which outlasts an election.
const (
	tryTimeout    = time.Second
	updateTimeout = 30 * time.Second
)

// sessionState is one session's key.
type sessionState struct {
	Session askuser.SessionID `json:"session"`
	Seq     int64             `json:"seq"`
	History []json.RawMessage `json:"history"`
	Queue   []string          `json:"queue,omitempty"`
	Run     *runState         `json:"run,omitempty"`
	// Writes holds a nonce of each of the last writes of the key, so that a write that
	// timed out can tell, once the bucket answers again, whether it was taken.
	Writes []string `json:"writes,omitempty"`
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
	send wire.Transport // the cluster transport: every replica's devices
	log  *slog.Logger

	wg      sync.WaitGroup
	stop    chan struct{} // closed by close: runs waiting to try again give up
	mu      sync.Mutex
	closed  bool
	running map[askuser.SessionID]bool
}

func newAgents(ctx context.Context, nc *nats.Conn, name string, copies int, d *askuser.Dispatcher, send wire.Transport, log *slog.Logger) (*agents, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	if copies <= 0 {
		copies = 1
	}
	kv, err := openRuns(ctx, js, copies)
	if err != nil {
		return nil, fmt.Errorf("opening the runs bucket: %w", err)
	}
	return &agents{name: name, kv: kv, d: d, send: send, log: log, stop: make(chan struct{}), running: make(map[askuser.SessionID]bool)}, nil
}

// openRuns opens the runs bucket, creating its stream or updating it to these settings:
// those nats.go gives a key-value bucket, but without direct gets. A direct get may be
// answered by a follower that has not yet applied the last write, and a run must read
// what was just written (the message that started it, say). Replicas started together
// create it at once, and JetStream may leave some of those requests unanswered: each try
// has tryTimeout, until ctx ends.
func openRuns(ctx context.Context, js jetstream.JetStream, copies int) (jetstream.KeyValue, error) {
	cfg := jetstream.StreamConfig{
		Name:              "KV_" + runsBucket,
		Description:       "askuser demo: transcripts and runs",
		Subjects:          []string{"$KV." + runsBucket + ".>"},
		MaxMsgsPerSubject: 1,
		MaxAge:            24 * time.Hour,
		MaxBytes:          -1,
		MaxMsgs:           -1,
		MaxMsgSize:        -1,
		MaxConsumers:      -1,
		Replicas:          copies,
		AllowRollup:       true,
		DenyDelete:        true,
		Duplicates:        2 * time.Minute,
		Discard:           jetstream.DiscardNew,
		AllowDirect:       false,
	}
	var kv jetstream.KeyValue
	err := retry(ctx, func(ctx context.Context) error {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			return err
		}
		var err error
		kv, err = js.KeyValue(ctx, runsBucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			// Just made, here or by a replica started with this one: a server may not
			// know of it yet.
			return fmt.Errorf("%w: %w", nats.ErrTimeout, err)
		}
		return err
	})
	return kv, err
}

// retry runs try, each time within tryTimeout, until it succeeds, fails other than by
// the bucket not answering, or ctx ends.
func retry(ctx context.Context, try func(context.Context) error) error {
	for {
		tctx, cancel := context.WithTimeout(ctx, tryTimeout)
		err := try(tctx)
		cancel()
		if err == nil || !unanswered(err) || !pause(ctx) {
			return err
		}
	}
}

// pause waits a moment before a request is tried again; false when ctx ends first.
func pause(ctx context.Context) bool {
	select {
	case <-time.After(100 * time.Millisecond):
		return true
	case <-ctx.Done():
		return false
	}
}

// unanswered reports whether err is NATS not answering in time, or JetStream refusing
// for want of a leader or a quorum (code 503): what an election causes, and what trying
// again cures.
func unanswered(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.As(err, &apiErr) && apiErr.Code == 503
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
// again on a conflict, and sends the events f published once saved; it returns the state
// saved. A write that gets no answer (the bucket is electing a leader) may have been
// taken all the same: each write adds a nonce to the state's Writes, and update, reading
// the state again, finds whether one of its own was taken before it applies f again.
func (a *agents) update(s askuser.SessionID, f func(st *sessionState, pub func(typ string, data map[string]any)) error) (sessionState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), updateTimeout)
	defer cancel()
	key := runKey(s)
	unsure := map[string][]wire.Event{} // the events of each write that got no answer
	for {
		st, rev, err := a.read(ctx, s)
		if err != nil {
			return st, err
		}
		for _, w := range st.Writes {
			if events, ok := unsure[w]; ok { // taken after all
				a.sendAll(events)
				return st, nil
			}
		}
		var events []wire.Event
		pub := func(typ string, data map[string]any) {
			st.Seq++
			data["seq"] = st.Seq
			ev, err := wire.NewEvent(typ, s, data)
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
			return st, err
		}
		nonce := rand.Text()
		st.Writes = append(st.Writes, nonce)
		st.Writes = st.Writes[max(0, len(st.Writes)-maxWrites):]
		b, err := json.Marshal(st)
		if err != nil {
			return st, err
		}
		tctx, tcancel := context.WithTimeout(ctx, tryTimeout)
		if rev == 0 {
			_, err = a.kv.Create(tctx, key, b)
		} else {
			_, err = a.kv.Update(tctx, key, b, rev)
		}
		tcancel()
		switch {
		case err == nil:
			a.sendAll(events)
			return st, nil
		case errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch):
			// Changed meanwhile, by another replica or by a write of ours that timed out:
			// again, from what it holds now.
		case unanswered(err) && ctx.Err() == nil:
			unsure[nonce] = events
			pause(ctx)
		default:
			return st, err
		}
	}
}

// read returns the session's state and its revision (0 when it has none), from the
// stream's leader, trying again while the bucket does not answer.
func (a *agents) read(ctx context.Context, s askuser.SessionID) (sessionState, uint64, error) {
	st := sessionState{Session: s}
	var e jetstream.KeyValueEntry
	err := retry(ctx, func(ctx context.Context) error {
		var err error
		e, err = a.kv.Get(ctx, runKey(s))
		return err
	})
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return st, 0, nil
	}
	if err != nil {
		return st, 0, err
	}
	err = json.Unmarshal(e.Value(), &st)
	return st, e.Revision(), err
}

func (a *agents) sendAll(events []wire.Event) {
	for _, ev := range events {
		_ = a.send.Send(context.Background(), ev)
	}
}

// load reads the session's state, waiting up to wait for the bucket.
func (a *agents) load(s askuser.SessionID, wait time.Duration) (sessionState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	st, _, err := a.read(ctx, s)
	return st, err
}

// history is the session's transcript as one history event.
func (a *agents) history(s askuser.SessionID) (wire.Event, error) {
	st, err := a.load(s, 10*time.Second)
	if err != nil {
		return wire.Event{}, err
	}
	data := []byte(`{"events":[`)
	for i, h := range st.History {
		if i > 0 {
			data = append(data, ',')
		}
		data = append(data, h...)
	}
	data = append(data, "]}"...)
	return wire.Event{Type: demo.EventHistory, SessionID: s, Data: data}, nil
}

func (a *agents) waitingState(s askuser.SessionID, queued int) map[string]any {
	state := "running"
	if len(a.d.Pending(s)) > 0 {
		state = "waiting"
	}
	return map[string]any{"state": state, "queued": queued}
}

// message takes a person's message, on whichever replica: it starts a run here, or
// queues the message for the run going on (here or on another replica).
func (a *agents) message(s askuser.SessionID, text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return fmt.Errorf("%w: empty message", wire.ErrMalformedEvent)
	}
	if len(text) > wire.MaxArgumentsBytes+1024 {
		return fmt.Errorf("%w: message too long", wire.ErrMalformedEvent)
	}
	st, err := a.update(s, func(st *sessionState, pub func(string, map[string]any)) error {
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
		return nil
	})
	if err == nil && st.Run != nil && st.Run.Owner == a.name {
		a.spawn(s, "") // started here, or going on here already
	}
	return err
}

// cancel stops the session's run, wherever it runs, drops its queued messages and ends
// its questions on every replica.
func (a *agents) cancel(s askuser.SessionID) error {
	_, err := a.update(s, func(st *sessionState, pub func(string, map[string]any)) error {
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
		if st, lerr := a.load(s, updateTimeout); lerr == nil && st.Run == nil {
			_, _ = a.update(s, func(st *sessionState, pub func(string, map[string]any)) error {
				pub(demo.EventAgentMessage, map[string]any{"text": "Nothing to cancel."})
				return nil
			})
		}
	}
	return err
}

// resume starts again every run this replica owned: after a restart, or a kill.
func (a *agents) resume() {
	ctx, cancel := context.WithTimeout(context.Background(), updateTimeout)
	defer cancel()
	// The whole listing is one try: the lister stops when its try's context ends.
	var keys []string
	if err := retry(ctx, func(ctx context.Context) error {
		keys = keys[:0]
		lister, err := a.kv.ListKeys(ctx)
		if err != nil {
			return err
		}
		for key := range lister.Keys() {
			keys = append(keys, key)
		}
		return ctx.Err() // a listing cut short by its timeout is tried again
	}); err != nil {
		a.log.Warn("runs not resumed: listing them failed", "err", err)
		return
	}
	for _, key := range keys {
		var e jetstream.KeyValueEntry
		if err := retry(ctx, func(ctx context.Context) error {
			var err error
			e, err = a.kv.Get(ctx, key)
			return err
		}); err != nil {
			a.log.Warn("a run not resumed", "key", key, "err", err)
			continue
		}
		var st sessionState
		if json.Unmarshal(e.Value(), &st) == nil && st.Run != nil && st.Run.Owner == a.name {
			a.spawn(st.Session, "after a restart")
		}
	}
}

// spawn runs the session's run in a goroutine, unless it is already running here;
// resumed says why a run that was at a call is taken up again.
func (a *agents) spawn(s askuser.SessionID, resumed string) {
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
		a.loop(s, resumed)
	})
}

func (a *agents) close() {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.stop)
	}
	a.mu.Unlock()
	a.wg.Wait()
}

// errNotMine stops a run that this replica no longer owns.
var errNotMine = errors.New("the run is not this replica's")

// step changes the run, if it is still this replica's; f may publish. It returns the
// run as saved.
func (a *agents) step(s askuser.SessionID, f func(st *sessionState, run *runState, pub func(string, map[string]any))) (runState, error) {
	st, err := a.update(s, func(st *sessionState, pub func(string, map[string]any)) error {
		if st.Run == nil || st.Run.Owner != a.name {
			return errNotMine
		}
		f(st, st.Run, pub)
		return nil
	})
	if err != nil || st.Run == nil {
		return runState{}, err
	}
	return *st.Run, nil
}

// loop carries out the session's run, then each queued message, until none is left.
// When the runs bucket does not take a step for updateTimeout (no quorum, say), the run
// stands as it was last saved: loop takes it up again from there after a pause, as a
// restart would, until the bucket answers or the replica closes.
func (a *agents) loop(s askuser.SessionID, resumed string) {
	wait := time.Second
	for {
		next, err := a.runOnce(s, resumed)
		switch {
		case err == nil && next:
			resumed, wait = "", time.Second
			continue
		case err == nil || errors.Is(err, errNotMine):
			return
		}
		a.log.Warn("a run could not go on; trying again", "session", s.String(), "err", err, "in", wait)
		select {
		case <-time.After(wait):
		case <-a.stop:
			return
		}
		wait = min(2*wait, 10*time.Second)
		resumed = resumedAfterStall
	}
}

// resumedAfterStall is why a run takes up again after its runs bucket did not take a
// step: the transcript says so once the bucket answers, so that the person learns why
// the run paused.
const resumedAfterStall = "after its runs bucket did not answer"

// runOnce carries out the run from where it stands and reports whether another run (a
// queued message) follows; an error when the runs bucket did not take a step.
func (a *agents) runOnce(s askuser.SessionID, resumed string) (bool, error) {
	st, err := a.load(s, updateTimeout)
	if err != nil {
		return false, err
	}
	if st.Run == nil || st.Run.Owner != a.name {
		return false, nil
	}
	plan := demo.PlanFor(st.Run.Text)
	run, err := a.step(s, func(st *sessionState, run *runState, pub func(string, map[string]any)) {
		if !run.Started {
			run.Started = true
			pub(demo.EventStatus, map[string]any{"state": "running", "queued": len(st.Queue)})
			if plan.Intro != "" {
				pub(demo.EventAgentMessage, map[string]any{"text": plan.Intro})
			}
		} else if run.CallID != "" && resumed != "" {
			pub(demo.EventAgentMessage, map[string]any{"text": "Resumed on replica " + a.name + " " + resumed + ": waiting for the same question, with the same tool-call id."})
		} else if resumed == resumedAfterStall {
			pub(demo.EventAgentMessage, map[string]any{"text": "Going on, on replica " + a.name + ", " + resumed + "."})
		}
	})
	if err != nil {
		return false, err
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
				name := s0.Tool
				if name == "" {
					name = askuser.ToolName
				}
				pub(demo.EventToolCall, map[string]any{"requestId": run.CallID, "name": name, "arguments": shown})
				pub(demo.EventStatus, map[string]any{"state": "waiting", "queued": len(st.Queue)})
			})
			if err != nil {
				return false, err
			}
		}
		var (
			result    map[string]any
			say, note string
			goOn, ok  bool
		)
		if s0.Tool != "" {
			// A host tool, through the gate. A run resumed with the same call id gets the
			// decision given meanwhile; the tool then runs here (the demo's tools change
			// nothing, so a replica killed after running one and before recording it
			// runs it again harmlessly: a host's real tools make that idempotent).
			var r askuser.ApprovalResult
			if r, ok = a.approve(s, run.CallID, s0.Tool, s0.Arguments); ok {
				result, say, note, goOn = demo.CallTool(run.CallID, s0.Tool, r)
			}
		} else {
			var res askuser.Result
			if res, ok = a.dispatch(s, run.CallID, s0.Arguments); ok {
				req, _ := askuser.ParseArguments(s0.Arguments)
				say, note, goOn = demo.Reaction(res, req)
				result = map[string]any{
					"requestId": run.CallID, "content": res.Content, "outcome": res.Outcome.String(),
					"isError": res.IsError(), "summary": askuser.Summary(res.Content, "en"),
				}
			}
		}
		if !ok {
			return false, nil // this replica is stopping: the run resumes when it starts again
		}
		run, err = a.step(s, func(st *sessionState, run *runState, pub func(string, map[string]any)) {
			pub(demo.EventToolResult, result)
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
			return false, err
		}
	}
	st, err = a.update(s, func(st *sessionState, pub func(string, map[string]any)) error {
		if st.Run == nil || st.Run.Owner != a.name {
			return errNotMine
		}
		run := st.Run
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
			return nil
		}
		st.Run = nil
		pub(demo.EventStatus, map[string]any{"state": "idle", "queued": 0})
		return nil
	})
	if err != nil {
		return false, err
	}
	return st.Run != nil, nil
}

// approve gates the run's host tool call, as dispatch makes its questions.
func (a *agents) approve(s askuser.SessionID, id, tool string, args json.RawMessage) (askuser.ApprovalResult, bool) {
	return callAgain(a, func() askuser.ApprovalResult {
		return a.d.Approve(context.Background(), askuser.ToolCall{Session: s, ID: id, Name: tool, Arguments: args}, nil)
	}, func(r askuser.ApprovalResult) (askuser.Outcome, error) { return r.Outcome, r.Err })
}

// dispatch makes the run's question.
func (a *agents) dispatch(s askuser.SessionID, id string, args json.RawMessage) (askuser.Result, bool) {
	return callAgain(a, func() askuser.Result {
		return a.d.Dispatch(context.Background(), askuser.ToolCall{Session: s, ID: id, Name: askuser.ToolName, Arguments: args})
	}, func(r askuser.Result) (askuser.Outcome, error) { return r.Outcome, r.Err })
}

// callAgain makes a run's call. A call that NATS did not take (the askuser bucket is
// electing a leader) is made again, with the same tool-call id, after a pause, as a
// resumed run would, for up to a minute; then the model is told it was not delivered.
// It reports false when this replica is stopping.
func callAgain[R any](a *agents, call func() R, how func(R) (askuser.Outcome, error)) (R, bool) {
	deadline := time.Now().Add(time.Minute)
	for {
		r := call()
		switch outcome, err := how(r); {
		case outcome == askuser.Shutdown:
			return r, false
		case outcome != askuser.Undelivered || !errors.Is(err, cluster.ErrUnavailable) || time.Now().After(deadline):
			return r, true
		}
		select {
		case <-time.After(time.Second):
		case <-a.stop:
			return r, false
		}
	}
}
