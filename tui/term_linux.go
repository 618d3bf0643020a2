package tui

import (
	"os"

	"golang.org/x/sys/unix"
)

const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)

// flushInput discards what was typed on the terminal f and not yet read.
func flushInput(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	_ = rc.Control(func(fd uintptr) {
		ok = unix.IoctlSetInt(int(fd), unix.TCFLSH, unix.TCIFLUSH) == nil
	})
	return ok
}
