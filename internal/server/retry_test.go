package server

import (
	"net/http"
	"slices"
	"testing"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// A failed job retried by hand runs again as a new attempt of the same job,
// with one more attempt than it had used, a "retried" event naming who did
// it, and its first execution kept; a job that has not ended, or that
// succeeded, is left alone.
func TestRetryRunsAFailedJobAgainAsANewAttempt(t *testing.T) {
	h := newHarness(t, defaultConfig())
	job := h.submit(api.JobSpec{Type: "flaky", MaxAttempts: 1})
	ok := h.submit(api.JobSpec{Type: "fine"})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 2})
	if ls := h.lease(w, 2); len(ls) != 2 {
		t.Fatalf("leases: %+v", ls)
	}
	h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: "failed", ExitCode: intp(3), FailureClass: "exit_code", Error: "exit 3"})
	h.complete(w, api.Completion{JobID: ok.ID, Attempt: 1, Outcome: "succeeded", ExitCode: intp(0)})

	var r api.ActionResponse
	if code := h.do("POST", "/jobs/"+job.ID+"/retry", struct{}{}, &r); code != http.StatusOK {
		t.Fatalf("retry: HTTP %d", code)
	}
	// The idle worker's slot takes it in the retry's own batch.
	if r.Result != api.ResultRetried || (r.Job.State != api.StatePending && r.Job.State != api.StateRunning) || r.Job.MaxAttempts != 2 ||
		r.Job.FailureClass != "" || r.Job.ExitCode != nil || r.Job.LastError != "" || r.Job.FinishedAt != nil {
		t.Fatalf("after retry: %+v", r)
	}
	if code := h.do("POST", "/jobs/"+job.ID+"/retry", struct{}{}, &r); code != http.StatusOK || r.Result != api.ResultNotFinished {
		t.Fatalf("retry of a job retried already: HTTP %d %+v, want not_finished", code, r)
	}
	ls := h.lease(w, 1)
	if len(ls) != 1 || ls[0].Job.ID != job.ID || ls[0].Attempt != 2 {
		t.Fatalf("lease after retry: %+v", ls)
	}
	h.complete(w, api.Completion{JobID: job.ID, Attempt: 2, Outcome: "succeeded", ExitCode: intp(0)})
	if got := h.get(job.ID); got.State != api.StateSucceeded || got.Attempt != 2 {
		t.Fatalf("after the retried attempt: %+v", got)
	}
	var execs api.ExecutionList
	h.do("GET", "/jobs/"+job.ID+"/executions", nil, &execs)
	if len(execs.Executions) != 2 {
		t.Errorf("executions: %d, want both attempts", len(execs.Executions))
	}
	if evs := h.events(job.ID); !slices.Contains(evs, "retried") {
		t.Errorf("events %v lack retried", evs)
	}

	var e api.ErrorResponse
	if code := h.do("POST", "/jobs/"+ok.ID+"/retry", struct{}{}, &e); code != http.StatusConflict || e.Error.Code != api.CodeConflict {
		t.Errorf("retry of a succeeded job: HTTP %d %+v, want 409 conflict", code, e)
	}
	if code := h.do("POST", "/jobs/nope/retry", struct{}{}, &e); code != http.StatusNotFound {
		t.Errorf("retry of an unknown job: HTTP %d, want 404", code)
	}
}

// A bulk retry matches failed jobs by type and failure class (a tenant key
// only its own), or takes named ones; bad filters are 400.
func TestRetryManyByTypeAndFailureClass(t *testing.T) {
	cfg := defaultConfig()
	cfg.Tenants = map[string]config.Tenant{
		"acme":   {APIKeys: []string{"acme-key-0123456789"}},
		"globex": {APIKeys: []string{"globex-key-0123456789"}},
	}
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	h := newHarness(t, cfg)
	type made struct {
		key, typ, class string
	}
	var ids []string
	for _, m := range []made{
		{"acme-key-0123456789", "report", "timeout"},
		{"acme-key-0123456789", "report", "exit_code"},
		{"acme-key-0123456789", "export", "timeout"},
		{"globex-key-0123456789", "report", "timeout"},
	} {
		h.key = m.key
		ids = append(ids, h.submit(api.JobSpec{Type: m.typ, MaxAttempts: 1}).ID)
	}
	h.key = "admin-key-0123456789"
	w := h.register(api.RegisterRequest{Name: "w", Slots: 4})
	if ls := h.lease(w, 4); len(ls) != 4 {
		t.Fatalf("leases: %+v", ls)
	}
	for i, class := range []string{"timeout", "exit_code", "timeout", "timeout"} {
		h.complete(w, api.Completion{JobID: ids[i], Attempt: 1, Outcome: "failed", FailureClass: class})
	}

	h.key = "acme-key-0123456789"
	var r api.RetryResponse
	if code := h.do("POST", "/jobs/retry", api.RetryRequest{Type: "report", FailureClass: "timeout"}, &r); code != http.StatusOK {
		t.Fatalf("bulk retry: HTTP %d", code)
	}
	if !slices.Equal(r.Retried, []string{ids[0]}) || len(r.Skipped) != 0 {
		t.Fatalf("acme's report/timeout retry: %+v, want only %s", r, ids[0])
	}
	var e api.ErrorResponse
	if code := h.do("POST", "/jobs/retry", api.RetryRequest{IDs: []string{ids[3]}}, &e); code != http.StatusNotFound {
		t.Errorf("acme naming globex's job: HTTP %d, want 404", code)
	}
	if code := h.do("POST", "/jobs/retry", api.RetryRequest{Tenant: "globex"}, &e); code != http.StatusForbidden {
		t.Errorf("acme matching globex's jobs: HTTP %d, want 403", code)
	}
	for _, bad := range []api.RetryRequest{
		{State: "succeeded"}, {FailureClass: "bored"}, {Limit: 5000}, {IDs: []string{ids[1]}, Type: "report"},
		{State: "cancelled", FailureClass: "timeout"},
	} {
		if code := h.do("POST", "/jobs/retry", bad, &e); code != http.StatusBadRequest || e.Error.Code != api.CodeInvalidArgument {
			t.Errorf("bulk retry %+v: HTTP %d %+v, want 400 invalid_argument", bad, code, e.Error)
		}
	}
	if code := h.do("POST", "/jobs/retry", api.RetryRequest{IDs: []string{ids[0], ids[1], ids[2]}}, &r); code != http.StatusOK {
		t.Fatalf("named bulk retry: HTTP %d", code)
	}
	if len(r.Retried) != 2 || len(r.Skipped) != 1 || r.Skipped[0].ID != ids[0] || r.Skipped[0].Result != api.ResultNotFinished {
		t.Errorf("named retry of one pending and two failed jobs: %+v", r)
	}
	h.key = "admin-key-0123456789"
	if code := h.do("POST", "/jobs/retry", api.RetryRequest{FailureClass: "timeout"}, &r); code != http.StatusOK ||
		!slices.Equal(r.Retried, []string{ids[3]}) {
		t.Errorf("admin's timeout retry: HTTP %d %+v, want globex's job", code, r)
	}
}
