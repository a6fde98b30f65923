package client

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fairwayhq/fairway/api"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// seen is one request as the fake server received it.
type seen struct {
	Method string
	Path   string // escaped
	Query  map[string][]string
	Header http.Header
	Body   []byte
}

// fake is an httptest server whose handler the test supplies; it records
// every request.
type fake struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newFake(t *testing.T, h http.HandlerFunc) (*Client, *fake) {
	t.Helper()
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, seen{r.Method, r.URL.EscapedPath(), r.URL.Query(), r.Header.Clone(), body})
		f.mu.Unlock()
		h(w, r)
	}))
	c, err := New(f.URL, WithAPIKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.CloseIdleConnections()
		f.Close()
	})
	return c, f
}

// last returns the most recent request.
func (f *fake) last(t *testing.T) seen {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	return f.reqs[len(f.reqs)-1]
}

func (f *fake) all() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

// reply answers status with v as JSON.
func reply(status int, v any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, status, v)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(status int, code, msg string) http.HandlerFunc {
	return reply(status, api.ErrorResponse{Error: api.ErrorBody{Code: code, Message: msg}})
}

// sseWriter writes Server-Sent Events and flushes each.
type sseWriter struct {
	w http.ResponseWriter
}

func startSSE(w http.ResponseWriter) sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	return sseWriter{w}
}

func (s sseWriter) event(name string, v any) {
	b, _ := json.Marshal(v)
	_, _ = io.WriteString(s.w, "event: "+name+"\ndata: "+string(b)+"\n\n")
	s.w.(http.Flusher).Flush()
}

func (s sseWriter) raw(text string) {
	_, _ = io.WriteString(s.w, text)
	s.w.(http.Flusher).Flush()
}

var t0 = time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)

func job(id, state string) api.Job {
	return api.Job{ID: id, Type: "report", Tenant: "acme", Lane: "batch", Priority: 500, State: state,
		MaxAttempts: 1, CreatedAt: t0, UpdatedAt: t0}
}

func chunk(seq int64, stream, data string) api.LogChunk {
	return api.LogChunk{JobID: "j1", Attempt: 1, Stream: stream, Seq: seq, At: t0, Data: data}
}
