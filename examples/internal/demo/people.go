package demo

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wshub"
)

// The demo's people. Each page is one person's, named by ?as= in its URL (the developer
// without it): the developer, whose agent asks to drop a database; alice and bob, the
// DBAs, two of whom must approve it; and the lead, whom it escalates to when the DBAs
// are slow. Any other name is a person of no group.
const (
	// Developer is who a page without ?as= is: the README's one-page demo is theirs.
	Developer = "dev"
	// Lead is whom drop_database escalates to.
	Lead = "lead"
	// GroupDBA is the group two of whom must approve drop_database.
	GroupDBA = "dba"
	// DefaultEscalateAfter is the default of [Options.EscalateAfter].
	DefaultEscalateAfter = 30 * time.Second
)

// groupsOf are the groups of the demo's people.
var groupsOf = map[string][]string{"alice": {GroupDBA}, "bob": {GroupDBA}}

// maxPersonLength bounds the names ?as= takes.
const maxPersonLength = 32

// authenticate lets anyone act for the session named in the URL, as the person ?as=
// names (the developer by default), with that person's groups.
//
// THIS IS ONLY FOR THE DEMO. A real host authenticates the request (a session cookie, a
// token) and returns that user, their groups, and their sessions alone: whoever may
// connect for a session may read and answer its questions, and whoever a device is
// decides the approvals that name them.
func authenticate(r *http.Request) (wshub.Access, error) {
	sessions, err := authorize(r)
	if err != nil {
		return wshub.Access{}, err
	}
	user := r.URL.Query().Get("as")
	if user == "" {
		user = Developer
	}
	if !validPerson(user) {
		return wshub.Access{}, fmt.Errorf("demo: ?as= takes a name of at most %d letters, digits, '-', '_' or '.'", maxPersonLength)
	}
	return wshub.Access{User: user, Groups: groupsOf[user], Sessions: sessions}, nil
}

// linkGroups are the groups of the person a link was made for.
func linkGroups(_ context.Context, user string) ([]string, error) { return groupsOf[user], nil }

// validPerson reports whether name is one ?as= takes.
func validPerson(name string) bool {
	if name == "" || len(name) > maxPersonLength {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}

// dropDatabaseSchema is drop_database's arguments: a non-empty name.
const dropDatabaseSchema = `{"type":"object","properties":{"name":{"type":"string","minLength":1,"description":"the database to drop"}},"required":["name"],"additionalProperties":false}`

// peoplePolicy is the web demo's policy: [toolPolicy]'s, except that drop_database waits
// for two DBAs (the developer who asked, the call's Requester, never counts), and for the
// lead too once it has waited escalateAfter; only the production database is never
// dropped.
func peoplePolicy(escalateAfter time.Duration) *askuser.Policy {
	p := toolPolicy()
	p.Deny = []askuser.Rule{{Name: "never_drop_production", Tool: toolDropDatabase,
		When: func(args map[string]any) bool { return args["name"] == "production" }}}
	p.Ask = append(p.Ask, askuser.Rule{Tool: toolDropDatabase, Approvers: &askuser.Approvers{
		Groups: []string{GroupDBA}, Quorum: 2, SeparateDuties: true,
		Escalate: []store.Escalation{{After: escalateAfter, Users: []string{Lead}}},
	}})
	for i := range p.Tools {
		if p.Tools[i].Name == toolDropDatabase {
			p.Tools[i].Schema = []byte(dropDatabaseSchema)
		}
	}
	return p
}

// sessionTitle names a session for the inboxes of the people its approvals reach: whose
// agent it is, and its id.
func (s *Server) sessionTitle(session askuser.SessionID) string {
	s.mu.Lock()
	a := s.agents[session]
	s.mu.Unlock()
	who := Developer
	if a != nil {
		if u := a.requester(); u != "" {
			who = u
		}
	}
	return fmt.Sprintf("%s's agent, session %s", who, session)
}
