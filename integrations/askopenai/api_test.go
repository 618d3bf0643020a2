package askopenai_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// fakeAPI speaks the OpenAI API's HTTP wire format on a loopback server: it answers the
// n-th POST to its path (/chat/completions or /responses) with the n-th response of a
// recorded exchange (testdata/*.json) and keeps every request body, as the SDK sent it.
type fakeAPI struct {
	srv       *httptest.Server
	path      string
	responses []json.RawMessage

	mu       sync.Mutex
	requests [][]byte // guarded by mu
}

func newFakeAPI(t *testing.T, exchange, path string) *fakeAPI {
	t.Helper()
	raw, err := os.ReadFile(exchange)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Responses []json.RawMessage `json:"responses"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("%s: %v", exchange, err)
	}
	api := &fakeAPI{path: path, responses: file.Responses}
	api.srv = httptest.NewServer(http.HandlerFunc(api.serve))
	t.Cleanup(func() {
		api.srv.Client().CloseIdleConnections()
		api.srv.Close()
	})
	return api
}

func (api *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost || r.URL.Path != api.path || r.Header.Get("Authorization") == "" {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"message":"Invalid URL (`+r.Method+` `+r.URL.Path+`)","type":"invalid_request_error","param":null,"code":null}}`)
		return
	}
	api.mu.Lock()
	n := len(api.requests)
	api.requests = append(api.requests, body)
	api.mu.Unlock()
	w.Header().Set("X-Request-Id", "req_replay")
	if n >= len(api.responses) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"the recorded exchange has no more responses","type":"invalid_request_error","param":null,"code":null}}`)
		return
	}
	_, _ = w.Write(api.responses[n])
}

// request returns the n-th request body the API received, decoded.
func (api *fakeAPI) request(t *testing.T, n int) map[string]any {
	t.Helper()
	api.mu.Lock()
	defer api.mu.Unlock()
	if n >= len(api.requests) {
		t.Fatalf("the API received %d requests, not %d", len(api.requests), n+1)
	}
	var v map[string]any
	if err := json.Unmarshal(api.requests[n], &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// client is the SDK's real client, pointed at the fake API.
func (api *fakeAPI) client() openai.Client {
	return openai.NewClient(
		option.WithBaseURL(api.srv.URL),
		option.WithAPIKey("test-key"),
		option.WithHTTPClient(api.srv.Client()),
		option.WithMaxRetries(0),
	)
}
