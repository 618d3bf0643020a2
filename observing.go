package askuser

import (
	"context"
	"errors"
	"fmt"

	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
)

// observe tells the observer of o.
func (d *Dispatcher) observe(ctx context.Context, o observe.Observation) {
	if d.obs != nil {
		d.obs.Observe(ctx, o)
	}
}

// storeFailed tells the observer that the store failed to record or to end rec.
func (d *Dispatcher) storeFailed(ctx context.Context, rec store.Record, err error) {
	d.observe(ctx, observe.Observation{Event: observe.Failed, Session: rec.Session, RequestID: rec.RequestID(), Kind: rec.Kind(), Outcome: rec.Outcome, Err: err})
}

// begin starts the observation of a call; the callEnding it returns ends it. Every
// caller defers its unended, so that a call that panics on its way (in a host's
// policy, store, transport or tool) still ends for the observer.
func (d *Dispatcher) begin(ctx context.Context, c observe.CallInfo) (context.Context, callEnding) {
	if d.obs == nil {
		return ctx, callEnding{}
	}
	ctx, done := d.obs.Begin(ctx, c)
	return ctx, callEnding{done: done}
}

// callEnding ends a call for the observer, once.
type callEnding struct {
	done  func(observe.CallEnd) // nil: nobody to tell
	ended bool
	// sofar is what is known of the end while the call goes on (its request and
	// outcome, once decided), and tool the host's tool once it runs: what unended says.
	sofar observe.CallEnd
	tool  string
}

// end tells the observer how the call ended.
func (e *callEnding) end(c observe.CallEnd) {
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
