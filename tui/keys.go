package tui

import (
	"context"
	"io"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/cancelreader"
)

// keys reads the terminal for the forms of one Run, and hands each key (and each reply
// of the terminal to a query) to the form shown, if any.
//
// The forms' programs run without input of their own. A Bubble Tea v2 program reads
// its input in a goroutine that hands events to the program without watching its
// context: an event read as the program ends would block that goroutine forever, one
// lost goroutine per keystroke at the wrong moment. Reading here, for the whole Run,
// with a goroutine that always drains what is read, nothing is ever left blocked.
//
// start and close are called by the device loop's goroutine; show and hide by each
// form's goroutine, one form at a time. mu guards prog.
type keys struct {
	in     io.Reader
	tty    *os.File // in, when it is a terminal: put in raw mode while a form is shown
	opened *os.File // a terminal opened because stdin is not one; closed at the end
	env    []string
	err    error // why the input could not be set up

	started bool
	cr      cancelreader.CancelReader
	stop    context.CancelFunc
	done    chan struct{} // closed once nothing reads any more

	mu    sync.Mutex
	prog  *tea.Program // the form shown, nil between forms
	ended bool         // the input has ended: no form can be answered any more
}

// inputEndedMsg tells a form that no more keys will come.
type inputEndedMsg struct{}

func newKeys(o *Options) *keys {
	k := &keys{in: o.Input, env: o.Environ}
	if k.in == nil {
		k.in = os.Stdin
		if !isTerminal(os.Stdin) {
			in, out, err := tea.OpenTTY()
			if err != nil {
				k.err = err
				return k
			}
			_ = out.Close()
			k.in, k.opened = in, in
		}
	}
	if f, ok := k.in.(*os.File); ok && isTerminal(f) {
		k.tty = f
	}
	return k
}

// start begins reading, once, when the first form is shown.
func (k *keys) start() error {
	if k.started || k.err != nil {
		return k.err
	}
	k.started = true
	cr, err := uv.NewCancelReader(k.in)
	if err != nil {
		k.err = err
		return err
	}
	k.cr = cr
	ctx, stop := context.WithCancel(context.Background())
	k.stop, k.done = stop, make(chan struct{})
	events := make(chan uv.Event)
	streamed := make(chan struct{})
	go func() {
		defer close(streamed)
		_ = uv.NewTerminalReader(cr, uv.Environ(k.env).Getenv("TERM")).StreamEvents(ctx, events)
	}()
	go func() {
		defer close(k.done)
		for {
			select {
			case ev := <-events:
				k.mu.Lock()
				p := k.prog
				k.mu.Unlock()
				if p != nil {
					p.Send(ev) // returns at once when p has ended
				}
			case <-streamed:
				k.mu.Lock()
				k.ended = true
				p := k.prog
				k.mu.Unlock()
				if p != nil && ctx.Err() == nil {
					p.Send(inputEndedMsg{})
				}
				return
			}
		}
	}()
	return nil
}

// show makes p the form that gets the keys, with the terminal in raw mode, and
// returns the function that undoes both once p has ended.
func (k *keys) show(p *tea.Program) (restore func(), err error) {
	var state *term.State
	if k.tty != nil {
		if state, err = term.MakeRaw(k.tty.Fd()); err != nil {
			return nil, err
		}
		if err := keepOutputProcessing(k.tty); err != nil {
			_ = term.Restore(k.tty.Fd(), state)
			return nil, err
		}
	}
	k.mu.Lock()
	ended := k.ended
	k.prog = p
	k.mu.Unlock()
	if ended {
		if state != nil {
			_ = term.Restore(k.tty.Fd(), state)
		}
		return nil, ErrInputEnded
	}
	return func() {
		k.mu.Lock()
		k.prog = nil
		k.mu.Unlock()
		if state != nil {
			_ = term.Restore(k.tty.Fd(), state)
		}
	}, nil
}

// close stops reading and waits for the reading goroutines to end.
func (k *keys) close() {
	if k.started && k.cr != nil {
		k.stop()
		if k.cr.Cancel() {
			<-k.done
		}
		_ = k.cr.Close()
	}
	if k.opened != nil {
		_ = k.opened.Close()
	}
}
