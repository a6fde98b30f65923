package postgres

import (
	"testing"

	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// Migration 0020 moves the running jobs' live attempt event ids to the
// columns no index holds (store doc.go, "The hot row and its indexes"):
// a running job reads back with the same ids, its events and the audit
// feed show the same history, and a finished job keeps its own.
func TestMigrationMovesLiveAttemptEvents(t *testing.T) {
	url := pgtest.URL(t)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	before := len(ms)
	for i, m := range ms {
		if m.Name == "live_attempt_events" {
			before = i
		}
	}
	if before == len(ms) {
		t.Fatal("no migration live_attempt_events")
	}
	if _, err := migrateTo(ctx, url, ms, before); err != nil {
		t.Fatal(err)
	}
	db := pgtest.Open(t, url)
	for _, q := range storetest.LiveEventRows {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.CheckLiveEventRows(t, s, s.RDB)
}
