package server

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
)

// A snoozed attempt sends its job back to blocked until the delay has
// passed, uncharged: a job of one attempt snoozes, runs again and
// succeeds.
func TestSnoozeBlocksTheJobUntilItsDelayUncharged(t *testing.T) {
	h := newHarness(t, defaultConfig())
	job := h.submit(api.JobSpec{Type: "poll", Command: []string{"true"}, MaxAttempts: 1})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	h.lease(w, 1)
	h.start(w, job.ID, 1)
	if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: api.OutcomeSnoozed, SnoozeMS: 10000}); !r.OK {
		t.Fatalf("snooze: %+v", r)
	}
	got := h.get(job.ID)
	if got.State != api.StateBlocked || got.Snoozes != 1 || got.ReturnedLeases != 1 || got.MaxSnoozes != 100 ||
		got.RunAt == nil || !got.RunAt.Equal(h.clock.Now().Add(10*time.Second)) {
		t.Fatalf("after the snooze: state %s snoozes %d/%d returned %d run_at %v", got.State, got.Snoozes, got.MaxSnoozes, got.ReturnedLeases, got.RunAt)
	}
	if ls := h.lease(w, 1); len(ls) != 0 {
		t.Fatalf("leased while snoozed: %+v", ls)
	}
	h.clock.Advance(10 * time.Second)
	h.tick()
	ls := h.lease(w, 1)
	if len(ls) != 1 || ls[0].Attempt != 2 {
		t.Fatalf("after the delay: leases %+v, want attempt 2", ls)
	}
	if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: 2, Outcome: api.OutcomeSucceeded, ExitCode: intp(0)}); !r.OK {
		t.Fatalf("complete: %+v", r)
	}
	if got := h.get(job.ID).State; got != api.StateSucceeded {
		t.Fatalf("final state %s", got)
	}
	want := []string{"submitted", "leased", "started", "snoozed", "leased", "started", "succeeded"}
	if diff := cmp.Diff(want, h.events(job.ID)); diff != "" {
		t.Fatalf("audit trail (-want +got):\n%s", diff)
	}
	var report api.FailureReport
	h.do("GET", "/failures", nil, &report)
	if report.Snoozed != 1 || report.Cancelled != 0 || report.Total != 1 || report.ByClass["snoozed"] != 0 {
		t.Fatalf("failures report: %+v", report)
	}
	var execs api.ExecutionList
	h.do("GET", "/jobs/"+job.ID+"/executions", nil, &execs)
	if len(execs.Executions) != 2 || execs.Executions[0].Outcome != api.OutcomeSnoozed || execs.Executions[0].FailureClass != api.FailSnoozed {
		t.Fatalf("executions: %+v", execs.Executions)
	}
}

// Past max_snoozes, a snooze fails the job with the class snooze_limit.
func TestSnoozePastMaxSnoozesFailsTheJob(t *testing.T) {
	h := newHarness(t, defaultConfig())
	job := h.submit(api.JobSpec{Type: "poll", Command: []string{"true"}, MaxSnoozes: 2})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	for attempt := 1; attempt <= 3; attempt++ {
		ls := h.lease(w, 1)
		if len(ls) != 1 || ls[0].Attempt != attempt {
			t.Fatalf("lease %d: %+v", attempt, ls)
		}
		if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: attempt, Outcome: api.OutcomeSnoozed, SnoozeMS: 1000}); !r.OK {
			t.Fatalf("snooze %d: %+v", attempt, r)
		}
		h.clock.Advance(time.Second)
		h.tick()
	}
	got := h.get(job.ID)
	if got.State != api.StateFailed || got.FailureClass != api.FailSnoozeLimit || got.Snoozes != 2 {
		t.Fatalf("after 3 snoozes of max 2: state %s class %s snoozes %d (%s) %v", got.State, got.FailureClass, got.Snoozes, got.LastError, h.events(job.ID))
	}
	// A retry gives it its snoozes again.
	var retried api.ActionResponse
	h.do("POST", "/jobs/"+job.ID+"/retry", nil, &retried)
	ls := h.lease(w, 1)
	if len(ls) != 1 {
		t.Fatalf("after the retry: leases %+v", ls)
	}
	if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: ls[0].Attempt, Outcome: api.OutcomeSnoozed, SnoozeMS: 1000}); !r.OK {
		t.Fatalf("snooze after the retry: %+v", r)
	}
	if got := h.get(job.ID); got.State != api.StateBlocked || got.Snoozes != 1 {
		t.Fatalf("snoozed after the retry: state %s snoozes %d (%s)", got.State, got.Snoozes, got.LastError)
	}
}

// A snooze of -1 or of ten years is refused with invalid_snooze and
// changes nothing; a bad max_snoozes is refused at submit.
func TestBadSnoozesAreRefused(t *testing.T) {
	h := newHarness(t, defaultConfig())
	job := h.submit(api.JobSpec{Type: "poll", Command: []string{"true"}})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	h.lease(w, 1)
	h.start(w, job.ID, 1)
	for _, ms := range []int64{-1, 0, 10 * 365 * 24 * 3600 * 1000} {
		r := h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: api.OutcomeSnoozed, SnoozeMS: ms})
		if r.OK || r.Error == nil || r.Error.Code != api.CodeInvalidSnooze || r.Error.Field != "snooze_ms" {
			t.Fatalf("snooze_ms %d: %+v, want refused with %s", ms, r, api.CodeInvalidSnooze)
		}
	}
	if got := h.get(job.ID); got.State != api.StateRunning || got.Snoozes != 0 {
		t.Fatalf("after refused snoozes: state %s snoozes %d", got.State, got.Snoozes)
	}
	if slices.Contains(h.events(job.ID), "snoozed") {
		t.Fatalf("a refused snooze left an event")
	}
	var e api.ErrorResponse
	if code := h.do("POST", "/jobs", api.JobSpec{Type: "poll", MaxSnoozes: -1}, &e); code != 400 || e.Error.Field != "max_snoozes" {
		t.Fatalf("max_snoozes -1: HTTP %d %+v", code, e.Error)
	}
}

// A snoozed attempt is not charged in memory either: a job of two
// attempts that snoozed once is retried after its next attempt fails.
func TestSnoozedAttemptIsNotChargedAtTheNextFailure(t *testing.T) {
	h := newHarness(t, defaultConfig())
	job := h.submit(api.JobSpec{Type: "poll", Command: []string{"true"}, MaxAttempts: 2, Retry: &api.RetryPolicy{Kind: "immediate"}})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	for attempt := 1; attempt <= 2; attempt++ {
		if ls := h.lease(w, 1); len(ls) != 1 || ls[0].Attempt != attempt {
			t.Fatalf("lease %d: %+v", attempt, ls)
		}
		if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: attempt, Outcome: api.OutcomeSnoozed, SnoozeMS: 1000}); !r.OK {
			t.Fatalf("snooze %d: %+v", attempt, r)
		}
		h.clock.Advance(time.Second)
		h.tick()
	}
	h.lease(w, 1)
	h.complete(w, api.Completion{JobID: job.ID, Attempt: 3, Outcome: api.OutcomeFailed, ExitCode: intp(1), FailureClass: api.FailExitCode})
	if got := h.get(job.ID); api.Terminal(got.State) || got.ReturnedLeases != 2 {
		t.Fatalf("after 2 snoozes and 1 failure of max_attempts 2: %s (%s), returned_leases %d", got.State, got.LastError, got.ReturnedLeases)
	}
}
