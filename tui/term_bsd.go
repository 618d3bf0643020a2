//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package tui

import (
	"os"

	"golang.org/x/sys/unix"
)

const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)

// flushInput would discard what was typed on the terminal f and not yet read; it is
// done on Linux only. Here, a line typed for a question that ended elsewhere goes to
// the next prompt.
func flushInput(*os.File) bool { return false }
