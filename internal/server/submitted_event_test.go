package server

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// eventRows counts the events table's rows of job id in h's database.
func eventRows(t *testing.T, h *harness, id string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+h.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM events WHERE job_id = ?", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// jobEvents is the events API's answer for one job.
func jobEvents(t *testing.T, h *harness, id string) []api.Event {
	t.Helper()
	var r api.EventList
	if code := h.do("GET", "/events?job_id="+id, nil, &r); code != http.StatusOK {
		t.Fatalf("events of %s: HTTP %d", id, code)
	}
	return r.Events
}

// A drained job (submitted, leased and started, completed) writes no event row: its
// submitted event is held by the job row, its attempt's events by the
// job and execution rows (package store, "The submitted event in the job
// row"), and the events API still gives all of them.
func TestADrainedJobWritesNoEventRow(t *testing.T) {
	h := newHarness(t, defaultConfig())
	job := h.submit(api.JobSpec{Type: "t", Priority: intp(7)})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	h.clock.Advance(time.Second)
	ls := h.lease(w, 1)
	if len(ls) != 1 {
		t.Fatalf("leases: %d", len(ls))
	}
	h.clock.Advance(time.Second)
	h.complete(w, api.Completion{JobID: job.ID, Attempt: ls[0].Attempt, Outcome: "succeeded", ExitCode: intp(0)})
	if n := eventRows(t, h, job.ID); n != 0 {
		t.Errorf("a drained job wrote %d event rows, want 0", n)
	}
	evs := jobEvents(t, h, job.ID)
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if want := []string{"submitted", "leased", "started", "succeeded"}; !reflect.DeepEqual(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	sub := evs[0]
	var detail map[string]any
	if err := json.Unmarshal(sub.Detail, &detail); err != nil {
		t.Fatal(err)
	}
	if sub.Actor != "open" || !sub.At.Equal(job.CreatedAt) || sub.Attempt != 0 || sub.Tenant != job.Tenant ||
		detail["type"] != "t" || detail["lane"] != "default" || detail["priority"] != 7.0 {
		t.Fatalf("submitted event %+v, detail %v", sub, detail)
	}
}

// A reprioritized job's submitted event keeps the priority it was
// submitted with, and a job deleted by retention leaves its events, the
// submitted one included, to the events' own retention: the history read
// before and after the purge is the same, and the submitted event is a
// row once its job is gone.
func TestASubmittedEventKeepsItsPriorityAndOutlivesItsJob(t *testing.T) {
	cfg := defaultConfig()
	cfg.Server.Retention = config.Duration(time.Hour)
	cfg.Server.EventsRetention = durationPtr(0)
	h := newHarness(t, cfg)
	job := h.submit(api.JobSpec{Type: "t", Priority: intp(10)})
	h.clock.Advance(time.Second)
	if code := h.do("POST", "/jobs/"+job.ID+"/reprioritize", map[string]int{"priority": 20}, nil); code != http.StatusOK {
		t.Fatalf("reprioritize: HTTP %d", code)
	}
	h.clock.Advance(time.Second)
	if code := h.do("POST", "/jobs/"+job.ID+"/cancel", nil, nil); code != http.StatusOK {
		t.Fatalf("cancel: HTTP %d", code)
	}
	before := jobEvents(t, h, job.ID)
	if len(before) == 0 || before[0].Type != "submitted" || string(before[0].Detail) != `{"lane":"default","priority":10,"type":"t"}` {
		t.Fatalf("events %+v", before)
	}
	if n := eventRows(t, h, job.ID); n != len(before)-1 {
		t.Errorf("%d event rows for %d events: the submitted one should be held by the job row", n, len(before))
	}
	h.clock.Advance(2 * time.Hour)
	h.tick()
	if code := h.do("GET", "/jobs/"+job.ID, nil, nil); code != http.StatusNotFound {
		t.Fatalf("a job finished past the retention: HTTP %d", code)
	}
	if after := jobEvents(t, h, job.ID); !reflect.DeepEqual(after, before) {
		t.Fatalf("events after the purge:\n%+v\nbefore:\n%+v", after, before)
	}
	if n := eventRows(t, h, job.ID); n != len(before) {
		t.Fatalf("%d event rows after the purge, want %d", n, len(before))
	}
}
