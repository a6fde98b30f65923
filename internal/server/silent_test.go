package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// A worker that missed its heartbeats is offered no new work, long before
// its lease TTL makes it lost: the lease waiting in its mailbox goes to a
// worker that calls in, and so do new jobs. When it calls again, it gets
// work again.
func TestASilentWorkerIsOfferedNoNewWork(t *testing.T) {
	h := newHarness(t, defaultConfig()) // heartbeat 10s, lease TTL 30s
	quiet := h.register(api.RegisterRequest{Name: "quiet", Slots: 1})
	alive := h.register(api.RegisterRequest{Name: "alive", Slots: 2})
	beat := func(w string) {
		t.Helper()
		if code := h.do("POST", "/workers/"+w+"/heartbeat", api.HeartbeatRequest{}, nil); code != http.StatusOK {
			t.Fatalf("heartbeat of %s: HTTP %d", w, code)
		}
	}
	// Placement prefers the first worker (equal capacity, lower id): the
	// lease waits in its mailbox; it never polls.
	waiting := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}})
	if got := h.get(waiting.ID).WorkerID; got != quiet {
		t.Fatalf("first job leased to %q, want %q (the test's premise)", got, quiet)
	}
	h.clock.Advance(21 * time.Second) // over two heartbeat intervals: missed, and the lease TTL (30 s) not out
	beat(alive)
	if got := h.get(waiting.ID); got.WorkerID != alive && got.State != api.StatePending {
		t.Fatalf("the lease in the silent worker's mailbox: %s on %q; want it withdrawn, then leased to %s", got.State, got.WorkerID, alive)
	}
	var ws api.WorkerList
	h.do("GET", "/workers", nil, &ws)
	for _, w := range ws.Workers {
		if want := map[string]string{quiet: "silent", alive: "active"}[w.ID]; w.State != want {
			t.Errorf("GET /workers: %s is %q, want %q", w.Name, w.State, want)
		}
	}
	fresh := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}})
	if got := h.get(fresh.ID).WorkerID; got != alive {
		t.Fatalf("a job submitted while %s is silent went to %q, want %s", quiet, got, alive)
	}
	if got := h.get(waiting.ID).WorkerID; got != alive {
		t.Fatalf("the withdrawn job is on %q, want %s", got, alive)
	}
	if evs := h.events(waiting.ID); !contains(evs, "unleased") {
		t.Errorf("events of the withdrawn job %v: no unleased", evs)
	}
	// It calls again: it is offered work again.
	beat(quiet)
	again := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}})
	if got := h.get(again.ID).WorkerID; got != quiet {
		t.Fatalf("after it called again, a new job went to %q, want %s", got, quiet)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
