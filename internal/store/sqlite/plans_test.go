package sqlite

import (
	"context"
	"strings"
	"testing"
)

// seedJobs inserts n jobs straight into the table, in the proportions of
// a server that keeps its finished jobs (as postgres's plans_test.go),
// each holding its submitted event:
// most succeeded, few failed or cancelled, some unfinished; one big
// tenant and nine small ones; one job in ten from a schedule. Then
// ANALYZE.
func seedJobs(t *testing.T, s *Store, n int) {
	t.Helper()
	ctx := context.Background()
	_, err := s.WConn.ExecContext(ctx, `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?),
		st(i, state) AS (SELECT i, CASE WHEN i % 97 < 80 THEN 'succeeded' WHEN i % 97 < 85 THEN 'failed'
			WHEN i % 97 < 86 THEN 'cancelled' WHEN i % 97 < 95 THEN 'pending' ELSE 'running' END FROM seq)
		INSERT INTO jobs (id, tenant, type, priority, state, final_state, created_at, finished_at, schedule_id,
			submit_event_id)
		SELECT printf('job-%08d', i), CASE WHEN i % 100 < 91 THEN 'big' ELSE 't' || (i % 100 - 90) END, 'x', 0,
			state, CASE WHEN state IN ('succeeded', 'failed', 'cancelled') THEN state END, 1000000 + i,
			CASE WHEN state IN ('succeeded', 'failed', 'cancelled') THEN 2000000 + i END,
			CASE WHEN i % 10 = 0 THEN 's' || (i % 7) END, 10 * i
		FROM st`, n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WConn.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
}

// Every statement that reads jobs through an index other than the
// primary key uses the index made for it (EXPLAIN QUERY PLAN), and every
// such index of jobs is used by one of them: none is kept that no plan
// uses (store doc.go, "The hot row and its indexes").
func TestJobIndexPlans(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	ctx := context.Background()
	seedJobs(t, s, 50000)

	used := map[string]bool{}
	for _, q := range s.PlannedQueries() {
		rows, err := s.RDB.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q.SQL, q.Args...)
		if err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
		var plan strings.Builder
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(detail + "\n")
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s:\n%s", q.Name, plan.String())
		if !strings.Contains(plan.String()+"\n", " INDEX "+q.Index+" ") && !strings.Contains(plan.String(), " INDEX "+q.Index+"\n") {
			t.Errorf("%s: the plan does not use %s:\n%s", q.Name, q.Index, plan.String())
		}
		used[q.Index] = true
	}
	rows, err := s.RDB.QueryContext(ctx, `SELECT name FROM sqlite_master
		WHERE type = 'index' AND tbl_name = 'jobs' AND name NOT LIKE 'sqlite_autoindex_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		if !used[name] && !plannedInEventTests[name] {
			t.Errorf("index %s of jobs is used by no planned statement", name)
		}
	}
}

// plannedInEventTests are indexes of jobs whose plans the events' plan
// test checks (events_plan_test.go): the audit feed's way to the leased
// events of live attempts and to the submitted events.
var plannedInEventTests = map[string]bool{"jobs_live_events": true, "jobs_submit_event": true}
