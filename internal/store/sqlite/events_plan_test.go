package sqlite

import (
	"slices"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// The events read (package store, "Attempt history in the execution
// row", "The submitted event in the job row") finds the synthesised
// events by index: the audit feed by the id columns' partial indexes
// (jobs_submit_event for the submitted events, with or without a
// tenant, an actor or a time range), one job's by the primary keys. No
// branch reads all executions or all jobs.
func TestEventListPlansUseIndexes(t *testing.T) {
	s := openTemp(t)
	for name, p := range map[string]store.EventListParams{
		"feed":          {AfterID: 10, Limit: 100},
		"feed newest":   {Newest: true, Limit: 100},
		"job":           {JobID: "j", Limit: 1000},
		"tenant":        {Tenant: "acme", AfterID: 10},
		"type":          {Types: []store.EventType{store.EventSucceeded, store.EventLeased}},
		"actor, since":  {Actor: "worker:w1", Since: storetest.T0},
		"tenant, until": {Tenant: "acme", Until: storetest.T0, Newest: true},
		"feed, leader":  {AfterID: 10, UpToID: 90, NoLive: true, Limit: 100},
		"job, leased":   {JobID: "j", Types: []store.EventType{store.EventLeased}},
	} {
		q, args := s.EventListQuery(p)
		plan := strings.Split(strings.TrimSuffix(queryPlan(t, s, name, q, args), "\n"), "\n")
		for _, line := range plan {
			scan := (strings.HasPrefix(line, "SCAN x") || strings.HasPrefix(line, "SCAN j")) && !strings.Contains(line, "INDEX")
			// jobs by another index: every job of a tenant, say
			wide := strings.HasPrefix(line, "SEARCH j") && !strings.Contains(line, "(id=?)") &&
				!strings.Contains(line, "jobs_live_events") && !strings.Contains(line, "jobs_submit_event (submit_event_id") &&
				!strings.Contains(line, "jobs_start_event (start_event_id") && !strings.Contains(line, "jobs_end_event (end_event_id")
			if scan || wide {
				t.Errorf("%s: a branch reads more than its page: %q\n%s", name, line, strings.Join(plan, "\n"))
			}
		}
		text := strings.Join(plan, "\n")
		submitted := strings.Contains(text, "USING INDEX jobs_submit_event (submit_event_id")
		if p.JobID == "" && len(p.Types) == 0 && !submitted {
			t.Errorf("%s: the submitted events are not read through jobs_submit_event:\n%s", name, text)
		}
		// The held attempts' outcome and started events (store doc.go,
		// "The finished attempt in the job row").
		if p.JobID == "" && !strings.Contains(text, "USING INDEX jobs_end_event (end_event_id") {
			t.Errorf("%s: the held attempts' outcome events are not read through jobs_end_event:\n%s", name, text)
		}
		if p.JobID == "" && len(p.Types) == 0 && !strings.Contains(text, "USING INDEX jobs_start_event (start_event_id") {
			t.Errorf("%s: the started events are not read through jobs_start_event:\n%s", name, text)
		}
		// The live attempts' events (store doc.go, "The hot row and its
		// indexes"): in no index, so the store alone walks
		// jobs_unfinished; the leader's read (NoLive) does not.
		unfinished := strings.Contains(text, "SCAN j USING INDEX jobs_unfinished")
		liveTypes := len(p.Types) == 0 || slices.Contains(p.Types, store.EventLeased) || slices.Contains(p.Types, store.EventStarted)
		if p.JobID == "" && !p.NoLive && liveTypes && !unfinished {
			t.Errorf("%s: the live attempts' events are not read through jobs_unfinished:\n%s", name, text)
		}
		if (p.JobID != "" || p.NoLive) && unfinished {
			t.Errorf("%s: reads jobs_unfinished:\n%s", name, text)
		}
	}
	// The largest event id: one end of each id index, the late starts'
	// through jobs_end_event (their id is below their outcome's).
	text := queryPlan(t, s, "last event id", s.D.EventLastID, nil)
	if strings.Contains(text, "SCAN jobs\n") || strings.Contains(text, "SCAN j\n") || strings.Contains(text, "SCAN executions\n") ||
		!strings.Contains(text, "jobs_start_event") {
		t.Errorf("the last event id reads a whole table or not jobs_start_event:\n%s", text)
	}
}
