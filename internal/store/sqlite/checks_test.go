package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// hotStatements are the writes whose CHECK constraints run on every job:
// its insert, the transitions that write state (with final_state and the
// held attempt's outcome at the finish) and an execution row's upsert.
var hotStatements = []string{
	`INSERT INTO jobs (id, tenant, type, priority, state, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
	`UPDATE jobs SET updated_at = ?, state = ? WHERE id = ? AND attempt = ? AND +state IN (?)`,
	`UPDATE jobs SET updated_at = ?, state = ?, final_state = ?, attempt_outcome = ? WHERE id = ? AND attempt = ? AND +state IN (?, ?)`,
	`UPDATE executions SET outcome = ?, result_state = ? WHERE job_id = ? AND attempt = ?`,
}

// ephemeralTables returns the statements among hotStatements whose
// program opens an ephemeral table: SQLite's way of evaluating an IN
// list of three constants or more, built anew at every run.
func ephemeralTables(t *testing.T, ctx context.Context, conn interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) []string {
	t.Helper()
	var found []string
	for _, q := range hotStatements {
		rows, err := conn.QueryContext(ctx, "EXPLAIN "+q, make([]any, strings.Count(q, "?"))...)
		if err != nil {
			t.Fatalf("EXPLAIN %s: %v", q, err)
		}
		for rows.Next() {
			var addr, p1, p2, p3 int64
			var opcode string
			var p4, p5, comment sql.NullString
			if err := rows.Scan(&addr, &opcode, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
				t.Fatal(err)
			}
			if opcode == "OpenEphemeral" && (len(found) == 0 || found[len(found)-1] != q) {
				found = append(found, q)
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return found
}

// checksRefuse asserts that the hot tables' checks still refuse what they
// refused as IN lists, and take what they took.
func checksRefuse(t *testing.T, ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, id string) {
	t.Helper()
	for _, set := range []string{"state = 'succeeded', final_state = 'succeeded', attempt_outcome = 'timeout'", "state = 'pending', final_state = NULL, attempt_outcome = NULL"} {
		if _, err := db.ExecContext(ctx, "UPDATE jobs SET "+set+" WHERE id = ?", id); err != nil {
			t.Errorf("UPDATE jobs SET %s: %v, want it taken", set, err)
		}
	}
	for _, set := range []string{"state = 'bogus'", "state = 'Pending'", "final_state = 'pending'", "attempt_outcome = 'bogus'"} {
		_, err := db.ExecContext(ctx, "UPDATE jobs SET "+set+" WHERE id = ?", id)
		if err == nil || !strings.Contains(err.Error(), "CHECK constraint failed") {
			t.Errorf("UPDATE jobs SET %s: %v, want a CHECK constraint failure", set, err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO executions (job_id, attempt, outcome, result_state) VALUES (?, 1, 'lost', 'written')`, id); err != nil {
		t.Errorf("a valid execution: %v", err)
	}
	for _, set := range []string{"outcome = 'bogus'", "result_state = 'bogus'"} {
		_, err := db.ExecContext(ctx, "UPDATE executions SET "+set+" WHERE job_id = ?", id)
		if err == nil || !strings.Contains(err.Error(), "CHECK constraint failed") {
			t.Errorf("UPDATE executions SET %s: %v, want a CHECK constraint failure", set, err)
		}
	}
}

// The hot tables' checks are comparisons, not IN lists (migration 0028,
// doc.go "CHECK constraints"): no write of a job builds a table of
// constants, and the checks refuse what they refused before.
func TestHotChecksBuildNoTableOfConstants(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if found := ephemeralTables(t, ctx, s.WConn); len(found) > 0 {
		t.Errorf("these statements build an ephemeral table at every run: %q", found)
	}
	if _, err := s.WConn.ExecContext(ctx, `INSERT INTO jobs (id, tenant, type, priority, state, created_at) VALUES ('j', 't', 'x', 0, 'pending', 1)`); err != nil {
		t.Fatal(err)
	}
	checksRefuse(t, ctx, s.WConn, "j")
}

// A file made before migration 0028 gets the new checks in place: its rows
// stay, the file passes integrity_check, and every connection (a reader
// opened after, the writer that ran the migration) compiles the new ones.
func TestMigrationRewritesTheChecksOfAnOlderFile(t *testing.T) {
	ctx := context.Background()
	db, path := migratedBefore(t, "checks_without_in_lists")
	if found := ephemeralTables(t, ctx, db); len(found) == 0 {
		t.Fatal("the schema before migration 0028 builds no ephemeral table: this test no longer tests the migration")
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO jobs (id, tenant, type, priority, state, created_at, final_state) VALUES
		('old', 't', 'x', 0, 'succeeded', 1, 'succeeded')`); err != nil {
		t.Fatal(err)
	}
	s := reopen(t, db, path)
	if found := ephemeralTables(t, ctx, s.WConn); len(found) > 0 {
		t.Errorf("after the migration, the writer's statements build an ephemeral table: %q", found)
	}
	if found := ephemeralTables(t, ctx, s.RDB); len(found) > 0 {
		t.Errorf("after the migration, a reader's statements build an ephemeral table: %q", found)
	}
	var check, state string
	if err := s.RDB.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
	if err := s.RDB.QueryRowContext(ctx, "SELECT state FROM jobs WHERE id = 'old'").Scan(&state); err != nil || state != "succeeded" {
		t.Fatalf("the older row: %q, %v", state, err)
	}
	checksRefuse(t, ctx, s.WConn, "old")
}
