package postgres

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// preparedStatement is a row of pg_prepared_statements.
type preparedStatement struct {
	text            string
	generic, custom int64
}

// writerStatements is every statement prepared on the writer
// connections, with how many times each was planned generic and custom.
func writerStatements(t *testing.T, s *Store) []preparedStatement {
	t.Helper()
	var out []preparedStatement
	for _, wc := range s.writers {
		wc.mu.Lock()
		rows, err := wc.core.WConn.QueryContext(ctx, "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
		if err != nil {
			wc.mu.Unlock()
			t.Fatal(err)
		}
		for rows.Next() {
			var st preparedStatement
			if err := rows.Scan(&st.text, &st.generic, &st.custom); err != nil {
				t.Fatal(err)
			}
			out = append(out, st)
		}
		err = rows.Err()
		rows.Close()
		wc.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// The writer's batches pass a column as one array (package sqlstore,
// arrays.go): a batch of transitions of one shape, NULLs among its
// values, is one UPDATE from unnest, whatever its row count, and lands
// as the transitions would one by one; a transition in it whose attempt
// guard misses its row fails the Write with ErrConflict, committing none
// of the others. Every statement of the writer runs a generic plan
// (writerPlanSettings): none is planned again at each run.
func TestBatchesPassColumnsAsArrays(t *testing.T) {
	s := openTemp(t)
	const jobs = 37 // not a chunk size of the VALUES statements
	ids := insertPendingJobs(t, s, jobs, "job-%02d")
	at := storetest.T0.Add(time.Second)
	worker := func(i int) string { // every third lease sets no worker: a NULL in the column's array
		if i%3 == 0 {
			return ""
		}
		return fmt.Sprintf("w%d", i)
	}
	if err := s.Write(ctx, func(w store.Writer) error {
		for i, id := range ids {
			p := store.JobTransitionParams{ID: id, FromStates: []store.State{store.StatePending}, ExpectAttempt: 0, At: at,
				Set: store.JobSet{State: store.Ptr(store.StateLeased), Attempt: store.Ptr(1), WorkerID: store.Ptr(worker(i))}}
			if err := w.JobTransitionBatched(ctx, p); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		j, err := s.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != store.StateLeased || j.Attempt != 1 || j.WorkerID != worker(i) || !j.UpdatedAt.Equal(at) {
			t.Errorf("%s after its lease: state %s attempt %d worker %q updated %v", id, j.State, j.Attempt, j.WorkerID, j.UpdatedAt)
		}
	}

	var arrays int
	for _, st := range writerStatements(t, s) {
		q := st.text
		// The batches' statements; not the single job's insert, which
		// ends in ON CONFLICT (prepared at Open).
		if strings.HasPrefix(q, "WITH changed AS (UPDATE jobs") ||
			strings.HasPrefix(q, "INSERT INTO jobs") && !strings.Contains(q, "ON CONFLICT") {
			if !strings.Contains(q, " FROM unnest(") || strings.Contains(q, "VALUES") {
				t.Errorf("a batch prepared with a VALUES list: %.200s", q)
			}
			arrays++
		}
		if st.custom > 0 { // PostgreSQL plans a statement's first five runs custom, unless told otherwise
			t.Errorf("%d custom plans (and %d generic) of %.200s, want generic plans only", st.custom, st.generic, q)
		}
	}
	if arrays != 2 { // the insert, the lease
		t.Errorf("%d batch statements prepared, want 2 (one a shape)", arrays)
	}

	// The start of every job, one of them fenced by an attempt it no
	// longer has.
	err := s.Write(ctx, func(w store.Writer) error {
		for i, id := range ids {
			attempt := 1
			if i == jobs/2 {
				attempt = 2
			}
			p := store.JobTransitionParams{ID: id, FromStates: []store.State{store.StateLeased}, ExpectAttempt: attempt,
				At: at.Add(time.Second), Set: store.JobSet{State: store.Ptr(store.StateRunning), StartedAt: store.Ptr(at.Add(time.Second))}}
			if err := w.JobTransitionBatched(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a batch with a missed attempt guard: %v, want ErrConflict", err)
	}
	for _, id := range ids {
		if j, err := s.JobGet(ctx, id); err != nil || j.State != store.StateLeased {
			t.Errorf("%s after a failed batch: %s (%v), want leased", id, j.State, err)
		}
	}
}

// A small batch of jobs of one shape (too few for arrays) is inserted
// with its specs in one statement, the jobs' INSERT a data-modifying CTE
// of the specs' (package sqlstore, queueJobsWithSpecs): one statement
// prepared for both tables, the jobs and their specs read back, and a
// batch holding a taken id fails with ErrExists and commits nothing.
func TestASmallBatchInsertsJobsWithTheirSpecsInOneStatement(t *testing.T) {
	s := openTemp(t)
	insert := func(ids ...string) error {
		return s.Write(ctx, func(w store.Writer) error {
			for _, id := range ids {
				j := store.Job{ID: id, Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0,
					Payload: []byte(`{"id":"` + id + `"}`)}
				if err := w.JobInsertBatched(ctx, j); err != nil {
					return err
				}
			}
			return nil
		})
	}
	before := map[string]bool{} // prepared at Open
	for _, st := range writerStatements(t, s) {
		before[st.text] = true
	}
	if err := insert("a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		j, err := s.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if string(j.Payload) != `{"id":"`+id+`"}` || j.State != store.StatePending {
			t.Errorf("%s: payload %s state %s", id, j.Payload, j.State)
		}
	}
	var merged, specsAlone int
	for _, st := range writerStatements(t, s) {
		switch {
		case before[st.text]:
		case strings.HasPrefix(st.text, "WITH inserted AS (INSERT INTO jobs") && strings.Contains(st.text, ") INSERT INTO job_specs"):
			merged++
		case strings.HasPrefix(st.text, "INSERT INTO job_specs"):
			specsAlone++
		}
	}
	if merged == 0 || specsAlone > 0 {
		t.Errorf("%d statements inserting jobs with their specs, %d inserting specs alone; want the specs with their jobs", merged, specsAlone)
	}
	if err := insert("d", "a"); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a batch with a taken id: %v, want ErrExists", err)
	}
	s.Resume()
	if _, err := s.JobGet(ctx, "d"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("d, of the failed batch: %v, want ErrNotFound", err)
	}
}
