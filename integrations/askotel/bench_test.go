package askotel_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/integrations/askotel"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
)

// BenchmarkRoundTrip is one question asked and answered at once, end to end (as the
// bench module's BenchmarkRoundTrip/askuser), with no observer and with this one on the
// SDK's real providers (every span sampled and ended, every metric aggregated, nothing
// exported), side by side in one run.
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("off", func(b *testing.B) { benchRoundTrip(b, nil) })
	b.Run("on", func(b *testing.B) { benchRoundTrip(b, sdkObserver(b)) })
	// An observer that does nothing (Hooks with no hook set): what the seam costs.
	b.Run("nothing", func(b *testing.B) { benchRoundTrip(b, observe.Hooks{}) })
	// Where "on" goes: its spans alone (metrics to the no-op provider), its metrics alone.
	b.Run("spans", func(b *testing.B) { benchRoundTrip(b, partObserver(b, true, false)) })
	b.Run("metrics", func(b *testing.B) { benchRoundTrip(b, partObserver(b, false, true)) })
	// The least any observer doing what askotel must do can cost here (floorObserver).
	b.Run("floor", func(b *testing.B) { benchRoundTrip(b, newFloorObserver(b)) })
}

// floorObserver does within the round trip what BenchmarkSDKFloor does in a loop, and
// nothing else: each call's execute_tool span started with its four attributes, marked
// delivered when asked, ended as the call returns; the request's wait and the call's
// run recorded. No pending count, no table of waiting spans, no linked spans, no
// refusals: it is a lower bound of any observer that does what askotel must, measured
// where askotel is.
type floorObserver struct {
	tracer        trace.Tracer
	waits, runs   metric.Float64Histogram
	byEnd, byTool metric.MeasurementOption
}

func newFloorObserver(b *testing.B) *floorObserver {
	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	meter := mp.Meter("floor")
	f := &floorObserver{tracer: tp.Tracer("floor")}
	f.waits, _ = meter.Float64Histogram(askotel.MetricRequestDuration)
	f.runs, _ = meter.Float64Histogram(askotel.MetricExecuteToolDuration)
	f.byEnd = metric.WithAttributeSet(attribute.NewSet(askotel.AttrRequestKind.String("question"), askotel.AttrOutcome.String("answered")))
	f.byTool = metric.WithAttributeSet(attribute.NewSet(askotel.AttrOperationName.String("execute_tool"), askotel.AttrToolName.String(askuser.ToolName)))
	return f
}

func (f *floorObserver) Begin(ctx context.Context, c observe.CallInfo) (context.Context, func(observe.CallEnd)) {
	ctx, span := f.tracer.Start(ctx, "execute_tool "+askuser.ToolName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		askotel.AttrOperationName.String("execute_tool"), askotel.AttrToolName.String(c.Tool),
		askotel.AttrToolType.String("function"), askotel.AttrToolCallID.String(c.ID)))
	began := time.Now()
	return ctx, func(observe.CallEnd) {
		span.End()
		f.runs.Record(context.Background(), time.Since(began).Seconds(), f.byTool)
	}
}

func (f *floorObserver) Observe(ctx context.Context, x observe.Observation) {
	switch x.Event {
	case observe.Asked:
		trace.SpanFromContext(ctx).AddEvent("askuser.delivered")
	case observe.Ended:
		f.waits.Record(ctx, x.Waited.Seconds(), f.byEnd)
	}
}

func (f *floorObserver) Carrier(context.Context) map[string]string { return nil }

// BenchmarkWebSocketRoundTrip is the same over the wshub hub and a real WebSocket
// device on loopback, the observer on the dispatcher and the hub.
func BenchmarkWebSocketRoundTrip(b *testing.B) {
	b.Run("off", func(b *testing.B) { benchWebSocket(b, nil) })
	b.Run("on", func(b *testing.B) { benchWebSocket(b, sdkObserver(b)) })
	b.Run("floor", func(b *testing.B) { benchWebSocket(b, newFloorObserver(b)) })
}

// sdkObserver is an observer on the SDK's real providers, with no exporter.
func sdkObserver(b *testing.B) observe.Observer {
	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	obs, err := askotel.NewObserver(askotel.WithTracerProvider(tp), askotel.WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	return obs
}

// partObserver is an observer with the SDK's real tracer provider only when spans is
// set, its real meter provider only when metrics is; the no-op ones otherwise.
func partObserver(b *testing.B, spans, metrics bool) observe.Observer {
	var opts []askotel.Option
	if spans {
		tp := sdktrace.NewTracerProvider()
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		opts = append(opts, askotel.WithTracerProvider(tp))
	} else {
		opts = append(opts, askotel.WithTracerProvider(tracenoop.NewTracerProvider()))
	}
	if metrics {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		opts = append(opts, askotel.WithMeterProvider(mp))
	} else {
		opts = append(opts, askotel.WithMeterProvider(metricnoop.NewMeterProvider()))
	}
	obs, err := askotel.NewObserver(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return obs
}

func benchWebSocket(b *testing.B, obs observe.Observer) {
	ctx := context.Background()
	s := askuser.IntSession(123)
	hub := wshub.New(&wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) { return []askuser.SessionID{s}, nil }, Observer: obs, MaxMessagesPerSecond: 1 << 20})
	d := askuser.New(hub, &askuser.Options{Observer: obs})
	srv := httptest.NewServer(hub)
	defer srv.Close()
	defer hub.Close()
	defer d.Close()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				return
			}
			ev, err := wire.ParseEvent(msg)
			if err != nil || ev.Type != wire.EventAsk {
				continue
			}
			var a wire.AskData
			_ = json.Unmarshal(ev.Data, &a)
			out, _ := answer(s, a.RequestID, "Yes").Encode()
			_ = ws.Write(ctx, websocket.MessageText, out)
		}
	}()
	defer func() { ws.Close(websocket.StatusNormalClosure, ""); <-done }()
	for !hub.Connected(s) {
		time.Sleep(time.Millisecond)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		call := askuser.ToolCall{Session: s, ID: "toolu_" + strconv.Itoa(n), Name: askuser.ToolName, Arguments: json.RawMessage(question)}
		if r := d.Dispatch(ctx, call); r.Outcome != askuser.Answered {
			b.Fatal(r.Outcome)
		}
	}
}

func benchRoundTrip(b *testing.B, obs observe.Observer) {
	ctx := context.Background()
	mt := askusertest.NewTransport()
	d := askuser.New(mt, &askuser.Options{Observer: obs})
	defer d.Close()
	s := askuser.IntSession(123)
	dev := mt.Connect(s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := dev.Recv(ctx)
			if err != nil {
				return
			}
			if ev.Type != wire.EventAsk {
				continue
			}
			var a wire.AskData
			_ = json.Unmarshal(ev.Data, &a)
			_ = dev.Send(ctx, answer(s, a.RequestID, "Yes"))
		}
	}()
	defer func() { dev.Close(); <-done }()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		// A model's call, with its tool-call id.
		call := askuser.ToolCall{Session: s, ID: "toolu_" + strconv.Itoa(n), Name: askuser.ToolName, Arguments: json.RawMessage(question)}
		if r := d.Dispatch(ctx, call); r.Outcome != askuser.Answered {
			b.Fatal(r.Outcome)
		}
	}
}

// BenchmarkSDKFloor is what the SDK itself does for one call that the observer
// instruments, with nothing of askuser's: its span started with the call's attributes,
// marked delivered and ended, and its two durations recorded. The observer's cost in
// the round trips above is this, and what is ours.
func BenchmarkSDKFloor(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	tracer := tp.Tracer("floor")
	meter := mp.Meter("floor")
	waits, _ := meter.Float64Histogram(askotel.MetricRequestDuration)
	runs, _ := meter.Float64Histogram(askotel.MetricExecuteToolDuration)
	byEnd := metric.WithAttributeSet(attribute.NewSet(askotel.AttrRequestKind.String("question"), askotel.AttrOutcome.String("answered")))
	byTool := metric.WithAttributeSet(attribute.NewSet(askotel.AttrOperationName.String("execute_tool"), askotel.AttrToolName.String(askuser.ToolName)))
	ctx := context.Background()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		_, span := tracer.Start(ctx, "execute_tool "+askuser.ToolName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
			askotel.AttrOperationName.String("execute_tool"), askotel.AttrToolName.String(askuser.ToolName),
			askotel.AttrToolType.String("function"), askotel.AttrToolCallID.String("toolu_"+strconv.Itoa(n))))
		span.AddEvent("askuser.delivered")
		waits.Record(ctx, 1, byEnd)
		span.End()
		runs.Record(ctx, 1, byTool)
	}
}
