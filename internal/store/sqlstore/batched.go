package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/fairwayhq/fairway/internal/store"
)

// Batched transitions (Dialect.BatchTransitions). Where a statement costs
// a round trip to the database, JobTransitionBatched holds transitions and
// applies those of one shape with one UPDATE ... FROM (VALUES ...) (from
// unnest of a column's array, where Dialect.ArrayBatches: arrays.go), before
// the transaction's next operation of another kind and before the commit;
// a row the guard misses shows as fewer rows changed, and fails the
// operation with ErrConflict. Two transitions of one job are never in one
// statement: the second flushes the first.

// maxBatchedRows bounds one batched UPDATE (PostgreSQL takes 65,535
// parameters; a transition has at most 24).
const maxBatchedRows = 1000

type heldTransition struct {
	shape transitionShape
	args  []any
}

// heldTransitions are a Writer's transitions and job inserts not yet
// applied; inserts go first.
type heldTransitions struct {
	list    []heldTransition
	ids     map[string]bool
	inserts []shapedRow // the jobs' rows (splitJobArgs); a job with a key has claimed it (keyed.go); none has a unique rule
	specs   []shapedRow // their specs' rows
	// claims are the held claims of JobInsertFreeKey (freeClaimArgs),
	// made with the inserts (PostgreSQL only; keyed.go).
	claims [][]any
	// jobs are the held inserts by job id, for foldTransition (fold.go);
	// nil once they are flushed.
	jobs map[string]*heldJob
}

// maxBatchedInserts bounds one multi-row job INSERT (53 columns a row).
const maxBatchedInserts = 500

func (w *Writer) JobInsertBatched(ctx context.Context, j store.Job) error {
	if !w.s.D.BatchTransitions && !w.s.D.BatchInserts || j.Unique != nil || j.IdempotencyKey != "" && w.piped() {
		return w.JobInsert(ctx, j)
	}
	if j.IdempotencyKey != "" {
		return w.holdInsert(ctx, j, claimFreeKey) // the answer is needed now; the row may wait
	}
	return w.holdInsert(ctx, j, claimNone)
}

// insertClaim is how holdInsert claims a job's key: named rather than a
// func value, so that the job does not escape to the heap through the call.
type insertClaim int

const (
	claimNone     insertClaim = iota
	claimFreeKey              // Writer.claimFreeKey
	claimHeldFree             // Writer.holdFreeClaim
)

// holdInsert checks j and holds its row for flushInserts; claim, if not
// claimNone, claims j's key after the check and before the row is held.
func (w *Writer) holdInsert(ctx context.Context, j store.Job, claim insertClaim) (err error) {
	defer w.guard(&err)
	if err := w.checkOp(ctx, opHeld); err != nil {
		return err
	}
	if err := j.Validate(); err != nil {
		return err
	}
	// The values are built in the Writer's scratch (its operations run
	// one at a time); shape copies those the held rows keep.
	sc := &w.scratch
	args, err := appendJobArgs(sc.job[:0], &j)
	if err != nil {
		return fmt.Errorf("job %s: %w", j.ID, err)
	}
	switch claim {
	case claimFreeKey:
		err = w.claimFreeKey(&j)
	case claimHeldFree:
		err = w.holdFreeClaim(&j)
	}
	if err != nil {
		return err
	}
	hot, spec := appendSplitJobArgs(args, sc.hot[:0], sc.spec[:0])
	sh, vals := jobTable.shape(hot)
	w.holdJob(j.ID, args, len(w.held.inserts))
	w.held.inserts = append(w.held.inserts, shapedRow{shape: sh, args: vals})
	sh, vals = specTable.shape(spec)
	w.held.specs = append(w.held.specs, shapedRow{shape: sh, args: vals})
	clear(args)
	clear(hot)
	clear(spec)
	sc.job, sc.hot, sc.spec = args[:0], hot[:0], spec[:0]
	return nil
}

// flushInserts inserts the held jobs, a statement per shape and chunk,
// then their specs, which reference them. Jobs have distinct ids (a
// taken one fails the flush), so grouping them by shape changes no
// outcome.
func (w *Writer) flushInserts() error {
	jobs, specs := byShape(w.held.inserts), byShape(w.held.specs)
	w.held.inserts, w.held.specs, w.held.jobs = nil, nil, nil
	if w.piped() {
		w.queueFreeClaims() // before the rows that hold them
		if w.queueJobsWithSpecs(jobs, specs) {
			return nil
		}
	}
	for _, part := range []struct {
		t      *insertTable
		groups [][]shapedRow
	}{{jobTable, jobs}, {specTable, specs}} {
		for _, rows := range part.groups {
			var err error
			switch {
			case w.piped():
				w.queueInserts(part.t, rows)
			case !w.s.D.BatchTransitions:
				err = w.insertPrepared(part.t, rows)
			default:
				err = w.insertUnprepared(part.t, rows)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// insertUnprepared inserts rows of one shape into t, maxBatchedInserts a
// statement.
func (w *Writer) insertUnprepared(t *insertTable, rows []shapedRow) error {
	for len(rows) > 0 {
		n := min(len(rows), maxBatchedInserts)
		q := t.insertShapeSQL(rows[0].shape, n, t.onConflict)
		got, err := rowsChanged(w.s.WConn.ExecContext(bg, w.s.D.rebind(q), rowArgs(rows[:n])...))
		if err := checkInserted(got, err, n); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// rowArgs is the rows' values, one after the other.
func rowArgs(rows []shapedRow) []any {
	n := 0
	for _, r := range rows {
		n += len(r.args)
	}
	args := make([]any, 0, n)
	for _, r := range rows {
		args = append(args, r.args...)
	}
	return args
}

// rowsChanged is the rows a statement run through database/sql changed,
// or its failure.
func rowsChanged(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// checkInserted fails a job insert of n rows that inserted got rows
// (err: the statement's failure): fewer means an id was taken.
func checkInserted(got int64, err error, n int) error {
	if err != nil {
		return fmt.Errorf("store: insert jobs: %w", err)
	}
	if int(got) != n {
		return fmt.Errorf("%w: %d of %d batched jobs inserted: an id was taken", store.ErrExists, got, n)
	}
	return nil
}

// insertPrepared inserts held rows of one shape into t in chunks of
// batchChunks rows, each statement prepared once: where a statement costs
// no round trip (SQLite), parsing a statement of 500 rows at every flush
// would cost more than it saves.
func (w *Writer) insertPrepared(t *insertTable, rows []shapedRow) error {
	sh := rows[0].shape
	return eachChunk(len(rows), func(from, n int) error {
		chunk := rows[from : from+n]
		render := func() string { return t.insertShapeSQL(sh, n, t.onConflict) }
		st, err := w.batchStmt(batchKey{table: t.name, shape: sh, rows: n}, render)
		if err != nil {
			return fmt.Errorf("store: prepare inserts into %s: %w", t.name, err)
		}
		if st == nil { // too many shapes prepared: this one runs unprepared
			got, err := rowsChanged(w.s.WConn.ExecContext(bg, w.s.D.rebind(render()), rowArgs(chunk)...))
			return checkInserted(got, err, n)
		}
		got, err := w.execStmt(st, rowArgs(chunk))
		return checkInserted(got, err, n)
	})
}

func (w *Writer) JobTransitionBatched(ctx context.Context, p store.JobTransitionParams) (err error) {
	if !w.s.D.BatchTransitions || p.LeavesTerminal() {
		// Out of a terminal state: the held attempt's move goes first,
		// in JobTransition.
		return w.JobTransition(ctx, p)
	}
	defer w.guard(&err)
	if folded, err := w.checkAndFold(ctx, &p); folded || err != nil {
		return err
	}
	if w.held.ids[p.ID] {
		if err := w.flushHeld(); err != nil {
			return err
		}
	}
	// The held list keeps args until the flush: a slice of its own.
	shape, args := transitionArgs(&p, &w.scratch.set, make([]any, 0, 24))
	if w.held.ids == nil {
		w.held.ids = map[string]bool{}
	}
	w.held.list = append(w.held.list, heldTransition{shape: shape, args: args})
	w.held.ids[p.ID] = true
	return nil
}

// flushHeld applies the held transitions, a statement per shape and
// chunk (queues them, when the driver pipelines).
func (w *Writer) flushHeld() error {
	if len(w.held.inserts) > 0 {
		if err := w.flushInserts(); err != nil {
			return err
		}
	}
	if len(w.held.list) == 0 {
		return nil
	}
	byShape := map[transitionShape][][]any{}
	var order []transitionShape
	for _, h := range w.held.list {
		if _, ok := byShape[h.shape]; !ok {
			order = append(order, h.shape)
		}
		byShape[h.shape] = append(byShape[h.shape], h.args)
	}
	w.held.list, w.held.ids = w.held.list[:0], nil
	for _, sh := range order {
		rows := byShape[sh]
		for len(rows) > 0 {
			n := min(len(rows), maxBatchedRows)
			if err := w.applyBatch(sh, rows[:n]); err != nil {
				return err
			}
			rows = rows[n:]
		}
	}
	return nil
}

func (w *Writer) applyBatch(sh transitionShape, rows [][]any) error {
	if w.piped() {
		w.queueTransitions(sh, rows)
		return nil
	}
	q, cols := sh.batchSQL(len(rows), w.s.D.StateGuard)
	args := make([]any, 0, len(rows)*cols)
	for _, r := range rows {
		args = append(args, r...)
	}
	n, err := rowsChanged(w.s.WConn.ExecContext(bg, w.s.D.rebind(q), args...))
	if err != nil {
		return fmt.Errorf("store: transitions: %w", err)
	}
	if int(n) != len(rows) {
		return fmt.Errorf("%w: %d of %d batched transitions found their job in the expected state and attempt",
			store.ErrConflict, n, len(rows))
	}
	return nil
}

// batchSQL renders the shape's UPDATE of rows jobs at once, and the
// number of values per row (transitionArgs' order: updated_at, the set
// fields, id, the attempt guard, the from states). stateGuard is
// Dialect.StateGuard: the VALUES list names no column state, so the
// unqualified column is the job's.
func (sh transitionShape) batchSQL(rows int, stateGuard string) (string, int) {
	u := sh.batchUpdate(stateGuard)
	row := make([]string, len(u.types))
	for i, t := range u.types {
		row[i] = "?::" + t
	}
	values := make([]string, rows)
	for i := range values {
		values[i] = "(" + strings.Join(row, ", ") + ")"
	}
	return u.render("(VALUES " + strings.Join(values, ", ") + ")"), len(u.types)
}

// arraySQL renders the shape's UPDATE of any number of jobs from one
// array a column (arrays.go), and the columns' SQL types, in
// transitionArgs' order.
func (sh transitionShape) arraySQL(stateGuard string) (string, []string) {
	u := sh.batchUpdate(stateGuard)
	return u.render(unnestSQL(u.types)), u.types
}

// batchUpdate is a shape's set-wise UPDATE but for the relation of its
// rows, v.
type batchUpdate struct {
	set, names, types, where []string
}

func (u batchUpdate) render(from string) string {
	return "UPDATE jobs SET " + strings.Join(u.set, ", ") + " FROM " + from +
		" AS v(" + strings.Join(u.names, ", ") + ") WHERE " + strings.Join(u.where, " AND ")
}

func (sh transitionShape) batchUpdate(stateGuard string) batchUpdate {
	var u batchUpdate
	add := func(name, typ string) {
		u.names = append(u.names, name)
		u.types = append(u.types, typ)
	}
	add("u", "bigint")
	u.set = append(u.set, "updated_at = v.u")
	for i, f := range setFields {
		switch {
		case sh.fields&(1<<i) == 0:
		case f.expr != "":
			u.set = append(u.set, f.col+" = "+f.expr)
		default:
			name := "c" + strconv.Itoa(i)
			add(name, f.typ)
			u.set = append(u.set, f.col+" = v."+name)
		}
	}
	add("id", "text")
	u.where = []string{"jobs.id = v.id"}
	if sh.guardAttempt {
		add("att", "bigint")
		u.where = append(u.where, "jobs.attempt = v.att")
	}
	var from []string
	for i := range sh.fromStates {
		name := "s" + strconv.Itoa(i)
		add(name, "text")
		from = append(from, "v."+name)
	}
	if len(from) > 0 {
		u.where = append(u.where, stateGuard+" IN ("+strings.Join(from, ", ")+")")
	}
	return u
}
