package postgres

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// jobScans are the writer-visible scan counters of the jobs table.
type jobScans struct{ seq, stateIndex, pkey int64 }

// writerJobScans has the writer connections' backends publish their
// statistics and reads them back from another session.
func writerJobScans(t *testing.T, s *Store, db *sql.DB) jobScans {
	t.Helper()
	for _, wc := range s.writers {
		wc.mu.Lock()
		_, err := wc.core.WConn.ExecContext(ctx, "SELECT pg_stat_force_next_flush()")
		wc.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	var got jobScans
	err := db.QueryRowContext(ctx, `SELECT
		(SELECT seq_scan FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = 'jobs'),
		(SELECT idx_scan FROM pg_stat_user_indexes WHERE schemaname = current_schema() AND indexrelname = 'jobs_state_created'),
		(SELECT idx_scan FROM pg_stat_user_indexes WHERE schemaname = current_schema() AND indexrelname = 'jobs_pkey')`).
		Scan(&got.seq, &got.stateIndex, &got.pkey)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// On a jobs table that grew after its last ANALYZE (here: never analyzed,
// as on a fresh database), the writer's transitions find each job by its
// id: they neither scan the table nor walk the state index, whose every
// entry of a state they would read (doc.go, "The writer's plans").
func TestTransitionsFindTheirJobByID(t *testing.T) {
	url := pgtest.URL(t)
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := pgtest.Open(t, url)

	const jobs, perWrite = 400, 5
	ids := make([]string, jobs)
	if err := s.Write(ctx, func(w store.Writer) error {
		for i := range ids {
			ids[i] = fmt.Sprintf("job-%04d", i)
			j := store.Job{ID: ids[i], Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0}
			if err := w.JobInsertBatched(ctx, j); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	before := writerJobScans(t, s, db)
	leased, attempt := store.StateLeased, 1
	at := storetest.T0.Add(time.Second)
	for i := 0; i < jobs; i += perWrite { // a statement of 5 rows, 80 times: its plan is cached
		if err := s.Write(ctx, func(w store.Writer) error {
			for _, id := range ids[i : i+perWrite] {
				p := store.JobTransitionParams{ID: id, FromStates: []store.State{store.StatePending}, ExpectAttempt: 0, At: at,
					Set: store.JobSet{State: &leased, Attempt: &attempt}}
				if err := w.JobTransitionBatched(ctx, p); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var after jobScans
	deadline := time.Now().Add(10 * time.Second)
	for { // the statistics reach other sessions once the writer's backend is idle
		after = writerJobScans(t, s, db)
		if after.pkey-before.pkey >= jobs/perWrite || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after.seq != before.seq || after.stateIndex != before.stateIndex {
		t.Errorf("%d transitions scanned jobs %d times and walked jobs_state_created %d times, want 0 and 0",
			jobs, after.seq-before.seq, after.stateIndex-before.stateIndex)
	}
	if after.pkey-before.pkey < jobs/perWrite {
		t.Errorf("jobs_pkey used %d times by %d batched statements", after.pkey-before.pkey, jobs/perWrite)
	}
}
