package tui

import (
	"os"

	"github.com/charmbracelet/x/term"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	_ = rc.Control(func(fd uintptr) { ok = term.IsTerminal(fd) })
	return ok
}
