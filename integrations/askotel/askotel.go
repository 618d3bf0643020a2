// Package askotel instruments askuser with OpenTelemetry: an [observe.Observer] that
// makes an execute_tool span of every tool call askuser runs (the GenAI semantic
// conventions), marks on it what happened to its request, links a request ended on
// another replica to the span that asked, and records the metrics an operator asks
// for: how long people take to answer, how many requests wait, how many devices are
// connected, and which are refused.
//
//	obs, err := askotel.NewObserver() // the global providers; or WithTracerProvider, ...
//	d := askuser.New(hub, &askuser.Options{Observer: obs})
//	hub := wshub.New(&wshub.Options{Authorize: authorize, Observer: obs})
//
// It follows the OpenTelemetry Go contrib rules for instrumentation: options for the
// tracer provider, the meter provider and the propagators, defaulting to the globals;
// [ScopeName] and [Version]. docs/OBSERVABILITY.md lists every span, attribute and
// metric.
package askotel

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/askuser-go/askuser/integrations/askotel"

// Version is the version of this instrumentation.
func Version() string { return "0.1.0" }

// The attribute keys, defined here: semconv dropped the GenAI keys after v1.41.0, when
// they moved to their own repository, where they are still at Development stability.
const (
	AttrOperationName = attribute.Key("gen_ai.operation.name")
	AttrToolName      = attribute.Key("gen_ai.tool.name")
	AttrToolCallID    = attribute.Key("gen_ai.tool.call.id")
	AttrToolType      = attribute.Key("gen_ai.tool.type")
	AttrToolArguments = attribute.Key("gen_ai.tool.call.arguments")
	AttrToolResult    = attribute.Key("gen_ai.tool.call.result")
	AttrErrorType     = attribute.Key("error.type")
	AttrRequestKind   = attribute.Key("askuser.request.kind")
	AttrRequestID     = attribute.Key("askuser.request.id")
	AttrOutcome       = attribute.Key("askuser.outcome")
	AttrRefusalCode   = attribute.Key("askuser.refusal.code")
)

// The metrics' names.
const (
	MetricRequestDuration     = "askuser.request.duration"
	MetricRequestPending      = "askuser.request.pending"
	MetricDeviceConnections   = "askuser.device.connection.count"
	MetricDeviceRefusals      = "askuser.device.refusals"
	MetricExecuteToolDuration = "gen_ai.execute_tool.duration"
)

// humanWaits are the buckets of how long a person takes, in seconds: 1 s to 1 h.
var humanWaits = []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600}

// toolRuns are the buckets of a tool call's whole run, in seconds: a tool that runs at
// once, to one that waits an hour for its person.
var toolRuns = []float64{0.005, 0.025, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// Option configures [NewObserver].
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	tp      trace.TracerProvider
	mp      metric.MeterProvider
	prop    propagation.TextMapPropagator
	content bool
}

// WithTracerProvider sets the tracer provider. Default: the global one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tp = tp })
}

// WithMeterProvider sets the meter provider. Default: the global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.mp = mp })
}

// WithPropagators sets the propagators that carry a request's trace context in the
// store, for the replica that ends it. Default: the global ones.
func WithPropagators(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) { c.prop = p })
}

// WithContent puts a call's arguments and its result on its span
// (gen_ai.tool.call.arguments, gen_ai.tool.call.result). They are the person's words
// and the model's: off by default.
func WithContent() Option {
	return optionFunc(func(c *config) { c.content = true })
}

// Observer is the [observe.Observer] of OpenTelemetry. Give the same one to the
// dispatcher and to its transport. Its methods may be called concurrently.
type Observer struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	cfg    config

	requestDuration metric.Float64Histogram
	refusals        metric.Int64Counter
	toolDuration    metric.Float64Histogram

	// pending and connections are counted here and reported by the SDK's callbacks,
	// as it collects: an atomic add is all a request or a connection costs.
	pending     [kinds]gauge
	connections gauge

	// sets are the metrics' attribute sets, made once: by kind, by kind and outcome, and
	// by tool and error type.
	sets *attrSets

	// spans are the execute_tool spans of the requests this dispatcher made, while they
	// wait: what happens to a request elsewhere (a device's refused answer, the notice)
	// is marked on its span.
	mu    sync.Mutex
	spans map[spanKey]trace.Span
}

type spanKey struct {
	session askuser.SessionID
	id      string
}

// kinds is one past the largest Kind: KindQuestion and KindApproval.
const kinds = int(store.KindApproval) + 1

// outcomes is one past the largest Outcome.
const outcomes = int(askuser.Denied) + 1

// gauge is an up-down count kept here, reported once it has been touched: as a
// synchronous up-down counter reports an attribute set only once it has been measured.
type gauge struct {
	n       atomic.Int64
	touched atomic.Bool
}

func (g *gauge) add(n int64) {
	g.n.Add(n)
	if !g.touched.Load() {
		g.touched.Store(true)
	}
}

// attrSets holds the metrics' measurement options, whose attribute values are few:
// made once, read without a lock, measuring with them costs no allocation.
type attrSets struct {
	byKind [kinds]metric.MeasurementOption
	byEnd  [kinds][outcomes]metric.MeasurementOption
	// answered is the option of an ask_user_questions call that ended without an
	// error, the most frequent, looked up without hashing.
	answered metric.MeasurementOption
	byTool   sync.Map // toolKey -> metric.MeasurementOption
	tools    atomic.Int32
}

type toolKey struct{ tool, errorType string }

// maxToolSets bounds the tool names cached; past it, options are made for each call.
const maxToolSets = 1024

func newAttrSets() *attrSets {
	c := &attrSets{}
	for k := store.KindQuestion; int(k) < kinds; k++ {
		c.byKind[k] = metric.WithAttributeSet(kindSet(k))
		for o := askuser.Answered; int(o) < outcomes; o++ {
			c.byEnd[k][o] = metric.WithAttributeSet(endSet(k, o))
		}
	}
	c.answered = metric.WithAttributeSet(attribute.NewSet(AttrOperationName.String("execute_tool"), AttrToolName.String(askuser.ToolName)))
	return c
}

func kindSet(k store.Kind) attribute.Set {
	return attribute.NewSet(AttrRequestKind.String(k.String()))
}

func endSet(k store.Kind, o askuser.Outcome) attribute.Set {
	return attribute.NewSet(AttrRequestKind.String(k.String()), AttrOutcome.String(o.String()))
}

func (c *attrSets) end(k store.Kind, o askuser.Outcome) metric.MeasurementOption {
	if k > 0 && int(k) < kinds && o > 0 && int(o) < outcomes {
		return c.byEnd[k][o]
	}
	return metric.WithAttributeSet(endSet(k, o))
}

func (c *attrSets) tool(tool, errorType string) metric.MeasurementOption {
	if tool == askuser.ToolName && errorType == "" {
		return c.answered
	}
	key := toolKey{tool, errorType}
	if opt, ok := c.byTool.Load(key); ok {
		return opt.(metric.MeasurementOption)
	}
	kvs := []attribute.KeyValue{AttrOperationName.String("execute_tool"), AttrToolName.String(tool)}
	if errorType != "" {
		kvs = append(kvs, AttrErrorType.String(errorType))
	}
	opt := metric.WithAttributeSet(attribute.NewSet(kvs...))
	if c.tools.Load() < maxToolSets {
		if _, loaded := c.byTool.LoadOrStore(key, opt); !loaded {
			c.tools.Add(1)
		}
	}
	return opt
}

// NewObserver returns an Observer; it fails only when a metric cannot be made.
func NewObserver(opts ...Option) (*Observer, error) {
	var c config
	for _, o := range opts {
		o.apply(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.prop == nil {
		c.prop = otel.GetTextMapPropagator()
	}
	o := &Observer{
		tracer: c.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(Version())),
		prop:   c.prop,
		cfg:    c,
		spans:  make(map[spanKey]trace.Span),
		sets:   newAttrSets(),
	}
	m := c.mp.Meter(ScopeName, metric.WithInstrumentationVersion(Version()))
	var err, e error
	o.requestDuration, e = m.Float64Histogram(MetricRequestDuration, metric.WithUnit("s"),
		metric.WithDescription("How long a request (a question set, or an approval) waited for the person, by how it ended."),
		metric.WithExplicitBucketBoundaries(humanWaits...))
	err = errors.Join(err, e)
	_, e = m.Int64ObservableUpDownCounter(MetricRequestPending, metric.WithUnit("{request}"),
		metric.WithDescription("The requests waiting for the person. Summed over the replicas of a host: a request is counted by the replica that asked and uncounted by the one that ended it."),
		metric.WithInt64Callback(func(_ context.Context, obs metric.Int64Observer) error {
			for k := store.KindQuestion; int(k) < kinds; k++ {
				if g := &o.pending[k]; g.touched.Load() {
					obs.Observe(g.n.Load(), o.sets.byKind[k])
				}
			}
			return nil
		}))
	err = errors.Join(err, e)
	_, e = m.Int64ObservableUpDownCounter(MetricDeviceConnections, metric.WithUnit("{connection}"),
		metric.WithDescription("The devices connected to the transport."),
		metric.WithInt64Callback(func(_ context.Context, obs metric.Int64Observer) error {
			if o.connections.touched.Load() {
				obs.Observe(o.connections.n.Load())
			}
			return nil
		}))
	err = errors.Join(err, e)
	o.refusals, e = m.Int64Counter(MetricDeviceRefusals, metric.WithUnit("{event}"),
		metric.WithDescription("The device events refused, by code."))
	err = errors.Join(err, e)
	o.toolDuration, e = m.Float64Histogram(MetricExecuteToolDuration, metric.WithUnit("s"),
		metric.WithDescription("How long a tool call askuser ran took, the person's wait included."),
		metric.WithExplicitBucketBoundaries(toolRuns...))
	err = errors.Join(err, e)
	if err != nil {
		return nil, err
	}
	return o, nil
}

// questionSpan is the span name of every ask_user_questions call.
const questionSpan = "execute_tool " + askuser.ToolName

// internal starts every span as an internal one.
var internal = trace.WithSpanKind(trace.SpanKindInternal)

// call is what a call's end needs of its beginning, with room for its span's first
// attributes and its start options. Calls are recycled once ended: a call's state costs
// no allocation, its end func one.
type call struct {
	o       *Observer
	span    trace.Span
	began   time.Time
	session askuser.SessionID
	id      string
	tool    string
	// attrs are lent to the tracer, which copies them (the SDK does, as every tracer
	// must for attributes it keeps: the caller's slice is the caller's).
	attrs [4]attribute.KeyValue
	opts  [2]trace.SpanStartOption
	// gen counts the uses of this state: the end func of a use ends it only while gen
	// is still that use's, once, whatever calls it and how often.
	gen atomic.Uint64
}

var callPool = sync.Pool{New: func() any { return new(call) }}

// Begin starts the call's "execute_tool {tool}" span, a child of ctx's, with its GenAI
// attributes from the start, where a sampler and a span processor see them; it
// implements [observe.Observer].
func (o *Observer) Begin(ctx context.Context, c observe.CallInfo) (context.Context, func(observe.CallEnd)) {
	cl := callPool.Get().(*call)
	gen := cl.gen.Add(1)
	cl.o, cl.session, cl.id, cl.tool = o, c.Session, c.ID, c.Tool
	cl.attrs[0] = AttrOperationName.String("execute_tool")
	cl.attrs[1] = AttrToolName.String(c.Tool)
	cl.attrs[2] = AttrToolType.String("function")
	n := 3
	if c.ID != "" {
		cl.attrs[n] = AttrToolCallID.String(c.ID)
		n++
	}
	name := questionSpan
	if c.Tool != askuser.ToolName {
		name = "execute_tool " + c.Tool
	}
	cl.opts[0], cl.opts[1] = internal, trace.WithAttributes(cl.attrs[:n]...)
	ctx, cl.span = o.tracer.Start(ctx, name, cl.opts[:]...)
	cl.opts[1] = nil
	if o.cfg.content && len(c.Arguments) > 0 {
		cl.span.SetAttributes(AttrToolArguments.String(string(c.Arguments)))
	}
	cl.began = time.Now()
	return ctx, func(e observe.CallEnd) {
		if cl.gen.CompareAndSwap(gen, gen+1) { // once: a later end finds the use over
			cl.end(e)
		}
	}
}

// end ends the call's span, records its duration, and gives its state back.
func (cl *call) end(e observe.CallEnd) {
	o, span := cl.o, cl.span
	t := errorType(e)
	end := cl.attrs[:0] // the span has copied its first attributes
	if e.RequestID != "" {
		if e.RequestID != cl.id { // one made for a call without an id
			end = append(end, AttrRequestID.String(e.RequestID))
		}
		o.forget(cl.session, e.RequestID, span)
	}
	if t != "" {
		end = append(end, AttrErrorType.String(t))
		span.SetStatus(codes.Error, t)
	}
	if o.cfg.content && e.Content != "" {
		end = append(end, AttrToolResult.String(e.Content))
	}
	if len(end) > 0 {
		span.SetAttributes(end...)
	}
	span.End()
	o.toolDuration.Record(context.Background(), time.Since(cl.began).Seconds(), o.sets.tool(cl.tool, t))
	cl.o, cl.span, cl.session, cl.id, cl.tool = nil, nil, askuser.SessionID{}, "", ""
	cl.attrs = [4]attribute.KeyValue{}
	callPool.Put(cl)
}

// errorType is the error.type of a call: the outcome, for every way but answered and
// approved; "tool_error" when the host's tool failed.
func errorType(e observe.CallEnd) string {
	switch e.Outcome {
	case askuser.Answered, askuser.Approved:
		if e.Err != nil {
			return "tool_error"
		}
		return ""
	case 0:
		return "_OTHER"
	}
	return e.Outcome.String()
}

// Observe marks what happened on the spans and records the metrics; it implements
// [observe.Observer].
func (o *Observer) Observe(ctx context.Context, x observe.Observation) {
	switch x.Event {
	case observe.Asked:
		o.countPending(x.Kind, 1)
		// The call's span, kept even when it records nothing (a no-op tracer, a span
		// not sampled): its request is this dispatcher's, and its end no other's.
		span := trace.SpanFromContext(ctx)
		span.AddEvent("askuser.delivered")
		o.mu.Lock()
		o.spans[spanKey{x.Session, x.RequestID}] = span
		o.mu.Unlock()
	case observe.Ended:
		if x.Outcome == askuser.Invalid {
			return // refused before anything was asked
		}
		if x.Waited > 0 {
			o.requestDuration.Record(ctx, x.Waited.Seconds(), o.sets.end(x.Kind, x.Outcome))
			if x.Outcome != askuser.Undelivered { // an undelivered request was never counted
				o.countPending(x.Kind, -1)
			}
		}
		if o.span(x) == nil { // ended here, for a call elsewhere: its own span, linked
			o.linked(ctx, "askuser.end", x, AttrOutcome.String(x.Outcome.String()))
		}
	case observe.Decided:
		if x.RequestID == "" {
			return // by a rule or a grant: the call's own span says it
		}
		attrs := []attribute.KeyValue{AttrOutcome.String(x.Outcome.String())}
		if span := o.span(x); span != nil {
			span.AddEvent("askuser.decided", trace.WithAttributes(attrs...))
		} else {
			o.linked(ctx, "askuser.decision", x, attrs...)
		}
	case observe.Progressed:
		// One approval recorded of several needed: who approved stays in the audit.
		if span := o.span(x); span != nil {
			span.AddEvent("askuser.approval_recorded")
		} else {
			o.linked(ctx, "askuser.approval_recorded", x)
		}
	case observe.Escalated:
		to := attribute.StringSlice("askuser.escalated_to", x.To)
		if span := o.span(x); span != nil {
			span.AddEvent("askuser.escalated", trace.WithAttributes(to))
		} else {
			o.linked(ctx, "askuser.escalated", x, to)
		}
	case observe.Refused:
		code := AttrRefusalCode.String(x.Code)
		o.refusals.Add(ctx, 1, metric.WithAttributes(code))
		if span := o.span(x); span != nil {
			span.AddEvent("askuser.refused", trace.WithAttributes(code))
		}
	case observe.Notified:
		if span := o.span(x); span != nil {
			span.AddEvent("askuser.notified")
		}
	case observe.Connected:
		o.connections.add(1)
	case observe.Disconnected:
		o.connections.add(-1)
	}
}

// countPending counts a request of kind k in (n = 1) or out (n = -1).
func (o *Observer) countPending(k store.Kind, n int64) {
	if k > 0 && int(k) < kinds {
		o.pending[k].add(n)
	}
}

// span returns the waiting span of x's request, made here, or nil.
func (o *Observer) span(x observe.Observation) trace.Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.spans[spanKey{x.Session, x.RequestID}]
}

// forget drops the span of a request whose call has returned, unless a later call has
// asked under the same id since.
func (o *Observer) forget(session askuser.SessionID, id string, span trace.Span) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := spanKey{session, id}
	if kept, ok := o.spans[k]; ok && sameSpan(kept, span) {
		delete(o.spans, k)
	}
}

// sameSpan reports whether a and b are one span, by their span contexts (a span need
// not be comparable). Spans that carry no context of their own (a no-op tracer's) cannot
// be told apart and are taken as one: under such a tracer a later call asking under the
// same id may lose its entry to an earlier call's end, which then costs it a linked span
// at its own end, recorded by that same tracer, or nothing.
func sameSpan(a, b trace.Span) bool {
	ac, bc := a.SpanContext(), b.SpanContext()
	return ac.SpanID() == bc.SpanID() && ac.TraceID() == bc.TraceID()
}

// linked records what happened to a request made elsewhere (another replica, or a run
// resumed) as a span of its own, linked to the span that asked: the trace context the
// store kept with the request.
func (o *Observer) linked(ctx context.Context, name string, x observe.Observation, attrs ...attribute.KeyValue) {
	var links []trace.Link
	if len(x.Carrier) > 0 {
		if sc := trace.SpanContextFromContext(o.prop.Extract(context.Background(), propagation.MapCarrier(x.Carrier))); sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	attrs = append(attrs, AttrRequestKind.String(x.Kind.String()), AttrRequestID.String(x.RequestID))
	_, span := o.tracer.Start(ctx, name, internal, trace.WithLinks(links...), trace.WithAttributes(attrs...))
	span.End()
}

// Carrier returns ctx's trace context, injected by the propagators; it implements
// [observe.Observer].
func (o *Observer) Carrier(ctx context.Context) map[string]string {
	if len(o.prop.Fields()) == 0 || !trace.SpanContextFromContext(ctx).IsValid() {
		return nil // nothing to carry
	}
	c := propagation.MapCarrier{}
	o.prop.Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	return c
}
