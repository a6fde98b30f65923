package postgres

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// Writes queued back to back run two at a time, on the two writer
// connections (doc.go, "Concurrent transactions"). A Write that changes a
// job the Write before it inserted still finds it (it waits for that
// commit), and event ids increase in the order of the Writes, as a
// reader paging by id needs.
func TestQueuedWritesRunConcurrentlyAndInOrder(t *testing.T) {
	s := openTemp(t)
	const jobs = 150
	leased, attempt := store.StateLeased, 1
	var durable []<-chan error
	var appended [][]store.Event // each Write's events, in Write order
	queue := func(fn func(w store.Writer) error) {
		t.Helper()
		ch, err := s.WriteDeferred(ctx, fn)
		if err != nil {
			t.Fatal(err)
		}
		durable = append(durable, ch)
	}
	for i := range jobs {
		id := fmt.Sprintf("job-%03d", i)
		submitted := []store.Event{{JobID: id, Tenant: "t", Type: store.EventSubmitted, At: storetest.T0}}
		queue(func(w store.Writer) error {
			j := store.Job{ID: id, Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0}
			if err := w.JobInsertBatched(ctx, j); err != nil {
				return err
			}
			return w.EventAppend(ctx, submitted)
		})
		leasedEv := []store.Event{{JobID: id, Attempt: 1, Tenant: "t", Type: store.EventLeased, At: storetest.T0}}
		queue(func(w store.Writer) error {
			p := store.JobTransitionParams{ID: id, FromStates: []store.State{store.StatePending}, ExpectAttempt: 0,
				At: storetest.T0, Set: store.JobSet{State: &leased, Attempt: &attempt}}
			if err := w.JobTransitionBatched(ctx, p); err != nil {
				return err
			}
			return w.EventAppend(ctx, leasedEv)
		})
		appended = append(appended, submitted, leasedEv)
	}
	for i, ch := range durable {
		if err := <-ch; err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	var last int64
	for i, evs := range appended {
		if evs[0].ID <= last {
			t.Fatalf("write %d's event has id %d, after an earlier write's %d", i, evs[0].ID, last)
		}
		last = evs[0].ID
	}
	for i := range jobs {
		j, err := s.JobGet(ctx, fmt.Sprintf("job-%03d", i))
		if err != nil || j.State != store.StateLeased || j.Attempt != 1 {
			t.Fatalf("job %d: %v %v", i, j.State, err)
		}
	}
}

// A transaction staged while another is in flight holds back, with its
// events' INSERT, the raise of the events' sequence that numbers them
// (EventRaise): both run with its COMMIT, once the transaction before has
// committed. Run early, the raise would read neither the ids that
// transaction inserts nor, atomically, the sequence it draws from: it
// could set the sequence back under an id just drawn (a duplicate key on
// events_pkey) or below an id given in that transaction (ids out of
// commit order).
func TestStagedRaiseRunsWithTheCommit(t *testing.T) {
	s := openTemp(t)
	given := []store.Event{{ID: 1000, JobID: "j", Tenant: "t", Type: store.EventSubmitted, At: storetest.T0}}
	if err := s.Write(ctx, func(w store.Writer) error { return w.EventAppend(ctx, given) }); err != nil {
		t.Fatal(err)
	}
	seq := func() int64 {
		t.Helper()
		var v int64
		if err := s.Core.RDB.QueryRowContext(ctx, "SELECT last_value FROM events_id_seq").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := seq()
	unnumbered := []store.Event{{JobID: "j", Tenant: "t", Type: store.EventHeld, At: storetest.T0}}
	staged, err := s.stage(0, func(w store.Writer) error { return w.EventAppend(ctx, unnumbered) }, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := seq(); got != before {
		staged.Rollback()
		t.Fatalf("the staged transaction moved the events' sequence from %d to %d before its commit", before, got)
	}
	if err := staged.Commit(); err != nil {
		t.Fatal(err)
	}
	if unnumbered[0].ID != 1001 {
		t.Fatalf("the event appended without an id got id %d, want 1001", unnumbered[0].ID)
	}
}

// The writer's session does not compile its statements (jit = off): with
// sequential scans priced out (writerPlanSettings), a plan that still
// scans, as the raise does the events' sequence, costs more than
// jit_above_cost, and PostgreSQL compiled it at each run: 0.66 s of CPU
// for the raise on this machine, which made a test of 300 raises run for
// minutes under load.
func TestWriterDoesNotCompile(t *testing.T) {
	s := openTemp(t)
	for _, wc := range s.writers {
		wc.mu.Lock()
		plan, err := explain(wc.core.WConn, dialect.EventRaise)
		wc.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(plan, "JIT:") {
			t.Fatalf("writer %d compiles the raise:\n%s", wc.slot, plan)
		}
	}
}

// explain is the text plan of query on conn.
func explain(conn *sql.Conn, query string) (string, error) {
	rows, err := conn.QueryContext(ctx, "EXPLAIN "+query)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			_ = rows.Close()
			return "", err
		}
		b.WriteString(line + "\n")
	}
	return b.String(), errors.Join(rows.Err(), rows.Close())
}
