package server

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// feed reads the audit feed from after_id 0 to its end, limit events a
// page, with the query's other parameters.
func (h *harness) feed(query string, limit int) []api.Event {
	h.t.Helper()
	var out []api.Event
	after := int64(0)
	for range 1000 {
		var page api.EventList
		if code := h.do("GET", fmt.Sprintf("/events?limit=%d&after_id=%d%s", limit, after, query), nil, &page); code != http.StatusOK {
			h.t.Fatalf("events: HTTP %d", code)
		}
		out = append(out, page.Events...)
		if page.NextAfterID == 0 {
			return out
		}
		after = page.NextAfterID
	}
	h.t.Fatal("events: no end")
	return nil
}

// A running job's leased and started events live in columns no index
// holds (store doc.go, "The hot row and its indexes"): the leader answers
// the audit feed's from its dispatcher and merges them with the store's.
// The feed, paged with after_id and filtered, reads the same history
// (types, order, actors, times) before and after a restart, which
// rebuilds the dispatcher from the store, and a job leased or submitted
// between the two reads of a page is not skipped by the next page.
func TestAuditFeedOfRunningJobsAcrossRestartOnBothStores(t *testing.T) {
	for name, open := range limitStores() {
		t.Run(name, func(t *testing.T) {
			connect := open(t)
			clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
			cfg := defaultConfig()
			h := startOn(t, cfg, connect(), clock)
			w := h.register(api.RegisterRequest{Name: "w", Slots: 3})
			running := h.submit(api.JobSpec{Type: "t", Tenant: "acme"})
			done := h.submit(api.JobSpec{Type: "t", Tenant: "shop"})
			leasedOnly := h.submit(api.JobSpec{Type: "t", Tenant: "acme"})
			clock.Advance(time.Second)
			if n := len(h.lease(w, 3)); n != 3 {
				t.Fatalf("leased %d, want 3", n)
			}
			clock.Advance(time.Second)
			h.start(w, running.ID, 1)
			clock.Advance(time.Second)
			h.complete(w, api.Completion{JobID: done.ID, Attempt: 1, Outcome: "succeeded", ExitCode: intp(0)})

			queries := []string{"", "&tenant=acme", "&type=leased,started", "&actor=system",
				"&since=" + clock.Now().Add(-2500*time.Millisecond).Format(time.RFC3339Nano)}
			before := map[string][]api.Event{}
			for _, q := range queries {
				for _, limit := range []int{1, 2, 100} {
					before[q+fmt.Sprint(limit)] = h.feed(q, limit)
				}
			}
			var types []string
			for _, e := range before["100"] {
				types = append(types, e.JobID+" "+e.Type)
			}
			want := []string{" config_loaded", " worker_registered", running.ID + " submitted", running.ID + " leased",
				done.ID + " submitted", done.ID + " leased", leasedOnly.ID + " submitted", leasedOnly.ID + " leased",
				running.ID + " started", done.ID + " started", done.ID + " succeeded"}
			if !reflect.DeepEqual(types, want) {
				t.Errorf("feed:\n%v\nwant\n%v", types, want)
			}
			for _, q := range queries {
				for _, limit := range []string{"1", "2"} {
					if !reflect.DeepEqual(before[q+limit], before[q+"100"]) {
						t.Errorf("feed %q by %s differs from one page:\n%+v\n%+v", q, limit, before[q+limit], before[q+"100"])
					}
				}
			}

			h.stop()
			h = startOn(t, cfg, connect(), clock)
			last := before["100"][len(before["100"])-1].ID
			for _, q := range queries {
				for _, limit := range []int{1, 2, 100} {
					// The restart's own events (config_loaded) come after.
					got := h.feed(q, limit)
					for len(got) > 0 && got[len(got)-1].ID > last {
						got = got[:len(got)-1]
					}
					if !reflect.DeepEqual(got, before[q+fmt.Sprint(limit)]) {
						t.Errorf("feed %q by %d after the restart:\n%+v\nbefore:\n%+v", q, limit, got, before[q+fmt.Sprint(limit)])
					}
				}
			}
			for _, id := range []string{running.ID, leasedOnly.ID} {
				if got := h.events(id); len(got) < 2 || got[1] != "leased" {
					t.Errorf("%s's events after the restart: %v", id, got)
				}
			}

			// Between the dispatcher's read and the store's, a job is leased
			// (it runs on: a slot freed by another's completion) and another
			// submitted: a client polling the feed with after_id does not
			// skip the lease for the later submitted event.
			filler := h.submit(api.JobSpec{Type: "t", Tenant: "acme"})
			if ls := h.lease(w, 1); len(ls) != 1 || ls[0].Job.ID != filler.ID {
				t.Fatalf("leased %+v, want %s", ls, filler.ID)
			}
			late := h.submit(api.JobSpec{Type: "t", Tenant: "acme"}) // no free slot
			seen := h.feed("", 100)
			hook := func() {
				h.srv.betweenEventReads.Store(nil)
				h.complete(w, api.Completion{JobID: filler.ID, Attempt: 1, Outcome: "succeeded", ExitCode: intp(0)})
				if ls := h.lease(w, 1); len(ls) != 1 || ls[0].Job.ID != late.ID {
					t.Errorf("leased %+v between the reads, want %s", ls, late.ID)
				}
				h.submit(api.JobSpec{Type: "t", Tenant: "acme"})
			}
			h.srv.betweenEventReads.Store(&hook)
			var polled []api.Event
			after := seen[len(seen)-1].ID
			for range 2 {
				var page api.EventList
				h.do("GET", fmt.Sprintf("/events?limit=100&after_id=%d", after), nil, &page)
				polled = append(polled, page.Events...)
				if len(page.Events) > 0 {
					after = page.Events[len(page.Events)-1].ID
				}
			}
			full := h.feed("", 100)
			if !reflect.DeepEqual(append(seen, polled...), full) {
				var got, want []string
				for _, e := range polled {
					got = append(got, fmt.Sprint(e.ID, " ", e.JobID, " ", e.Type))
				}
				for _, e := range full[len(seen):] {
					want = append(want, fmt.Sprint(e.ID, " ", e.JobID, " ", e.Type))
				}
				t.Errorf("polled across a lease between the reads:\n%v\nwant\n%v", got, want)
			}
		})
	}
}
