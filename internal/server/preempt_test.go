package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
)

// TestHighTakesAnUndeliveredSlot: a low job leased to a worker that has not
// polled yet gives its slot to a high job submitted next; the worker gets
// only the high job, and the low one runs after it with the attempt it
// would have had.
func TestHighTakesAnUndeliveredSlot(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	low := h.submit(api.JobSpec{Type: "t", Priority: intp(100)})
	if got := h.get(low.ID); got.State != api.StateLeased || got.Attempt != 1 {
		t.Fatalf("low after submit: %s attempt %d, want leased 1", got.State, got.Attempt)
	}
	high := h.submit(api.JobSpec{Type: "t", Priority: intp(900)})
	if got := h.get(low.ID); got.State != api.StatePending || got.Attempt != 0 || got.WorkerID != "" {
		t.Fatalf("low after the high submit: %s attempt %d worker %q, want pending 0", got.State, got.Attempt, got.WorkerID)
	}
	leases := h.lease(w, 1)
	if len(leases) != 1 || leases[0].Job.ID != high.ID || leases[0].Attempt != 1 {
		t.Fatalf("leases = %+v, want the high job at attempt 1", leases)
	}
	if r := h.complete(w, api.Completion{JobID: high.ID, Attempt: 1, Outcome: api.OutcomeSucceeded}); !r.OK {
		t.Fatalf("complete high: %+v", r)
	}
	leases = h.lease(w, 1)
	if len(leases) != 1 || leases[0].Job.ID != low.ID || leases[0].Attempt != 1 {
		t.Fatalf("then leases = %+v, want the low job at attempt 1", leases)
	}
	want := []string{"submitted", "leased", "unleased", "leased"}
	if d := cmp.Diff(want, h.events(low.ID)); d != "" {
		t.Errorf("low's audit trail (-want +got):\n%s", d)
	}
}

// TestDeliveredLeaseIsNotWithdrawn: once the worker holds the low job, a
// high one waits for a free slot.
func TestDeliveredLeaseIsNotWithdrawn(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	low := h.submit(api.JobSpec{Type: "t", Priority: intp(100)})
	if leases := h.lease(w, 1); len(leases) != 1 || leases[0].Job.ID != low.ID {
		t.Fatalf("leases = %+v", leases)
	}
	high := h.submit(api.JobSpec{Type: "t", Priority: intp(900)})
	if got := h.get(high.ID).State; got != api.StatePending {
		t.Fatalf("high: %s, want pending", got)
	}
	if got := h.get(low.ID).State; got != api.StateLeased {
		t.Fatalf("low: %s, want still leased", got)
	}
}

// TestEqualPriorityDoesNotPreempt: a job of the same priority waits.
func TestEqualPriorityDoesNotPreempt(t *testing.T) {
	h := newHarness(t, defaultConfig())
	h.register(api.RegisterRequest{Name: "w", Slots: 1})
	first := h.submit(api.JobSpec{Type: "t", Priority: intp(500)})
	second := h.submit(api.JobSpec{Type: "t", Priority: intp(500)})
	if got := h.get(first.ID).State; got != api.StateLeased {
		t.Errorf("first: %s, want leased", got)
	}
	if got := h.get(second.ID).State; got != api.StatePending {
		t.Errorf("second: %s, want pending", got)
	}
}

// TestDeliveryHighestPriorityFirst: leases made in different batches reach
// the worker best priority first, since it starts them in that order.
func TestDeliveryHighestPriorityFirst(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 3})
	low := h.submit(api.JobSpec{Type: "t", Priority: intp(100)})
	mid := h.submit(api.JobSpec{Type: "t", Priority: intp(500)})
	high := h.submit(api.JobSpec{Type: "t", Priority: intp(900)})
	var got []string
	for _, l := range h.lease(w, 3) {
		got = append(got, l.Job.ID)
	}
	if d := cmp.Diff([]string{high.ID, mid.ID, low.ID}, got); d != "" {
		t.Errorf("delivery order (-want +got):\n%s", d)
	}
}

// TestCompleteReturnsLeases: a completion report that asks for leases gets
// the jobs leased into the slots it frees, in the same answer.
func TestCompleteReturnsLeases(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	a := h.submit(api.JobSpec{Type: "t"})
	b := h.submit(api.JobSpec{Type: "t"})
	if leases := h.lease(w, 1); len(leases) != 1 || leases[0].Job.ID != a.ID {
		t.Fatalf("leases = %+v", leases)
	}
	var r api.ItemResults
	req := api.CompleteRequest{Results: []api.Completion{{JobID: a.ID, Attempt: 1, Outcome: api.OutcomeSucceeded}}, LeaseMax: 1}
	if code := h.do("POST", "/workers/"+w+"/complete", req, &r); code != 200 {
		t.Fatalf("complete: HTTP %d", code)
	}
	if len(r.Results) != 1 || !r.Results[0].OK || len(r.Leases) != 1 || r.Leases[0].Job.ID != b.ID || r.Leases[0].Attempt != 1 {
		t.Fatalf("complete answer = %+v, want a's result and b's lease", r)
	}
	if leases := h.lease(w, 1); len(leases) != 0 {
		t.Errorf("b was handed out twice: %+v", leases)
	}
	for _, bad := range []int{-1, 1001} {
		var e api.ErrorResponse
		req := api.CompleteRequest{Results: []api.Completion{{JobID: b.ID, Attempt: 1, Outcome: api.OutcomeSucceeded}}, LeaseMax: bad}
		if code := h.do("POST", "/workers/"+w+"/complete", req, &e); code != 400 || e.Error.Field != "lease_max" {
			t.Errorf("lease_max %d: HTTP %d %+v, want 400 on lease_max", bad, code, e.Error)
		}
	}
}
