package askotel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/integrations/askotel"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
)

// telemetry is an observer on the SDK's in-memory parts: a span recorder and a manual
// metric reader.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	obs    *askotel.Observer
}

// another returns an observer of its own on the same providers, as another replica
// of the host has.
func (tel *telemetry) another(t *testing.T) *askotel.Observer {
	t.Helper()
	o, err := askotel.NewObserver(askotel.WithTracerProvider(tel.tp), askotel.WithMeterProvider(tel.mp), askotel.WithPropagators(propagation.TraceContext{}))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func newTelemetry(t *testing.T, opts ...askotel.Option) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	tel.mp = mp
	t.Cleanup(func() { _ = tel.tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	var err error
	tel.obs, err = askotel.NewObserver(append([]askotel.Option{askotel.WithTracerProvider(tel.tp), askotel.WithMeterProvider(mp), askotel.WithPropagators(propagation.TraceContext{})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return tel
}

// metric returns the named metric as collected now.
func (tel *telemetry) metric(t *testing.T, name string) (metricdata.Metrics, bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != askotel.ScopeName || sm.Scope.Version != askotel.Version() {
			t.Fatalf("scope %+v", sm.Scope)
		}
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// span returns the ended span named name whose call id (or request id) is id.
func (tel *telemetry) span(t *testing.T, name, id string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range tel.spans.Ended() {
		if s.Name() != name {
			continue
		}
		for _, kv := range s.Attributes() {
			if (kv.Key == askotel.AttrToolCallID || kv.Key == askotel.AttrRequestID) && kv.Value.AsString() == id {
				return s
			}
		}
	}
	t.Fatalf("no span %q of %s", name, id)
	return nil
}

func attr(s sdktrace.ReadOnlySpan, k attribute.Key) (string, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value.String(), true
		}
	}
	return "", false
}

func events(s sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, e := range s.Events() {
		out = append(out, e.Name)
	}
	return out
}

const question = `{"questions":[{"question":"Deploy now?","header":"Deploy","multiSelect":false,"options":[{"label":"Yes","description":"Ship it"},{"label":"No","description":"Wait"}]}]}`

var policy = &askuser.Policy{
	Deny:  []askuser.Rule{{Tool: "drop_database"}},
	Ask:   []askuser.Rule{{Tool: "delete_branch"}},
	Allow: []askuser.Rule{{Tool: "list_files"}},
}

func answer(s askuser.SessionID, id, label string) wire.Event {
	ev, _ := wire.NewEvent(wire.EventResult, s, wire.ResultData{RequestID: id, Answers: []askuser.Answer{{Question: "Deploy now?", SelectedLabels: []string{label}}}})
	return ev
}

func decide(s askuser.SessionID, id string, data wire.ApprovalResultData) wire.Event {
	data.RequestID = id
	ev, _ := wire.NewEvent(wire.EventApprovalResult, s, data)
	return ev
}

// TestSpansOfEveryOutcome: every call is one execute_tool span, a child of the caller's,
// with the GenAI attributes, error.type for every way but answered and approved, and the
// marks of what happened to its request; arguments and results are not on it.
func TestSpansOfEveryOutcome(t *testing.T) {
	tel := newTelemetry(t)
	mt := askusertest.NewTransport()
	d := askuser.New(mt, &askuser.Options{Observer: tel.obs, Policy: policy, Timeout: time.Hour})
	defer d.Close()
	s := askuser.IntSession(1)
	dev := mt.Connect(s)
	ctx, parent := tel.tp.Tracer("test").Start(context.Background(), "agent turn")

	// Each call, with the device's act that ends it.
	type call struct {
		id, tool, args string
		act            func(id string)
		errorType      string
	}
	waitFor := func(typ string) {
		for {
			ev, err := dev.Recv(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type == typ {
				return
			}
		}
	}
	tool := wrapTool(d, func(_ context.Context, c askuser.ToolCall) (string, error) {
		if strings.Contains(string(c.Arguments), "fail") {
			return "", errors.New("disk on fire")
		}
		return "ran", nil
	})
	for _, c := range []call{
		{"q-answered", askuser.ToolName, question, func(id string) { waitFor(wire.EventAsk); _ = dev.Send(ctx, answer(s, id, "Yes")) }, ""},
		{"q-declined", askuser.ToolName, question, func(id string) {
			waitFor(wire.EventAsk)
			ev, _ := wire.NewEvent(wire.EventResult, s, wire.ResultData{RequestID: id, Declined: true})
			_ = dev.Send(ctx, ev)
		}, "declined"},
		{"q-cancelled", askuser.ToolName, question, func(string) { waitFor(wire.EventAsk); d.CancelSession(s) }, "cancelled"},
		{"q-invalid", askuser.ToolName, `{"questions":[]}`, nil, "invalid"},
		{"a-approved", "delete_branch", `{"name":"x"}`, func(id string) {
			waitFor(wire.EventApproval)
			_ = dev.Send(ctx, decide(s, id, wire.ApprovalResultData{Decision: wire.DecisionApprove}))
		}, ""},
		{"a-edited", "delete_branch", `{"name":"x"}`, func(id string) {
			waitFor(wire.EventApproval)
			_ = dev.Send(ctx, decide(s, id, wire.ApprovalResultData{Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"name":"y"}`)}))
		}, "edited"},
		{"a-denied", "delete_branch", `{"name":"x"}`, func(id string) {
			waitFor(wire.EventApproval)
			_ = dev.Send(ctx, decide(s, id, wire.ApprovalResultData{Decision: wire.DecisionDeny}))
		}, "denied"},
		{"a-rule-denied", "drop_database", `{}`, nil, "denied"},
		{"a-rule-allowed", "list_files", `{}`, nil, ""},
		{"a-tool-failed", "list_files", `{"fail":true}`, nil, "tool_error"},
	} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = tool(ctx, askuser.ToolCall{Session: s, ID: c.id, Name: c.tool, Arguments: json.RawMessage(c.args)})
		}()
		if c.act != nil {
			c.act(c.id)
		}
		<-done
		sp := tel.span(t, "execute_tool "+c.tool, c.id)
		if sp.SpanKind() != trace.SpanKindInternal || sp.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("%s: kind %v, parent %v; want internal, a child of the caller's", c.id, sp.SpanKind(), sp.Parent().SpanID())
		}
		for k, want := range map[attribute.Key]string{askotel.AttrOperationName: "execute_tool", askotel.AttrToolName: c.tool, askotel.AttrToolType: "function", askotel.AttrToolCallID: c.id} {
			if got, _ := attr(sp, k); got != want {
				t.Errorf("%s: %s = %q, want %q", c.id, k, got, want)
			}
		}
		got, has := attr(sp, askotel.AttrErrorType)
		if c.errorType == "" && has || c.errorType != "" && got != c.errorType {
			t.Errorf("%s: error.type %q (%v), want %q", c.id, got, has, c.errorType)
		}
		if _, has := attr(sp, askotel.AttrToolArguments); has {
			t.Errorf("%s: the arguments are on the span without WithContent", c.id)
		}
		ev := events(sp)
		asked := c.act != nil
		if asked && (len(ev) == 0 || ev[0] != "askuser.delivered") {
			t.Errorf("%s: events %v, want delivered first", c.id, ev)
		}
		if !asked && len(ev) != 0 {
			t.Errorf("%s: events %v, want none", c.id, ev)
		}
	}
	parent.End()

	// One timed out, and the duration by kind and outcome.
	short := askuser.New(mt, &askuser.Options{Observer: tel.obs, Timeout: 1100 * time.Millisecond})
	defer short.Close()
	if r := short.Dispatch(ctx, askuser.ToolCall{Session: askuser.IntSession(2), ID: "q-timeout", Name: askuser.ToolName, Arguments: json.RawMessage(question)}); r.Outcome != askuser.TimedOut {
		t.Fatalf("outcome %v", r.Outcome)
	}
	if got, _ := attr(tel.span(t, "execute_tool ask_user_questions", "q-timeout"), askotel.AttrErrorType); got != "timeout" {
		t.Errorf("timed out: error.type %q", got)
	}
	m, ok := tel.metric(t, askotel.MetricRequestDuration)
	if !ok || m.Unit != "s" {
		t.Fatalf("no %s in seconds: %+v", askotel.MetricRequestDuration, m)
	}
	counts := map[string]uint64{}
	for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		k, _ := dp.Attributes.Value(askotel.AttrRequestKind)
		o, _ := dp.Attributes.Value(askotel.AttrOutcome)
		counts[k.AsString()+" "+o.AsString()] += dp.Count
		if _, has := dp.Attributes.Value("askuser.session"); has {
			t.Fatal("a session id as a metric attribute")
		}
	}
	for _, k := range []string{"question answered", "question declined", "question cancelled", "question timeout", "approval approved", "approval edited", "approval denied"} {
		if counts[k] != 1 {
			t.Errorf("%s: %d requests in the duration histogram, want 1 (all: %v)", k, counts[k], counts)
		}
	}
	// Nothing waits any more.
	pending, _ := tel.metric(t, askotel.MetricRequestPending)
	metricdatatest.AssertEqual(t, metricdata.Metrics{
		Name:        askotel.MetricRequestPending,
		Description: pending.Description,
		Unit:        "{request}",
		Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: false, DataPoints: []metricdata.DataPoint[int64]{
			{Attributes: attribute.NewSet(askotel.AttrRequestKind.String("approval")), Value: 0},
			{Attributes: attribute.NewSet(askotel.AttrRequestKind.String("question")), Value: 0},
		}},
	}, pending, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// TestContent: WithContent puts the arguments and the result on the span.
func TestContent(t *testing.T) {
	tel := newTelemetry(t, askotel.WithContent())
	d := askuser.New(askusertest.NewTransport(), &askuser.Options{Observer: tel.obs, Policy: policy})
	defer d.Close()
	tool := wrapTool(d, func(context.Context, askuser.ToolCall) (string, error) { return `{"files":["a"]}`, nil })
	if _, err := tool(context.Background(), askuser.ToolCall{Session: askuser.IntSession(1), ID: "c", Name: "list_files", Arguments: json.RawMessage(`{"dir":"/"}`)}); err != nil {
		t.Fatal(err)
	}
	sp := tel.span(t, "execute_tool list_files", "c")
	if a, _ := attr(sp, askotel.AttrToolArguments); a != `{"dir":"/"}` {
		t.Errorf("arguments %q", a)
	}
	if r, _ := attr(sp, askotel.AttrToolResult); r != `{"files":["a"]}` {
		t.Errorf("result %q", r)
	}
}

// seenAtStart is a sampler that samples everything and keeps the attributes it was
// shown for each span name.
type seenAtStart struct {
	mu   sync.Mutex
	seen map[string][]attribute.KeyValue
}

func (s *seenAtStart) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	s.mu.Lock()
	s.seen[p.Name] = slices.Clone(p.Attributes)
	s.mu.Unlock()
	return sdktrace.AlwaysSample().ShouldSample(p)
}

func (s *seenAtStart) Description() string { return "seenAtStart" }

// TestSamplerSeesAttributes: a sampler deciding by tool is shown the GenAI attributes
// as the span starts.
func TestSamplerSeesAttributes(t *testing.T) {
	sampler := &seenAtStart{seen: map[string][]attribute.KeyValue{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	obs, err := askotel.NewObserver(askotel.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	d := askuser.New(askusertest.NewTransport(), &askuser.Options{Observer: obs, Policy: policy})
	defer d.Close()
	tool := wrapTool(d, func(context.Context, askuser.ToolCall) (string, error) { return "ok", nil })
	if _, err := tool(context.Background(), askuser.ToolCall{Session: askuser.IntSession(1), ID: "c1", Name: "list_files", Arguments: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	want := []attribute.KeyValue{askotel.AttrOperationName.String("execute_tool"), askotel.AttrToolName.String("list_files"), askotel.AttrToolType.String("function"), askotel.AttrToolCallID.String("c1")}
	if got := sampler.seen["execute_tool list_files"]; !slices.Equal(got, want) {
		t.Errorf("the sampler saw %v, want %v", got, want)
	}
}

// quietCalls is a tracer provider whose execute_tool spans record nothing and carry no
// span context, as a no-op tracer's, while its other spans are the SDK's.
type quietCalls struct {
	embedded.TracerProvider
	tp trace.TracerProvider
}

func (q quietCalls) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return quietTracer{real: q.tp.Tracer(name, opts...)}
}

type quietTracer struct {
	embedded.Tracer
	real trace.Tracer
}

func (q quietTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if strings.HasPrefix(name, "execute_tool ") {
		return tracenoop.NewTracerProvider().Tracer("").Start(ctx, name, opts...)
	}
	return q.real.Start(ctx, name, opts...)
}

// TestCallWithoutSpanIsStillLocal: a request asked by a call here whose span records
// nothing (a no-op tracer, say) ends here as this dispatcher's own: no linked span is
// made for it as for a call elsewhere, and its duration is recorded once.
func TestCallWithoutSpanIsStillLocal(t *testing.T) {
	tel := newTelemetry(t)
	obs, err := askotel.NewObserver(askotel.WithTracerProvider(quietCalls{tp: tel.tp}), askotel.WithMeterProvider(tel.mp))
	if err != nil {
		t.Fatal(err)
	}
	mt := askusertest.NewTransport()
	d := askuser.New(mt, &askuser.Options{Observer: obs})
	defer d.Close()
	s := askuser.IntSession(7)
	dev := mt.Connect(s)
	defer dev.Close()
	res := make(chan askuser.Result, 1)
	go func() {
		res <- d.Dispatch(context.Background(), askuser.ToolCall{Session: s, ID: "toolu_quiet", Name: askuser.ToolName, Arguments: json.RawMessage(question)})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := dev.Recv(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dev.Send(ctx, answer(s, "toolu_quiet", "Yes")); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.Outcome != askuser.Answered {
		t.Fatalf("outcome %v", r.Outcome)
	}
	for _, sp := range tel.spans.Ended() {
		t.Errorf("span %q made for a call of this dispatcher", sp.Name())
	}
	m, ok := tel.metric(t, askotel.MetricRequestDuration)
	if !ok {
		t.Fatal("no request duration")
	}
	if h := m.Data.(metricdata.Histogram[float64]); len(h.DataPoints) != 1 || h.DataPoints[0].Count != 1 {
		t.Errorf("request durations %+v", h.DataPoints)
	}
}

// TestHubMetrics: the hub's connections and refusals, by code.
func TestHubMetrics(t *testing.T) {
	tel := newTelemetry(t)
	hub := wshub.New(&wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) {
		return []askuser.SessionID{askuser.IntSession(1)}, nil
	}, Observer: tel.obs})
	d := askuser.New(hub, &askuser.Options{Observer: tel.obs})
	srv := httptest.NewServer(hub)
	defer srv.Close()
	defer hub.Close()
	defer d.Close()
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = ws.Write(ctx, websocket.MessageText, []byte(`{"type":"ask_user_questions_result","data":{"requestId":"nope","answers":[]}}`))
	_, _, _ = ws.Read(ctx) // the refusal
	conns, _ := tel.metric(t, askotel.MetricDeviceConnections)
	metricdatatest.AssertEqual(t, metricdata.Metrics{
		Name: askotel.MetricDeviceConnections, Description: conns.Description, Unit: "{connection}",
		Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.DataPoint[int64]{{Value: 1}}},
	}, conns, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	refusals, _ := tel.metric(t, askotel.MetricDeviceRefusals)
	metricdatatest.AssertEqual(t, metricdata.Metrics{
		Name: askotel.MetricDeviceRefusals, Description: refusals.Description, Unit: "{event}",
		Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: []metricdata.DataPoint[int64]{
			{Attributes: attribute.NewSet(askotel.AttrRefusalCode.String("not_pending")), Value: 1},
		}},
	}, refusals, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	ws.Close(websocket.StatusNormalClosure, "")
	for deadline := time.Now().Add(10 * time.Second); ; {
		conns, _ = tel.metric(t, askotel.MetricDeviceConnections)
		if conns.Data.(metricdata.Sum[int64]).DataPoints[0].Value == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the connection never left")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wrapTool runs each call on its own as RunTools runs the calls of a turn: the tool
// result, and the error.
func wrapTool(d *askuser.Dispatcher, next askuser.ToolFunc) askuser.ToolFunc {
	return func(ctx context.Context, call askuser.ToolCall) (string, error) {
		o := d.RunTools(ctx, []askuser.ToolCall{call}, next)[0]
		return o.Content, o.Err
	}
}

// TestApprovalStepsMarked: each approval of a call that needs two is an event on the
// call's span, before the decision.
func TestApprovalStepsMarked(t *testing.T) {
	tel := newTelemetry(t)
	mt := askusertest.NewTransport()
	two := &askuser.Policy{Ask: []askuser.Rule{{Tool: "delete_branch", Approvers: &askuser.Approvers{Users: []string{"ann", "bob"}, Quorum: 2}}}}
	d := askuser.New(mt, &askuser.Options{Observer: tel.obs, Policy: two, Timeout: time.Hour})
	defer d.Close()
	s := askuser.IntSession(3)
	ann, bob := mt.ConnectAs(s, "ann"), mt.ConnectAs(s, "bob")
	done := make(chan askuser.ApprovalResult, 1)
	go func() {
		done <- d.Approve(context.Background(), askuser.ToolCall{Session: s, ID: "a-two", Name: "delete_branch", Arguments: json.RawMessage(`{"name":"x"}`)}, nil)
	}()
	var digest string
	for {
		ev, err := ann.Recv(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == wire.EventApproval {
			var a wire.ApprovalData
			_ = json.Unmarshal(ev.Data, &a)
			digest = a.Digest
			break
		}
	}
	for _, dev := range []*askusertest.Device{ann, bob} {
		if err := dev.Send(t.Context(), decide(s, "a-two", wire.ApprovalResultData{Decision: wire.DecisionApprove, Digest: digest})); err != nil {
			t.Fatal(err)
		}
	}
	if r := <-done; r.Outcome != askuser.Approved {
		t.Fatalf("outcome %v", r.Outcome)
	}
	got := events(tel.span(t, "execute_tool delete_branch", "a-two"))
	if fmt.Sprint(got) != "[askuser.delivered askuser.approval_recorded askuser.approval_recorded askuser.decided]" {
		t.Fatalf("events %v", got)
	}
}

// TestEscalationMarked: an escalation step is an event on the call's span, with the
// people it added, before the decision.
func TestEscalationMarked(t *testing.T) {
	tel := newTelemetry(t)
	mt := askusertest.NewTransport()
	p := &askuser.Policy{Ask: []askuser.Rule{{Tool: "delete_branch", Approvers: &askuser.Approvers{Users: []string{"ann"},
		Escalate: []store.Escalation{{After: 100 * time.Millisecond, Users: []string{"lead"}}}}}}}
	d := askuser.New(mt, &askuser.Options{Observer: tel.obs, Policy: p, Timeout: time.Hour})
	defer d.Close()
	s := askuser.IntSession(4)
	ann := mt.ConnectAs(s, "ann")
	done := make(chan askuser.ApprovalResult, 1)
	go func() {
		done <- d.Approve(context.Background(), askuser.ToolCall{Session: s, ID: "a-esc", Name: "delete_branch", Arguments: json.RawMessage(`{"name":"x"}`)}, nil)
	}()
	for {
		ev, err := ann.Recv(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == wire.EventApprovalProgress { // the step fired
			break
		}
	}
	if err := ann.Send(t.Context(), decide(s, "a-esc", wire.ApprovalResultData{Decision: wire.DecisionApprove})); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.Outcome != askuser.Approved {
		t.Fatalf("outcome %v", r.Outcome)
	}
	span := tel.span(t, "execute_tool delete_branch", "a-esc")
	if got := events(span); fmt.Sprint(got) != "[askuser.delivered askuser.escalated askuser.decided]" {
		t.Fatalf("events %v", got)
	}
	for _, ev := range span.Events() {
		if ev.Name == "askuser.escalated" && (len(ev.Attributes) != 1 || fmt.Sprint(ev.Attributes[0].Value.AsStringSlice()) != "[lead]") {
			t.Fatalf("askuser.escalated attributes %v; want the lead", ev.Attributes)
		}
	}
}
