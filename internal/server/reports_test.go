package server

import (
	"net/http"
	"slices"
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

// Log search: lines are reassembled across chunks, per attempt and
// stream; each matching line comes back whole.
func TestLogSearchFindsLinesAcrossChunks(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	job := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}})
	h.lease(w, 1)
	chunks := []api.LogChunk{
		{JobID: job.ID, Attempt: 1, Stream: "stdout", Seq: 1, Data: "alp"},
		{JobID: job.ID, Attempt: 1, Stream: "stderr", Seq: 2, Data: "oops: alpha failed\n"},
		{JobID: job.ID, Attempt: 1, Stream: "stdout", Seq: 3, Data: "ha\nbe"},
		{JobID: job.ID, Attempt: 1, Stream: "stdout", Seq: 4, Data: "ta\ngamma"},
	}
	if code := h.do("POST", "/workers/"+w+"/logs", api.LogAppendRequest{Chunks: chunks}, nil); code != http.StatusOK {
		t.Fatalf("append logs: HTTP %d", code)
	}
	var got api.LogList
	if code := h.do("GET", "/jobs/"+job.ID+"/logs?q=pha", nil, &got); code != http.StatusOK {
		t.Fatalf("search: HTTP %d", code)
	}
	var lines []string
	for _, c := range got.Chunks {
		lines = append(lines, c.Stream+":"+c.Data)
	}
	if want := []string{"stderr:oops: alpha failed\n", "stdout:alpha\n"}; !slices.Equal(lines, want) {
		t.Errorf("q=pha: %q, want %q", lines, want)
	}
	h.do("GET", "/jobs/"+job.ID+"/logs?q=mm&stream=stdout", nil, &got)
	if len(got.Chunks) != 1 || got.Chunks[0].Data != "gamma\n" {
		t.Errorf("q=mm on stdout (a last line without its newline): %+v", got.Chunks)
	}
	var e api.ErrorResponse
	if code := h.do("GET", "/jobs/"+job.ID+"/logs?q=a&follow=true", nil, &e); code != http.StatusBadRequest || e.Error.Field != "q" {
		t.Errorf("q with follow: HTTP %d %+v", code, e.Error)
	}
}
