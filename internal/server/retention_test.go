package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// finishJobs submits n jobs of type a and has one worker succeed them
// all, at the clock's current time; it returns their ids.
func (h *harness) finishJobs(n int) []string {
	h.t.Helper()
	w := h.register(api.RegisterRequest{Name: "bulk", Slots: n})
	var ids []string
	for len(ids) < n {
		k := min(n-len(ids), 1000)
		specs := make([]api.JobSpec, k)
		for i := range specs {
			specs[i] = api.JobSpec{Type: "a", Command: []string{"true"}}
		}
		var r api.BatchResponse
		if code := h.do("POST", "/jobs/batch", api.BatchRequest{Jobs: specs}, &r); code != http.StatusCreated && code != http.StatusOK {
			h.t.Fatalf("batch submit: HTTP %d", code)
		}
		var done []api.Completion
		for _, l := range h.lease(w, k) {
			done = append(done, api.Completion{JobID: l.Job.ID, Attempt: l.Attempt, Outcome: "succeeded"})
			ids = append(ids, l.Job.ID)
		}
		var res api.ItemResults
		if code := h.do("POST", "/workers/"+w+"/complete", api.CompleteRequest{Results: done}, &res); code != http.StatusOK {
			h.t.Fatalf("complete: HTTP %d", code)
		}
	}
	return ids
}

// Retention keeps pace with the rate jobs finish at: a backlog of jobs
// past their retention is deleted in small chunks, one after the other
// (not one chunk a minute), and the backlog shows in the metrics until it
// is gone.
func TestRetentionKeepsPaceWithTheFinishRate(t *testing.T) {
	cfg := defaultConfig()
	cfg.Server.Retention = config.Duration(time.Hour)
	h := newHarness(t, cfg)
	const n = 1500
	ids := h.finishJobs(n)
	h.clock.Advance(2 * time.Hour)
	h.tick()
	m := h.scrape()
	first := m[`fairway_retention_deleted_total{what=jobs}`]
	if first == 0 || first > n/3 {
		t.Fatalf("the first purge deleted %v of %d jobs past their retention; want a small chunk", first, n)
	}
	if b := m[`fairway_retention_backlog_seconds{what=jobs}`]; b < 3000 {
		t.Fatalf("backlog %vs after the first chunk; want about an hour (the jobs finished 2h ago, retention 1h)", b)
	}
	// While behind, the purge runs again at once (every 100 ms of the
	// clock): each tick deletes another chunk until none is left. The
	// chunk's size adapts to how long a chunk took on the wall clock
	// (halved under a loaded machine, down to purgeMinChunk), so the
	// number of ticks is bounded by that smallest chunk, not fixed.
	deleted := first
	for tick := 0; deleted < n; tick++ {
		if tick == n/10+1 {
			t.Fatalf("deleted %v of %d jobs past their retention after %d ticks", deleted, n, tick)
		}
		h.clock.Advance(100 * time.Millisecond)
		h.tick()
		got := h.scrape()[`fairway_retention_deleted_total{what=jobs}`]
		if got <= deleted {
			t.Fatalf("a purge 100 ms after one that left %v jobs due deleted none (%v deleted in all)", n-deleted, got)
		}
		deleted = got
	}
	m = h.scrape()
	if b := m[`fairway_retention_backlog_seconds{what=jobs}`]; b != 0 {
		t.Fatalf("backlog %vs once every job is deleted, want 0", b)
	}
	if code := h.do("GET", "/jobs/"+ids[n-1], nil, nil); code != http.StatusNotFound {
		t.Fatalf("the last job past its retention: HTTP %d", code)
	}
}

// Audit events have a retention of their own, by default the jobs'; an
// events_retention of 0 keeps them.
func TestEventsHaveTheirOwnRetention(t *testing.T) {
	for _, tc := range []struct {
		name      string
		events    *config.Duration
		wantOldGo bool
	}{
		{"default: the jobs' retention", nil, true},
		{"a shorter one", durationPtr(10 * time.Minute), true},
		{"0 keeps them", durationPtr(0), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.Server.Retention = config.Duration(time.Hour)
			cfg.Server.EventsRetention = tc.events
			h := newHarness(t, cfg)
			old := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}})
			h.clock.Advance(2 * time.Hour)
			recent := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}})
			h.tick()
			if got := len(h.events(recent.ID)); got == 0 {
				t.Fatal("the recent job's events were deleted")
			}
			var r api.EventList
			h.do("GET", "/events?job_id="+old.ID, nil, &r)
			if gone := len(r.Events) == 0; gone != tc.wantOldGo {
				t.Fatalf("events of 2h ago: %d left; want deleted: %v", len(r.Events), tc.wantOldGo)
			}
			if tc.wantOldGo && h.scrape()[`fairway_retention_deleted_total{what=events}`] == 0 {
				t.Fatal("fairway_retention_deleted_total{what=events} is 0")
			}
		})
	}
}

func durationPtr(d time.Duration) *config.Duration { c := config.Duration(d); return &c }

// An idempotency key stays bound for its 24 h whatever the retention:
// once retention has deleted its job, a submit with the key is refused
// (409, nothing created) until the window has passed.
func TestIdempotencyOutlivesRetention(t *testing.T) {
	cfg := defaultConfig()
	cfg.Server.Retention = config.Duration(time.Minute)
	h := newHarness(t, cfg)
	spec := api.JobSpec{Type: "a", Command: []string{"true"}, IdempotencyKey: "invoice-42"}
	first := h.submit(spec)
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	h.lease(w, 1)
	h.complete(w, api.Completion{JobID: first.ID, Attempt: 1, Outcome: "succeeded"})
	h.clock.Advance(13 * time.Minute)
	h.tick()
	if code := h.do("GET", "/jobs/"+first.ID, nil, nil); code != http.StatusNotFound {
		t.Fatalf("the job past its retention: HTTP %d", code)
	}
	var e api.ErrorResponse
	if code := h.do("POST", "/jobs", spec, &e); code != http.StatusConflict || e.Error.Code != api.CodeConflict ||
		!strings.Contains(e.Error.Message, first.ID) {
		t.Fatalf("resubmit of a deleted job's key: HTTP %d %+v; want 409 conflict naming %s", code, e.Error, first.ID)
	}
	var list api.JobList
	h.do("GET", "/jobs", nil, &list)
	if len(list.Jobs) != 0 {
		t.Fatalf("the refused resubmit created %d job(s)", len(list.Jobs))
	}
	h.clock.Advance(24 * time.Hour)
	if again := h.submit(spec); again.ID == first.ID {
		t.Fatal("the key is still bound after its window")
	}
}
