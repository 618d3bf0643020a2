//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package tui

import "os"

// flushInput would discard what was typed on the terminal f and not yet read; it is
// done on Linux only.
func flushInput(*os.File) bool { return false }

// keepOutputProcessing does nothing here: raw mode leaves output processing alone.
func keepOutputProcessing(*os.File) error { return nil }
