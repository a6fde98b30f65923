package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a settable clock; the dispatcher reads it at every batch.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// harness is a real server on a real SQLite file behind a loopback HTTP
// server, with an injected clock.
type harness struct {
	t     testing.TB
	clock *fakeClock
	srv   *Server
	http  *httptest.Server
	path  string
	key   string // API key sent, if any
}

func newHarness(t testing.TB, cfg config.Config) *harness {
	t.Helper()
	return startHarness(t, cfg, filepath.Join(t.TempDir(), "fairway.db"), &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)})
}

func startHarness(t testing.TB, cfg config.Config, path string, clock *fakeClock) *harness {
	t.Helper()
	return startHarnessLogging(t, cfg, path, clock, nil)
}

// startHarnessLogging is startHarness with the server's log (debug level)
// written to logs (nil: discarded).
func startHarnessLogging(t testing.TB, cfg config.Config, path string, clock *fakeClock, logs io.Writer) *harness {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var logger *slog.Logger
	if logs != nil {
		logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	srv, err := New(Options{Store: st, Config: cfg, Clock: clock, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: clock, srv: srv, http: httptest.NewServer(srv.Handler()), path: path}
	t.Cleanup(func() { h.stop(); st.Close() })
	return h
}

func (h *harness) stop() {
	h.http.Close()
	h.srv.Close()
}

func defaultConfig() config.Config {
	c := config.Default()
	c.Server.LeaseTTL = config.Duration(30 * time.Second)
	c.Server.HeartbeatInterval = config.Duration(10 * time.Second)
	return c
}

// do sends a JSON request and decodes the answer into out (if non-nil).
func (h *harness) do(method, path string, body any, out any) int {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		if s, ok := body.(string); ok {
			rd = strings.NewReader(s)
		} else {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
	}
	req, _ := http.NewRequest(method, h.http.URL+"/api/v1"+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if h.key != "" {
		req.Header.Set("Authorization", "Bearer "+h.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			h.t.Fatalf("%s %s: decode %q: %v", method, path, b, err)
		}
	}
	return resp.StatusCode
}

func (h *harness) submit(spec api.JobSpec) api.Job {
	h.t.Helper()
	var r api.SubmitResponse
	if code := h.do("POST", "/jobs", spec, &r); code != http.StatusCreated && code != http.StatusOK {
		h.t.Fatalf("submit: HTTP %d", code)
	}
	return r.Job
}

func (h *harness) get(id string) api.Job {
	h.t.Helper()
	var r api.JobResponse
	if code := h.do("GET", "/jobs/"+id, nil, &r); code != http.StatusOK {
		h.t.Fatalf("get %s: HTTP %d", id, code)
	}
	return r.Job
}

func (h *harness) register(req api.RegisterRequest) string {
	h.t.Helper()
	var r api.RegisterResponse
	if code := h.do("POST", "/workers/register", req, &r); code != http.StatusCreated {
		h.t.Fatalf("register: HTTP %d", code)
	}
	return r.WorkerID
}

func (h *harness) lease(worker string, max int) []api.Lease {
	h.t.Helper()
	var r api.LeaseResponse
	if code := h.do("POST", "/workers/"+worker+"/lease", api.LeaseRequest{Max: max, WaitMS: 0}, &r); code != http.StatusOK {
		h.t.Fatalf("lease: HTTP %d", code)
	}
	return r.Leases
}

func (h *harness) complete(worker string, c api.Completion) api.ItemResult {
	h.t.Helper()
	var r api.ItemResults
	if code := h.do("POST", "/workers/"+worker+"/complete", api.CompleteRequest{Results: []api.Completion{c}}, &r); code != http.StatusOK {
		h.t.Fatalf("complete: HTTP %d", code)
	}
	return r.Results[0]
}

func (h *harness) start(worker, id string, attempt int) api.ItemResult {
	h.t.Helper()
	var r api.ItemResults
	h.do("POST", "/workers/"+worker+"/start", api.StartRequest{Jobs: []api.JobAttempt{{JobID: id, Attempt: attempt}}}, &r)
	return r.Results[0]
}

// tick makes the dispatcher run a batch (housekeeping included) at the
// clock's current time.
func (h *harness) tick() {
	h.t.Helper()
	h.do("GET", "/lanes", nil, nil)
}

func (h *harness) events(id string) []string {
	h.t.Helper()
	var r api.EventList
	h.do("GET", "/jobs/"+id+"/events", nil, &r)
	var out []string
	for _, e := range r.Events {
		out = append(out, e.Type)
	}
	return out
}

func intp(v int) *int { return &v }

// keyedConfig is the default configuration with an admin key, the tenants
// acme and globex with a key each, and a worker key (named by their role:
// "admin-key-0123456789", "acme-key-0123456789", ...).
func keyedConfig() config.Config {
	cfg := defaultConfig()
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	cfg.Tenants = map[string]config.Tenant{
		"acme":   {APIKeys: []string{"acme-key-0123456789"}},
		"globex": {APIKeys: []string{"globex-key-0123456789"}},
	}
	cfg.Workers.APIKeys = []string{"worker-key-0123456789"}
	return cfg
}

// heartbeat reports the worker holding one attempt and returns the answer.
func (h *harness) heartbeat(worker, id string, attempt int) api.HeartbeatResponse {
	h.t.Helper()
	var r api.HeartbeatResponse
	req := api.HeartbeatRequest{Jobs: []api.JobAttempt{{JobID: id, Attempt: attempt}}}
	var raw json.RawMessage
	if code := h.do("POST", "/workers/"+worker+"/heartbeat", req, &raw); code != 200 {
		h.t.Fatalf("heartbeat: HTTP %d: %s", code, raw)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		h.t.Fatal(err)
	}
	return r
}
