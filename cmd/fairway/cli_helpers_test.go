package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// apiRequest is one request as the fake API received it.
type apiRequest struct {
	Method, Path string
	Query        url.Values
	Header       http.Header
	Body         []byte
}

// apiFake is an httptest server answering the routes a test gives (Go
// mux patterns such as "GET /api/v1/jobs/{id}"); it records every request
// and fails the test on any other route.
type apiFake struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []apiRequest
}

func newAPIFake(t *testing.T, routes map[string]http.HandlerFunc) *apiFake {
	t.Helper()
	f := &apiFake{}
	mux := http.NewServeMux()
	for pattern, h := range routes {
		mux.HandleFunc(pattern, h)
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, apiRequest{r.Method, r.URL.EscapedPath(), r.URL.Query(), r.Header.Clone(), body})
		f.mu.Unlock()
		if _, pattern := mux.Handler(r); pattern == "" {
			t.Errorf("unexpected request %s %s", r.Method, r.URL)
			jsonReply(w, 404, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeNotFound, Message: "no route"}})
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *apiFake) requests() []apiRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]apiRequest(nil), f.reqs...)
}

// only returns the one request the fake received.
func (f *apiFake) only(t *testing.T) apiRequest {
	t.Helper()
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1: %+v", len(reqs), reqs)
	}
	return reqs[0]
}

// runCLI runs "fairway CMD --server URL ARGS..." and returns its exit code,
// stdout and stderr.
func runCLI(t *testing.T, server, cmd string, args ...string) (int, string, string) {
	t.Helper()
	return runCmd(t, append([]string{cmd, "--server", server}, args...)...)
}

func jsonReply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func replyWith(status int, v any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { jsonReply(w, status, v) }
}

func replyError(status int, code, msg string) http.HandlerFunc {
	return replyWith(status, api.ErrorResponse{Error: api.ErrorBody{Code: code, Message: msg}})
}

// sse writes Server-Sent Events, each flushed.
type sse struct{ w http.ResponseWriter }

func openSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
	return sse{w}
}

func (s sse) send(event string, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", event, b)
	s.w.(http.Flusher).Flush()
}

var at = time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)

func testJob(id, state string) api.Job {
	return api.Job{ID: id, Type: "report", Tenant: "acme", Lane: "batch", Priority: 500, State: state,
		MaxAttempts: 1, CreatedAt: at, UpdatedAt: at}
}

func logChunk(seq int64, stream, data string) api.LogChunk {
	return api.LogChunk{JobID: "j1", Attempt: 1, Stream: stream, Seq: seq, At: at, Data: data}
}

// decodeJSON decodes s into a T or fails the test.
func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return v
}
