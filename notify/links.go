package notify

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/askuser-go/askuser/wire"
)

// Links signs and checks the links of answer pages and approval actions. A link is good
// for one request of one session until the request expires, and for nothing else: its
// token names the session, the request id, what it may do (show the request, or approve
// or deny it), the expiry and, for a link made for one person ([Links.AnswerAs],
// [Links.ActionAs]), that person, with 128 random bits, and is signed with HMAC-SHA256:
// none of it can be changed, to another person say, without the secret. The token is
// the last element of the link's path, never a query parameter, and the pages are served
// with Referrer-Policy: no-referrer.
//
// Every replica of a host uses the same Secrets and BaseURL, so that a link made on one
// works on all. A Links may be used concurrently.
type Links struct {
	// Secrets sign and check the links: the first signs, and each one checks, so that a
	// secret is rotated by putting the new one first and dropping the old one once the
	// longest timeout has passed. Each must be at least 32 bytes.
	Secrets [][]byte
	// BaseURL is where the hub's link handler is mounted ("https://host/askuser/links");
	// a link is BaseURL + "/a/" + token for an answer page, "/x/" + token for an action.
	BaseURL string
}

// Claims is what a link's token grants.
type Claims struct {
	Session   wire.SessionID
	RequestID string
	// Decision is "" for an answer page, or the decision an action link makes:
	// "approve" or "deny".
	Decision string
	// ExpiresAt is when the link stops working: the request's expiry.
	ExpiresAt time.Time
	// User is the person the link acts as, when it was made for one: the decisions made
	// through it are theirs (who decided, in the audit), and count for an approval whose
	// approvers name them or one of their groups (wshub.Options.LinkGroups). "" for a link
	// of no person, which cannot decide an approval whose host named approvers.
	User string
}

// ErrBadLink is the error of a link that is not one: malformed, altered, signed with a
// secret that is not known, or expired. It says nothing more, on purpose.
var ErrBadLink = errors.New("notify: the link is not valid or has expired")

// minSecret is the shortest secret taken.
const minSecret = 32

// versions of the token's encoding (a person's link has the second, so that the links
// of no person are as before); kinds of token.
const (
	tokenVersion       = 1
	tokenVersionPerson = 2
	kindAnswer         = 'a'
	kindAction         = 'x'
)

// Answer returns the link of the page where the person answers, or decides, the
// request; "" when the Links has no usable secret.
func (l *Links) Answer(session wire.SessionID, requestID string, expiresAt time.Time) string {
	return l.link(Claims{Session: session, RequestID: requestID, ExpiresAt: expiresAt})
}

// Action returns the link that makes decision ("approve" or "deny") on the approval:
// a GET shows a confirmation page, and only its POST acts.
func (l *Links) Action(session wire.SessionID, requestID, decision string, expiresAt time.Time) string {
	return l.link(Claims{Session: session, RequestID: requestID, Decision: decision, ExpiresAt: expiresAt})
}

// AnswerAs is [Links.Answer] for one person, user: the page acts as them, and decides
// an approval whose approvers name them ([Claims.User]). It is for them alone: whoever
// has the link acts as them. "" when user is "".
func (l *Links) AnswerAs(session wire.SessionID, requestID, user string, expiresAt time.Time) string {
	if user == "" {
		return ""
	}
	return l.link(Claims{Session: session, RequestID: requestID, ExpiresAt: expiresAt, User: user})
}

// ActionAs is [Links.Action] for one person, user, as AnswerAs is Answer's. "" when user
// is "".
func (l *Links) ActionAs(session wire.SessionID, requestID, decision, user string, expiresAt time.Time) string {
	if user == "" {
		return ""
	}
	return l.link(Claims{Session: session, RequestID: requestID, Decision: decision, ExpiresAt: expiresAt, User: user})
}

func (l *Links) link(c Claims) string {
	tok := l.sign(c)
	if tok == "" {
		return ""
	}
	kind := "/a/"
	if c.Decision != "" {
		kind = "/x/"
	}
	return strings.TrimSuffix(l.BaseURL, "/") + kind + tok
}

// sign returns the token of c.
func (l *Links) sign(c Claims) string {
	if len(l.Secrets) == 0 || len(l.Secrets[0]) < minSecret {
		return ""
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	kind := byte(kindAnswer)
	if c.Decision != "" {
		kind = kindAction
	}
	version, parts := byte(tokenVersion), []string{c.Session.String(), c.RequestID, c.Decision}
	if c.User != "" {
		version, parts = tokenVersionPerson, append(parts, c.User)
	}
	b := []byte{version, kind}
	b = append(b, nonce[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(c.ExpiresAt.Add(time.Second-1).Unix())) // whole seconds, rounded up
	numeric := byte(0)
	if c.Session.IsNumeric() {
		numeric = 1
	}
	b = append(b, numeric)
	for _, s := range parts {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	mac := mac(l.Secrets[0], b)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(mac)
}

func mac(secret, payload []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write(payload)
	return h.Sum(nil)
}

// Check returns what token grants at now, or ErrBadLink.
func (l *Links) Check(token string, now time.Time) (Claims, error) {
	p, s, ok := strings.Cut(token, ".")
	if !ok || len(token) > 4096 {
		return Claims{}, ErrBadLink
	}
	// Strict: a token has one spelling, so that no altered token checks.
	payload, err1 := base64.RawURLEncoding.Strict().DecodeString(p)
	sig, err2 := base64.RawURLEncoding.Strict().DecodeString(s)
	if err1 != nil || err2 != nil {
		return Claims{}, ErrBadLink
	}
	signed := false
	for _, secret := range l.Secrets {
		if len(secret) >= minSecret && hmac.Equal(sig, mac(secret, payload)) {
			signed = true
			break
		}
	}
	if !signed {
		return Claims{}, ErrBadLink
	}
	c, ok := decodeClaims(payload)
	if !ok || !now.Before(c.ExpiresAt) {
		return Claims{}, ErrBadLink
	}
	return c, nil
}

// decodeClaims reads a signed payload.
func decodeClaims(b []byte) (Claims, bool) {
	if len(b) < 2+16+8+1 || b[0] != tokenVersion && b[0] != tokenVersionPerson || b[1] != kindAnswer && b[1] != kindAction {
		return Claims{}, false
	}
	person := b[0] == tokenVersionPerson
	kind := b[1]
	r := bytes.NewReader(b[2+16:])
	var exp uint64
	if binary.Read(r, binary.BigEndian, &exp) != nil {
		return Claims{}, false
	}
	numeric, err := r.ReadByte()
	if err != nil {
		return Claims{}, false
	}
	parts := make([]string, 3, 4)
	if person {
		parts = parts[:4]
	}
	for i := range parts {
		n, err := binary.ReadUvarint(r)
		if err != nil || n > uint64(r.Len()) {
			return Claims{}, false
		}
		buf := make([]byte, n)
		_, _ = r.Read(buf)
		parts[i] = string(buf)
	}
	if r.Len() != 0 || (kind == kindAction) != (parts[2] != "") || person && parts[3] == "" {
		return Claims{}, false
	}
	c := Claims{RequestID: parts[1], Decision: parts[2], ExpiresAt: time.Unix(int64(exp), 0)}
	if person {
		c.User = parts[3]
	}
	if numeric == 1 {
		c.Session = wire.ParseSessionID(parts[0])
		if !c.Session.IsNumeric() {
			return Claims{}, false
		}
	} else {
		c.Session = wire.StringSession(parts[0])
	}
	return c, true
}

// TokenOf returns the token of a link made by Answer or Action: the last element of its
// path.
func TokenOf(link string) string {
	u, err := url.Parse(link)
	if err != nil {
		return ""
	}
	return u.Path[strings.LastIndexByte(u.Path, '/')+1:]
}

// FormToken returns the value a link's confirmation form carries, so that its POST is
// known to come from that form (a page of another site cannot read it): a MAC of the
// token under the first secret.
func (l *Links) FormToken(token string) string {
	if len(l.Secrets) == 0 {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(mac(l.Secrets[0], []byte("form:"+token)))
}

// CheckFormToken reports whether value is the form token of token, under any secret.
func (l *Links) CheckFormToken(token, value string) bool {
	got, err := base64.RawURLEncoding.Strict().DecodeString(value)
	if err != nil {
		return false
	}
	for _, secret := range l.Secrets {
		if len(secret) >= minSecret && hmac.Equal(got, mac(secret, []byte("form:"+token))) {
			return true
		}
	}
	return false
}
