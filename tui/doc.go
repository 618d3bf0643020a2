// Package tui makes a terminal one device of an askuser session, beside the browser
// panels: it shows each question set an agent asks as a form in the terminal (or as
// plain prompts for screen readers), and sends the person's answer or decline to the
// host; and it shows each of the host's own tool calls that waits for the person's
// approval, with its arguments, and sends the decision: approve, deny (with a reason),
// edit the arguments, or always allow. The first answer or decision from any device
// wins; when another device answers or decides, or the request times out or is
// cancelled, the terminal closes its form and says so. Connected as a person (the
// host's inbox event), it also holds the approvals routed to that person from other
// sessions, shows read-only those that others must decide, and lists everything
// pending across sessions, with what ended lately (ctrl+o).
//
// The terminal talks the askuser wire protocol through a [Conn]; [Dial] connects one to
// a host's wshub endpoint, locally or remotely:
//
//	conn, err := tui.Dial(ctx, "ws://127.0.0.1:8080/ws?session=123", nil)
//	if err != nil {
//		return err
//	}
//	defer conn.Close()
//	err = tui.Run(ctx, conn, nil) // until ctx ends or the connection does
//
// The forms are built with huh and Bubble Tea (v2); previews, markdown, are rendered
// with glamour. docs/TERMINAL.md describes the keys, the accessible mode and the
// example.
package tui
