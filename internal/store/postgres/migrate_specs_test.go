package postgres

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store/sqlstore"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// Migration 0019 moves the jobs' specs to job_specs (store doc.go, "The
// hot row and its indexes"): jobs written before it read back as they
// were written, their attempts and logs stay, and retention deletes a
// job's spec with it.
func TestMigrationMovesSpecs(t *testing.T) {
	url := pgtest.URL(t)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	before := len(ms)
	for i, m := range ms {
		if m.Name == "job_specs" {
			before = i
		}
	}
	if _, err := migrateTo(ctx, url, ms, before); err != nil {
		t.Fatal(err)
	}
	db := pgtest.Open(t, url)
	jobs := storetest.SpecJobs()
	for i := range jobs {
		cols, args, err := sqlstore.OldJobRow(&jobs[i])
		if err != nil {
			t.Fatal(err)
		}
		params := make([]string, len(cols))
		for i := range params {
			params[i] = fmt.Sprintf("$%d", i+1)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO jobs ("+strings.Join(cols, ", ")+") VALUES ("+
			strings.Join(params, ", ")+")", args...); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{`INSERT INTO executions (job_id, attempt, outcome, finished_at) VALUES ('spec-full', 1, 'failed', 5)`,
		`INSERT INTO log_chunks (job_id, attempt, seq, stream, at, data) VALUES ('spec-full', 1, 1, 'stdout', 5, 'x')`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.CheckSpecJobs(t, s, jobs)
	var specs, execs, logs int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM job_specs), (SELECT count(*) FROM executions),
		(SELECT count(*) FROM log_chunks)`).Scan(&specs, &execs, &logs); err != nil {
		t.Fatal(err)
	}
	if specs != 2 || execs != 1 || logs != 1 {
		t.Errorf("after retention: %d specs (want 2: the unfinished jobs'), %d executions and %d log chunks (want 1 and 1)",
			specs, execs, logs)
	}
}
