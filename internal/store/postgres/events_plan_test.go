package postgres

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// The events read (package store, "Attempt history in the execution
// row", "The submitted event in the job row") finds the synthesised
// events by index on an analyzed table of 3,000 jobs, each holding its
// submitted event, and their ended attempts: the audit feed through the
// id columns' partial indexes (jobs_submit_event for the submitted
// events, with or without a tenant, an actor or a time range), one job's
// events by the primary keys; no branch reads all executions or all
// jobs.
func TestEventListPlansUseIndexes(t *testing.T) {
	s, db := openWithDB(t)

	const jobs = 3000
	var execs []store.Execution
	if err := s.Write(ctx, func(w store.Writer) error {
		for i := range jobs {
			id := fmt.Sprintf("job-%05d", i)
			at := storetest.T0.Add(time.Duration(i) * time.Second)
			n := int64(4*i + 1)
			j := store.Job{ID: id, Tenant: fmt.Sprintf("t%d", i%3), Type: "x", State: store.StateSucceeded, CreatedAt: at, Attempt: 1,
				SubmitEventID: n, SubmitActor: "open"}
			if err := w.JobInsertBatched(ctx, j); err != nil {
				return err
			}
			execs = append(execs, store.Execution{JobID: id, Attempt: 1, WorkerID: "w", LeasedAt: at, StartedAt: at,
				FinishedAt: at, Outcome: store.OutcomeSucceeded, LeaseEventID: n + 1, StartEventID: n + 2, StartEventAt: at, EndEventID: n + 3})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, func(w store.Writer) error { return w.ExecutionUpsertMany(ctx, execs) }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]store.EventListParams{
		"feed":          {AfterID: 4000, Limit: 100},
		"feed newest":   {Newest: true, Limit: 100},
		"job":           {JobID: "job-00042", Limit: 1000},
		"tenant":        {Tenant: "t1", AfterID: 4000},
		"type":          {Types: []store.EventType{store.EventSucceeded, store.EventLeased}, Limit: 50},
		"submitted":     {Types: []store.EventType{store.EventSubmitted}, AfterID: 4000, Limit: 50},
		"since":         {Since: storetest.T0.Add(10 * time.Minute), Limit: 50},
		"tenant, until": {Tenant: "t2", Until: storetest.T0.Add(time.Hour), Newest: true, Limit: 50},
		"feed, leader":  {AfterID: 4000, UpToID: 9000, NoLive: true, Limit: 100},
		"job, leased":   {JobID: "job-00042", Types: []store.EventType{store.EventLeased}},
	} {
		q, args := s.EventListQuery(p)
		text := explainPlan(t, db, name, q, args)
		if strings.Contains(text, "Seq Scan on executions") || strings.Contains(text, "Seq Scan on jobs") {
			t.Errorf("%s: a branch reads a whole table:\n%s", name, text)
		}
		// The held attempts' outcome events (store doc.go, "The finished
		// attempt in the job row").
		if p.JobID == "" && (len(p.Types) == 0 || p.Types[0] == store.EventSucceeded) &&
			!strings.Contains(text, " using jobs_end_event on jobs") {
			t.Errorf("%s: the held attempts' outcome events are not read through jobs_end_event:\n%s", name, text)
		}
		if p.JobID == "" && (len(p.Types) == 0 || p.Types[0] == store.EventSubmitted) {
			if !strings.Contains(text, "Index Scan using jobs_submit_event on jobs") &&
				!strings.Contains(text, "Index Scan Backward using jobs_submit_event on jobs") {
				t.Errorf("%s: the submitted events are not read through jobs_submit_event:\n%s", name, text)
			}
		}
		// The held attempts' started events: those reported on their own
		// through jobs_start_event, the late ones through jobs_end_event
		// (sqlstore's lateStartSource), which both branches above check.
		if p.JobID == "" && (len(p.Types) == 0 || slices.Contains(p.Types, store.EventStarted)) &&
			!strings.Contains(text, " using jobs_start_event on jobs") {
			t.Errorf("%s: the held attempts' started events are not read through jobs_start_event:\n%s", name, text)
		}
		// The live attempts' events (store doc.go, "The hot row and its
		// indexes"): in no index, so the store alone walks
		// jobs_unfinished; the leader's read (NoLive) does not.
		unfinished := strings.Contains(text, "jobs_unfinished on jobs")
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
	text := explainPlan(t, db, "last event id", s.D.EventLastID, nil)
	if strings.Contains(text, "Seq Scan on jobs") || strings.Contains(text, "Seq Scan on executions") ||
		!strings.Contains(text, "jobs_start_event on jobs") {
		t.Errorf("the last event id reads a whole table or not jobs_start_event:\n%s", text)
	}
}
