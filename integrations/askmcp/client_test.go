package askmcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askmcp"
	"github.com/askuser-go/askuser/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var impl = &mcp.Implementation{Name: "askmcp-test", Version: "v0.0.1"}

var fixedNow = func() time.Time { return time.Date(2026, 12, 3, 10, 30, 0, 0, time.UTC) }

// host is a host that is an MCP client: its elicitations go to askuser devices.
type host struct {
	d       *askuser.Dispatcher
	devices *devices
	session askuser.SessionID
	client  *mcp.Client
}

func newHost(t *testing.T, opts *askmcp.HandlerOptions) *host {
	t.Helper()
	h := &host{devices: newDevices(), session: askuser.IntSession(7)}
	h.d = askuser.New(h.devices, nil)
	t.Cleanup(func() { h.d.Close() })
	if opts == nil {
		opts = &askmcp.HandlerOptions{}
	}
	if opts.Now == nil {
		opts.Now = fixedNow
	}
	h.client = mcp.NewClient(impl, &mcp.ClientOptions{ElicitationHandler: askmcp.ElicitationHandler(h.d, h.session, opts)})
	return h
}

// timedHost is a host whose questions time out after timeout.
func timedHost(t *testing.T, timeout time.Duration) *host {
	h := &host{devices: newDevices(), session: askuser.StringSession("s")}
	h.d = askuser.New(h.devices, &askuser.Options{Timeout: timeout})
	t.Cleanup(func() { h.d.Close() })
	h.client = mcp.NewClient(impl, &mcp.ClientOptions{ElicitationHandler: askmcp.ElicitationHandler(h.d, h.session, nil)})
	return h
}

// connect connects the host's client to server over in-memory transports, with the
// protocol version given (the SDK's newest when empty), and returns the server's side.
func (h *host) connect(t *testing.T, server *mcp.Server, version string) *mcp.ServerSession {
	t.Helper()
	ss, _ := connectPair(t, server, h.client, version)
	return ss
}

// connectPair connects client to server over in-memory transports, with the protocol
// version given (the SDK's newest when empty), and returns both sides, closed when the
// test ends.
func connectPair(t *testing.T, server *mcp.Server, client *mcp.Client, version string) (*mcp.ServerSession, *mcp.ClientSession) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	var copts *mcp.ClientSessionOptions
	if version != "" {
		copts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(t.Context(), ct, copts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return ss, cs
}

func schema(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

type elicited struct {
	res *mcp.ElicitResult
	err error
}

func elicit(ss *mcp.ServerSession, ctx context.Context, p *mcp.ElicitParams) <-chan elicited {
	ch := make(chan elicited, 1)
	go func() {
		res, err := ss.Elicit(ctx, p)
		ch <- elicited{res, err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan elicited) elicited {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("the elicitation did not return")
		return elicited{}
	}
}

// TestElicitationMapping asks forms of every kind the mapping takes, answers them on a
// device, and checks the questions shown and the content the server gets, with its
// JSON types.
func TestElicitationMapping(t *testing.T) {
	for _, c := range []struct {
		name    string
		message string
		schema  string
		// want: the questions asked, as "header|question|multi|label,label,..."
		want    []string
		answers func(a wire.AskData) []askuser.Answer
		content string // the content the server gets, as JSON
	}{{
		name:    "enum with enumNames, required",
		message: "Pick a region.",
		schema:  `{"type":"object","properties":{"region":{"type":"string","title":"Region","enum":["eu","us"],"enumNames":["Europe","United States"]}},"required":["region"]}`,
		want:    []string{"Region|Pick a region.\n\nRegion|false|Europe,United States"},
		answers: func(a wire.AskData) []askuser.Answer {
			return []askuser.Answer{pick(a.Questions[0].Question, "United States")}
		},
		content: `{"region":"us"}`,
	}, {
		name:   "titled oneOf, optional, answered by typing a value",
		schema: `{"type":"object","properties":{"size":{"type":"string","description":"Which size?","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]}}}`,
		want:   []string{"size|Which size?|false|Small,Large,Leave empty"},
		answers: func(a wire.AskData) []askuser.Answer {
			return []askuser.Answer{typed(a.Questions[0].Question, "large")}
		},
		content: `{"size":"l"}`,
	}, {
		name:   "optional field left empty",
		schema: `{"type":"object","properties":{"size":{"type":"string","enum":["s","m","l"]}}}`,
		want:   []string{"size|size|false|s,m,l,Leave empty"},
		answers: func(a wire.AskData) []askuser.Answer {
			return []askuser.Answer{pick(a.Questions[0].Question, "Leave empty")}
		},
		content: `null`, // an empty content is left out on the wire
	}, {
		name:   "multi-select of titled enums",
		schema: `{"type":"object","properties":{"tags":{"type":"array","title":"Tags","description":"Which apply?","items":{"anyOf":[{"const":"a","title":"Alpha"},{"const":"b","title":"Beta"},{"const":"c","title":"Gamma"}]},"minItems":1}},"required":["tags"]}`,
		want:   []string{"Tags|Tags: Which apply?|true|Alpha,Beta,Gamma"},
		answers: func(a wire.AskData) []askuser.Answer {
			return []askuser.Answer{pick(a.Questions[0].Question, "Alpha", "Gamma")}
		},
		content: `{"tags":["a","c"]}`,
	}, {
		name:   "multi-select answering none",
		schema: `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","enum":["x","y"]}}},"required":["tags"]}`,
		want:   []string{"tags|tags|true|x,y,None of these"},
		answers: func(a wire.AskData) []askuser.Answer {
			return []askuser.Answer{pick(a.Questions[0].Question, "None of these")}
		},
		content: `{"tags":[]}`,
	}, {
		name:    "boolean",
		schema:  `{"type":"object","properties":{"ok":{"type":"boolean","title":"Proceed","default":true}},"required":["ok"]}`,
		want:    []string{"Proceed|Proceed|false|Yes,No"},
		answers: func(a wire.AskData) []askuser.Answer { return []askuser.Answer{pick(a.Questions[0].Question, "No")} },
		content: `{"ok":false}`,
	}, {
		name:    "free text, required: typed",
		message: "We need your name.",
		schema:  `{"type":"object","properties":{"name":{"type":"string","title":"Name","description":"Your full name","maxLength":40}},"required":["name"]}`,
		want:    []string{"Name|We need your name.\n\nName: Your full name (type your answer, at most 40 characters)|false|Decline,Not now"},
		answers: func(a wire.AskData) []askuser.Answer {
			return []askuser.Answer{typed(a.Questions[0].Question, "  Ada Lovelace ")}
		},
		content: `{"name":"Ada Lovelace"}`,
	}, {
		name:   "free text with a default",
		schema: `{"type":"object","properties":{"branch":{"type":"string","default":"main"}},"required":["branch"]}`,
		want:   []string{"branch|branch (type your answer)|false|Default: main,Decline"},
		answers: func(a wire.AskData) []askuser.Answer {
			return []askuser.Answer{pick(a.Questions[0].Question, "Default: main")}
		},
		content: `{"branch":"main"}`,
	}, {
		name:   "date",
		schema: `{"type":"object","properties":{"when":{"type":"string","format":"date"}},"required":["when"]}`,
		want:   []string{"when|when (a date, YYYY-MM-DD)|false|Today (2026-12-03),Tomorrow (2026-12-04)"},
		answers: func(a wire.AskData) []askuser.Answer {
			return []askuser.Answer{pick(a.Questions[0].Question, "Tomorrow (2026-12-04)")}
		},
		content: `{"when":"2026-12-04"}`,
	}, {
		name:    "integer with a range, typed",
		schema:  `{"type":"object","properties":{"n":{"type":"integer","title":"Replicas","minimum":1,"maximum":9}},"required":["n"]}`,
		want:    []string{"Replicas|Replicas (a whole number from 1 to 9)|false|1 (minimum),9 (maximum)"},
		answers: func(a wire.AskData) []askuser.Answer { return []askuser.Answer{typed(a.Questions[0].Question, "3")} },
		content: `{"n":3}`,
	}, {
		name:   "number",
		schema: `{"type":"object","properties":{"ratio":{"type":"number"}},"required":["ratio"]}`,
		want:   []string{"ratio|ratio (a number)|false|Decline,Not now"},
		answers: func(a wire.AskData) []askuser.Answer {
			return []askuser.Answer{typed(a.Questions[0].Question, "0.25")}
		},
		content: `{"ratio":0.25}`,
	}, {
		name:    "four fields at once",
		message: "Set up the deployment.",
		schema: `{"type":"object","properties":{
			"env":{"type":"string","enum":["dev","prod"]},
			"notify":{"type":"boolean"},
			"owner":{"type":"string","format":"email"},
			"regions":{"type":"array","items":{"type":"string","enum":["eu","us"]},"minItems":1}},
			"required":["env","regions","owner"]}`,
		want: []string{
			"env|Set up the deployment.\n\nenv|false|dev,prod",
			"regions|regions|true|eu,us",
			"owner|owner (an email address)|false|Decline,Not now",
			"notify|notify|false|Yes,No,Leave empty",
		},
		answers: func(a wire.AskData) []askuser.Answer {
			return []askuser.Answer{
				pick(a.Questions[0].Question, "prod"),
				pick(a.Questions[1].Question, "eu", "us"),
				typed(a.Questions[2].Question, "ops@example.com"),
				pick(a.Questions[3].Question, "Yes"),
			}
		},
		content: `{"env":"prod","notify":true,"owner":"ops@example.com","regions":["eu","us"]}`,
	}, {
		name:    "a message alone is a confirmation",
		message: "Deploy to production?",
		want:    []string{"Confirm|Deploy to production?|false|Accept,Decline"},
		answers: func(a wire.AskData) []askuser.Answer {
			return []askuser.Answer{pick(a.Questions[0].Question, "Accept")}
		},
		content: `null`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			h := newHost(t, nil)
			ss := h.connect(t, mcp.NewServer(impl, nil), "2025-11-25")
			p := &mcp.ElicitParams{Message: c.message}
			if c.schema != "" {
				p.RequestedSchema = schema(t, c.schema)
			}
			done := elicit(ss, t.Context(), p)
			a, _ := h.devices.ask(t, 0)
			var got []string
			for _, q := range a.Questions {
				var labels []string
				for _, o := range q.Options {
					labels = append(labels, o.Label)
				}
				got = append(got, q.Header+"|"+q.Question+"|"+map[bool]string{true: "true", false: "false"}[q.MultiSelect]+"|"+strings.Join(labels, ","))
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("questions:\n got %q\nwant %q", got, c.want)
			}
			if err := answer(t, h.d, h.session, a.RequestID, c.answers(a)...); err != nil {
				t.Fatal(err)
			}
			e := wait(t, done)
			if e.err != nil {
				t.Fatal(e.err)
			}
			if e.res.Action != askmcp.ActionAccept {
				t.Fatalf("action %q", e.res.Action)
			}
			if b, _ := json.Marshal(e.res.Content); string(b) != c.content {
				t.Errorf("content %s, want %s", b, c.content)
			}
		})
	}
}

// TestElicitationEndings checks every way a question ends without an answer, and the
// options that end the form: each gives the server the MCP action it means.
func TestElicitationEndings(t *testing.T) {
	text := `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	for _, c := range []struct {
		name string
		end  func(h *host, a wire.AskData) // ends the question
		want string
	}{
		{"device declines", func(h *host, a wire.AskData) { _ = answer(t, h.d, h.session, a.RequestID) }, askmcp.ActionDecline},
		{"Decline option", func(h *host, a wire.AskData) {
			_ = answer(t, h.d, h.session, a.RequestID, pick(a.Questions[0].Question, "Decline"))
		}, askmcp.ActionDecline},
		{"Not now option", func(h *host, a wire.AskData) {
			_ = answer(t, h.d, h.session, a.RequestID, pick(a.Questions[0].Question, "Not now"))
		}, askmcp.ActionCancel},
		{"session cancelled", func(h *host, a wire.AskData) { h.d.CancelSession(h.session) }, askmcp.ActionCancel},
		{"dispatcher closed", func(h *host, a wire.AskData) { h.d.Close() }, askmcp.ActionCancel},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHost(t, nil)
			ss := h.connect(t, mcp.NewServer(impl, nil), "2025-11-25")
			done := elicit(ss, t.Context(), &mcp.ElicitParams{Message: "Who?", RequestedSchema: schema(t, text)})
			a, _ := h.devices.ask(t, 0)
			c.end(h, a)
			e := wait(t, done)
			if e.err != nil || e.res.Action != c.want {
				t.Fatalf("got %+v, %v; want action %q", e.res, e.err, c.want)
			}
		})
	}

	t.Run("timeout", func(t *testing.T) {
		h := timedHost(t, 50*time.Millisecond)
		ss := h.connect(t, mcp.NewServer(impl, nil), "2025-11-25")
		e := wait(t, elicit(ss, t.Context(), &mcp.ElicitParams{Message: "Who?", RequestedSchema: schema(t, text)}))
		if e.err != nil || e.res.Action != askmcp.ActionCancel {
			t.Fatalf("got %+v, %v; want cancel", e.res, e.err)
		}
	})
}

// TestServerCancelEndsQuestion: when the server gives up on its elicitation, the
// question ends at once on every device, as cancelled.
func TestServerCancelEndsQuestion(t *testing.T) {
	h := newHost(t, nil)
	ss := h.connect(t, mcp.NewServer(impl, nil), "2025-11-25")
	ctx, cancel := context.WithCancel(t.Context())
	done := elicit(ss, ctx, &mcp.ElicitParams{Message: "Deploy?"})
	a, n := h.devices.ask(t, 0)
	cancel()
	r, _ := h.devices.resolved(t, n)
	if r.RequestID != a.RequestID || r.Outcome != askuser.Cancelled {
		t.Fatalf("resolved %+v for %q", r, a.RequestID)
	}
	if e := wait(t, done); !errors.Is(e.err, context.Canceled) {
		t.Fatalf("server side: %+v, %v", e.res, e.err)
	}
	if len(h.d.Pending(h.session)) > 0 {
		t.Fatal("a question is still waiting")
	}
}

// TestUnusableAnswerIsAskedAgain: an answer that does not fit the field asks that field
// again, saying why, keeping the fields answered well; after the last round, cancel.
func TestUnusableAnswerIsAskedAgain(t *testing.T) {
	h := newHost(t, &askmcp.HandlerOptions{MaxRounds: 2})
	ss := h.connect(t, mcp.NewServer(impl, nil), "2025-11-25")
	s := schema(t, `{"type":"object","properties":{"n":{"type":"integer","minimum":1},"ok":{"type":"boolean"}},"required":["n","ok"]}`)
	done := elicit(ss, t.Context(), &mcp.ElicitParams{Message: "Scale", RequestedSchema: s})
	a, n := h.devices.ask(t, 0)
	if err := answer(t, h.d, h.session, a.RequestID, typed(a.Questions[0].Question, "zero"), pick(a.Questions[1].Question, "Yes")); err != nil {
		t.Fatal(err)
	}
	a2, n := h.devices.ask(t, n)
	if len(a2.Questions) != 1 || !strings.HasPrefix(a2.Questions[0].Question, "Your answer \u201czero\u201d is not a number.") {
		t.Fatalf("second round: %+v", a2.Questions)
	}
	if a2.RequestID != a.RequestID+"/2" {
		t.Fatalf("second round id %q", a2.RequestID)
	}
	if err := answer(t, h.d, h.session, a2.RequestID, typed(a2.Questions[0].Question, "4")); err != nil {
		t.Fatal(err)
	}
	e := wait(t, done)
	if e.err != nil || e.res.Action != askmcp.ActionAccept {
		t.Fatalf("got %+v, %v", e.res, e.err)
	}
	if b, _ := json.Marshal(e.res.Content); string(b) != `{"n":4,"ok":true}` {
		t.Fatalf("content %s", b)
	}

	// Two unusable rounds: cancelled.
	done = elicit(ss, t.Context(), &mcp.ElicitParams{Message: "Scale again", RequestedSchema: s})
	a, n = h.devices.ask(t, n)
	_ = answer(t, h.d, h.session, a.RequestID, typed(a.Questions[0].Question, "-1"), pick(a.Questions[1].Question, "No"))
	a2, _ = h.devices.ask(t, n)
	_ = answer(t, h.d, h.session, a2.RequestID, typed(a2.Questions[0].Question, "1.5"))
	if e := wait(t, done); e.err != nil || e.res.Action != askmcp.ActionCancel {
		t.Fatalf("got %+v, %v; want cancel", e.res, e.err)
	}
}

// TestUnsupportedForms: forms the mapping cannot ask get a JSON-RPC error naming why,
// at once; no device is asked.
func TestUnsupportedForms(t *testing.T) {
	for _, c := range []struct{ name, schema, want string }{
		{"21 fields", manyFields(21), "21 properties; at most 20"},
		{"five enum values", `{"type":"object","properties":{"a":{"type":"string","enum":["1","2","3","4","5"]}},"required":["a"]}`, "a: 5 choices; at most 4"},
		{"four values, optional", `{"type":"object","properties":{"a":{"type":"string","enum":["1","2","3","4"]}}}`, "a: 4 choices; at most 3"},
		{"pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"^x"}}}`, `a: "pattern" is not supported`},
		{"exclusive range", `{"type":"object","properties":{"a":{"type":"number","exclusiveMinimum":0}}}`, `a: "exclusiveMinimum" is not supported`},
		{"an option named Other", `{"type":"object","properties":{"a":{"type":"string","enum":["Other","Mine"]}},"required":["a"]}`, `duplicates the "Other" choice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHost(t, nil)
			ss := h.connect(t, mcp.NewServer(impl, nil), "2025-11-25")
			e := wait(t, elicit(ss, t.Context(), &mcp.ElicitParams{Message: "?", RequestedSchema: schema(t, c.schema)}))
			var we *jsonrpc.Error
			if !errors.As(e.err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, c.want) {
				t.Fatalf("got %+v, %v; want an invalid-params error with %q", e.res, e.err, c.want)
			}
			if h.devices.count() != 0 {
				t.Fatalf("a device was sent %d events", h.devices.count())
			}
		})
	}
}

// manyFields is the schema of a form of n optional text fields, f01, f02, ...
func manyFields(n int) string {
	props := make([]string, n)
	for i := range props {
		props[i] = fmt.Sprintf(`"f%02d":{"type":"string"}`, i+1)
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
}

// fiveFields is a form of five fields with defaults, as the conformance suite's
// SEP-1034 scenario sends: more than one question set holds.
const fiveFields = `{"type":"object","properties":{
	"name":{"type":"string","default":"John Doe"},
	"age":{"type":"integer","default":30},
	"score":{"type":"number","default":95.5},
	"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
	"verified":{"type":"boolean","default":true}}}`

// answerFirstPart answers the first part of the fiveFields form: age 41, name Ada,
// the default score, status inactive.
func answerFirstPart(t *testing.T, h *host, a wire.AskData) {
	t.Helper()
	q := a.Questions
	if err := answer(t, h.d, h.session, a.RequestID, typed(q[0].Question, "41"), typed(q[1].Question, "Ada"), pick(q[2].Question, "Default: 95.5"), pick(q[3].Question, "inactive")); err != nil {
		t.Fatal(err)
	}
}

// TestLongFormInParts: a form of more than four fields is asked as consecutive question
// sets of at most four, in the form's order (age, name, score, status; then verified),
// each part saying which it is, and answered with one content; a decline of the second
// part declines the whole form, and a timeout there cancels it.
func TestLongFormInParts(t *testing.T) {
	t.Run("answered", func(t *testing.T) {
		h := newHost(t, nil)
		ss := h.connect(t, mcp.NewServer(impl, nil), "2025-11-25")
		ch := elicit(ss, t.Context(), &mcp.ElicitParams{Message: "Your profile", RequestedSchema: schema(t, fiveFields)})
		a, n := h.devices.ask(t, 0)
		if len(a.Questions) != 4 || !strings.HasPrefix(a.Questions[0].Question, "Your profile (part 1 of 2)") {
			t.Fatalf("first part: %d questions, the first %q", len(a.Questions), a.Questions[0].Question)
		}
		for i, want := range []string{"age", "name", "score", "status"} {
			if a.Questions[i].Header != want {
				t.Fatalf("question %d is %q, want %q", i, a.Questions[i].Header, want)
			}
		}
		answerFirstPart(t, h, a)
		b, _ := h.devices.ask(t, n)
		if b.RequestID != a.RequestID+"/part2" || len(b.Questions) != 1 || b.Questions[0].Header != "verified" || !strings.HasPrefix(b.Questions[0].Question, "Your profile (part 2 of 2)") {
			t.Fatalf("second part: %+v", b)
		}
		if err := answer(t, h.d, h.session, b.RequestID, pick(b.Questions[0].Question, "No")); err != nil {
			t.Fatal(err)
		}
		e := wait(t, ch)
		if e.err != nil || e.res.Action != askmcp.ActionAccept {
			t.Fatalf("got %+v, %v", e.res, e.err)
		}
		got, _ := json.Marshal(e.res.Content)
		if want := `{"age":41,"name":"Ada","score":95.5,"status":"inactive","verified":false}`; string(got) != want {
			t.Fatalf("content %s, want %s", got, want)
		}
	})
	t.Run("second part declined", func(t *testing.T) {
		h := newHost(t, nil)
		ss := h.connect(t, mcp.NewServer(impl, nil), "2025-11-25")
		ch := elicit(ss, t.Context(), &mcp.ElicitParams{Message: "Your profile", RequestedSchema: schema(t, fiveFields)})
		a, n := h.devices.ask(t, 0)
		answerFirstPart(t, h, a)
		b, _ := h.devices.ask(t, n)
		if err := answer(t, h.d, h.session, b.RequestID); err != nil {
			t.Fatal(err)
		}
		if e := wait(t, ch); e.err != nil || e.res.Action != askmcp.ActionDecline || e.res.Content != nil {
			t.Fatalf("got %+v, %v; want decline, no content", e.res, e.err)
		}
	})
	t.Run("second part timed out", func(t *testing.T) {
		h := timedHost(t, 2*time.Second)
		ss := h.connect(t, mcp.NewServer(impl, nil), "2025-11-25")
		ch := elicit(ss, t.Context(), &mcp.ElicitParams{Message: "Your profile", RequestedSchema: schema(t, fiveFields)})
		a, n := h.devices.ask(t, 0)
		answerFirstPart(t, h, a)
		h.devices.ask(t, n) // the second part, left to time out
		if e := wait(t, ch); e.err != nil || e.res.Action != askmcp.ActionCancel || e.res.Content != nil {
			t.Fatalf("got %+v, %v; want cancel, no content", e.res, e.err)
		}
	})
}

// TestSameElicitationJoins: the same elicitation sent again while pending (a server
// retrying) waits on the question already asked; both get the one answer.
func TestSameElicitationJoins(t *testing.T) {
	h := newHost(t, nil)
	entered := make(chan struct{}, 2)
	handler := askmcp.ElicitationHandler(h.d, h.session, nil)
	h.client = mcp.NewClient(impl, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		entered <- struct{}{}
		return handler(ctx, req)
	}})
	ss := h.connect(t, mcp.NewServer(impl, nil), "2025-11-25")
	p := &mcp.ElicitParams{Message: "Proceed?", RequestedSchema: schema(t, `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)}
	first := elicit(ss, t.Context(), p)
	a, _ := h.devices.ask(t, 0)
	<-entered
	second := elicit(ss, t.Context(), p)
	// The second elicitation's question joins the first once its handler has mapped the
	// form, a few microseconds after it is entered; give it ample time.
	<-entered
	time.Sleep(20 * time.Millisecond)
	if err := answer(t, h.d, h.session, a.RequestID, pick(a.Questions[0].Question, "Yes")); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan elicited{first, second} {
		if e := wait(t, ch); e.err != nil || e.res.Content["ok"] != true {
			t.Fatalf("got %+v, %v", e.res, e.err)
		}
	}
	if got := h.devices.count(); got != 2 { // one ask, one resolution
		t.Fatalf("%d events, want 2 (one question asked once)", got)
	}
}

// TestElicitationOverStreamableHTTP: the same path with the server behind go-sdk's
// streamable HTTP handler, on 2025-11-25 (a request during a tool call) and on
// 2026-07-28 (an input request the client fulfils and retries with).
func TestElicitationOverStreamableHTTP(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			h := newHost(t, nil)
			server := mcp.NewServer(impl, nil)
			form := &mcp.ElicitParams{Message: "Which region?", RequestedSchema: schema(t, `{"type":"object","properties":{"region":{"type":"string","enum":["eu","us"]}},"required":["region"]}`)}
			server.AddTool(&mcp.Tool{Name: "deploy", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var res *mcp.ElicitResult
				if version < "2026-07-28" {
					var err error
					if res, err = req.Session.Elicit(ctx, form); err != nil {
						return nil, err
					}
				} else {
					if len(req.Params.InputResponses) == 0 {
						return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"region": form}, RequestState: "s1"}, nil
					}
					res = req.Params.InputResponses["region"].(*mcp.ElicitResult)
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action + ":" + res.Content["region"].(string)}}}, nil
			})
			// go-sdk v1.8.0 serves 2026-07-28 over streamable HTTP only in stateless mode.
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
				&mcp.StreamableHTTPOptions{Stateless: version >= "2026-07-28"}))
			defer hs.Close()
			cs, err := h.client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s", got)
			}
			go func() {
				a, _ := h.devices.ask(t, 0)
				_ = answer(t, h.d, h.session, a.RequestID, pick(a.Questions[0].Question, "us"))
			}()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "accept:us" {
				t.Fatalf("tool result %q", got)
			}
		})
	}
}
