package notify_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/wire"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

// TestLinksRoundTrip: a link names its session (of either type), request, decision and
// expiry, and checks while the request lasts.
func TestLinksRoundTrip(t *testing.T) {
	l := &notify.Links{Secrets: [][]byte{secret}, BaseURL: "https://host/askuser/links/"}
	exp := time.Now().Add(time.Minute)
	for _, s := range []askuser.SessionID{askuser.IntSession(123), askuser.StringSession("123"), wire.ParseSessionID("12345678901234567890123")} {
		answer := l.Answer(s, "call_1", exp)
		if !strings.HasPrefix(answer, "https://host/askuser/links/a/") {
			t.Fatalf("answer link %q", answer)
		}
		c, err := l.Check(notify.TokenOf(answer), time.Now())
		if err != nil || c.Session != s || c.RequestID != "call_1" || c.Decision != "" || c.ExpiresAt.Before(exp) {
			t.Fatalf("Check(answer of %v) = %+v, %v", s, c, err)
		}
		action := l.Action(s, "call_1", "deny", exp)
		if !strings.Contains(action, "/x/") {
			t.Fatalf("action link %q", action)
		}
		c, err = l.Check(notify.TokenOf(action), time.Now())
		if err != nil || c.Session != s || c.Decision != "deny" {
			t.Fatalf("Check(action) = %+v, %v", c, err)
		}
	}
	if a, b := l.Answer(askuser.IntSession(1), "x", exp), l.Answer(askuser.IntSession(1), "x", exp); a == b {
		t.Fatal("two links of one request are the same: no random part")
	}
}

// TestLinksRefused: a token altered anywhere, expired, signed with another secret,
// truncated or made up is refused with the one error that says nothing.
func TestLinksRefused(t *testing.T) {
	l := &notify.Links{Secrets: [][]byte{secret}, BaseURL: "https://h"}
	tok := notify.TokenOf(l.Answer(askuser.IntSession(7), "r", time.Now().Add(time.Minute)))
	bad := []string{"", ".", "x.y", tok[:len(tok)-1], tok + "A", strings.Repeat("A", 5000)}
	for i := range tok {
		if tok[i] == '.' {
			continue
		}
		c := byte('A')
		if tok[i] == 'A' {
			c = 'B'
		}
		bad = append(bad, tok[:i]+string(c)+tok[i+1:])
	}
	for _, b := range bad {
		if _, err := l.Check(b, time.Now()); err != notify.ErrBadLink {
			t.Fatalf("Check(%q) = %v, want ErrBadLink", b, err)
		}
	}
	if _, err := l.Check(tok, time.Now().Add(2*time.Minute)); err != notify.ErrBadLink {
		t.Fatalf("an expired link: %v", err)
	}
	other := &notify.Links{Secrets: [][]byte{[]byte("another secret of thirty-two bytes!")}}
	if _, err := other.Check(tok, time.Now()); err != notify.ErrBadLink {
		t.Fatalf("another secret: %v", err)
	}
	short := &notify.Links{Secrets: [][]byte{[]byte("short")}}
	if link := short.Answer(askuser.IntSession(1), "r", time.Now().Add(time.Minute)); link != "" {
		t.Fatalf("a secret too short signed %q", link)
	}
}

// TestLinksRotation: with the new secret first and the old one after, links of both
// check; once the old one is dropped, its links do not.
func TestLinksRotation(t *testing.T) {
	old := &notify.Links{Secrets: [][]byte{secret}}
	newSecret := []byte("a newer secret, thirty-two bytes long")
	rotated := &notify.Links{Secrets: [][]byte{newSecret, secret}}
	exp := time.Now().Add(time.Minute)
	oldTok := notify.TokenOf(old.Answer(askuser.IntSession(1), "r", exp))
	newTok := notify.TokenOf(rotated.Answer(askuser.IntSession(1), "r", exp))
	for _, tok := range []string{oldTok, newTok} {
		if _, err := rotated.Check(tok, time.Now()); err != nil {
			t.Fatalf("during the rotation: %v", err)
		}
	}
	after := &notify.Links{Secrets: [][]byte{newSecret}}
	if _, err := after.Check(oldTok, time.Now()); err == nil {
		t.Fatal("the old secret's link still checks after the rotation")
	}
	if _, err := after.Check(newTok, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestPersonLinks: a link made for a person names them, under the signature: changing
// the person in the token (to another name of the same length) breaks it, and a link of
// no person names none.
func TestPersonLinks(t *testing.T) {
	l := &notify.Links{Secrets: [][]byte{secret}, BaseURL: "https://h"}
	exp := time.Now().Add(time.Minute)
	s := askuser.IntSession(5)
	for _, tc := range []struct{ link, decision string }{
		{l.AnswerAs(s, "r", "lead", exp), ""},
		{l.ActionAs(s, "r", "approve", "lead", exp), "approve"},
	} {
		tok := notify.TokenOf(tc.link)
		c, err := l.Check(tok, time.Now())
		if err != nil || c.User != "lead" || c.Session != s || c.RequestID != "r" || c.Decision != tc.decision {
			t.Fatalf("Check(%s) = %+v, %v", tc.link, c, err)
		}
		p, sig, _ := strings.Cut(tok, ".")
		payload, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil || !bytes.HasSuffix(payload, []byte("lead")) {
			t.Fatalf("the payload %q does not end with its person", payload)
		}
		forged := base64.RawURLEncoding.EncodeToString(append(bytes.TrimSuffix(payload, []byte("lead")), "bob2"...)) + "." + sig
		if _, err := l.Check(forged, time.Now()); err != notify.ErrBadLink {
			t.Fatalf("a token changed to another person checks: %v", err)
		}
	}
	if c, err := l.Check(notify.TokenOf(l.Answer(s, "r", exp)), time.Now()); err != nil || c.User != "" {
		t.Fatalf("a link of no person: %+v, %v", c, err)
	}
	if l.AnswerAs(s, "r", "", exp) != "" || l.ActionAs(s, "r", "deny", "", exp) != "" {
		t.Fatal("a link for nobody was made")
	}
}
