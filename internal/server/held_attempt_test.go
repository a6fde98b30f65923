package server

import (
	"database/sql"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// countExecutionRows counts the rows of the executions table.
func (h *harness) countExecutionRows(jobID string) int {
	h.t.Helper()
	db, err := sql.Open("sqlite3", "file:"+h.path+"?mode=ro")
	if err != nil {
		h.t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM executions WHERE job_id = ?", jobID).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// TestADrainedJobWritesNoExecutionRow: a job whose only attempt ends it
// (store doc.go, "The finished attempt in the job row") keeps that attempt
// in its own row: no execution row is written, and its executions read
// back as before. A job with retries writes its earlier attempts as rows
// and keeps its last one in the job row.
func TestADrainedJobWritesNoExecutionRow(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 4})
	at := func(d time.Duration) *time.Time { t := h.clock.Now().Add(d); return &t }

	a := h.submit(api.JobSpec{Type: "t"})
	h.clock.Advance(time.Second)
	h.lease(w, 1)
	h.clock.Advance(2 * time.Second)
	h.complete(w, api.Completion{JobID: a.ID, Attempt: 1, Outcome: "succeeded", ExitCode: intp(0),
		StartedAt: at(-1500 * time.Millisecond), FinishedAt: at(-100 * time.Millisecond)})
	if n := h.countExecutionRows(a.ID); n != 0 {
		t.Errorf("drained job: %d execution rows, want 0 (the job row holds its attempt)", n)
	}
	var ex api.ExecutionList
	if code := h.do("GET", "/jobs/"+a.ID+"/executions", nil, &ex); code != http.StatusOK {
		t.Fatalf("executions: HTTP %d", code)
	}
	if len(ex.Executions) != 1 || ex.Executions[0].Attempt != 1 || ex.Executions[0].Outcome != "succeeded" ||
		ex.Executions[0].DurationMS != 1400 || ex.Executions[0].WorkerID != w {
		t.Errorf("drained job's executions: %+v", ex.Executions)
	}

	b := h.submit(api.JobSpec{Type: "t", MaxAttempts: 2, Retry: &api.RetryPolicy{Kind: "immediate"}})
	h.clock.Advance(time.Second)
	h.lease(w, 1)
	h.clock.Advance(time.Second)
	h.complete(w, api.Completion{JobID: b.ID, Attempt: 1, Outcome: "failed", ExitCode: intp(3), Error: "exit 3"})
	h.clock.Advance(time.Second)
	h.tick()
	h.lease(w, 1)
	h.clock.Advance(time.Second)
	h.complete(w, api.Completion{JobID: b.ID, Attempt: 2, Outcome: "failed", ExitCode: intp(4), Error: "exit 4"})
	if n := h.countExecutionRows(b.ID); n != 1 {
		t.Errorf("retried job: %d execution rows, want 1 (the first attempt; the job row holds the last)", n)
	}
	ex = api.ExecutionList{}
	h.do("GET", "/jobs/"+b.ID+"/executions", nil, &ex)
	if len(ex.Executions) != 2 || ex.Executions[0].Attempt != 1 || ex.Executions[1].Attempt != 2 ||
		ex.Executions[1].Error != "exit 4" || ex.Executions[1].ExitCode == nil || *ex.Executions[1].ExitCode != 4 {
		t.Errorf("retried job's executions: %+v", ex.Executions)
	}

	// An operator's retry of the failed job moves its held attempt into
	// an execution row, in the same write: its attempts and events read
	// the same.
	var events api.EventList
	h.do("GET", "/jobs/"+b.ID+"/events", nil, &events)
	if code := h.do("POST", "/jobs/"+b.ID+"/retry", nil, nil); code != http.StatusOK {
		t.Fatalf("retry: HTTP %d", code)
	}
	if n := h.countExecutionRows(b.ID); n != 2 {
		t.Errorf("retried by hand: %d execution rows, want 2", n)
	}
	var after api.ExecutionList
	h.do("GET", "/jobs/"+b.ID+"/executions", nil, &after)
	if !reflect.DeepEqual(after, ex) {
		t.Errorf("executions after the retry:\n%+v\nwant\n%+v", after, ex)
	}
	var eventsAfter api.EventList
	h.do("GET", "/jobs/"+b.ID+"/events", nil, &eventsAfter)
	if n := len(events.Events); n == 0 || !reflect.DeepEqual(eventsAfter.Events[:n], events.Events) ||
		eventsAfter.Events[n].Type != "retried" {
		t.Errorf("events after the retry:\n%+v\nwant\n%+v and retried", eventsAfter.Events, events.Events)
	}
}
