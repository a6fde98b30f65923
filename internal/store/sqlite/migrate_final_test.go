package sqlite

import (
	"context"
	"testing"

	"github.com/fairwayhq/fairway/internal/store"
)

// Migration 0020 sets final_state from state on the jobs already there:
// a finished job is listed by its state and is not taken for unfinished
// at the rebuild; an unfinished one is (store doc.go, "The hot row and its
// indexes").
func TestMigrationSetsFinalStateOfExistingJobs(t *testing.T) {
	ctx := context.Background()
	db, path := migratedBefore(t, "job_final_state")
	if _, err := db.ExecContext(ctx, `INSERT INTO jobs (id, tenant, type, priority, state, created_at, finished_at) VALUES
		('done', 't', 'x', 0, 'succeeded', 1, 2), ('failed', 't', 'x', 0, 'failed', 2, 3),
		('waiting', 't', 'x', 0, 'pending', 3, NULL)`); err != nil {
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
	unfinished, err := s.JobListUnfinished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(unfinished) != 1 || unfinished[0].ID != "waiting" {
		t.Errorf("unfinished after the migration: %v, want [waiting]", unfinished)
	}
	page, err := s.JobList(ctx, store.JobListParams{States: []store.State{store.StateSucceeded, store.StateFailed}})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Jobs) != 2 || page.Jobs[0].ID != "failed" || page.Jobs[1].ID != "done" {
		t.Errorf("finished after the migration: %v, want [failed done]", page.Jobs)
	}
}
