package server

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/results"
)

// waitResult polls a job's executions until the attempt's result upload
// is in state, or fails after 10 s.
func (h *harness) waitResult(id string, attempt int, state string) api.Execution {
	h.t.Helper()
	return h.waitExecution(id, attempt, func(e api.Execution) bool { return e.ResultState == state })
}

// waitExecution polls a job's executions until the attempt's satisfies
// ok, or fails after 10 s.
func (h *harness) waitExecution(id string, attempt int, ok func(api.Execution) bool) api.Execution {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list api.ExecutionList
		h.do("GET", "/jobs/"+id+"/executions", nil, &list)
		for _, e := range list.Executions {
			if e.Attempt == attempt && ok(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("job %s attempt %d: not reached in 10 s: %+v", id, attempt, list.Executions)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An attempt that ends writes its output and result.json under the job's
// result location; the execution and the audit trail say so.
func TestResultLocationReceivesEachAttempt(t *testing.T) {
	h := newHarness(t, defaultConfig())
	dir := t.TempDir()
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	job := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}, ResultLocation: "file://" + dir + "/nightly",
		Retry: &api.RetryPolicy{Kind: "immediate"}})
	if job.ResultLocation != "file://"+dir+"/nightly" {
		t.Fatalf("job shows result_location %q", job.ResultLocation)
	}
	run := func(attempt int, outcome string, out string) {
		if got := h.lease(w, 1); len(got) != 1 || got[0].Attempt != attempt {
			t.Fatalf("lease for attempt %d: %+v", attempt, got)
		}
		h.start(w, job.ID, attempt)
		chunks := []api.LogChunk{{JobID: job.ID, Attempt: attempt, Stream: "stdout", Seq: 1, Data: out}}
		if code := h.do("POST", "/workers/"+w+"/logs", api.LogAppendRequest{Chunks: chunks}, nil); code != http.StatusOK {
			t.Fatalf("append logs: HTTP %d", code)
		}
		c := api.Completion{JobID: job.ID, Attempt: attempt, Outcome: outcome, ExitCode: intp(0)}
		if outcome == "failed" {
			c.ExitCode = intp(3)
		}
		if r := h.complete(w, c); !r.OK {
			t.Fatalf("complete attempt %d: %+v", attempt, r)
		}
	}
	run(1, "failed", "first try\n")
	run(2, "succeeded", "second try\n")
	for attempt, want := range map[int]string{1: "first try\n", 2: "second try\n"} {
		e := h.waitResult(job.ID, attempt, "written")
		wantURL := fmt.Sprintf("file://%s/nightly/%s/attempt-%d/", dir, job.ID, attempt)
		if e.ResultURL != wantURL || e.ResultTries != 1 {
			t.Errorf("attempt %d: result_url %q tries %d, want %q after 1", attempt, e.ResultURL, e.ResultTries, wantURL)
		}
		got, err := os.ReadFile(filepath.Join(strings.TrimPrefix(e.ResultURL, "file://"), results.StdoutObject))
		if err != nil || string(got) != want {
			t.Errorf("attempt %d stdout.log = %q (%v), want %q", attempt, got, err, want)
		}
		if _, err := os.Stat(filepath.Join(strings.TrimPrefix(e.ResultURL, "file://"), results.ResultObject)); err != nil {
			t.Errorf("attempt %d: %v", attempt, err)
		}
	}
	if n := countOf(h.events(job.ID), "result_written"); n != 2 {
		t.Errorf("%d result_written events, want 2: %v", n, h.events(job.ID))
	}
}

func countOf(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

// A write that fails is recorded on the execution and in the audit trail
// and tried again after its back-off, here once the obstacle is gone.
func TestResultWriteFailureIsRecordedAndRetried(t *testing.T) {
	h := newHarness(t, defaultConfig())
	base := t.TempDir()
	blocker := filepath.Join(base, "out")
	if err := os.WriteFile(blocker, []byte("a file where the directory goes"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	job := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}, ResultLocation: "file://" + blocker})
	h.lease(w, 1)
	h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: "succeeded", ExitCode: intp(0)})

	e := h.waitExecution(job.ID, 1, func(e api.Execution) bool { return e.ResultState == "pending" && e.ResultTries == 1 })
	if e.ResultError == "" || e.ResultNextAt == nil {
		t.Fatalf("a failed try is recorded with its error and next try: %+v", e)
	}
	if !slices.Contains(h.events(job.ID), "result_write_failed") {
		t.Errorf("no result_write_failed event: %v", h.events(job.ID))
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Minute)
	e = h.waitResult(job.ID, 1, "written")
	if e.ResultTries != 2 || e.ResultError != "" {
		t.Errorf("written on the second try: %+v", e)
	}
}

func TestResultLocationIsChecked(t *testing.T) {
	cfg := defaultConfig()
	cfg.Server.Results.Allow = []string{"file:///srv/results", "s3://reports/team-a"}
	h := newHarness(t, cfg)
	for loc, want := range map[string]string{
		"ftp://host/x":                 "scheme \"ftp\" is not supported",
		"file://relative/dir":          "names host",
		"/srv/results":                 "has no scheme",
		"file:///etc":                  "is not under an allowed location",
		"file:///srv/results/../etc":   "is not under an allowed location",
		"s3://reports/team-b":          "is not under an allowed location",
		"s3://reports/x?prefix=team-a": "put the prefix in the path",
	} {
		var e api.ErrorResponse
		code := h.do("POST", "/jobs", api.JobSpec{Type: "a", Command: []string{"true"}, ResultLocation: loc}, &e)
		if code != http.StatusBadRequest || e.Error.Field != "result_location" || !strings.Contains(e.Error.Message, want) {
			t.Errorf("%s: HTTP %d %+v, want 400 on result_location saying %q", loc, code, e.Error, want)
		}
	}
	var e api.ErrorResponse
	bad := api.ScheduleSpec{Spec: "every 1h", Template: api.JobSpec{Type: "a", Command: []string{"true"}, ResultLocation: "file:///etc"}}
	if code := h.do("POST", "/schedules", bad, &e); code != http.StatusBadRequest || e.Error.Field != "template.result_location" {
		t.Errorf("schedule template: HTTP %d %+v, want 400 on template.result_location", code, e.Error)
	}
	ok := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}, ResultLocation: "s3://reports/team-a/nightly"})
	if ok.ResultLocation != "s3://reports/team-a/nightly" {
		t.Errorf("accepted location reads back as %q", ok.ResultLocation)
	}
}
