package tui

import "testing"

// HostileCorpus is hostileCorpus, for the terminal tests.
func HostileCorpus(t *testing.T, addr string) []string { return hostileCorpus(t, addr) }
