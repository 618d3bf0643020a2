package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/askuser-go/askuser"
)

// maxToken bounds an encoded token. A longer id is named by a hash of its encoding: keys
// and subjects stay short enough for any NATS server (subjects travel in protocol lines
// of at most 4 KiB by default), and the full id is still in the record.
const maxToken = 512

// sessionToken encodes a session id as one token of a NATS subject and KV key, keeping
// its type: "n" and the digits for a numeric id, "s" and the escaped text for a string
// id, so that the numeric session 123 ("n123") and the string "123" ("s123") never meet.
// A too long token is "h" and a hash of it.
func sessionToken(s askuser.SessionID) string {
	prefix := "s"
	if s.IsNumeric() {
		prefix = "n"
	}
	return bound(prefix + escape(s.String()))
}

// requestToken encodes a request id as one token.
func requestToken(id string) string { return bound("r" + escape(id)) }

// bound returns tok, or a fixed-size token naming it when tok is longer than maxToken.
func bound(tok string) string {
	if len(tok) <= maxToken {
		return tok
	}
	sum := sha256.Sum256([]byte(tok))
	return "h" + hex.EncodeToString(sum[:])
}

// escape keeps ASCII letters, digits and '-', and writes every other byte as '_' and two
// upper-case hex digits: the result is a valid NATS token (no '.', '*', '>' or space),
// readable in `nats kv ls` for the usual ids, and one-to-one.
func escape(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !plain(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plain(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('_')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func plain(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-'
}

// recordKey is the KV key of a question set: its session's token, then its request id's.
// The session comes first so that one session's questions are listed with the filter
// "<session token>.*".
func recordKey(s askuser.SessionID, requestID string) string {
	return sessionToken(s) + "." + requestToken(requestID)
}
