package postgres

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/sqlstore"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// jobScans are the writer-visible scan counters of the jobs table:
// sequential scans, scans of an index other than the primary key, and of
// the primary key.
type jobScans struct{ seq, otherIndex, pkey int64 }

// writerJobScans has the writer connections' backends publish their
// statistics and reads them back from another session.
func writerJobScans(t *testing.T, s *Store, db *sql.DB) jobScans {
	t.Helper()
	for _, wc := range s.writers {
		wc.mu.Lock()
		_, err := wc.core.WConn.ExecContext(ctx, "SELECT pg_stat_force_next_flush()")
		wc.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	var got jobScans
	err := db.QueryRowContext(ctx, `SELECT
		(SELECT seq_scan FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = 'jobs'),
		(SELECT COALESCE(SUM(idx_scan), 0) FROM pg_stat_user_indexes WHERE schemaname = current_schema()
			AND relname = 'jobs' AND indexrelname <> 'jobs_pkey'),
		(SELECT idx_scan FROM pg_stat_user_indexes WHERE schemaname = current_schema() AND indexrelname = 'jobs_pkey')`).
		Scan(&got.seq, &got.otherIndex, &got.pkey)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// On a jobs table that grew after its last ANALYZE (here: never analyzed,
// as on a fresh database), the writer's transitions find each job by its
// id: they neither scan the table nor walk another index, whose every
// entry of a state they would read (doc.go, "The writer's plans").
func TestTransitionsFindTheirJobByID(t *testing.T) {
	s, db := openWithDB(t)

	const jobs, perWrite = 400, 5
	ids := insertPendingJobs(t, s, jobs, "job-%04d")

	before := writerJobScans(t, s, db)
	leased, attempt := store.StateLeased, 1
	at := storetest.T0.Add(time.Second)
	for i := 0; i < jobs; i += perWrite { // a statement of 5 rows, 80 times: its plan is cached
		if err := s.Write(ctx, func(w store.Writer) error {
			for _, id := range ids[i : i+perWrite] {
				p := store.JobTransitionParams{ID: id, FromStates: []store.State{store.StatePending}, ExpectAttempt: 0, At: at,
					Set: store.JobSet{State: &leased, Attempt: &attempt}}
				if err := w.JobTransitionBatched(ctx, p); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var after jobScans
	deadline := time.Now().Add(10 * time.Second)
	for { // the statistics reach other sessions once the writer's backend is idle
		after = writerJobScans(t, s, db)
		if after.pkey-before.pkey >= jobs/perWrite || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after.seq != before.seq || after.otherIndex != before.otherIndex {
		t.Errorf("%d transitions scanned jobs %d times and walked an index other than jobs_pkey %d times, want 0 and 0",
			jobs, after.seq-before.seq, after.otherIndex-before.otherIndex)
	}
	if after.pkey-before.pkey < jobs/perWrite {
		t.Errorf("jobs_pkey used %d times by %d batched statements", after.pkey-before.pkey, jobs/perWrite)
	}
}

// seedJobs inserts n jobs straight into the table, in the proportions of
// a server that keeps its finished jobs: most succeeded, few failed or
// cancelled, about 4% unfinished (with more, reading every unfinished
// job at lead is as cheap by a scan of the table); one big tenant and nine small ones; one
// job in ten from a schedule; each holds its submitted event and has its
// spec (a command and a payload of 96 bytes). Then ANALYZE.
func seedJobs(t testing.TB, db *sql.DB, n int) {
	t.Helper()
	_, err := db.ExecContext(ctx, `INSERT INTO jobs (id, tenant, type, priority, state, final_state, created_at,
			finished_at, schedule_id, submit_event_id)
		SELECT 'job-' || lpad(i::text, 8, '0'), CASE WHEN i % 100 < 91 THEN 'big' ELSE 't' || (i % 100 - 90) END,
			'x', 0, s.state, CASE WHEN s.state IN ('succeeded', 'failed', 'cancelled') THEN s.state END, 1000000 + i,
			CASE WHEN s.state IN ('succeeded', 'failed', 'cancelled') THEN 2000000 + i END,
			CASE WHEN i % 10 = 0 THEN 's' || (i % 7) END, 10 * i
		FROM generate_series(1, $1) AS i,
			LATERAL (SELECT CASE WHEN i % 97 < 80 THEN 'succeeded' WHEN i % 97 < 85 THEN 'failed'
				WHEN i % 97 < 93 THEN 'cancelled' WHEN i % 97 < 96 THEN 'pending' ELSE 'running' END AS state) AS s`, n)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`INSERT INTO job_specs (job_id, command, payload)
		SELECT id, '["sh","-c","true"]', decode(repeat(md5(id), 6), 'hex') FROM jobs`, "ANALYZE jobs", "ANALYZE job_specs"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
}

// Every statement that reads jobs through an index other than the
// primary key uses the index made for it, and every such index of jobs
// is used by one of them: none is kept that no plan uses (store doc.go,
// "The hot row and its indexes").
func TestJobIndexPlans(t *testing.T) {
	s, db := openWithDB(t)
	seedJobs(t, db, 50000)

	used := map[string]bool{}
	for _, q := range s.PlannedQueries() {
		plan := explainPlan(t, db, q.Name, q.SQL, q.Args)
		for _, index := range append([]string{q.Index}, q.Also...) {
			if !strings.Contains(plan, " "+index+" ") {
				t.Errorf("%s: the plan does not use %s:\n%s", q.Name, index, plan)
			}
			used[index] = true
		}
		if strings.Contains(plan, "Seq Scan on jobs") || strings.Contains(plan, "Seq Scan on job_specs") {
			t.Errorf("%s: reads the whole table:\n%s", q.Name, plan)
		}
		if strings.Contains(q.SQL, "job_specs") && !strings.Contains(plan, "Index Scan using job_specs_pkey on job_specs") {
			t.Errorf("%s: does not find the specs by their key:\n%s", q.Name, plan)
		}
	}
	for _, name := range secondaryIndexes(t, db, "jobs") {
		if !used[name] && !sqlstore.FeedIndexes[name] {
			t.Errorf("index %s of jobs is used by no planned statement", name)
		}
	}
}

// A lease and a start change no indexed column of jobs: the leased and
// started event ids they write go to the live columns, which no index
// holds (store doc.go, "The hot row and its indexes"). They find room on
// their page for the new version: both are HOT updates
// (pg_stat_user_tables.n_tup_hot_upd; none was while the lease wrote
// lease_event_id, which jobs_live_events indexes). The finish writes
// final_state and finished_at, which are indexed, and moves the ids to
// lease_event_id and start_event_id: it is not.
func TestStateUpdatesAreHOT(t *testing.T) {
	s, db := openWithDB(t)

	const jobs, perWrite = 400, 20
	ids := make([]string, jobs)
	if err := s.Write(ctx, func(w store.Writer) error {
		for i := range ids {
			ids[i] = fmt.Sprintf("job-%04d", i)
			j := store.Job{ID: ids[i], Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0,
				Command: []string{"sh", "-c", "echo a command of some length"}, Payload: make([]byte, 120)}
			if err := w.JobInsertBatched(ctx, j); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	at := storetest.T0.Add(time.Second)
	step := func(from store.State, set func(n int64) store.JobSet, attempt int) {
		for i := 0; i < jobs; i += perWrite {
			if err := s.Write(ctx, func(w store.Writer) error {
				for k, id := range ids[i : i+perWrite] {
					p := store.JobTransitionParams{ID: id, FromStates: []store.State{from}, ExpectAttempt: attempt, At: at,
						Set: set(int64(1 + 2*(i+k)))}
					if err := w.JobTransitionBatched(ctx, p); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	one := 1
	step(store.StatePending, func(n int64) store.JobSet {
		return store.JobSet{State: store.Ptr(store.StateLeased), Attempt: &one, WorkerID: store.Ptr("w1"),
			LeaseExpiresAt: store.Ptr(at.Add(time.Minute)), LeaseEventID: &n, LeasedAt: &at}
	}, 0)
	step(store.StateLeased, func(n int64) store.JobSet {
		return store.JobSet{State: store.Ptr(store.StateRunning), StartedAt: &at, StartEventID: store.Ptr(n + 1), StartEventAt: &at}
	}, 1)
	step(store.StateRunning, func(int64) store.JobSet {
		return store.JobSet{State: store.Ptr(store.StateSucceeded), FinishedAt: &at}
	}, 1)
	var leaseIDs, startIDs, liveIDs int
	if err := db.QueryRowContext(ctx, `SELECT count(lease_event_id), count(start_event_id),
		count(live_lease_event_id) + count(live_start_event_id) FROM jobs`).Scan(&leaseIDs, &startIDs, &liveIDs); err != nil {
		t.Fatal(err)
	}
	if leaseIDs != jobs || startIDs != jobs || liveIDs != 0 {
		t.Errorf("finished jobs: %d leased and %d started ids indexed, %d live; want %d, %d, 0", leaseIDs, startIDs, liveIDs, jobs, jobs)
	}

	var upd, hot int64
	deadline := time.Now().Add(10 * time.Second)
	for { // the statistics reach other sessions once the writer's backend is idle
		for _, wc := range s.writers {
			wc.mu.Lock()
			_, err := wc.core.WConn.ExecContext(ctx, "SELECT pg_stat_force_next_flush()")
			wc.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
		}
		err := db.QueryRowContext(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
			WHERE schemaname = current_schema() AND relname = 'jobs'`).Scan(&upd, &hot)
		if err != nil {
			t.Fatal(err)
		}
		if upd >= 3*jobs || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d job updates, %d HOT", upd, hot)
	if upd != 3*jobs {
		t.Fatalf("%d job updates, want %d", upd, 3*jobs)
	}
	// How many fit depends on pruning: a page's old versions are removed
	// (and their room reused) only once no transaction of the database
	// may still see them, and other sessions on the test server may hold
	// that horizon back. Without pruning, a page's free half takes a new
	// version of each of its rows (the leases), not a second one (the
	// starts); with it, every lease and start is HOT. With a state index
	// none would be.
	if hot < jobs*9/10 {
		t.Errorf("%d of %d job updates were HOT, want at least %d (the leases)", hot, upd, jobs*9/10)
	}
}

// seedAttempts gives every finished job of seedJobs an execution (leased
// 10 µs and finished as the job), an execution row for half of them and
// held by the job row for the others, one in a thousand with a result upload
// pending, and writes 20,000 idempotency claims. Then ANALYZE.
func seedAttempts(t testing.TB, db *sql.DB) {
	t.Helper()
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
		`INSERT INTO idempotency_keys (tenant, key, job_id, created_at)
		SELECT 't' || (i % 10), 'k' || i, 'j' || i, 1000000 + i FROM generate_series(1, 20000) AS i`,
		"ANALYZE executions", "ANALYZE idempotency_keys", "ANALYZE jobs"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
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
	s, db := openWithDB(t)
	seedJobs(t, db, 50000)
	seedAttempts(t, db)
	used := map[string]bool{}
	for _, q := range s.PlannedAttemptQueries() {
		plan := explainPlan(t, db, q.Name, q.SQL, q.Args)
		for _, index := range append([]string{q.Index}, q.Also...) {
			if !strings.Contains(plan, " "+index+" ") || strings.Contains(plan, "Seq Scan") {
				t.Errorf("%s: the plan does not use %s, or scans a table:\n%s", q.Name, index, plan)
			}
		}
		used[q.Index] = true
	}
	for _, name := range secondaryIndexes(t, db, "executions", "idempotency_keys") {
		if !used[name] && !sqlstore.FeedIndexes[name] {
			t.Errorf("index %s is used by no planned statement", name)
		}
	}
}

// explainPlan is PostgreSQL's plan of query, one line a node, logged
// under name.
func explainPlan(t *testing.T, db *sql.DB, name, query string, args []any) string {
	t.Helper()
	rows, err := db.QueryContext(ctx, "EXPLAIN "+query, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s:\n%s", name, plan.String())
	return plan.String()
}

// secondaryIndexes names the indexes of the tables other than their
// primary keys, in order.
func secondaryIndexes(t *testing.T, db *sql.DB, tables ...string) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()
		AND tablename = ANY($1) AND indexname NOT LIKE '%_pkey' ORDER BY indexname`, tables)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// insertPendingJobs inserts n pending jobs in one Write, batched, with
// the ids idFormat gives their index, and returns the ids.
func insertPendingJobs(t *testing.T, s *Store, n int, idFormat string) []string {
	t.Helper()
	ids := make([]string, n)
	if err := s.Write(ctx, func(w store.Writer) error {
		for i := range ids {
			ids[i] = fmt.Sprintf(idFormat, i)
			j := store.Job{ID: ids[i], Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0}
			if err := w.JobInsertBatched(ctx, j); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}
