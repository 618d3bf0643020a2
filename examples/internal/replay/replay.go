// Package replay stands in for an LLM provider's API in the examples that run without
// an API key: it serves a recorded exchange over HTTP.
package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Errors are the bodies of the errors the stand-in sends, in the API's own format.
type Errors struct {
	// NotFound answers a request that is not part of the recorded exchange (404).
	NotFound string
	// ExchangeOver answers a request after the last recorded response (400).
	ExchangeOver string
}

// New serves a recorded exchange on a loopback port: the n-th POST to path gets
// the n-th recorded response, as the API would send it; a request that notAnswered
// says carries the result of a question without an answer (declined, timed out) gets
// the recorded "not_answered" response instead, the model's last turn, and the
// exchange ends there. It stands in for the API when there is no key, so that the
// SDK's real client runs against the API's wire format. errs are the bodies of its
// two errors, in the API's format.
func New(fsys fs.FS, name, path string, notAnswered func(request []byte) bool, errs Errors) (*httptest.Server, error) {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var file struct {
		Responses   []json.RawMessage `json:"responses"`
		NotAnswered json.RawMessage   `json:"not_answered"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var mu sync.Mutex
	next := 0
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost || r.URL.Path != path {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, errs.NotFound)
			return
		}
		unanswered := file.NotAnswered != nil && notAnswered(body)
		mu.Lock()
		n := next
		next++
		if unanswered {
			next = len(file.Responses) // the model's last turn: the exchange is over
		}
		mu.Unlock()
		switch {
		case n >= len(file.Responses):
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, errs.ExchangeOver)
		case unanswered:
			_, _ = w.Write(file.NotAnswered)
		default:
			_, _ = w.Write(file.Responses[n])
		}
	})), nil
}
