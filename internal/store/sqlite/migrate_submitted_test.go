package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// A database written before the submitted event moved into the job row
// (store doc.go, "The submitted event in the job row") keeps its jobs'
// submitted events as the rows they are; a job written after the
// migration holds its own, numbered after the old ones, and the audit
// feed gives both in id order.
func TestMigrationKeepsOldSubmittedRows(t *testing.T) {
	ctx := context.Background()
	db, path := migratedBefore(t, "submitted_event")
	if _, err := db.ExecContext(ctx, `INSERT INTO jobs (id, tenant, type, lane, priority, state, created_at)
		VALUES ('old', 't', 'x', 'default', 5, 'pending', 1000000)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO events (job_id, tenant, type, at, actor, detail)
		VALUES ('old', 't', 'submitted', 1000000, 'open', '{"lane":"default","priority":5,"type":"x"}')`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	last, err := s.EventLastID(ctx)
	if err != nil || last != 1 {
		t.Fatalf("EventLastID = %d, %v; want 1", last, err)
	}
	at := time.Unix(2, 0).UTC()
	j := store.Job{ID: "new", Tenant: "t", Type: "x", Lane: "default", Priority: 5, State: store.StatePending,
		CreatedAt: at, SubmitEventID: last + 1, SubmitActor: "open"}
	if err := s.Write(ctx, func(w store.Writer) error {
		if err := w.JobInsertBatched(ctx, j); err != nil {
			return err
		}
		ev := store.JobSubmittedEvent(j)
		ev.Synthesised = true
		return w.EventAppend(ctx, []store.Event{ev})
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != 1 || got[0].JobID != "old" || got[1].ID != 2 || got[1].JobID != "new" ||
		string(got[0].Detail) != string(got[1].Detail) || got[1].Actor != "open" || !got[1].At.Equal(at) {
		t.Fatalf("events after the migration: %+v", got)
	}
	var rows int
	if err := s.RDB.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d event rows (%v), want 1: the old job's", rows, err)
	}
}
