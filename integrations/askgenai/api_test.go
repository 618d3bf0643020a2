package askgenai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"
)

// model is the model of the recorded exchanges.
const model = "gemini-2.5-flash"

// fakeAPI speaks the Gemini API's HTTP wire format on a loopback server: it answers the
// n-th POST /v1beta/models/{model}:generateContent with the n-th response of a recorded
// exchange (testdata/*.json) and keeps every request body, as the SDK sent it.
type fakeAPI struct {
	srv       *httptest.Server
	responses []json.RawMessage

	mu       sync.Mutex
	requests [][]byte // guarded by mu
}

func newFakeAPI(t *testing.T, exchange string) *fakeAPI {
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
	api := &fakeAPI{responses: file.Responses}
	api.srv = httptest.NewServer(http.HandlerFunc(api.serve))
	t.Cleanup(func() {
		api.srv.Client().CloseIdleConnections()
		api.srv.Close()
	})
	return api
}

func (api *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if r.Method != http.MethodPost || r.URL.Path != "/v1beta/models/"+model+":generateContent" || r.Header.Get("X-Goog-Api-Key") == "" {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"code":404,"message":"`+strings.ReplaceAll(r.URL.Path, `"`, "")+` is not found","status":"NOT_FOUND"}}`)
		return
	}
	api.mu.Lock()
	n := len(api.requests)
	api.requests = append(api.requests, body)
	api.mu.Unlock()
	if n >= len(api.responses) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"code":400,"message":"the recorded exchange has no more responses","status":"INVALID_ARGUMENT"}}`)
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

// client is the SDK's real client for the Gemini API, pointed at the fake API.
func (api *fakeAPI) client(t *testing.T) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      "test-key",
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  api.srv.Client(),
		HTTPOptions: genai.HTTPOptions{BaseURL: api.srv.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
