package storetest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/fairwayhq/fairway/internal/store"
)

// LiveEventRows are the rows of a database before the live attempt's
// event ids moved to their own columns (PostgreSQL migration 0020, SQLite
// 0026; store doc.go, "The hot row and its indexes"): a running job whose
// row holds its leased (id 2) and started (3) events, and a finished job
// whose row holds its attempt (leased 5, outcome 6), each with its spec.
var LiveEventRows = []string{
	`INSERT INTO jobs (id, tenant, type, lane, priority, state, created_at, attempt, worker_id, started_at,
		submit_event_id, submit_actor, lease_event_id, leased_at, start_event_id, start_event_at)
		VALUES ('run', 't', 'x', 'default', 5, 'running', 1000000, 1, 'w1', 2000000, 1, 'open', 2, 2000000, 3, 3000000)`,
	`INSERT INTO jobs (id, tenant, type, lane, priority, state, final_state, created_at, finished_at, attempt,
		worker_id, started_at, submit_event_id, submit_actor, lease_event_id, leased_at, end_event_id, attempt_outcome)
		VALUES ('done', 't', 'x', 'default', 5, 'succeeded', 'succeeded', 1000000, 4000000, 1, 'w1', 2000000, 4,
		'open', 5, 2000000, 6, 'succeeded')`,
	`INSERT INTO job_specs (job_id) VALUES ('run'), ('done')`,
}

// CheckLiveEventRows checks LiveEventRows after the migration, on a store
// with no dispatcher: the running job's ids are in the live columns, and
// it, its events and the audit feed read as before.
func CheckLiveEventRows(t *testing.T, s store.Store, db *sql.DB) {
	t.Helper()
	ctx := context.Background()
	var indexed, live int
	if err := db.QueryRowContext(ctx, `SELECT count(lease_event_id) + count(start_event_id),
		count(live_lease_event_id) + count(live_start_event_id) FROM jobs WHERE id = 'run'`).Scan(&indexed, &live); err != nil {
		t.Fatal(err)
	}
	if indexed != 0 || live != 2 {
		t.Errorf("the running job after the migration: %d indexed ids, %d live; want 0 and 2", indexed, live)
	}
	j, err := s.JobGet(ctx, "run")
	if err != nil || j.LeaseEventID != 2 || j.StartEventID != 3 {
		t.Errorf("JobGet(run) = lease %d, start %d, %v; want 2, 3", j.LeaseEventID, j.StartEventID, err)
	}
	un, err := s.JobListUnfinished(ctx)
	if err != nil || len(un) != 1 || un[0].LeaseEventID != 2 || un[0].StartEventID != 3 {
		t.Errorf("JobListUnfinished = %+v, %v", un, err)
	}
	if last, err := s.EventLastID(ctx); err != nil || last != 6 {
		t.Errorf("EventLastID = %d, %v; want 6", last, err)
	}
	types := func(p store.EventListParams) []string {
		evs, err := s.EventList(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range evs {
			out = append(out, e.JobID+" "+string(e.Type))
		}
		return out
	}
	eq := func(what string, got, want []string) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", what, got, want)
			return
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: %v, want %v", what, got, want)
				return
			}
		}
	}
	eq("the running job's events", types(store.EventListParams{JobID: "run"}), []string{"run submitted", "run leased", "run started"})
	eq("the feed", types(store.EventListParams{}), []string{"run submitted", "run leased", "run started",
		"done submitted", "done leased", "done succeeded"})
	eq("the feed after 2, newest first", types(store.EventListParams{AfterID: 2, Newest: true}),
		[]string{"done succeeded", "done leased", "done submitted", "run started"})
	eq("the feed without the live events", types(store.EventListParams{NoLive: true, UpToID: 5}),
		[]string{"run submitted", "done submitted", "done leased"})
}
