package askuser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// observe tells the observer and the logger of o.
func (d *Dispatcher) observe(ctx context.Context, o Observation) {
	if d.obs != nil {
		d.obs.Observe(ctx, o)
	}
	if d.log == nil {
		return
	}
	switch o.What {
	case ObservedAsk:
		d.log.LogAttrs(ctx, slog.LevelDebug, "askuser: request asked", requestAttrs(o,
			slog.Time("askuser.request.expires_at", o.ExpiresAt))...)
	case ObservedEnd:
		attrs := requestAttrs(o, slog.String("askuser.outcome", o.Outcome.String()), slog.Duration("askuser.request.waited", o.Waited))
		if o.Err != nil && o.Outcome != Answered && o.Outcome != Approved && o.Outcome != Edited {
			attrs = append(attrs, slog.String("error", o.Err.Error()))
		}
		d.log.LogAttrs(ctx, slog.LevelDebug, "askuser: request ended", attrs...)
	case ObservedDecision:
		a := o.Audit
		d.log.LogAttrs(ctx, slog.LevelInfo, "askuser: tool call decided", requestAttrs(o,
			slog.String("askuser.tool", a.Tool), slog.String("askuser.outcome", a.Outcome.String()),
			slog.String("askuser.decision", a.Decision), slog.String("askuser.rule", a.Rule),
			slog.String("askuser.decided_by", a.By), slog.String("askuser.via", a.Via),
			slog.String("askuser.reason", a.Reason))...)
	}
}

// requestAttrs are the attributes of a request in the logs, named as the metrics name
// them, then extra.
func requestAttrs(o Observation, extra ...slog.Attr) []slog.Attr {
	return append([]slog.Attr{
		slog.String("askuser.request.kind", o.Kind.String()),
		slog.String("askuser.session", o.Session.String()),
		slog.String("askuser.request.id", o.RequestID),
	}, extra...)
}

// warn logs a failure of the store or a refused device event.
func (d *Dispatcher) warn(ctx context.Context, msg string, attrs ...slog.Attr) {
	if d.log != nil {
		d.log.LogAttrs(ctx, slog.LevelWarn, msg, attrs...)
	}
}

// begin starts the observation of a call; the callEnding it returns ends it. Every
// caller defers its unended, so that a call that panics on its way (in a host's
// policy, store, transport or tool) still ends for the observer.
func (d *Dispatcher) begin(ctx context.Context, c CallInfo) (context.Context, callEnding) {
	if d.obs == nil {
		return ctx, callEnding{}
	}
	ctx, done := d.obs.Begin(ctx, c)
	return ctx, callEnding{done: done}
}

// callEnding ends a call for the observer, once.
type callEnding struct {
	done  func(CallEnd) // nil: nobody to tell
	ended bool
	// sofar is what is known of the end while the call goes on (its request and
	// outcome, once decided), and tool the host's tool once it runs: what unended says.
	sofar CallEnd
	tool  string
}

// end tells the observer how the call ended.
func (e *callEnding) end(c CallEnd) {
	e.ended = true
	if e.done != nil {
		e.done(c)
	}
}

// errUnended is the error of a call that did not return.
var errUnended = errors.New("askuser: the call did not return: it panicked, or ended its goroutine")

// unended ends the call as an error if it has not ended: the call is panicking, or
// its goroutine exiting, and that goes on after.
func (e *callEnding) unended() {
	if e.ended || e.done == nil {
		return
	}
	c := e.sofar
	c.IsError, c.Err = true, errUnended
	if e.tool != "" {
		c.Err = fmt.Errorf("askuser: tool %q did not return: it panicked, or ended its goroutine", e.tool)
	}
	e.end(c)
}
