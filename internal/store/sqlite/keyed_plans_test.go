package sqlite

import (
	"context"
	"strings"
	"testing"
)

// TestIdempotencyHoldersPlan: the dispatcher's read of a submit's key
// holders finds each claim through the primary key of idempotency_keys,
// not by scanning the table (which holds a day of claims).
func TestIdempotencyHoldersPlan(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	ctx := context.Background()
	_, err := s.WConn.ExecContext(ctx, `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < 20000)
		INSERT INTO idempotency_keys (tenant, key, job_id, created_at)
		SELECT 't' || (i % 10), 'k' || i, 'j' || i, 1000000 + i FROM seq`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WConn.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	plan := queryPlan(t, s, "holders", s.HoldersSQL(3), []any{"t1", "k1", "t2", "k2", "t3", "k3", 0})
	if !strings.Contains(plan, "(tenant=? AND key=?)") || strings.Contains(plan, "SCAN idempotency_keys") ||
		strings.Contains(plan, "SCAN k\n") {
		t.Errorf("the holders query does not find claims by (tenant, key):\n%s", plan)
	}
}
