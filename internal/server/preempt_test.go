package server

import (
	"net/http"
	"testing"
	"time"

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
	if got := h.get(low.ID); got.State != api.StateRunning || got.Attempt != 1 {
		t.Fatalf("low after submit: %s attempt %d, want running (leased) 1", got.State, got.Attempt)
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
	if got := h.get(low.ID).State; got != api.StateRunning {
		t.Fatalf("low: %s, want still running", got)
	}
}

// TestEqualPriorityDoesNotPreempt: a job of the same priority waits.
func TestEqualPriorityDoesNotPreempt(t *testing.T) {
	h := newHarness(t, defaultConfig())
	h.register(api.RegisterRequest{Name: "w", Slots: 1})
	first := h.submit(api.JobSpec{Type: "t", Priority: intp(500)})
	second := h.submit(api.JobSpec{Type: "t", Priority: intp(500)})
	if got := h.get(first.ID).State; got != api.StateRunning {
		t.Errorf("first: %s, want running", got)
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

// post sends a request from its own goroutine; the answer's body arrives
// on the channel.
func post[T any](h *harness, path string, body any) <-chan answer[T] {
	out := make(chan answer[T], 1)
	go func() {
		var a answer[T]
		a.code = h.do("POST", path, body, &a.body)
		out <- a
	}()
	return out
}

type answer[T any] struct {
	code int
	body T
}

// await takes the answer, failing the test unless it is a success.
func await[T any](t *testing.T, ch <-chan answer[T]) T {
	t.Helper()
	a := <-ch
	if a.code != http.StatusOK && a.code != http.StatusCreated {
		t.Fatalf("HTTP %d: %+v", a.code, a.body)
	}
	return a.body
}

// TestHigherSubmitIsAppliedBeforeTheDiskCatchesUp: a submit that outranks
// a lease still waiting for its commit to be durable is applied at once,
// not gathered behind that commit, and takes the lease's slot before the
// lease can leave.
func TestHigherSubmitIsAppliedBeforeTheDiskCatchesUp(t *testing.T) {
	h, st, _ := startHeld(t)
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	base := st.insertTransactions()

	openLow := st.gate()
	lowAnswer := post[api.SubmitResponse](h, "/jobs", api.JobSpec{Type: "t", Priority: intp(100)})
	waitCond(t, "the low submit committed", func() bool { return st.insertTransactions() == base+1 })
	openHigh := st.gate()
	highAnswer := post[api.SubmitResponse](h, "/jobs", api.JobSpec{Type: "t", Priority: intp(900)})
	waitCond(t, "the high submit committed while the low one is not durable", func() bool { return st.insertTransactions() == base+2 })

	openLow()
	low := await(t, lowAnswer).Job
	openHigh()
	high := await(t, highAnswer).Job
	leases := h.lease(w, 1)
	if len(leases) != 1 || leases[0].Job.ID != high.ID {
		t.Fatalf("leases = %+v, want the high job", leases)
	}
	if got := h.get(low.ID); got.State != api.StatePending || got.Attempt != 0 {
		t.Errorf("low: %s attempt %d, want pending 0", got.State, got.Attempt)
	}
}

// TestLeasesWaitForAHigherOneOnItsWay: a completion report's answer that
// could carry only low jobs while a high job's lease for the same worker
// is committed but not yet durable waits for it, and carries the high job
// first: the worker starts it before the low ones.
func TestLeasesWaitForAHigherOneOnItsWay(t *testing.T) {
	h, st, _ := startHeld(t)
	w := h.register(api.RegisterRequest{Name: "w", Slots: 2})
	var running []api.Completion
	for range 2 {
		h.submit(api.JobSpec{Type: "t", Priority: intp(100)})
	}
	for _, l := range h.lease(w, 2) {
		running = append(running, api.Completion{JobID: l.Job.ID, Attempt: l.Attempt, Outcome: api.OutcomeSucceeded})
	}
	next := h.submit(api.JobSpec{Type: "t", Priority: intp(100)})
	h.submit(api.JobSpec{Type: "t", Priority: intp(100)})
	reports, submits := st.finishTransactions(), st.insertTransactions()

	openReport := st.gate()
	answer := post[api.ItemResults](h, "/workers/"+w+"/complete", api.CompleteRequest{Results: running, LeaseMax: 2})
	waitCond(t, "the report committed", func() bool { return st.finishTransactions() == reports+1 })
	openHigh := st.gate()
	high := post[api.SubmitResponse](h, "/jobs", api.JobSpec{Type: "t", Priority: intp(900)})
	waitCond(t, "the high submit committed", func() bool { return st.insertTransactions() == submits+1 })

	openReport()
	select {
	case a := <-answer:
		t.Fatalf("the report was answered (%d leases) before the high job's lease was durable", len(a.body.Leases))
	case <-time.After(50 * time.Millisecond):
	}
	openHigh()
	r := await(t, answer)
	highJob := await(t, high).Job
	var got []string
	for _, l := range r.Leases {
		got = append(got, l.Job.ID)
	}
	if d := cmp.Diff([]string{highJob.ID, next.ID}, got); d != "" {
		t.Errorf("leases with the report (-want +got):\n%s", d)
	}
}

// TestAnswerWaitsForTheLeaseThatTookItsSlot: when the only lease a
// report's answer would carry was withdrawn for a higher job, the answer
// waits for that job's lease instead of going back empty.
func TestAnswerWaitsForTheLeaseThatTookItsSlot(t *testing.T) {
	h, st, _ := startHeld(t)
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	first := h.submit(api.JobSpec{Type: "t", Priority: intp(100)})
	if leases := h.lease(w, 1); len(leases) != 1 || leases[0].Job.ID != first.ID {
		t.Fatalf("leases = %+v", leases)
	}
	second := h.submit(api.JobSpec{Type: "t", Priority: intp(100)})
	reports, submits := st.finishTransactions(), st.insertTransactions()

	openReport := st.gate()
	done := api.Completion{JobID: first.ID, Attempt: 1, Outcome: api.OutcomeSucceeded}
	answer := post[api.ItemResults](h, "/workers/"+w+"/complete", api.CompleteRequest{Results: []api.Completion{done}, LeaseMax: 1})
	waitCond(t, "the report committed", func() bool { return st.finishTransactions() == reports+1 })
	openHigh := st.gate()
	high := post[api.SubmitResponse](h, "/jobs", api.JobSpec{Type: "t", Priority: intp(900)})
	waitCond(t, "the high submit committed", func() bool { return st.insertTransactions() == submits+1 })

	openReport()
	openHigh()
	r := await(t, answer)
	highJob := await(t, high).Job
	if len(r.Leases) != 1 || r.Leases[0].Job.ID != highJob.ID {
		t.Fatalf("leases with the report = %+v, want the high job", r.Leases)
	}
	if got := h.get(second.ID); got.State != api.StatePending || got.Attempt != 0 {
		t.Errorf("second low: %s attempt %d, want pending 0", got.State, got.Attempt)
	}
}
