package storetest

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// CheckFoldedRows: a job inserted and transitioned in one Write, with the
// transition applied to the held insert (package sqlstore, fold.go),
// leaves the rows (every column of jobs and job_specs, read with SELECT *)
// that its insert and an UPDATE leave on a store that does not fold, for
// a lease, a lease and a start, a hold, a reprioritize, a transition that
// sets every field of store.JobSet (found by reflection: a field added
// later is set too), a finish with its held attempt and a finish that
// moves the live ids (the last two are not folded); and a folded
// transition runs no UPDATE. open opens a store that folds or not and a
// handle on its database; counter is the driver's statements that make
// a table fold_updates, one row, whose n counts the job rows UPDATEd.
func CheckFoldedRows(t *testing.T, open func(t *testing.T, fold bool) (store.Store, *sql.DB), counter []string) {
	ctx := context.Background()
	folding, fdb := open(t, true)
	plain, pdb := open(t, false)
	foldUpdates, plainUpdates := countUpdates(t, fdb, counter), countUpdates(t, pdb, counter)

	at := T0.Add(time.Minute)
	leased, running, pendingState, succeeded := store.StateLeased, store.StateRunning, store.StatePending, store.StateSucceeded
	one, w1, ev := 1, "w1", int64(2)
	leaseSet := store.JobSet{State: &leased, Attempt: &one, WorkerID: &w1, LeaseExpiresAt: store.Ptr(at.Add(30 * time.Second)),
		LeaseEventID: &ev, LeasedAt: &at, EnqueuedAt: store.Ptr(T0)}
	pending := []store.State{store.StatePending}
	cases := []struct {
		name  string
		steps []store.JobTransitionParams
		fold  bool // no UPDATE runs
	}{
		{"lease", []store.JobTransitionParams{{FromStates: pending, At: at, Set: leaseSet}}, true},
		{"lease and start", []store.JobTransitionParams{{FromStates: pending, At: at, Set: leaseSet},
			{FromStates: []store.State{store.StateLeased}, ExpectAttempt: 1, At: at.Add(time.Second), Set: store.JobSet{
				State: &running, StartedAt: store.Ptr(at.Add(time.Second)), StartEventID: store.Ptr(int64(3)),
				StartEventAt: store.Ptr(at.Add(time.Second))}}}, true},
		{"hold", []store.JobTransitionParams{{FromStates: pending, ExpectAttempt: store.AnyAttempt, At: at,
			Set: store.JobSet{Held: store.Ptr(true)}}}, true},
		// Into an unfinished state from any: it might leave a terminal
		// one (releaseHeld), so it is not folded.
		{"pend from any state", []store.JobTransitionParams{{ExpectAttempt: store.AnyAttempt, At: at,
			Set: store.JobSet{State: &pendingState}}}, false},
		{"reprioritize", []store.JobTransitionParams{{ExpectAttempt: store.AnyAttempt, At: at,
			Set: store.JobSet{Priority: store.Ptr(900), SubmitPriority: store.Ptr(500)}}}, true},
		{"every field, running", []store.JobTransitionParams{{FromStates: pending, At: at, Set: everyField(t, at, running)}}, true},
		{"every field, succeeded", []store.JobTransitionParams{{FromStates: pending, At: at, Set: everyField(t, at, succeeded)}}, true},
		{"clear exit code", []store.JobTransitionParams{{FromStates: pending, At: at,
			Set: store.JobSet{State: &running, ClearExitCode: true}}}, true},
		{"lease, then finish", []store.JobTransitionParams{{FromStates: pending, At: at, Set: leaseSet},
			{FromStates: []store.State{store.StateLeased}, ExpectAttempt: 1, At: at.Add(time.Second),
				Set: store.JobSet{State: &succeeded, FinishedAt: store.Ptr(at.Add(time.Second))}}}, false},
		{"finish with the held attempt", []store.JobTransitionParams{{FromStates: pending, At: at, Set: store.JobSet{
			State: &succeeded, Attempt: &one, FinishedAt: store.Ptr(at.Add(time.Second)), LeaseEventID: &ev, StartEventID: store.Ptr(int64(0)),
			HeldAttempt: &store.Execution{Attempt: 1, Outcome: store.OutcomeSucceeded, WorkerID: w1, LeasedAt: at,
				FinishedAt: at.Add(time.Second), EndEventID: 9}}}}, false},
	}
	for _, c := range cases {
		for _, batched := range []bool{false, true} {
			id := c.name
			if batched {
				id += " (batched)"
			}
			j := newJob(id, "acme", T0)
			j.SubmitEventID, j.SubmitActor = 1, "open"
			run := func(s store.Store) error {
				return s.Write(ctx, func(w store.Writer) error {
					if err := w.JobInsertBatched(ctx, j); err != nil {
						return err
					}
					for _, p := range c.steps {
						p.ID = id
						if p.Set.HeldAttempt != nil {
							h := *p.Set.HeldAttempt
							h.JobID = id
							p.Set.HeldAttempt = &h
						}
						var err error
						if batched {
							err = w.JobTransitionBatched(ctx, p)
						} else {
							err = w.JobTransition(ctx, p)
						}
						if err != nil {
							return err
						}
					}
					return nil
				})
			}
			before, plainBefore := foldUpdates(), plainUpdates()
			if err := run(folding); err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if err := run(plain); err != nil {
				t.Fatalf("%s, not folded: %v", id, err)
			}
			switch n := foldUpdates() - before; {
			case c.fold && n != 0:
				t.Errorf("%s: %d job rows UPDATEd, want none: the transitions apply to the held insert", id, n)
			case !c.fold && n == 0:
				t.Errorf("%s: no job row UPDATEd: a transition the insert cannot take was folded", id)
			}
			if plainUpdates() == plainBefore {
				t.Errorf("%s: the store that does not fold UPDATEd no job row", id)
			}
			for _, q := range []string{"SELECT * FROM jobs WHERE id = $1", "SELECT * FROM job_specs WHERE job_id = $1"} {
				got, want := rowOf(t, fdb, q, id), rowOf(t, pdb, q, id)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %s\nfolded:     %v\nnot folded: %v", id, q, got, want)
				}
			}
		}
	}
}

// everyField is a JobSet with every field but ClearExitCode (ExitCode
// excludes it) and HeldAttempt set, the state to state.
func everyField(t *testing.T, at time.Time, state store.State) store.JobSet {
	var s store.JobSet
	v := reflect.ValueOf(&s).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if name == "ClearExitCode" || name == "HeldAttempt" {
			continue
		}
		if f.Kind() != reflect.Pointer {
			t.Fatalf("JobSet.%s is a %s: everyField sets pointers; extend it", name, f.Type())
		}
		p := reflect.New(f.Type().Elem())
		switch x := p.Interface().(type) {
		case *time.Time:
			*x = at.Add(time.Duration(i) * time.Second)
		case *time.Duration:
			*x = time.Duration(i) * time.Second
		case *store.State:
			*x = state
		case *store.FailureClass:
			*x = store.FailExitCode
		case *[]byte:
			*x = []byte("result")
		case *bool:
			*x = true
		case *int:
			*x = i + 2
		case *int64:
			*x = int64(i + 100)
		case *string:
			*x = "set " + name
		default:
			t.Fatalf("JobSet.%s is a %s: extend everyField", name, f.Type())
		}
		f.Set(p)
	}
	return s
}

// rowOf is the one row q selects for id, every column's value.
func rowOf(t *testing.T, db *sql.DB, q, id string) []any {
	t.Helper()
	rows, err := db.Query(q, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatalf("%s: no row for %s (%v)", q, id, errors.Join(rows.Err()))
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	out := make([]any, 0, 2*len(cols))
	for i, c := range cols {
		out = append(out, c, vals[i])
	}
	return out
}

// countUpdates runs the counter's statements on db and returns the
// reader of fold_updates.n.
func countUpdates(t *testing.T, db *sql.DB, counter []string) func() int64 {
	t.Helper()
	ctx := context.Background()
	for _, q := range counter {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	return func() int64 {
		var n int64
		if err := db.QueryRowContext(ctx, `SELECT n FROM fold_updates`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
}
