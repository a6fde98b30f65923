package server

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
	if len(fails.Recent) != 1 || fails.Recent[0].JobID != failed.ID || fails.Recent[0].FailureClass != "exit_code" || fails.Recent[0].DurationMS != 50 {
		t.Errorf("recent failures = %+v, want only %s, which ran 50 ms", fails.Recent, failed.ID)
	}
	var oks api.SuccessReport
	h.do("GET", "/successes", nil, &oks)
	want := api.SuccessReport{Total: 5, Succeeded: 4, SuccessRate: 0.8, AvgExecutionTimeMS: 250, MeanDurationMS: 250,
		P50DurationMS: 200, P95DurationMS: 400, P99DurationMS: 400,
		ByTenant: map[string]api.SuccessCounts{"default": {Total: 5, Succeeded: 4, SuccessRate: 0.8, AvgExecutionTimeMS: 250}},
		ByType:   map[string]api.SuccessCounts{"echo": {Total: 5, Succeeded: 4, SuccessRate: 0.8, AvgExecutionTimeMS: 250}}}
	if diff := cmp.Diff(want, oks); diff != "" {
		t.Errorf("successes (-want +got):\n%s", diff)
	}
}

// Issue 28 items 20 and 21: the reports in seed 002's shapes, with
// per-tenant and per-type breakdowns in one call; a cancelled attempt is
// not a failure; an empty range has no compliance (null), not 100%.
func TestReportsBreakDownAndDoNotCountCancelsAsFailures(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w1", Slots: 1})
	h.runOnce(w, api.JobSpec{Type: "echo", Tenant: "acme", MaxAttempts: 1}, api.OutcomeSucceeded, "", 100)
	h.runOnce(w, api.JobSpec{Type: "echo", Tenant: "acme", MaxAttempts: 1}, api.OutcomeFailed, "exit_code", 40)
	h.runOnce(w, api.JobSpec{Type: "encode", Tenant: "globex", MaxAttempts: 1}, api.OutcomeFailed, "exit_code", 60)
	h.runOnce(w, api.JobSpec{Type: "encode", Tenant: "globex", MaxAttempts: 1}, api.OutcomeCancelled, "cancelled", 70)

	var fails api.FailureReport
	h.do("GET", "/failures", nil, &fails)
	if fails.Total != 3 || fails.Failed != 2 || fails.Cancelled != 1 || fails.ByOutcome["cancelled"] != 0 || fails.ByClass["cancelled"] != 0 {
		t.Errorf("failures: total %d failed %d cancelled %d by_outcome %v by_class %v; want 3, 2, 1 and no cancelled among the failures",
			fails.Total, fails.Failed, fails.Cancelled, fails.ByOutcome, fails.ByClass)
	}
	wantTenants := map[string]api.FailureCounts{
		"acme":   {Total: 2, Failed: 1, FailureRate: 0.5},
		"globex": {Total: 1, Failed: 1, Cancelled: 1, FailureRate: 1},
	}
	if diff := cmp.Diff(wantTenants, fails.ByTenant); diff != "" {
		t.Errorf("failures by tenant (-want +got):\n%s", diff)
	}
	if got := fails.ByType["encode"]; got != (api.FailureCounts{Total: 1, Failed: 1, Cancelled: 1, FailureRate: 1}) {
		t.Errorf("failures of type encode: %+v", got)
	}
	for _, f := range fails.Recent {
		if f.Outcome == api.OutcomeCancelled {
			t.Errorf("a cancelled attempt among the recent failures: %+v", f)
		}
	}
	var oks api.SuccessReport
	h.do("GET", "/successes", nil, &oks)
	if oks.Total != 3 || oks.Succeeded != 1 || oks.Cancelled != 1 || oks.ByTenant["acme"].AvgExecutionTimeMS != 100 || oks.ByType["encode"].Succeeded != 0 {
		t.Errorf("successes: %+v", oks)
	}

	var raw map[string]any
	h.do("GET", "/sla-compliance?since=2020-01-01T00:00:00Z&until=2020-01-02T00:00:00Z", nil, &raw)
	if c, ok := raw["compliance"]; !ok || c != nil || raw["total"] != 0.0 {
		t.Errorf("an empty range: compliance %v (present %v), total %v; want null and 0", c, ok, raw["total"])
	}
	period, _ := raw["period"].(map[string]any)
	if period["start"] != "2020-01-01T00:00:00Z" || period["end"] != "2020-01-02T00:00:00Z" {
		t.Errorf("period %v, want the range asked for", raw["period"])
	}
	for _, k := range []string{"avg_execution_time_ms", "avg_sla_violation_percentage"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("sla-compliance has no %s", k)
		}
	}
}

// The SLA report's seed-002 averages: the run time of the measured
// attempts, and how far past their expected time the violated ones ran.
func TestSLAComplianceAverages(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w1", Slots: 1})
	h.runOnce(w, api.JobSpec{Type: "echo", ExpectedMS: 1000, MaxAttempts: 1}, api.OutcomeSucceeded, "", 800)
	h.runOnce(w, api.JobSpec{Type: "echo", ExpectedMS: 1000, MaxAttempts: 1}, api.OutcomeSucceeded, "", 1500)
	var rep api.SLAReport
	h.do("GET", "/sla-compliance", nil, &rep)
	if rep.Total != 2 || rep.Met != 1 || rep.Compliance == nil || *rep.Compliance != 0.5 ||
		rep.AvgExecutionTimeMS != 1150 || rep.AvgSLAViolationPercentage != 50 || rep.Period.Start != nil || rep.Period.End != nil {
		t.Errorf("sla-compliance: %+v (compliance %v)", rep, rep.Compliance)
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
