package server

import (
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Issue 28 item 4: a job whose back-off has passed is pending, whether or
// not a worker that can run it is registered (explain then says
// no_compatible_worker), as docs/api.md says.
func TestRetryWaitBecomesPendingWithoutACompatibleWorker(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1, Types: []string{"t"}})
	j := h.submit(api.JobSpec{Type: "t", MaxAttempts: 3, Retry: &api.RetryPolicy{Kind: "fixed", DelayMS: 1000}, Command: []string{"false"}})
	if ls := h.lease(w, 1); len(ls) != 1 {
		t.Fatalf("leases = %+v", ls)
	}
	code := 1
	if r := h.complete(w, api.Completion{JobID: j.ID, Attempt: 1, Outcome: api.OutcomeFailed, FailureClass: api.FailExitCode, ExitCode: &code}); !r.OK {
		t.Fatalf("complete: %+v", r)
	}
	if got := h.get(j.ID).State; got != api.StateRetryWait {
		t.Fatalf("after the failure: %s, want retry_wait", got)
	}
	h.do("POST", "/workers/"+w+"/deregister", map[string]any{}, nil)
	h.clock.Advance(2 * time.Second)
	h.tick()
	if got := h.get(j.ID).State; got != api.StatePending {
		t.Fatalf("after the back-off, with no worker for its type: %s, want pending", got)
	}
	var x api.Explanation
	h.do("GET", "/jobs/"+j.ID+"/explain", nil, &x)
	if x.Code != "no_compatible_worker" {
		t.Errorf("explain = %+v, want no_compatible_worker", x)
	}
}

// The same when the attempt was lost with its worker (lease expired).
func TestRetryWaitAfterALostWorkerBecomesPending(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1, Types: []string{"t"}})
	j := h.submit(api.JobSpec{Type: "t", MaxAttempts: 3, Retry: &api.RetryPolicy{Kind: "fixed", DelayMS: 1000}, Command: []string{"false"}})
	h.lease(w, 1)
	h.start(w, j.ID, 1)
	h.clock.Advance(31 * time.Second) // past lease_ttl: the worker is lost
	h.tick()
	st := h.get(j.ID).State
	h.clock.Advance(2 * time.Second)
	h.tick()
	h.tick()
	if got := h.get(j.ID).State; got != api.StatePending {
		t.Fatalf("after the lost attempt (%s) and its back-off: %s, want pending", st, got)
	}
}
