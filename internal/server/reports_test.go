package server

import (
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// runOnce leases, starts and ends one job with the given outcome.
func (h *harness) runOnce(w string, spec api.JobSpec, outcome, class string, ms int64) api.Job {
	h.t.Helper()
	job := h.submit(spec)
	leases := h.lease(w, 1)
	if len(leases) != 1 || leases[0].Job.ID != job.ID {
		h.t.Fatalf("leases = %+v, want %s", leases, job.ID)
	}
	exit := 0
	if outcome != api.OutcomeSucceeded {
		exit = 3
	}
	end := h.clock.Now()
	began := end.Add(-time.Duration(ms) * time.Millisecond)
	if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: leases[0].Attempt, Outcome: outcome,
		FailureClass: class, ExitCode: &exit, StartedAt: &began, FinishedAt: &end}); !r.OK {
		h.t.Fatalf("complete: %+v", r)
	}
	return job
}

func TestFailuresAndSuccessesReportTheirOwnSide(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w1", Slots: 1})
	for _, ms := range []int64{100, 200, 300, 400} {
		h.runOnce(w, api.JobSpec{Type: "echo", MaxAttempts: 1}, api.OutcomeSucceeded, "", ms)
	}
	failed := h.runOnce(w, api.JobSpec{Type: "echo", MaxAttempts: 1}, api.OutcomeFailed, "exit_code", 50)

	var fails api.FailureReport
	h.do("GET", "/failures", nil, &fails)
	if fails.Total != 5 || fails.Failed != 1 || fails.ByClass["exit_code"] != 1 || fails.FailureRate != 0.2 {
		t.Errorf("failures = %+v", fails)
	}
	if len(fails.Recent) != 1 || fails.Recent[0].JobID != failed.ID || fails.Recent[0].FailureClass != "exit_code" {
		t.Errorf("recent failures = %+v, want only %s", fails.Recent, failed.ID)
	}
	var oks api.SuccessReport
	h.do("GET", "/successes", nil, &oks)
	want := api.SuccessReport{Total: 5, Succeeded: 4, SuccessRate: 0.8, MeanDurationMS: 250,
		P50DurationMS: 200, P95DurationMS: 400, P99DurationMS: 400}
	if oks != want {
		t.Errorf("successes = %+v, want %+v", oks, want)
	}
}
