package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// With WithoutGeneratedKeys, Submit and SubmitBatch send a spec without an
// idempotency key as it is (a key the caller gave is still sent), and a
// submit whose outcome is unknown (maybe_applied) is not sent again.
func TestWithoutGeneratedKeys(t *testing.T) {
	var hits atomic.Int32
	var mu sync.Mutex
	var keys []string
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		bodies = append(bodies, string(b))
		mu.Unlock()
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"maybe_applied","message":"may have been applied"}}`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, WithRetryDeadline(1500*time.Millisecond), WithoutGeneratedKeys())
	if err != nil {
		t.Fatal(err)
	}
	var ae *api.Error
	if _, err := c.Submit(context.Background(), api.JobSpec{Type: "r"}); !errors.As(err, &ae) || ae.Code != api.CodeMaybeApplied {
		t.Errorf("unkeyed submit answered maybe_applied: err %v, want that answer", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits.Load() != 1 || keys[0] != "" || bodies[0] != `{"type":"r"}` {
		t.Errorf("unkeyed submit: %d requests, key %q, body %s; want one request, no key", hits.Load(), keys[0], bodies[0])
	}
	mu.Unlock()
	if _, err := c.SubmitBatch(context.Background(), []api.JobSpec{{Type: "r"}}); !errors.As(err, &ae) || ae.Code != api.CodeMaybeApplied {
		t.Errorf("unkeyed batch answered maybe_applied: err %v, want that answer", err)
	}
	mu.Lock()
	if hits.Load() != 2 || bodies[1] != `{"jobs":[{"type":"r"}]}` {
		t.Errorf("unkeyed batch: %d requests in all, body %s; want one request, no key", hits.Load(), bodies[1])
	}
	// A key the caller gives is sent, and makes the submit safe to repeat.
	hits.Store(0)
	mu.Unlock()
	_, _ = c.Submit(context.Background(), api.JobSpec{Type: "r", IdempotencyKey: "k1"})
	mu.Lock()
	if hits.Load() < 2 || keys[2] != "k1" {
		t.Errorf("keyed submit: %d requests, key %q; want it repeated with k1", hits.Load(), keys[2])
	}
}
