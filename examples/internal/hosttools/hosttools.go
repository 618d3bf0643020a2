// Package hosttools is the example agents' own tools, beside ask_user_questions: a
// small repository in memory that the model can list and write to, a database table it
// can ask to drop, and the Policy that gates them. list_files runs without asking,
// write_file waits for the person's approval on the browser panel (who may edit the
// call), and drop_table is refused by a rule.
package hosttools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/askuser-go/askuser"
)

// Tools are the tools, with the JSON Schemas of their arguments, closed and with every
// property required, as strict tool use takes them.
var Tools = []askuser.Tool{
	{
		Name:        "list_files",
		Description: "Lists the files of a directory of the repository.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"dir":{"type":"string","description":"The directory, relative to the repository's root"}},"required":["dir"],"additionalProperties":false}`),
	},
	{
		Name:        "write_file",
		Description: "Writes a file of the repository, replacing it if it exists.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"The file's path, relative to the repository's root"},"content":{"type":"string","description":"The file's whole content"}},"required":["path","content"],"additionalProperties":false}`),
	},
	{
		Name:        "drop_table",
		Description: "Drops a table of the application's database.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"table":{"type":"string","description":"The table's name"}},"required":["table"],"additionalProperties":false}`),
	},
}

// Policy gates the tools: drop_* is refused, write_file is asked about (an edit must
// satisfy its schema), list_files runs.
func Policy() *askuser.Policy {
	return &askuser.Policy{
		Deny:    []askuser.Rule{{Tool: "drop_*"}},
		Ask:     []askuser.Rule{{Tool: "write_file"}},
		Allow:   []askuser.Rule{{Tool: "list_files"}},
		Tools:   Tools,
		Reasons: []string{"Not now", "Wrong place"},
	}
}

// Repo is the repository the tools work on, in memory. Its methods may be called
// concurrently.
type Repo struct {
	mu    sync.Mutex
	files map[string]string // by path; guarded by mu
}

// NewRepo returns the example's repository: a web app with three pages.
func NewRepo() *Repo {
	return &Repo{files: map[string]string{
		"web/src/pages/index.tsx":    "export default function Home() {\n  return <Dashboard />;\n}\n",
		"web/src/pages/profile.tsx":  "export default function Profile() {\n  return <ProfileForm />;\n}\n",
		"web/src/pages/security.tsx": "export default function Security() {\n  return <SecurityForm />;\n}\n",
	}}
}

// Run runs a call of one of the tools, with the arguments the gate allowed: the
// host's askuser.ToolFunc.
func (r *Repo) Run(_ context.Context, call askuser.ToolCall) (string, error) {
	switch call.Name {
	case "list_files":
		var args struct{ Dir string }
		if err := json.Unmarshal(call.Arguments, &args); err != nil {
			return "", err
		}
		dir := strings.Trim(path.Clean(args.Dir), "/")
		r.mu.Lock()
		defer r.mu.Unlock()
		files := []string{}
		for p := range r.files {
			if path.Dir(p) == dir {
				files = append(files, path.Base(p))
			}
		}
		slices.Sort(files)
		b, err := json.Marshal(map[string][]string{"files": files})
		return string(b), err
	case "write_file":
		var args struct{ Path, Content string }
		if err := json.Unmarshal(call.Arguments, &args); err != nil {
			return "", err
		}
		r.mu.Lock()
		r.files[path.Clean(args.Path)] = args.Content
		r.mu.Unlock()
		b, err := json.Marshal(struct {
			Wrote string `json:"wrote"`
			Bytes int    `json:"bytes"`
		}{args.Path, len(args.Content)})
		return string(b), err
	case "drop_table":
		return "", errors.New("this example has no database")
	}
	return "", fmt.Errorf("no such tool: %s", call.Name)
}

// File returns the content of the file at p, and whether there is one.
func (r *Repo) File(p string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.files[p]
	return c, ok
}
