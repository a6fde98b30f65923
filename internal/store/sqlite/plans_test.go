package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/internal/store/sqlstore"
)

// seedJobs inserts n jobs straight into the table, in the proportions of
// a server that keeps its finished jobs (as postgres's plans_test.go),
// each holding its submitted event:
// most succeeded, few failed or cancelled, some unfinished; one big
// tenant and nine small ones; one job in ten from a schedule; each with
// its spec (a command and a payload of 200 bytes). Then ANALYZE.
func seedJobs(t testing.TB, s *Store, n int) {
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
	if _, err := s.WConn.ExecContext(ctx, `INSERT INTO job_specs (job_id, command, payload)
		SELECT id, '["sh","-c","true"]', randomblob(200) FROM jobs`); err != nil {
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
	seedJobs(t, s, 50000)

	used := map[string]bool{}
	for _, q := range s.PlannedQueries() {
		plan := queryPlan(t, s, q.Name, q.SQL, q.Args)
		for _, index := range append([]string{q.Index}, q.Also...) {
			if !strings.Contains(plan+"\n", " INDEX "+index+" ") && !strings.Contains(plan, " INDEX "+index+"\n") {
				t.Errorf("%s: the plan does not use %s:\n%s", q.Name, index, plan)
			}
			used[index] = true
		}
		// Every read of jobs is an index range, in the index's order: no
		// scan of the table, no sort of the rows found but the merge of
		// the branches' pages; a job's spec is found by its key.
		for _, line := range strings.Split(plan, "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "SCAN jobs") && !strings.Contains(line, "INDEX") || strings.HasPrefix(line, "SCAN job_specs") {
				t.Errorf("%s: reads the whole table: %q", q.Name, line)
			}
		}
		if strings.Contains(q.SQL, "job_specs") && !strings.Contains(plan, "SEARCH job_specs USING INDEX sqlite_autoindex_job_specs_1 (job_id=?)") {
			t.Errorf("%s: does not find the specs by their key:\n%s", q.Name, plan)
		}
	}
	for _, name := range secondaryIndexes(t, s, "jobs") {
		if !used[name] && !sqlstore.FeedIndexes[name] {
			t.Errorf("index %s of jobs is used by no planned statement", name)
		}
	}
}

// seedAttempts gives every finished job of seedJobs an execution (leased
// 10 µs and finished as the job), an execution row for half of them and
// held by the job row for the others, one in a thousand with a result upload
// pending, and writes 20,000 idempotency claims. Then ANALYZE.
func seedAttempts(t testing.TB, s *Store) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{`INSERT INTO executions (job_id, attempt, worker_id, leased_at, wait_ms, started_at, finished_at,
			outcome, duration_ms, result_state, result_next_at, lease_event_id, start_event_id, end_event_id)
		SELECT id, 1, 'w', finished_at - 10, 5, finished_at - 5, finished_at, final_state, 5,
			CASE WHEN created_at % 1000 = 0 THEN 'pending' END, CASE WHEN created_at % 1000 = 0 THEN finished_at END,
			3 * created_at, 3 * created_at + 1, 3 * created_at + 2
		FROM jobs WHERE final_state IS NOT NULL AND created_at % 2 = 0`,
		// The other half hold their attempt in the job row (store doc.go,
		// "The finished attempt in the job row").
		`UPDATE jobs SET worker_id = 'w', leased_at = finished_at - 10, attempt_wait_ms = 5, started_at = finished_at - 5,
			attempt_outcome = final_state, attempt_duration_ms = 5, lease_event_id = 3 * created_at,
			start_event_id = 3 * created_at + 1, end_event_id = 3 * created_at + 2
		WHERE final_state IS NOT NULL AND created_at % 2 = 1`,
		`WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < 20000)
		INSERT INTO idempotency_keys (tenant, key, job_id, created_at) SELECT 't' || (i % 10), 'k' || i, 'j' || i, 1000000 + i FROM seq`,
		"ANALYZE"} {
		if _, err := s.WConn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
}

// The statements that read attempts and idempotency claims through an
// index other than the primary key use the index made for them, and every
// such index of executions and idempotency_keys is used by one of them or
// by the events' plan test: none is kept that no plan uses (store doc.go,
// "The hot row and its indexes").
func TestAttemptIndexPlans(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	seedJobs(t, s, 50000)
	seedAttempts(t, s)
	used := map[string]bool{}
	for _, q := range s.PlannedAttemptQueries() {
		plan := queryPlan(t, s, q.Name, q.SQL, q.Args)
		for _, index := range append([]string{q.Index}, q.Also...) {
			if !strings.Contains(plan+"\n", " INDEX "+index+" (") {
				t.Errorf("%s: the plan does not search %s:\n%s", q.Name, index, plan)
			}
		}
		for _, line := range strings.Split(plan, "\n") {
			line = strings.TrimSpace(line)
			if (strings.HasPrefix(line, "SCAN jobs") || strings.HasPrefix(line, "SCAN executions")) && !strings.Contains(line, "INDEX") {
				t.Errorf("%s: reads a whole table: %q", q.Name, line)
			}
		}
		used[q.Index] = true
	}
	for _, name := range secondaryIndexes(t, s, "executions", "idempotency_keys") {
		if !used[name] && !sqlstore.FeedIndexes[name] {
			t.Errorf("index %s is used by no planned statement", name)
		}
	}
}

// queryPlan is SQLite's EXPLAIN QUERY PLAN of query, one line a step,
// logged under name.
func queryPlan(t *testing.T, s *Store, name, query string, args []any) string {
	t.Helper()
	rows, err := s.RDB.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s:\n%s", name, plan.String())
	return plan.String()
}

// secondaryIndexes names the indexes of the tables other than their
// primary keys, in order.
func secondaryIndexes(t *testing.T, s *Store, tables ...string) []string {
	t.Helper()
	var names []string
	for _, table := range tables {
		rows, err := s.RDB.QueryContext(context.Background(), `SELECT name FROM sqlite_master
			WHERE type = 'index' AND tbl_name = ? AND name NOT LIKE 'sqlite_autoindex_%' ORDER BY name`, table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return names
}
