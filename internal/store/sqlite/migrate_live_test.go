package sqlite

import (
	"context"
	"testing"

	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// Migration 0026 moves the running jobs' live attempt event ids to the
// columns no index holds (store doc.go, "The hot row and its indexes"):
// a running job reads back with the same ids, its events and the audit
// feed show the same history, and a finished job keeps its own.
func TestMigrationMovesLiveAttemptEvents(t *testing.T) {
	ctx := context.Background()
	db, path := migratedBefore(t, "live_attempt_events")
	for _, q := range storetest.LiveEventRows {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.CheckLiveEventRows(t, s, s.RDB)
}
