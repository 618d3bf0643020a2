//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package tui

import (
	"os"

	"golang.org/x/sys/unix"
)

// keepOutputProcessing turns the terminal's output processing back on after raw
// mode turned it off, so that a newline still returns the carriage. The forms are
// drawn by programs that do not read the terminal themselves (see keys), and such a
// program draws as for a terminal that keeps it on.
func keepOutputProcessing(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) {
		t, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
		if err != nil {
			opErr = err
			return
		}
		t.Oflag |= unix.OPOST | unix.ONLCR
		opErr = unix.IoctlSetTermios(int(fd), ioctlSetTermios, t)
	}); err != nil {
		return err
	}
	return opErr
}
