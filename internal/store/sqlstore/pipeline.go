package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/fairwayhq/fairway/internal/store"
)

// Pipelined statements (Core.Pipe). Where every statement costs a round
// trip to the database, the operations the dispatcher runs in every
// transaction — batched job inserts and transitions, executions, events —
// are queued instead of executed, and the driver sends the queue with its
// BEGIN, fence and COMMIT in one round trip (PostgreSQL's pipeline mode).
// A queued statement cannot report to its operation, so:
//
//   - every check is a statement error, which aborts the transaction and
//     every statement after it: a batched transition's UPDATE counts its
//     rows in the database and fails unless all were found
//     (Dialect.ExpectRows); a job insert has no ON CONFLICT, so a taken id
//     is a unique violation;
//   - an error surfaces at the next operation that needs an answer (which
//     sends the queue first) or at the commit, and fails the Write: such
//     operations are the Batched ones of store.Writer, whose contracts
//     allow it;
//   - new event ids are read back from RETURNING when the queue is sent,
//     before Write returns.

// Pipeline queues statements and sends them together.
type Pipeline interface {
	// Queue adds a statement (the dialect's placeholders); ids, if not
	// nil, receives the first column (bigint) of every row it returns.
	Queue(query string, args []any, ids func([]int64))
	// QueueDraw is Queue for a statement that draws ids from the events'
	// sequence or moves it: an INSERT of events the store numbers, and
	// the raise (Dialect.EventRaise) before it. A driver that runs a
	// transaction while the one before it is in flight holds these back
	// until that one has committed (package postgres, "Concurrent
	// transactions"), so that ids are drawn in commit order and a raise
	// reads every id committed before it and races no draw.
	QueueDraw(query string, args []any, ids func([]int64))
	// QueueCheck is Queue for a statement whose check (Dialect.ExpectRows)
	// means missed when it fails, instead of the batched transitions'
	// ErrConflict: Send then returns an error that wraps missed and the
	// statement's own.
	QueueCheck(query string, args []any, missed error)
	// Pending is how many statements wait to be sent.
	Pending() int
	// Send sends the queued statements in one round trip and reads every
	// result; the first statement error. Statements after a failed one
	// do not run.
	Send(ctx context.Context) error
	// Reset drops what is queued.
	Reset()
}

// opMode is how an operation treats the pipeline and held transitions.
type opMode int

const (
	opNow   opMode = iota // runs at once: held transitions and the queue go first
	opHeld                // held by the Writer (batched.go)
	opPiped               // queued: held transitions are queued before it
)

// piped reports whether the driver pipelines.
func (w *Writer) piped() bool { return w.s.Pipe != nil }

// queueable is the mode of an operation that is queued when the driver
// pipelines and runs at once otherwise.
func (w *Writer) queueable() opMode {
	if w.piped() {
		return opPiped
	}
	return opNow
}

// Send sends the queued statements and fails the transaction if one
// failed: ErrConflict for a batched transition that missed, ErrExists
// for a taken job id, ErrNotFound for an execution of a missing job.
func (w *Writer) Send(ctx context.Context) error {
	if w.broken != nil {
		return w.broken
	}
	if !w.piped() || w.s.Pipe.Pending() == 0 {
		return nil
	}
	if err := w.s.Pipe.Send(ctx); err != nil {
		w.broken = w.s.classifyPiped(err)
		return w.broken
	}
	return nil
}

// classifyPiped names the sentinel of a pipelined statement's error.
func (c *Core) classifyPiped(err error) error {
	var sentinel error
	switch {
	case errors.Is(err, store.ErrConflict): // named by its statement (Pipeline.QueueCheck)
		return fmt.Errorf("store: pipelined statements: %w", err)
	case c.D.ExpectRowsMissed != nil && c.D.ExpectRowsMissed(err):
		sentinel = store.ErrConflict
	case c.D.UniqueViolation(err):
		sentinel = store.ErrExists
	case c.D.ForeignKeyViolation(err):
		sentinel = store.ErrNotFound
	default:
		return fmt.Errorf("store: pipelined statements: %w", err)
	}
	return fmt.Errorf("%w: pipelined statements: %w", sentinel, err)
}

// pipedSQL caches the statements of the pipeline by what they depend on
// (shape and row count), rebound for the dialect.
type pipedSQL struct {
	mu    sync.Mutex
	stmts map[any]pipedStmt
}

// pipedStmt is a cached statement: its text and, for a statement from
// column arrays whose caller needs them (getTyped), its columns' types.
type pipedStmt struct {
	text  string
	types []string
}

// lookup returns key's statement, rendering it on the key's first use.
func (p *pipedSQL) lookup(key any, render func() pipedStmt) pipedStmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.stmts[key]; ok {
		return st
	}
	if p.stmts == nil {
		p.stmts = map[any]pipedStmt{}
	}
	st := render()
	p.stmts[key] = st
	return st
}

func (p *pipedSQL) get(key any, render func() string) string {
	return p.lookup(key, func() pipedStmt { return pipedStmt{text: render()} }).text
}

// getTyped is get of a statement that comes with its columns' types: a
// batch of transitions needs them for its arrays, and rendering the
// statement again for them cost 2.5% of an embedded PostgreSQL drain's
// samples.
func (p *pipedSQL) getTyped(key any, render func() (string, []string)) (string, []string) {
	st := p.lookup(key, func() pipedStmt {
		q, types := render()
		return pipedStmt{text: q, types: types}
	})
	return st.text, st.types
}

type (
	insertKey struct {
		table string
		shape insertShape
		rows  int
	}
	jobsWithSpecsKey struct {
		jobs, specs insertShape
		rows        int
	}
	transitionKey struct {
		shape transitionShape
		rows  int
	}
	execKey struct {
		shape insertShape
		rows  int
	}
	eventKey   struct{ rows int }
	eventIDKey struct{ rows int }
	// The array statements' keys (arrays.go): one text a shape.
	insertArrayKey struct {
		table string
		shape insertShape
	}
	transitionArrayKey struct{ shape transitionShape }
	execArrayKey       struct{ shape insertShape }
	eventArrayKey      struct{ withIDs bool }
)

// queueArrayInserts queues the insert of rows of one shape into t from
// column arrays, maxArrayRows a statement, with tail appended; false (and
// nothing queued) if a column's type cannot be told from its values.
func (w *Writer) queueArrayInserts(t *insertTable, rows []shapedRow, key any, tail string) bool {
	types, ok := insertTypes(rows)
	if !ok {
		return false
	}
	stmts, ok := columnChunks(shapedArgs(rows), types)
	if !ok {
		return false
	}
	sh := rows[0].shape
	q := w.s.piped.get(key, func() string { return w.s.D.rebind(t.insertArraySQL(sh, types, tail)) })
	for _, args := range stmts {
		w.s.Pipe.Queue(q, args, nil)
	}
	return true
}

// queueInserts queues the held inserts of one shape into t (jobs or
// job_specs), in chunks of batchChunks rows. There is no ON CONFLICT: a
// taken id is a unique violation.
func (w *Writer) queueInserts(t *insertTable, rows []shapedRow) {
	sh := rows[0].shape
	if w.arrays(len(rows)) && w.queueArrayInserts(t, rows, insertArrayKey{t.name, sh}, "") {
		return
	}
	_ = eachChunk(len(rows), func(from, n int) error {
		q := w.s.piped.get(insertKey{t.name, sh, n}, func() string { return w.s.D.rebind(t.insertShapeSQL(sh, n, "")) })
		w.s.Pipe.Queue(q, rowArgs(rows[from:from+n]), nil)
		return nil
	})
}

// queueJobsWithSpecs queues the insert of the held jobs and of their
// specs as one statement a chunk, the jobs' INSERT in a data-modifying
// CTE of the specs' (PostgreSQL's job_specs has no foreign key to
// check: store doc.go, "The job's spec lives beside the hot row"), when
// the jobs are of one shape, the
// specs of one, and too few for arrays (a steady submission's batch of
// two or three jobs): a statement, and its round of the protocol and of
// the executor, fewer a transaction. False, and nothing queued, otherwise.
func (w *Writer) queueJobsWithSpecs(jobs, specs [][]shapedRow) bool {
	if len(jobs) != 1 || len(specs) != 1 || w.arrays(len(jobs[0])) {
		return false
	}
	jobRows, specRows := jobs[0], specs[0]
	jsh, ssh := jobRows[0].shape, specRows[0].shape
	_ = eachChunk(len(jobRows), func(from, n int) error {
		q := w.s.piped.get(jobsWithSpecsKey{jsh, ssh, n}, func() string {
			return w.s.D.rebind("WITH inserted AS (" + jobTable.insertShapeSQL(jsh, n, "") + ") " +
				specTable.insertShapeSQL(ssh, n, ""))
		})
		w.s.Pipe.Queue(q, append(rowArgs(jobRows[from:from+n]), rowArgs(specRows[from:from+n])...), nil)
		return nil
	})
	return true
}

// queueTransitions queues the UPDATE of rows jobs of one shape; the
// database checks that it found them all (Dialect.ExpectRows).
func (w *Writer) queueTransitions(sh transitionShape, rows [][]any) {
	if w.arrays(len(rows)) && w.queueArrayTransitions(sh, rows) {
		return
	}
	_ = eachChunk(len(rows), func(from, n int) error {
		q := w.s.piped.get(transitionKey{sh, n}, func() string {
			update, _ := sh.batchSQL(n, w.s.D.StateGuard)
			return w.s.D.rebind("WITH changed AS (" + update + " RETURNING 1) " +
				"SELECT " + w.s.D.ExpectRows + "(count(*), ?) FROM changed")
		})
		args := slices.Concat(rows[from : from+n]...)
		w.s.Pipe.Queue(q, append(args, int64(n)), nil)
		return nil
	})
}

// queueArrayTransitions is queueTransitions from column arrays (rows
// are at most maxBatchedRows, flushHeld); false, and nothing queued, if a
// value does not fit its column's type.
func (w *Writer) queueArrayTransitions(sh transitionShape, rows [][]any) bool {
	q, types := w.s.piped.getTyped(transitionArrayKey{sh}, func() (string, []string) {
		update, types := sh.arraySQL(w.s.D.StateGuard)
		return w.s.D.rebind("WITH changed AS (" + update + " RETURNING 1) " +
			"SELECT " + w.s.D.ExpectRows + "(count(*), ?) FROM changed"), types
	})
	args, ok := columnArrays(rows, types)
	if !ok {
		return false
	}
	w.s.Pipe.Queue(q, append(args, int64(len(rows))), nil)
	return true
}

// queueExecutions queues the upsert of rows (execRows).
func (w *Writer) queueExecutions(rows []shapedRow) {
	for _, group := range execGroups(rows) {
		sh := group[0].shape
		if w.arrays(len(group)) && w.queueArrayInserts(execTable, group, execArrayKey{sh}, execUpsertTail) {
			continue
		}
		_ = eachChunk(len(group), func(from, n int) error {
			q := w.s.piped.get(execKey{sh, n}, func() string { return w.s.D.rebind(execBatchSQL(sh, n)) })
			w.s.Pipe.Queue(q, rowArgs(group[from:from+n]), nil)
			return nil
		})
	}
}

// queueEvents queues the insert of events; their ids are set when the
// queue is sent, or, withIDs, are the events' own (then nothing is
// returned and nothing held: the ids were drawn in commit order).
func (w *Writer) queueEvents(events []store.Event, withIDs bool) {
	if w.arrays(len(events)) && w.queueArrayEvents(events, withIDs) {
		return
	}
	for len(events) > 0 {
		n := min(len(events), eventChunk)
		chunk := events[:n]
		events = events[n:]
		if withIDs {
			q := w.s.piped.get(eventIDKey{n}, func() string { return w.s.D.rebind(eventInsertWithIDsSQL(n)) })
			w.s.Pipe.Queue(q, eventArgsWithIDs(chunk), nil)
			continue
		}
		q := w.s.piped.get(eventKey{n}, func() string { return w.s.D.rebind(eventInsertSQL(n, true)) })
		w.s.Pipe.QueueDraw(q, eventArgs(chunk), func(ids []int64) {
			if len(ids) != len(chunk) {
				return // cannot happen: the insert returns a row per event
			}
			slices.Sort(ids)
			for i := range chunk {
				chunk[i].ID = ids[i]
			}
		})
	}
}

// queueArrayEvents is queueEvents from column arrays, maxArrayRows
// events a statement; false, and nothing queued, if a value does not fit
// its column (cannot happen: eventArgs binds these types).
func (w *Writer) queueArrayEvents(events []store.Event, withIDs bool) bool {
	types := eventTypes
	if withIDs {
		types = append([]string{"bigint"}, eventTypes...)
	}
	stmts, ok := columnChunks(eventRows(events, withIDs), types)
	if !ok {
		return false
	}
	q := w.s.piped.get(eventArrayKey{withIDs}, func() string { return w.s.D.rebind(eventInsertArraySQL(withIDs)) })
	for i, args := range stmts {
		if withIDs {
			w.s.Pipe.Queue(q, args, nil)
			continue
		}
		chunk := events[i*maxArrayRows : min((i+1)*maxArrayRows, len(events))]
		w.s.Pipe.QueueDraw(q, args, func(ids []int64) {
			if len(ids) != len(chunk) {
				return // cannot happen: the insert returns a row per event
			}
			slices.Sort(ids)
			for i := range chunk {
				chunk[i].ID = ids[i]
			}
		})
	}
	return true
}

// eventRows is eventArgs (withIDs: eventArgsWithIDs) a row an event.
func eventRows(events []store.Event, withIDs bool) [][]any {
	width := len(eventTypes)
	args := eventArgs(events)
	if withIDs {
		width++
		args = eventArgsWithIDs(events)
	}
	rows := make([][]any, len(events))
	for i := range rows {
		rows[i] = args[i*width : (i+1)*width]
	}
	return rows
}
