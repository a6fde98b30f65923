package postgres

import (
	"testing"

	"github.com/fairwayhq/fairway/internal/pgtest"
)

// The CHECK constraints of jobs and executions, which PostgreSQL reads
// from their stored trees and plans again in every statement that
// inserts or updates those tables (migration 0022), hold their lists as
// one array constant, a small tree, and still refuse what is not in the
// list and let NULL through.
func TestHotTableChecksAreSmallAndStillRefuse(t *testing.T) {
	url := pgtest.URL(t)
	if _, err := Migrate(ctx, url); err != nil {
		t.Fatal(err)
	}
	db := pgtest.Open(t, url)
	rows, err := db.QueryContext(ctx, `SELECT conname, length(conbin::text) FROM pg_constraint
		WHERE contype = 'c' AND conrelid IN ('jobs'::regclass, 'executions'::regclass)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var size int
		if err := rows.Scan(&name, &size); err != nil {
			t.Fatal(err)
		}
		if size > 1000 {
			t.Errorf("%s's stored tree is %d characters, want an array constant's (under 1,000)", name, size)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO jobs (id, tenant, type, priority, state, max_attempts, created_at, updated_at, attempt_outcome)
		VALUES ('j', 't', 'x', 0, 'pending', 1, 0, 0, 'succeeded')`); err != nil {
		t.Fatalf("a valid job, final_state NULL: %v", err)
	}
	for _, set := range []string{"state = 'bogus'", "final_state = 'pending'", "attempt_outcome = 'bogus'"} {
		_, err := db.ExecContext(ctx, "UPDATE jobs SET "+set+" WHERE id = 'j'")
		if pgCode(err) != "23514" {
			t.Errorf("UPDATE jobs SET %s: %v, want a check violation", set, err)
		}
	}
}
