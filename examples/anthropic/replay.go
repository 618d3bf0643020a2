package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"sync"
)

// newReplay serves a recorded exchange on a loopback port: the n-th POST to path gets
// the n-th recorded response, as the API would send it; the last one is the recorded
// "not_answered" response instead when notAnswered says the request carries a tool
// result without an answer. It stands in for the API when there is no key, so that the
// SDK's real client runs against the API's wire format.
func newReplay(fsys fs.FS, name, path string, notAnswered func(request []byte) bool) (*httptest.Server, error) {
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
			_, _ = io.WriteString(w, notFound)
			return
		}
		mu.Lock()
		n := next
		next++
		mu.Unlock()
		switch {
		case n >= len(file.Responses):
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, exchangeOver)
		case n == len(file.Responses)-1 && file.NotAnswered != nil && notAnswered(body):
			_, _ = w.Write(file.NotAnswered)
		default:
			_, _ = w.Write(file.Responses[n])
		}
	})), nil
}

// The API's errors, in its format.
const (
	notFound     = `{"type":"error","error":{"type":"not_found_error","message":"not part of the recorded exchange"}}`
	exchangeOver = `{"type":"error","error":{"type":"invalid_request_error","message":"the recorded exchange is over"}}`
)
