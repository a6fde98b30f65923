package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/internal/store/sqlstore"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// Migration 0025 moves the jobs' specs to job_specs (store doc.go, "The
// hot row and its indexes"): jobs written before it read back as they
// were written, their attempts and logs stay, and retention deletes a
// job's spec with it.
func TestMigrationMovesSpecs(t *testing.T) {
	ctx := context.Background()
	db, path := migratedBefore(t, "job_specs")
	jobs := storetest.SpecJobs()
	for i := range jobs {
		cols, args, err := sqlstore.OldJobRow(&jobs[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO jobs ("+strings.Join(cols, ", ")+") VALUES ("+
			strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")+")", args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO executions (job_id, attempt, outcome, finished_at)
		VALUES ('spec-full', 1, 'failed', 5); INSERT INTO log_chunks (job_id, attempt, seq, stream, at, data)
		VALUES ('spec-full', 1, 1, 'stdout', 5, X'78')`); err != nil {
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
	storetest.CheckSpecJobs(t, s, jobs)
	var specs, execs, logs int
	if err := s.RDB.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM job_specs), (SELECT count(*) FROM executions),
		(SELECT count(*) FROM log_chunks)`).Scan(&specs, &execs, &logs); err != nil {
		t.Fatal(err)
	}
	if specs != 2 || execs != 1 || logs != 1 {
		t.Errorf("after retention: %d specs (want 2: the unfinished jobs'), %d executions and %d log chunks (want 1 and 1)",
			specs, execs, logs)
	}
}
