package askuser_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

func mustParse(t testing.TB, args string) *Request {
	t.Helper()
	req, err := ParseArguments([]byte(args))
	require.NoError(t, err)
	return req
}

// newTestDispatcher returns a dispatcher on an in-process transport, which New binds:
// every test of it also checks that devices' events reach the dispatcher without a Bind.
func newTestDispatcher(opts *Options) (*Dispatcher, *askusertest.Transport) {
	mt := askusertest.NewTransport()
	return New(mt, opts), mt
}

var oneQuestion = `{"questions":[` + Q1 + `]}`

// answerEvent is a device's answer choosing label for the one question of oneQuestion.
func answerEvent(session SessionID, requestID, label string) wire.Event {
	ev, err := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: requestID, Answers: []Answer{{Question: "Which framework?", SelectedLabels: []string{label}}}})
	if err != nil {
		panic(err)
	}
	return ev
}

func declineEvent(session SessionID, requestID string) wire.Event {
	ev, err := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: requestID, Declined: true})
	if err != nil {
		panic(err)
	}
	return ev
}

// recv returns the device's next event, which must be of type typ, and decodes its data.
func recv[T any](t *testing.T, dev *askusertest.Device, typ string) (wire.Event, T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := dev.Recv(ctx)
	require.NoError(t, err)
	require.Equal(t, typ, ev.Type, "event %s", ev.Data)
	var data T
	require.NoError(t, json.Unmarshal(ev.Data, &data))
	return ev, data
}

// askPending dispatches args in a goroutine and returns once the question is pending,
// with the channel of the call's result.
func askPending(t testing.TB, d *Dispatcher, session SessionID, id, args string) <-chan Result {
	t.Helper()
	ch := dispatchAsync(context.Background(), d, session, id, args)
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; !slices.ContainsFunc(askusertest.Questions(d, session), func(a wire.AskData) bool { return a.RequestID == id }); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("question %s never pending", id)
		}
		if i < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(time.Millisecond)
		}
	}
	return ch
}

// dispatchAsync runs Dispatch in a goroutine and returns the channel of its result.
func dispatchAsync(ctx context.Context, d *Dispatcher, session SessionID, id, args string) <-chan Result {
	ch := make(chan Result, 1)
	go func() {
		ch <- d.Dispatch(ctx, ToolCall{Session: session, ID: id, Name: ToolName, Arguments: json.RawMessage(args)})
	}()
	return ch
}

// TestEveryWayOut runs one call to each of its ends and checks the result the model gets,
// what the host sees, what every device is told, and that nothing is left pending.
func TestEveryWayOut(t *testing.T) {
	type env struct {
		d      *Dispatcher
		mt     *askusertest.Transport
		phone  *askusertest.Device
		laptop *askusertest.Device
		cancel context.CancelFunc
		id     string
	}
	session := IntSession(42)
	for _, tc := range []struct {
		name    string
		opts    Options
		act     func(t *testing.T, e env)
		content string
		outcome Outcome
		err     error
	}{
		{
			name: "answered",
			act: func(t *testing.T, e env) {
				require.NoError(t, e.phone.Send(context.Background(), answerEvent(session, e.id, "React")))
			},
			content: `{"answers":[{"question":"Which framework?","selectedLabels":["React"],"customInput":null}]}`,
			outcome: Answered,
		},
		{
			name: "declined",
			act: func(t *testing.T, e env) {
				require.NoError(t, e.laptop.Send(context.Background(), declineEvent(session, e.id)))
			},
			content: `{"error": "User declined to answer"}`, outcome: Declined, err: ErrDeclined,
		},
		{
			name:    "timeout",
			opts:    Options{Timeout: 2 * time.Minute},
			act:     func(t *testing.T, e env) { time.Sleep(2 * time.Minute) },
			content: `{"error": "User did not respond within timeout"}`, outcome: TimedOut, err: ErrTimeout,
		},
		{
			name:    "session cancelled",
			act:     func(t *testing.T, e env) { assert.Equal(t, 1, e.d.CancelSession(session)) },
			content: `{"error": "Session cancelled"}`, outcome: Cancelled, err: ErrCancelled,
		},
		{
			name:    "caller's context cancelled",
			act:     func(t *testing.T, e env) { e.cancel() },
			content: `{"error": "Session cancelled"}`, outcome: Cancelled, err: context.Canceled,
		},
		{
			name:    "dispatcher closed",
			act:     func(t *testing.T, e env) { require.NoError(t, e.d.Close()) },
			content: `{"error": "The question service is shutting down"}`, outcome: Shutdown, err: ErrClosed,
		},
		{
			name: "last device disconnected",
			opts: Options{FailOnDisconnect: true, DisconnectGrace: 30 * time.Second},
			act: func(t *testing.T, e env) {
				e.phone.Close()
				e.laptop.Close()
				time.Sleep(30 * time.Second)
			},
			content: `{"error": "User disconnected before answering"}`, outcome: Disconnected, err: ErrDisconnected,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var ended []observe.Observation
				opts := tc.opts
				opts.Observer = observe.Hooks{OnEnd: func(e observe.Observation) { ended = append(ended, e) }}
				d, mt := newTestDispatcher(&opts)
				defer d.Close()
				phone, laptop := mt.Connect(session), mt.Connect(session)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				start := time.Now()
				resCh := dispatchAsync(ctx, d, session, "call-1", oneQuestion)

				_, ask := recv[wire.AskData](t, phone, wire.EventAsk)
				_, ask2 := recv[wire.AskData](t, laptop, wire.EventAsk)
				assert.Equal(t, ask, ask2, "every device of the session is asked the same")
				assert.Equal(t, "call-1", ask.RequestID, "the tool-call id is the request id")
				wantTimeout := tc.opts.Timeout
				if wantTimeout == 0 {
					wantTimeout = 5 * time.Minute // the default
				}
				assert.True(t, ask.ExpiresAt.Equal(start.Add(wantTimeout)), "expiresAt %v", ask.ExpiresAt)
				assert.True(t, (len(d.Pending(session)) > 0))
				assert.Equal(t, []wire.AskData{ask}, askusertest.Questions(d, session))

				tc.act(t, env{d: d, mt: mt, phone: phone, laptop: laptop, cancel: cancel, id: ask.RequestID})
				res := <-resCh

				assert.Equal(t, tc.content, res.Content)
				assert.Equal(t, tc.outcome, res.Outcome)
				assert.Equal(t, "call-1", res.RequestID)
				if tc.err == nil {
					assert.NoError(t, res.Err)
					assert.False(t, res.IsError())
					assert.NoError(t, ValidateOutput([]byte(res.Content)))
				} else {
					assert.ErrorIs(t, res.Err, tc.err)
					assert.True(t, res.IsError())
				}
				assert.False(t, (len(d.Pending(session)) > 0))
				assert.Empty(t, askusertest.Questions(d, session))
				assert.Equal(t, 0, d.PendingLen())
				if tc.outcome != Disconnected { // disconnected devices hear nothing more
					for _, dev := range []*askusertest.Device{phone, laptop} {
						_, resolved := recv[wire.ResolvedData](t, dev, wire.EventResolved)
						want := wire.ResolvedData{RequestID: "call-1", Outcome: tc.outcome}
						if tc.outcome == Answered { // every device learns what was chosen
							want.Answers = res.Answers
						}
						assert.Equal(t, want, resolved)
					}
				}
				require.Len(t, ended, 1, "OnEnd runs once")
				assert.Equal(t, tc.outcome, ended[0].Outcome)
				assert.Equal(t, session, ended[0].Session)
			})
		})
	}
}

// failingTransport fails every Send: the question cannot be delivered.
type failingTransport struct{ sends atomic.Int32 }

func (f *failingTransport) Send(context.Context, wire.Event) error {
	f.sends.Add(1)
	return errors.New("link down")
}

func TestSendFailureEndsAtOnce(t *testing.T) {
	ft := &failingTransport{}
	d := New(ft, nil)
	defer d.Close()
	res := d.Dispatch(context.Background(), ToolCall{Session: IntSession(1), Arguments: json.RawMessage(oneQuestion)})
	assert.Equal(t, ResultSendFailed, res.Content)
	assert.Equal(t, Undelivered, res.Outcome)
	assert.ErrorIs(t, res.Err, ErrUndelivered)
	assert.ErrorContains(t, res.Err, "link down")
	assert.Equal(t, 0, d.PendingLen())
	assert.NotEmpty(t, res.RequestID)
}

func TestNoDevicePolicy(t *testing.T) {
	session := StringSession("s")
	d, mt := newTestDispatcher(&Options{FailWithoutDevice: true})
	defer d.Close()
	res := d.Dispatch(context.Background(), ToolCall{Session: session, Arguments: json.RawMessage(oneQuestion)})
	assert.Equal(t, ResultNoDevice, res.Content)
	assert.Equal(t, Undelivered, res.Outcome)
	assert.ErrorIs(t, res.Err, ErrUndelivered)

	// With a device connected, the same policy asks.
	synctest.Test(t, func(t *testing.T) {
		d, mt := newTestDispatcher(&Options{FailWithoutDevice: true})
		defer d.Close()
		dev := mt.Connect(session)
		resCh := dispatchAsync(context.Background(), d, session, "", oneQuestion)
		_, ask := recv[wire.AskData](t, dev, wire.EventAsk)
		require.NoError(t, dev.Send(context.Background(), answerEvent(session, ask.RequestID, "Vue")))
		assert.Equal(t, Answered, (<-resCh).Outcome)
	})

	// The default waits for a device that connects later, and shows it the question.
	synctest.Test(t, func(t *testing.T) {
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		resCh := dispatchAsync(context.Background(), d, session, "", oneQuestion)
		synctest.Wait()
		late := mt.Connect(session)
		_, ask := recv[wire.AskData](t, late, wire.EventAsk)
		require.NoError(t, late.Send(context.Background(), answerEvent(session, ask.RequestID, "Vue")))
		assert.Equal(t, Answered, (<-resCh).Outcome)
	})
	_ = mt
}

func TestInvalidArgumentsBotherNoDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ended []observe.Observation
		d, mt := newTestDispatcher(&Options{Observer: observe.Hooks{OnEnd: func(e observe.Observation) { ended = append(ended, e) }, OnAsk: func(observe.Observation) { t.Error("OnAsk for an invalid call") }}})
		defer d.Close()
		dev := mt.Connect(IntSession(1))
		res := d.Dispatch(context.Background(), ToolCall{Session: IntSession(1), ID: "c1", Arguments: json.RawMessage(`{"questions":[]}`)})
		assert.Equal(t, Invalid, res.Outcome)
		assert.Equal(t, []string{"questions: must have 1 to 4 questions, got 0"}, res.Problems)
		assert.Equal(t, `{"error": "Invalid arguments for ask_user_questions; fix every problem listed and call the tool again", "problems": ["questions: must have 1 to 4 questions, got 0"]}`, res.Content)
		assert.True(t, json.Valid([]byte(res.Content)))
		assert.ErrorIs(t, res.Err, ErrInvalidArguments)
		require.Len(t, ended, 1)
		assert.Equal(t, Invalid, ended[0].Outcome)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := dev.Recv(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "no event reached the device")
	})
}

func TestRefusedAnswerKeepsQuestionOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(7)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		phone, laptop := mt.Connect(session), mt.Connect(session)
		resCh := dispatchAsync(context.Background(), d, session, "", oneQuestion)
		_, ask := recv[wire.AskData](t, phone, wire.EventAsk)
		recv[wire.AskData](t, laptop, wire.EventAsk)

		err := phone.Send(context.Background(), answerEvent(session, ask.RequestID, "Angular"))
		var ae *wire.AnswerError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, ask.RequestID, ae.RequestID)
		assert.Equal(t, []string{`answers[0].selectedLabels[0]: "Angular" is not an option of this question`}, ae.Problems)
		assert.True(t, (len(d.Pending(session)) > 0), "the question stays open")

		require.NoError(t, laptop.Send(context.Background(), answerEvent(session, ask.RequestID, "Vue")))
		res := <-resCh
		assert.Equal(t, []string{"Vue"}, res.Answers[0].SelectedLabels)
		// The refusal was the phone's return value, not an event too; both devices hear the end.
		recv[wire.ResolvedData](t, phone, wire.EventResolved)
		recv[wire.ResolvedData](t, laptop, wire.EventResolved)
	})
}

// TestTwoDevicesAnswerAtOnce races two devices' answers for real, many times: exactly one
// wins, the model gets that one, and the other is told it lost.
func TestTwoDevicesAnswerAtOnce(t *testing.T) {
	CheckNoLeak(t)
	session := StringSession("race")
	d, mt := newTestDispatcher(nil)
	defer d.Close()
	a, b := mt.Connect(session), mt.Connect(session)
	for i := range 200 {
		id := fmt.Sprintf("q%d", i)
		resCh := dispatchAsync(context.Background(), d, session, id, oneQuestion)
		recv[wire.AskData](t, a, wire.EventAsk)
		recv[wire.AskData](t, b, wire.EventAsk)
		var errA, errB error
		var wg sync.WaitGroup
		wg.Go(func() { errA = a.Send(context.Background(), answerEvent(session, id, "Vue")) })
		wg.Go(func() { errB = b.Send(context.Background(), answerEvent(session, id, "React")) })
		wg.Wait()
		res := <-resCh
		require.True(t, (errA == nil) != (errB == nil), "exactly one wins: %v / %v", errA, errB)
		winner := "Vue"
		loser := b
		if errA != nil {
			winner, loser = "React", a
			assert.ErrorIs(t, errA, wire.ErrNotPending)
		} else {
			assert.ErrorIs(t, errB, wire.ErrNotPending)
		}
		assert.Equal(t, []string{winner}, res.Answers[0].SelectedLabels, "the model gets the first valid answer")
		// The loser got its refusal (not_pending) back from Send, and hears the resolution.
		recv[wire.ResolvedData](t, loser, wire.EventResolved)
		other := a
		if loser == a {
			other = b
		}
		recv[wire.ResolvedData](t, other, wire.EventResolved)
	}
	assert.Equal(t, 0, d.PendingLen())
}

// TestAnswerRacesEnds races a valid answer against each other end, for real, and checks
// that whichever happened first is what everyone sees.
func TestAnswerRacesEnds(t *testing.T) {
	CheckNoLeak(t)
	session := IntSession(9)
	for _, rival := range []string{"timeout", "cancel", "caller", "decline", "close"} {
		t.Run(rival, func(t *testing.T) {
			wins := map[Outcome]int{}
			for i := range 100 {
				opts := &Options{Timeout: time.Hour}
				if rival == "timeout" {
					opts.Timeout = time.Duration(i%5) * 50 * time.Microsecond
					if opts.Timeout == 0 {
						opts.Timeout = time.Nanosecond
					}
				}
				d, mt := newTestDispatcher(opts)
				dev := mt.Connect(session)
				ctx, cancel := context.WithCancel(context.Background())
				id := fmt.Sprintf("r%d", i)
				resCh := dispatchAsync(ctx, d, session, id, oneQuestion)
				ev, err := dev.Recv(context.Background())
				require.NoError(t, err)
				require.Equal(t, wire.EventAsk, ev.Type)
				var answerErr error
				var wg sync.WaitGroup
				wg.Go(func() { answerErr = d.Deliver(context.Background(), answerEvent(session, id, "Vue")) })
				wg.Go(func() {
					switch rival {
					case "cancel":
						d.CancelSession(session)
					case "caller":
						cancel()
					case "decline":
						_ = d.Deliver(context.Background(), declineEvent(session, id))
					case "close":
						_ = d.Close()
					}
				})
				wg.Wait()
				res := <-resCh
				wins[res.Outcome]++
				if answerErr == nil {
					assert.Equal(t, Answered, res.Outcome, "the accepted answer is the result")
				} else {
					assert.ErrorIs(t, answerErr, wire.ErrNotPending)
					assert.NotEqual(t, Answered, res.Outcome)
				}
				// Every device hears the same end the model got.
				for {
					ev, err := dev.Recv(context.Background())
					require.NoError(t, err)
					if ev.Type == wire.EventResolved {
						var r wire.ResolvedData
						require.NoError(t, json.Unmarshal(ev.Data, &r))
						assert.Equal(t, res.Outcome, r.Outcome)
						break
					}
				}
				assert.Equal(t, 0, d.PendingLen())
				cancel()
				d.Close()
			}
			t.Logf("%s: %v", rival, wins)
		})
	}
}

func TestAnswerForUnknownOrExpiredRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(1)
		d, mt := newTestDispatcher(&Options{Timeout: time.Minute})
		defer d.Close()
		dev := mt.Connect(session)
		assert.ErrorIs(t, d.Deliver(context.Background(), answerEvent(session, "never-asked", "Vue")), wire.ErrNotPending)

		resCh := dispatchAsync(context.Background(), d, session, "", oneQuestion)
		_, ask := recv[wire.AskData](t, dev, wire.EventAsk)
		time.Sleep(time.Minute)
		assert.Equal(t, TimedOut, (<-resCh).Outcome)
		err := dev.Send(context.Background(), answerEvent(session, ask.RequestID, "Vue"))
		assert.ErrorIs(t, err, wire.ErrNotPending, "an answer after the timeout is refused")
		// The same request id from another session is unknown too.
		resCh = dispatchAsync(context.Background(), d, session, "shared-id", oneQuestion)
		synctest.Wait()
		assert.ErrorIs(t, d.Deliver(context.Background(), answerEvent(IntSession(2), "shared-id", "Vue")), wire.ErrNotPending)
		d.CancelSession(session)
		<-resCh
	})
}

func TestParallelQuestionsInOneSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := StringSession("one")
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		dev := mt.Connect(session)
		labels := map[string]string{"a": "Vue", "b": "React", "c": "Vue"}
		results := map[string]<-chan Result{}
		for _, id := range []string{"a", "b", "c"} {
			results[id] = dispatchAsync(context.Background(), d, session, id, oneQuestion)
			synctest.Wait() // ask in a known order
		}
		var order []string
		for _, p := range askusertest.Questions(d, session) {
			order = append(order, p.RequestID)
		}
		assert.Equal(t, []string{"a", "b", "c"}, order, "pending questions list oldest first")
		for range 3 {
			recv[wire.AskData](t, dev, wire.EventAsk)
		}
		// Answer out of order; each call gets its own answer.
		for _, id := range []string{"b", "c", "a"} {
			require.NoError(t, dev.Send(context.Background(), answerEvent(session, id, labels[id])))
			res := <-results[id]
			assert.Equal(t, id, res.RequestID)
			assert.Equal(t, []string{labels[id]}, res.Answers[0].SelectedLabels)
		}
	})
}

func TestCancelOneSessionLeavesAnother(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := IntSession(1), IntSession(2)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		devA, devB := mt.Connect(a), mt.Connect(b)
		ra1 := dispatchAsync(context.Background(), d, a, "x", oneQuestion)
		ra2 := dispatchAsync(context.Background(), d, a, "y", oneQuestion)
		rb := dispatchAsync(context.Background(), d, b, "x", oneQuestion) // same id, other session
		synctest.Wait()
		assert.Equal(t, 2, d.CancelSession(a))
		assert.Equal(t, Cancelled, (<-ra1).Outcome)
		assert.Equal(t, Cancelled, (<-ra2).Outcome)
		assert.True(t, (len(d.Pending(b)) > 0))
		assert.False(t, (len(d.Pending(a)) > 0))
		assert.Equal(t, 0, d.CancelSession(a), "cancelling again ends nothing")
		recv[wire.AskData](t, devB, wire.EventAsk)
		require.NoError(t, devB.Send(context.Background(), answerEvent(b, "x", "React")))
		assert.Equal(t, Answered, (<-rb).Outcome)
		_ = devA
	})
}

func TestSameIDWaitsOnSameQuestion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(5)
		asks := 0
		d, mt := newTestDispatcher(&Options{Observer: observe.Hooks{OnAsk: func(observe.Observation) { asks++ }}})
		defer d.Close()
		dev := mt.Connect(session)
		first := dispatchAsync(context.Background(), d, session, "tool-call-7", oneQuestion)
		synctest.Wait()
		ctx2, cancel2 := context.WithCancel(context.Background())
		second := dispatchAsync(ctx2, d, session, "tool-call-7", oneQuestion)
		third := dispatchAsync(context.Background(), d, session, "tool-call-7", oneQuestion)
		synctest.Wait()
		assert.Equal(t, 1, asks, "asked once")
		assert.Len(t, askusertest.Questions(d, session), 1)

		// A waiter that gives up does not end the question for the others.
		cancel2()
		assert.Equal(t, Cancelled, (<-second).Outcome)
		assert.True(t, (len(d.Pending(session)) > 0))

		recv[wire.AskData](t, dev, wire.EventAsk)
		require.NoError(t, dev.Send(context.Background(), answerEvent(session, "tool-call-7", "Vue")))
		r1, r3 := <-first, <-third
		assert.Equal(t, r1.Content, r3.Content)
		assert.Equal(t, Answered, r3.Outcome)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		ev, err := dev.Recv(ctx)
		require.NoError(t, err)
		assert.Equal(t, wire.EventResolved, ev.Type)
		_, err = dev.Recv(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "one ask, one resolution")
	})
}

func TestReconnectingDeviceSeesPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(3)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		dev := mt.Connect(session)
		res1 := dispatchAsync(context.Background(), d, session, "first", oneQuestion)
		synctest.Wait()
		res2 := dispatchAsync(context.Background(), d, session, "second", oneQuestion)
		synctest.Wait()
		dev.Close() // keep waiting, by default
		synctest.Wait()
		assert.True(t, (len(d.Pending(session)) > 0))
		again := mt.Connect(session)
		_, a1 := recv[wire.AskData](t, again, wire.EventAsk)
		_, a2 := recv[wire.AskData](t, again, wire.EventAsk)
		assert.Equal(t, []string{"first", "second"}, []string{a1.RequestID, a2.RequestID})
		require.NoError(t, again.Send(context.Background(), answerEvent(session, "second", "Vue")))
		require.NoError(t, again.Send(context.Background(), declineEvent(session, "first")))
		assert.Equal(t, Answered, (<-res2).Outcome)
		assert.Equal(t, Declined, (<-res1).Outcome)
	})
}

func TestDisconnectGraceAllowsReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(4)
		d, mt := newTestDispatcher(&Options{FailOnDisconnect: true, DisconnectGrace: 10 * time.Second})
		defer d.Close()
		dev := mt.Connect(session)
		resCh := dispatchAsync(context.Background(), d, session, "q", oneQuestion)
		recv[wire.AskData](t, dev, wire.EventAsk)
		dev.Close()
		time.Sleep(5 * time.Second)
		back := mt.Connect(session) // back within the grace period
		time.Sleep(4 * time.Second)
		assert.True(t, (len(d.Pending(session)) > 0), "a device came back: keep waiting")
		recv[wire.AskData](t, back, wire.EventAsk)
		back.Close() // gone again at t=9: a whole grace period again, not the first's last second
		left := time.Now()
		res := <-resCh
		assert.Equal(t, 10*time.Second, time.Since(left))
		assert.Equal(t, Disconnected, res.Outcome)
		assert.Equal(t, ResultDisconnected, res.Content)
	})

	// Without a grace period the end is immediate.
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(4)
		d, mt := newTestDispatcher(&Options{FailOnDisconnect: true})
		defer d.Close()
		dev := mt.Connect(session)
		resCh := dispatchAsync(context.Background(), d, session, "q", oneQuestion)
		recv[wire.AskData](t, dev, wire.EventAsk)
		dev.Close()
		assert.Equal(t, Disconnected, (<-resCh).Outcome)
	})
}

func TestDispatchAfterClose(t *testing.T) {
	var ended []observe.Observation
	d, _ := newTestDispatcher(&Options{Observer: observe.Hooks{OnEnd: func(e observe.Observation) { ended = append(ended, e) }}})
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "Close may be called twice")
	res := d.Dispatch(context.Background(), ToolCall{Session: IntSession(1), Arguments: json.RawMessage(oneQuestion)})
	assert.Equal(t, Shutdown, res.Outcome)
	assert.Equal(t, ResultShutdown, res.Content)
	assert.ErrorIs(t, res.Err, ErrClosed)
	require.Len(t, ended, 1)
}

func TestAskValidatesGoRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(8)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		dev := mt.Connect(session)
		res := askusertest.Ask(context.Background(), d, session, "", &Request{Questions: []Question{{Question: "Q?", Header: "H", Options: []Option{{Label: "Other"}}}}})
		assert.Equal(t, Invalid, res.Outcome)
		assert.Contains(t, res.Problems, `questions[0].options[0].label: "Other" duplicates the "Other" choice every client adds with a text box; remove this option`)

		req := &Request{Questions: []Question{{Question: "Deploy now?", Header: "Deploy", Options: []Option{{Label: "Yes", Description: "Ship it"}, {Label: "No", Description: "Wait"}}}}}
		ch := make(chan Result, 1)
		go func() { ch <- askusertest.Ask(context.Background(), d, session, "", req) }()
		_, ask := recv[wire.AskData](t, dev, wire.EventAsk)
		ev, _ := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: ask.RequestID, Answers: []Answer{{Question: "Deploy now?", SelectedLabels: []string{"Yes"}}}})
		require.NoError(t, dev.Send(context.Background(), ev))
		assert.Equal(t, []string{"Yes"}, (<-ch).Answers[0].SelectedLabels)
	})
}

func TestWrapRoutesOnlyItsTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(1)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		dev := mt.Connect(session)
		var passed []ToolCall
		next := func(ctx context.Context, call ToolCall) (string, error) {
			passed = append(passed, call)
			return "ran " + call.Name, nil
		}
		tool := wrap(d, next)
		out, err := tool(context.Background(), ToolCall{Session: session, Name: "read_file", ID: "c1", Arguments: json.RawMessage(`{"path":"x"}`)})
		require.NoError(t, err)
		assert.Equal(t, "ran read_file", out)
		require.Len(t, passed, 1)
		assert.JSONEq(t, `{"path":"x"}`, string(passed[0].Arguments), "other tools pass through untouched")

		go func() {
			_, ask := recv[wire.AskData](t, dev, wire.EventAsk)
			_ = dev.Send(context.Background(), answerEvent(session, ask.RequestID, "Vue"))
		}()
		out, err = tool(context.Background(), ToolCall{Session: session, Name: ToolName, ID: "c2", Arguments: json.RawMessage(oneQuestion)})
		require.NoError(t, err)
		assert.JSONEq(t, `{"answers":[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":null}]}`, out)
		assert.Len(t, passed, 1, "ask_user_questions never reaches the host's dispatcher")

		_, err = wrap(d, nil)(context.Background(), ToolCall{Name: "other"})
		assert.ErrorContains(t, err, `no tool to run "other"`)
	})
}

func TestHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(1)
		var asked []observe.Observation
		var ended []observe.Observation
		d, mt := newTestDispatcher(&Options{
			Timeout:      time.Minute,
			NewRequestID: func() string { return "fixed" },
			Observer: observe.Hooks{
				OnAsk: func(a observe.Observation) { asked = append(asked, a) },
				OnEnd: func(e observe.Observation) { ended = append(ended, e) },
			},
		})
		defer d.Close()
		dev := mt.Connect(session)
		resCh := dispatchAsync(context.Background(), d, session, "", oneQuestion)
		recv[wire.AskData](t, dev, wire.EventAsk)
		time.Sleep(20 * time.Second)
		require.NoError(t, dev.Send(context.Background(), answerEvent(session, "fixed", "Vue")))
		<-resCh
		require.Len(t, asked, 1)
		assert.Equal(t, observe.Observation{Event: observe.Asked, Session: session, RequestID: "fixed", Kind: store.KindQuestion, Questions: 1, ExpiresAt: asked[0].ExpiresAt}, asked[0])
		require.Len(t, ended, 1)
		assert.Equal(t, observe.Observation{Event: observe.Ended, Session: session, RequestID: "fixed", Kind: store.KindQuestion, Outcome: Answered, Waited: 20 * time.Second}, ended[0])
	})
}

func TestDefaultRequestIDsAreRandomUUIDs(t *testing.T) {
	d, _ := newTestDispatcher(&Options{FailWithoutDevice: true})
	defer d.Close()
	seen := map[string]bool{}
	for range 100 {
		res := d.Dispatch(context.Background(), ToolCall{Session: IntSession(1), Arguments: json.RawMessage(oneQuestion)})
		require.Len(t, res.RequestID, 36)
		assert.Equal(t, byte('4'), res.RequestID[14], "version 4 UUID: %s", res.RequestID)
		assert.False(t, seen[res.RequestID])
		seen[res.RequestID] = true
	}
}

// A caller that joins a question and gives up before the one who asked it has even
// started waiting must not end the question for that one.
func TestJoinerLeavingBeforeCreatorWaits(t *testing.T) {
	d, _ := newTestDispatcher(nil)
	defer d.Close()
	session := IntSession(1)
	creator := askPending(t, d, session, "x", oneQuestion)

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	res := d.Dispatch(gone, ToolCall{Session: session, ID: "x", Arguments: json.RawMessage(oneQuestion)})
	assert.Equal(t, Cancelled, res.Outcome)
	assert.True(t, (len(d.Pending(session)) > 0), "the creator still waits")

	require.NoError(t, d.Deliver(context.Background(), answerEvent(session, "x", "Vue")))
	assert.Equal(t, Answered, (<-creator).Outcome)
}

// cancellingTransport cancels the session just before it delivers an ask: the question
// ends while its ask is on its way.
type cancellingTransport struct {
	*askusertest.Transport
	d *Dispatcher
}

func (c *cancellingTransport) Send(ctx context.Context, ev wire.Event) error {
	if ev.Type == wire.EventAsk {
		c.d.CancelSession(ev.SessionID)
	}
	return c.Transport.Send(ctx, ev)
}

// TestResolutionNeverPrecedesAsk: a device must never be told of a question after its
// end, or it would show a panel nobody can answer.
func TestResolutionNeverPrecedesAsk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(1)
		ct := &cancellingTransport{Transport: askusertest.NewTransport()}
		d := New(ct, nil)
		defer d.Close()
		ct.d = d
		dev := ct.Connect(session)
		res := d.Dispatch(context.Background(), ToolCall{Session: session, ID: "q", Arguments: json.RawMessage(oneQuestion)})
		assert.Equal(t, Cancelled, res.Outcome)
		recv[wire.AskData](t, dev, wire.EventAsk)
		_, r := recv[wire.ResolvedData](t, dev, wire.EventResolved)
		assert.Equal(t, Cancelled, r.Outcome)
	})
}

func TestHandleEventTable(t *testing.T) {
	for _, tc := range DeviceCases {
		t.Run(tc.Name, func(t *testing.T) {
			d, _ := newTestDispatcher(nil)
			defer d.Close()
			session := IntSession(123)
			resCh := askPending(t, d, session, "r1", PendingArgs)

			ev, err := wire.ParseEvent([]byte(tc.Msg))
			if err == nil {
				ev.SessionID = session // what an authorizing transport does
				err = d.Deliver(context.Background(), ev)
			}
			if tc.Code == "" {
				require.NoError(t, err)
				assert.False(t, (len(d.Pending(session)) > 0), "an accepted result ends the question")
				<-resCh
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.Err, err.Error())
			assert.Equal(t, tc.Code, ErrorCodeOf(err))
			// Nothing is lost: the question is still pending and can still be answered.
			assert.True(t, (len(d.Pending(session)) > 0))
			ev, err = wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: "r1", Answers: []Answer{
				{Question: "Which framework?", SelectedLabels: []string{"React"}},
				{Question: "Which extras?", SelectedLabels: []string{"Store", "Router"}},
			}})
			require.NoError(t, err)
			require.NoError(t, d.Deliver(context.Background(), ev))
			assert.Equal(t, Answered, (<-resCh).Outcome)
		})
	}
}

// FuzzDeviceMessage: any message from a device either answers the pending question with
// a valid answer, or is refused with a coded error of at most 4 KiB and leaves the
// question pending. A message that answers names its question by the request id
// transports read (Event.RequestID), which a link for one question checks.
func FuzzDeviceMessage(f *testing.F) {
	for _, tc := range DeviceCases {
		if len(tc.Msg) < 4096 {
			f.Add([]byte(tc.Msg))
		}
	}
	f.Add([]byte(`{"type":"ask_user_questions_result","sessionId":123,"data":{"requestId":"r2","requestId":"r1","declined":true}}`))
	req := mustParse(f, PendingArgs)
	f.Fuzz(func(t *testing.T, msg []byte) {
		d, _ := newTestDispatcher(nil)
		defer d.Close()
		session := IntSession(123)
		resCh := askPending(t, d, session, "r1", PendingArgs)
		ev, err := wire.ParseEvent(msg)
		if err == nil {
			ev.SessionID = session
			err = d.Deliver(context.Background(), ev)
		}
		if err != nil {
			if code := ErrorCodeOf(err); code == "internal" {
				t.Fatalf("uncoded error: %v", err)
			}
			if !(len(d.Pending(session)) > 0) {
				t.Fatalf("a refused message ended the question: %v", err)
			}
			out := wire.ErrorEvent(session, ev.RequestID(), err)
			encoded, werr := out.Encode()
			if werr != nil {
				t.Fatal(werr)
			}
			if _, perr := wire.ParseEvent(encoded); perr != nil {
				t.Fatalf("error event does not parse: %v", perr)
			}
			if len(encoded) > 4<<10 {
				t.Fatalf("a %d-byte message got a %d-byte reply", len(msg), len(encoded))
			}
			return
		}
		if id := ev.RequestID(); id != "r1" {
			t.Fatalf("a message that transports read as for %q ended r1", id)
		}
		res := <-resCh
		switch res.Outcome {
		case Declined:
		case Answered:
			if err := ValidateOutput([]byte(res.Content)); err != nil {
				t.Fatalf("accepted answers break the output schema: %v", err)
			}
			if _, problems := CheckAnswers(req.Questions, res.Answers, 0); problems != nil {
				t.Fatalf("accepted answers do not check: %v", problems)
			}
		default:
			t.Fatalf("accepted message ended the question as %v", res.Outcome)
		}
	})
}

// Pending hands out copies: a caller that changes them changes nothing that devices are
// shown or answers are checked against.
func TestPendingReturnsCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(11)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		resCh := dispatchAsync(context.Background(), d, session, "c1", `{"questions":[`+Q1+`],"metadata":{"k":"v"}}`)
		synctest.Wait()
		p := askusertest.Questions(d, session)
		require.Len(t, p, 1)
		p[0].Questions[0].Question = "Delete the database?"
		p[0].Questions[0].Options[0].Label = "Yes"
		p[0].Metadata[2] = 'X'

		_, ask := recv[wire.AskData](t, mt.Connect(session), wire.EventAsk)
		assert.Equal(t, "Which framework?", ask.Questions[0].Question, "a device that joins later is shown what was asked")
		assert.Equal(t, "Vue", ask.Questions[0].Options[0].Label)
		assert.JSONEq(t, `{"k":"v"}`, string(ask.Metadata))
		assert.Equal(t, "Which framework?", askusertest.Questions(d, session)[0].Questions[0].Question)

		dev := mt.Connect(session)
		recv[wire.AskData](t, dev, wire.EventAsk)
		require.NoError(t, dev.Send(context.Background(), answerEvent(session, "c1", "Vue")), "answers are checked against what was asked")
		res := <-resCh
		assert.Equal(t, "Which framework?", res.Answers[0].Question)
	})
}

// Ask keeps its own copy of a Go-built request.
func TestAskKeepsItsOwnCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(12)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		dev := mt.Connect(session)
		req := &Request{Questions: []Question{{Question: "Deploy now?", Header: "Deploy", Options: []Option{{Label: "Yes", Description: "Ship it"}, {Label: "No", Description: "Wait"}}}}}
		ch := make(chan Result, 1)
		go func() { ch <- askusertest.Ask(context.Background(), d, session, "c1", req) }()
		recv[wire.AskData](t, dev, wire.EventAsk)
		req.Questions[0].Question = "Delete staging?" // the caller's own value, after the ask
		req.Questions[0].Options[0].Label = "Sure"
		ev, err := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: "c1", Answers: []Answer{{Question: "Deploy now?", SelectedLabels: []string{"Yes"}}}})
		require.NoError(t, err)
		require.NoError(t, dev.Send(context.Background(), ev))
		res := <-ch
		require.Equal(t, Answered, res.Outcome)
		assert.Equal(t, "Deploy now?", res.Answers[0].Question)
	})
}

// The same tool-call id with different questions must not join the first question: the
// model would get an answer to a question it never asked. It ends at once instead, and
// the first question is left as it is.
func TestSameIDDifferentQuestionsIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(13)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		dev := mt.Connect(session)
		deleteStaging := `{"questions":[{"question":"Delete the staging database?","header":"Staging","options":[{"label":"Delete","description":"Drop it"},{"label":"Keep","description":"Leave it"}],"multiSelect":false}]}`
		keepBackups := `{"questions":[{"question":"Keep the nightly backups?","header":"Backups","options":[{"label":"Delete","description":"Drop them"},{"label":"Keep","description":"Leave them"}],"multiSelect":false}]}`
		first := dispatchAsync(context.Background(), d, session, "call_0", deleteStaging)
		recv[wire.AskData](t, dev, wire.EventAsk)

		second := d.Dispatch(context.Background(), ToolCall{Session: session, ID: "call_0", Arguments: json.RawMessage(keepBackups)})
		assert.Equal(t, Invalid, second.Outcome)
		assert.ErrorIs(t, second.Err, ErrInvalidArguments)
		require.Len(t, second.Problems, 1)
		assert.Contains(t, second.Problems[0], `the tool-call id "call_0" is already asking different questions`)
		assert.Contains(t, second.Content, "call_0")
		assert.Len(t, askusertest.Questions(d, session), 1)
		assert.Equal(t, "Delete the staging database?", askusertest.Questions(d, session)[0].Questions[0].Question, "the first question is untouched")

		// The same questions under the same id still join.
		third := dispatchAsync(context.Background(), d, session, "call_0", deleteStaging)
		synctest.Wait()
		ev, err := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: "call_0", Answers: []Answer{{Question: "Delete the staging database?", SelectedLabels: []string{"Keep"}}}})
		require.NoError(t, err)
		require.NoError(t, dev.Send(context.Background(), ev))
		r1, r3 := <-first, <-third
		assert.Equal(t, Answered, r1.Outcome)
		assert.Equal(t, r1.Content, r3.Content)
	})
}

// Whatever can be asked can be answered: an id that a device
// could not echo is refused at once, and no device is bothered.
func TestUnanswerableRequestsAreRefused(t *testing.T) {
	good := func() *Request {
		return &Request{Questions: []Question{{Question: "Deploy now?", Header: "Deploy", Options: []Option{{Label: "Yes", Description: "Ship it"}, {Label: "No", Description: "Wait"}}}}}
	}
	for _, tc := range []struct {
		name    string
		req     func() *Request
		id      string
		newID   func() string
		problem string
	}{
		{name: "an id of invalid UTF-8", req: good, id: "call\xff", problem: "id: the tool-call id is not valid UTF-8, so no device could answer it; use another id"},
		{name: "an id too long", req: good, id: strings.Repeat("x", wire.MaxRequestIDBytes+1), problem: "id: the tool-call id of 257 bytes is too long; at most 256 bytes are accepted"},
		{name: "an empty id made", req: good, newID: func() string { return "" }, problem: "id: Options.NewRequestID returned an empty id, which no device could answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := IntSession(14)
			d, mt := newTestDispatcher(&Options{NewRequestID: tc.newID})
			defer d.Close()
			dev := mt.Connect(session)
			res := askusertest.Ask(context.Background(), d, session, tc.id, tc.req())
			assert.Equal(t, Invalid, res.Outcome)
			assert.Equal(t, []string{tc.problem}, res.Problems)
			assert.JSONEq(t, InvalidResult([]string{tc.problem}), res.Content)
			assert.False(t, (len(d.Pending(session)) > 0))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := dev.Recv(ctx)
			assert.ErrorIs(t, err, context.Canceled, "no device was bothered")
		})
	}
	// The same ids through Dispatch.
	d, _ := newTestDispatcher(nil)
	defer d.Close()
	res := d.Dispatch(context.Background(), ToolCall{Session: IntSession(1), ID: "c\xff", Arguments: json.RawMessage(oneQuestion)})
	assert.Equal(t, Invalid, res.Outcome)
	assert.Equal(t, "", res.RequestID, "an id that is not valid UTF-8 is not echoed")
}

func TestNewRefusesNegativeOptions(t *testing.T) {
	for _, opts := range []*Options{{Timeout: -1}, {DisconnectGrace: -1}, {MaxCustomInput: -1}} {
		assert.Panics(t, func() { New(askusertest.NewTransport(), opts) }, "%+v", opts)
	}
	assert.NotPanics(t, func() { New(askusertest.NewTransport(), &Options{}).Close() })
}

// Wrap keeps the error flag: the content is the tool result either way, and the error
// says it is an error result, with the outcome's sentinel.
func TestWrapCarriesTheErrorFlag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		session := IntSession(15)
		d, mt := newTestDispatcher(nil)
		defer d.Close()
		dev := mt.Connect(session)
		tool := wrap(d, nil)
		go func() {
			recv[wire.AskData](t, dev, wire.EventAsk)
			_ = dev.Send(context.Background(), declineEvent(session, "c1"))
		}()
		out, err := tool(context.Background(), ToolCall{Session: session, Name: ToolName, ID: "c1", Arguments: json.RawMessage(oneQuestion)})
		assert.Equal(t, ResultDeclined, out)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrDeclined)

		out, err = tool(context.Background(), ToolCall{Session: session, Name: ToolName, ID: "c2", Arguments: json.RawMessage(`{}`)})
		assert.ErrorIs(t, err, ErrInvalidArguments)
		assert.Contains(t, out, `"problems": ["questions: missing required field \"questions\""]`)
	})
}

// wrap runs each call on its own as RunTools runs the calls of a turn, for tests of one
// call at a time: the tool result, and the error.
func wrap(d *Dispatcher, next ToolFunc) ToolFunc {
	return func(ctx context.Context, call ToolCall) (string, error) {
		o := d.RunTools(ctx, []ToolCall{call}, next)[0]
		return o.Content, o.Err
	}
}
