package postgres

import (
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// job_specs has no foreign key (migration 0023; doc.go, "The spec
// without a foreign key"); the tables whose rows must go with their job
// keep theirs, each ON DELETE CASCADE.
func TestOnlyJobSpecsLostItsForeignKey(t *testing.T) {
	url := pgtest.URL(t)
	if _, err := Migrate(ctx, url); err != nil {
		t.Fatal(err)
	}
	db := pgtest.Open(t, url)
	rows, err := db.QueryContext(ctx, `SELECT conrelid::regclass::text, confdeltype FROM pg_constraint
		WHERE contype = 'f' AND confrelid = 'jobs'::regclass ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var table, onDelete string
		if err := rows.Scan(&table, &onDelete); err != nil {
			t.Fatal(err)
		}
		got = append(got, table+":"+onDelete)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// confdeltype c: ON DELETE CASCADE.
	if want := "executions:c log_chunks:c unique_claims:c"; strings.Join(got, " ") != want {
		t.Errorf("foreign keys to jobs: %v, want %s", got, want)
	}
	var specFKs int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_constraint
		WHERE contype = 'f' AND conrelid = 'job_specs'::regclass`).Scan(&specFKs); err != nil {
		t.Fatal(err)
	}
	if specFKs != 0 {
		t.Errorf("job_specs has %d foreign keys, want none", specFKs)
	}
}

// Retention deletes each job's spec in the statement that deletes the
// job (Dialect.JobDelete), by the specs' primary key: no spec is left
// without its job, and none of the unfinished jobs' goes.
func TestRetentionLeavesNoSpecBehind(t *testing.T) {
	s, db := openWithDB(t)
	seedJobs(t, db, 3000)

	plan := explainPlan(t, db, "JobDelete", dialect.JobDelete, []any{"job-00000001"})
	for _, want := range []string{"Index Scan using job_specs_pkey on job_specs", "Index Scan using jobs_pkey on jobs"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the delete of a job and its spec does not use %q:\n%s", want, plan)
		}
	}
	for {
		var p store.Purged
		if err := s.Write(ctx, func(w store.Writer) (err error) {
			p, err = w.JobDeleteFinished(ctx, storetest.T0, 500)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if p.Deleted == 0 {
			break
		}
	}
	var jobs, specs, orphans int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM jobs), (SELECT count(*) FROM job_specs),
		(SELECT count(*) FROM job_specs WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = job_specs.job_id))`).
		Scan(&jobs, &specs, &orphans); err != nil {
		t.Fatal(err)
	}
	if jobs == 0 || jobs == 3000 || specs != jobs || orphans != 0 {
		t.Errorf("after retention: %d jobs (want the unfinished, some of 3000), %d specs (want one a job), %d without their job (want none)",
			jobs, specs, orphans)
	}
}
