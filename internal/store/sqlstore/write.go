package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// stmtID names a statement prepared once on the writer connection.
type stmtID int

const (
	stmtJobInsert stmtID = iota
	stmtSpecInsert
	stmtJobProbe
	stmtJobDelete
	stmtIdemPurge
	stmtIdemClaimFree
	stmtIdemHeld
	stmtExecResult
	stmtExecProbe
	stmtLogInsert
	stmtWorkerUpsert
	stmtWorkerTouch
	stmtWorkerDelete
	stmtScheduleUpsert
	stmtScheduleDelete
	stmtAPIKeyInsert
	stmtAPIKeyDelete
	stmtLaneStateSet
	stmtWebhookInsert
	stmtWebhookDelete
	numStmts
)

var stmtSQL = [numStmts]string{
	stmtJobInsert:     jobInsertSQL,
	stmtSpecInsert:    specInsertSQL,
	stmtJobProbe:      `SELECT state, attempt FROM jobs WHERE id = ?`,
	stmtJobDelete:     `DELETE FROM jobs WHERE id = ?`,
	stmtIdemPurge:     `DELETE FROM idempotency_keys WHERE tenant = ? AND key = ? AND created_at < ?`,
	stmtIdemClaimFree: idemClaimFreeSQL,
	stmtIdemHeld:      `SELECT job_id FROM idempotency_keys WHERE tenant = ? AND key = ? AND created_at > ?`,
	stmtExecResult: `UPDATE executions SET result_state = ?, result_error = ?, result_tries = ?, result_next_at = ?
		WHERE job_id = ? AND attempt = ? AND result_state = 'pending' AND result_tries = ?`,
	stmtExecProbe: `SELECT 1 FROM executions WHERE job_id = ? AND attempt = ?`,
	stmtLogInsert: `INSERT INTO log_chunks (job_id, attempt, seq, stream, at, data) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (job_id, attempt, seq) DO NOTHING`,
	stmtWorkerUpsert: `INSERT INTO workers (id, name, types, labels, slots, milli_cpu, memory_mb, gpu, state,
			registered_at, last_seen_at, handlers)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, types = excluded.types, handlers = excluded.handlers,
			labels = excluded.labels, slots = excluded.slots, milli_cpu = excluded.milli_cpu,
			memory_mb = excluded.memory_mb, gpu = excluded.gpu, state = excluded.state,
			registered_at = excluded.registered_at, last_seen_at = excluded.last_seen_at`,
	stmtWorkerTouch:  `UPDATE workers SET last_seen_at = ? WHERE id = ?`,
	stmtWorkerDelete: `DELETE FROM workers WHERE id = ?`,
	stmtScheduleUpsert: `INSERT INTO schedules (id, tenant, name, spec, timezone, template, overlap,
			enabled, next_run_at, last_run_at, created_at, updated_at, catchup_window_ms, jitter_ms,
			start_at, end_at, pause_note, pause_on_failure, buffered, tags)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET tenant = excluded.tenant, name = excluded.name,
			spec = excluded.spec, timezone = excluded.timezone, template = excluded.template,
			overlap = excluded.overlap, enabled = excluded.enabled,
			next_run_at = excluded.next_run_at, last_run_at = excluded.last_run_at,
			created_at = excluded.created_at, updated_at = excluded.updated_at,
			catchup_window_ms = excluded.catchup_window_ms, jitter_ms = excluded.jitter_ms,
			start_at = excluded.start_at, end_at = excluded.end_at, pause_note = excluded.pause_note,
			pause_on_failure = excluded.pause_on_failure, buffered = excluded.buffered, tags = excluded.tags`,
	stmtScheduleDelete: `DELETE FROM schedules WHERE id = ?`,
	stmtAPIKeyInsert: `INSERT INTO api_keys (key_hash, tenant, role, name, created_at, created_by, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key_hash) DO NOTHING`,
	stmtAPIKeyDelete: `DELETE FROM api_keys WHERE key_hash = ?`,
	stmtWebhookInsert: `INSERT INTO webhooks (name, url, secret, kinds, tenants, created_at, created_by)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
	stmtWebhookDelete: `DELETE FROM webhooks WHERE name = ?`,
	stmtLaneStateSet: `INSERT INTO lane_states (lane, paused, note, changed_at, changed_by) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (lane) DO UPDATE SET paused = excluded.paused, note = excluded.note,
			changed_at = excluded.changed_at, changed_by = excluded.changed_by`,
}

// Writer is the store.Writer of one write transaction. Its statements run
// on the writer connection, inside the transaction the driver began there.
type Writer struct {
	s     *Core
	done  bool
	wrote bool            // an operation ran: the commit has frames to make durable
	held  heldTransitions // JobTransitionBatched's, not yet applied
	begin func() error    // run before the first operation (OnFirstOperation)
	// broken is the first error that was not an operation's own outcome
	// (sentinel): after it the transaction may have been rolled back by
	// SQLite, so every later operation fails with it and Write rolls back.
	broken error
	// eventsRaised: the events' sequence was raised past every id this
	// transaction may meet (EventRaise) and no event with a given id was
	// stored since, so store-numbered events need no raise again.
	eventsRaised bool
	// scratch is JobTransition's and holdInsert's: the transaction's
	// operations run one at a time, and what is kept past an operation
	// (a statement's arguments once it ran, a held row's values) is not
	// in it.
	scratch struct {
		set            store.JobSet
		args           []any
		job, hot, spec []any
	}
}

var _ store.Writer = (*Writer)(nil)

// bg is the context statements run with. A cancellable context makes the
// driver start a goroutine per statement; instead each operation checks its
// ctx first and Write checks its own before COMMIT.
var bg = context.Background()

func (w *Writer) check(ctx context.Context) error {
	return w.checkOp(ctx, opNow)
}

// checkOp is check for an operation of the given mode: unless it is held,
// the held transitions go first (queued, if it is piped); unless it is
// piped, the queue is sent first. So operations keep their order.
func (w *Writer) checkOp(ctx context.Context, mode opMode) error {
	if w.done {
		return errors.New("store: Writer used after its Write returned")
	}
	if w.broken != nil {
		return fmt.Errorf("store: transaction unusable after an earlier error: %w", w.broken)
	}
	if !w.wrote && w.begin != nil {
		if err := w.begin(); err != nil {
			w.broken = err
			return err
		}
	}
	w.wrote = true
	if err := ctx.Err(); err != nil {
		return err
	}
	if mode == opHeld {
		return nil
	}
	if err := w.flushHeld(); err != nil {
		w.broken = err
		return err
	}
	if mode == opNow {
		return w.Send(ctx)
	}
	return nil
}

// OnFirstOperation makes the Writer call begin before its first
// operation: a driver that begins its transaction there commits nothing,
// and spends no round trip, when the caller wrote nothing. An error of
// begin fails that operation and the transaction.
func (w *Writer) OnFirstOperation(begin func() error) { w.begin = begin }

// Flush applies the held transitions (queues them, when the driver
// pipelines); the driver calls it before COMMIT. A missed guard among
// them is ErrConflict, and the transaction must roll back.
func (w *Writer) Flush() error {
	if w.broken != nil {
		return w.broken
	}
	if err := w.flushHeld(); err != nil {
		w.broken = err
		return err
	}
	return nil
}

// guard passes an operation's error through fail.
func (w *Writer) guard(err *error) { *err = w.fail(*err) }

// fail records err as breaking the transaction unless it is one of the
// sentinels an operation reports as its outcome. It returns err.
func (w *Writer) fail(err error) error {
	if err == nil || w.broken != nil {
		return err
	}
	for _, s := range []error{store.ErrConflict, store.ErrDuplicate, store.ErrNotFound,
		store.ErrExists, store.ErrInvalid, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, s) {
			return err
		}
	}
	w.broken = err
	return err
}

func (w *Writer) exec(id stmtID, args ...any) (sql.Result, error) {
	return w.s.stmts[id].ExecContext(bg, args...)
}

func (w *Writer) affected(id stmtID, args ...any) (int64, error) {
	return rowsChanged(w.exec(id, args...))
}

// atomically runs fn inside a savepoint so that an operation made of
// several statements is all-or-nothing even when it fails with a sentinel
// and the transaction goes on.
func (w *Writer) atomically(fn func() error) error {
	if _, err := w.s.WConn.ExecContext(bg, "SAVEPOINT op"); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	if err := fn(); err != nil {
		if _, rerr := w.s.WConn.ExecContext(bg, "ROLLBACK TO SAVEPOINT op"); rerr != nil {
			return errors.Join(err, fmt.Errorf("store: rollback to savepoint: %w", rerr))
		}
		if _, rerr := w.s.WConn.ExecContext(bg, "RELEASE SAVEPOINT op"); rerr != nil {
			return errors.Join(err, fmt.Errorf("store: release savepoint: %w", rerr))
		}
		return err
	}
	if _, err := w.s.WConn.ExecContext(bg, "RELEASE SAVEPOINT op"); err != nil {
		return fmt.Errorf("store: release savepoint: %w", err)
	}
	return nil
}

func (w *Writer) JobInsert(ctx context.Context, j store.Job) (err error) {
	defer w.guard(&err)
	if err := w.check(ctx); err != nil {
		return err
	}
	if err := j.Validate(); err != nil {
		return err
	}
	args, err := jobArgs(&j)
	if err != nil {
		return fmt.Errorf("job %s: %w", j.ID, err)
	}
	if !j.InsertAnswers() {
		return w.insertJob(&j, args)
	}
	if j.Unique == nil {
		return w.insertKeyed(ctx, &j, args)
	}
	// A unique rule's claim is made after the insert, so the key's claim
	// and the job are undone with it when the rule finds a duplicate.
	return w.atomically(func() error {
		if j.IdempotencyKey != "" {
			if err := w.claimFreeKey(&j); err != nil {
				return err
			}
		}
		if err := w.insertJob(&j, args); err != nil {
			return err
		}
		return w.claimUnique(&j)
	})
}

// insertJob inserts j's row (jobArgs' args), then its spec's.
func (w *Writer) insertJob(j *store.Job, args []any) error {
	hot, spec := splitJobArgs(args)
	n, err := w.affected(stmtJobInsert, hot...)
	if err != nil {
		return fmt.Errorf("store: insert job %s: %w", j.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: job %s", store.ErrExists, j.ID)
	}
	if _, err := w.exec(stmtSpecInsert, spec...); err != nil {
		return fmt.Errorf("store: insert the spec of job %s: %w", j.ID, err)
	}
	return nil
}

func (w *Writer) JobTransition(ctx context.Context, p store.JobTransitionParams) (err error) {
	defer w.guard(&err)
	if w.held.jobs[p.ID] != nil {
		// The job's insert is held: the transition may apply to its row
		// before it is written (fold.go).
		if folded, err := w.checkAndFold(ctx, &p); folded || err != nil {
			return err
		}
	}
	if err := w.check(ctx); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if p.LeavesTerminal() {
		if err := w.releaseHeld(&p); err != nil {
			return err
		}
	}
	if w.scratch.args == nil { // a Writer is one transaction's: sized once for it
		w.scratch.args = make([]any, 0, 24)
	}
	shape, args := transitionArgs(&p, &w.scratch.set, w.scratch.args[:0])
	st, closeStmt, err := w.transitionStmt(shape)
	if err != nil {
		return fmt.Errorf("store: transition job %s: %w", p.ID, err)
	}
	if closeStmt != nil {
		defer closeStmt()
	}
	n, err := w.execStmt(st, args)
	clear(args)
	w.scratch.args = args[:0]
	if err != nil {
		return fmt.Errorf("store: transition job %s: %w", p.ID, err)
	}
	if n == 1 {
		return nil
	}
	return w.transitionMiss(&p)
}

// transitionStmt returns the statement for shape, preparing it on the
// writer connection the first time the shape is seen. Past maxShapes
// shapes, the statement is prepared for this use only and close is non-nil.
func (w *Writer) transitionStmt(shape transitionShape) (st *writerStmt, close func(), err error) {
	if st, ok := w.s.shapes[shape]; ok {
		return st, nil, nil
	}
	st, err = w.s.prepareWriter(shape.sql(w.s.D.StateGuard))
	if err != nil {
		return nil, nil, err
	}
	if len(w.s.shapes) >= maxShapes {
		return st, func() { _ = w.s.closeWriterStmt(st) }, nil
	}
	w.s.shapes[shape] = st
	return st, nil, nil
}

// transitionMiss tells ErrNotFound from ErrConflict after an UPDATE that
// matched no row.
func (w *Writer) transitionMiss(p *store.JobTransitionParams) error {
	var state string
	var attempt int
	err := w.s.stmts[stmtJobProbe].QueryRowContext(bg, p.ID).Scan(&state, &attempt)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: job %s", store.ErrNotFound, p.ID)
	}
	if err != nil {
		return fmt.Errorf("store: transition job %s: %w", p.ID, err)
	}
	return fmt.Errorf("%w: job %s is %s at attempt %d; transition wants attempt %d from %v",
		store.ErrConflict, p.ID, state, attempt, p.ExpectAttempt, p.FromStates)
}

// retentionSQL selects the oldest finished jobs, through jobs_finished.
const retentionSQL = `SELECT id, finished_at, submit_event_id IS NOT NULL FROM jobs
	WHERE finished_at < ? AND final_state IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM executions e WHERE e.job_id = jobs.id AND e.result_state = 'pending')
	ORDER BY finished_at LIMIT ?`

func (w *Writer) JobDeleteFinished(ctx context.Context, before time.Time, limit int) (p store.Purged, err error) {
	defer w.guard(&err)
	if err := w.check(ctx); err != nil {
		return store.Purged{}, err
	}
	if limit <= 0 {
		return store.Purged{}, nil
	}
	// One row past the limit says whether a backlog remains, and how old.
	rows, err := w.s.WConn.QueryContext(bg, w.s.D.rebind(retentionSQL), timeArg(before), limit+1)
	if err != nil {
		return store.Purged{}, fmt.Errorf("store: select finished jobs: %w", err)
	}
	var ids, holding []string // holding: the jobs whose row holds their submitted event
	for rows.Next() {
		var id string
		var finished time.Time
		var holds bool
		if err := rows.Scan(&id, timeCol{&finished}, &holds); err != nil {
			_ = rows.Close()
			return store.Purged{}, fmt.Errorf("store: select finished jobs: %w", err)
		}
		if len(ids) == limit {
			p.NextAt = finished
			continue
		}
		ids = append(ids, id)
		if holds {
			holding = append(holding, id)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return store.Purged{}, fmt.Errorf("store: select finished jobs: %w", err)
	}
	err = w.atomically(func() error {
		if err := w.keepSubmittedEvents(holding); err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := w.exec(stmtJobDelete, id); err != nil {
				return fmt.Errorf("store: delete job %s: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return store.Purged{}, err
	}
	p.Deleted = int64(len(ids))
	return p, nil
}

// keepSubmittedEvents turns the submitted events that the rows of jobs
// about to be deleted hold into event rows with their ids: a job's events
// outlive it until event retention (package store, "The submitted event
// in the job row").
func (w *Writer) keepSubmittedEvents(ids []string) error {
	var evs []store.Event
	for len(ids) > 0 {
		n := min(len(ids), 256)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		rows, err := w.s.WConn.QueryContext(bg, w.s.D.rebind(`SELECT submit_event_id, id, tenant, created_at,
			submit_actor, type, lane, priority, submit_priority FROM jobs
			WHERE id IN (`+placeholders(n)+`) AND submit_event_id IS NOT NULL`), args...)
		if err != nil {
			return fmt.Errorf("store: keep submitted events: %w", err)
		}
		for rows.Next() {
			var j store.Job
			var priority int64
			if err := rows.Scan(&j.SubmitEventID, &j.ID, &j.Tenant, timeCol{&j.CreatedAt}, strCol[string]{&j.SubmitActor},
				&j.Type, &j.Lane, &priority, intPtrCol{&j.SubmitPriority}); err != nil {
				_ = rows.Close()
				return fmt.Errorf("store: keep submitted events: %w", err)
			}
			j.Priority = int(priority)
			evs = append(evs, store.JobSubmittedEvent(j))
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("store: keep submitted events: %w", err)
		}
		ids = ids[n:]
	}
	return w.insertEvents(evs, true)
}

// oldEventsSQL walks the oldest events by id, one past the limit, in
// both places a deletable event lives: the events table (its primary
// key) and the submitted events of job rows (jobs_submit_event). Each is
// a range of an index, whatever the size of the table.
const oldEventsSQL = `SELECT id, at FROM (SELECT id, at FROM events ORDER BY id LIMIT ?) AS e
	UNION ALL SELECT id, at FROM (SELECT submit_event_id AS id, created_at AS at FROM jobs
		WHERE submit_event_id IS NOT NULL ORDER BY submit_event_id LIMIT ?) AS s
	ORDER BY id LIMIT ?`

func (w *Writer) EventDeleteBefore(ctx context.Context, before time.Time, limit int) (p store.Purged, err error) {
	defer w.guard(&err)
	if err := w.check(ctx); err != nil {
		return store.Purged{}, err
	}
	if limit <= 0 {
		return store.Purged{}, nil
	}
	rows, err := w.s.WConn.QueryContext(bg, w.s.D.rebind(oldEventsSQL), limit+1, limit+1, limit+1)
	if err != nil {
		return store.Purged{}, fmt.Errorf("store: select old events: %w", err)
	}
	var last int64
	var n int
	stopped := false
	for rows.Next() {
		var id int64
		var at time.Time
		if err := rows.Scan(&id, timeCol{&at}); err != nil {
			_ = rows.Close()
			return store.Purged{}, fmt.Errorf("store: select old events: %w", err)
		}
		if stopped || !at.Before(before) {
			stopped = true
			continue
		}
		if n == limit {
			p.NextAt, stopped = at, true
			continue
		}
		last, n = id, n+1
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return store.Purged{}, fmt.Errorf("store: select old events: %w", err)
	}
	if n == 0 {
		return p, nil
	}
	// The sequence first covers the ids to delete, so that EventLastID
	// never falls back once these are gone: an id above last stays where
	// it is and EventLastID still finds it. (Raising to every id,
	// EventRaise, would walk the unfinished jobs for the live attempts'.)
	if _, err := w.s.WConn.ExecContext(bg, w.s.D.rebind(w.s.D.EventRaiseTo), last); err != nil {
		return store.Purged{}, fmt.Errorf("store: delete old events: raise the ids: %w", err)
	}
	res, err := w.s.WConn.ExecContext(bg, w.s.D.rebind(`DELETE FROM events WHERE id <= ?`), last)
	if err != nil {
		return store.Purged{}, fmt.Errorf("store: delete old events: %w", err)
	}
	if _, err = res.RowsAffected(); err != nil {
		return store.Purged{}, fmt.Errorf("store: delete old events: %w", err)
	}
	// The walk passed every event row and submitted event up to last.
	p.Deleted = int64(n)
	// The events the job and execution rows hold go up to the same id.
	// Held attempts' too (store doc.go, "The finished attempt in the job
	// row"), not a live attempt's.
	for _, c := range heldEventClears {
		if _, err := w.s.WConn.ExecContext(bg, w.s.D.rebind(c.sql), last+c.shift); err != nil {
			return store.Purged{}, fmt.Errorf("store: delete old %s: %w", c.col, err)
		}
	}
	return p, nil
}

// eventClear clears the event ids of col up to an id (the argument, less
// shift) through the index the feed reads them by.
type eventClear struct {
	col, sql string
	shift    int64
}

// heldEventClears clear the event ids the job and execution rows hold.
// A job row's held starts are cleared as the feed reads them
// (jobStartedSource, lateStartSource): a late start by its outcome's id,
// before that is cleared.
var heldEventClears = []eventClear{
	{col: "lease_event_id", sql: `UPDATE executions SET lease_event_id = NULL WHERE lease_event_id <= ?`},
	{col: "start_event_id", sql: `UPDATE executions SET start_event_id = NULL WHERE start_event_id <= ?`},
	{col: "end_event_id", sql: `UPDATE executions SET end_event_id = NULL WHERE end_event_id <= ?`},
	{col: "submit_event_id", sql: `UPDATE jobs SET submit_event_id = NULL WHERE submit_event_id <= ?`},
	{col: "lease_event_id", sql: `UPDATE jobs SET lease_event_id = NULL WHERE lease_event_id <= ? AND ` + heldMarker},
	jobStartedSource.heldClear("start_event_id"),
	lateStartSource.heldClear("start_event_id"),
	{col: "end_event_id", sql: `UPDATE jobs SET end_event_id = NULL WHERE end_event_id <= ?`},
}

// heldClear is the clear of col in the job rows that hold an attempt
// whose event src reads, walked as src walks them.
func (src eventSource) heldClear(col string) eventClear {
	return eventClear{col: col, shift: src.keyShift, sql: `UPDATE jobs AS j SET ` + col + ` = NULL
		WHERE ` + src.orderKey() + ` <= ? AND ` + src.base + ` AND j.` + heldMarker}
}

// idemExpiredSQL selects the oldest claims, through idempotency_keys_created.
const idemExpiredSQL = `SELECT tenant, key, created_at FROM idempotency_keys
	WHERE created_at < ? ORDER BY created_at LIMIT ?`

func (w *Writer) IdempotencyPurge(ctx context.Context, before time.Time, limit int) (p store.Purged, err error) {
	defer w.guard(&err)
	if err := w.check(ctx); err != nil {
		return store.Purged{}, err
	}
	if limit <= 0 {
		return store.Purged{}, nil
	}
	// The oldest claims by the created_at index, one past the limit.
	rows, err := w.s.WConn.QueryContext(bg, w.s.D.rebind(idemExpiredSQL), timeArg(before), limit+1)
	if err != nil {
		return store.Purged{}, fmt.Errorf("store: select expired idempotency keys: %w", err)
	}
	type claim struct{ tenant, key string }
	var cs []claim
	for rows.Next() {
		var c claim
		var at time.Time
		if err := rows.Scan(&c.tenant, &c.key, timeCol{&at}); err != nil {
			_ = rows.Close()
			return store.Purged{}, fmt.Errorf("store: select expired idempotency keys: %w", err)
		}
		if len(cs) == limit {
			p.NextAt = at
			continue
		}
		cs = append(cs, c)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return store.Purged{}, fmt.Errorf("store: select expired idempotency keys: %w", err)
	}
	err = w.atomically(func() error {
		for _, c := range cs {
			if _, err := w.exec(stmtIdemPurge, c.tenant, c.key, timeArg(before)); err != nil {
				return fmt.Errorf("store: purge idempotency keys: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return store.Purged{}, err
	}
	p.Deleted = int64(len(cs))
	return p, nil
}

func (w *Writer) ExecutionUpsert(ctx context.Context, e store.Execution) (err error) {
	defer w.guard(&err)
	if err := w.check(ctx); err != nil {
		return err
	}
	if err := e.Validate(); err != nil {
		return err
	}
	upsert := func() error { return w.upsertExecChunk(execRows([]store.Execution{e})) }
	if w.s.D.StatementErrorAbortsTx {
		return w.atomically(upsert)
	}
	return upsert()
}

func (w *Writer) ExecutionResultUpdate(ctx context.Context, u store.ResultUpdate) (err error) {
	defer w.guard(&err)
	if err := w.check(ctx); err != nil {
		return err
	}
	if err := u.Validate(); err != nil {
		return err
	}
	next := u.NextAt
	if u.State != store.ResultPending {
		next = time.Time{}
	}
	n, err := w.affected(stmtExecResult, string(u.State), strArg(u.Error), int64(u.Tries), timeArg(next),
		u.JobID, int64(u.Attempt), int64(u.Tries-1))
	if err != nil {
		return fmt.Errorf("store: record result of %s/%d: %w", u.JobID, u.Attempt, err)
	}
	if n == 1 {
		return nil
	}
	var one int
	switch err := w.s.stmts[stmtExecProbe].QueryRowContext(bg, u.JobID, int64(u.Attempt)).Scan(&one); {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: execution %s/%d", store.ErrNotFound, u.JobID, u.Attempt)
	case err != nil:
		return fmt.Errorf("store: probe execution %s/%d: %w", u.JobID, u.Attempt, err)
	}
	return fmt.Errorf("%w: result of %s/%d is not pending after %d tries", store.ErrConflict, u.JobID, u.Attempt, u.Tries-1)
}

func (w *Writer) LogAppend(ctx context.Context, chunks []store.LogChunk) (err error) {
	defer w.guard(&err)
	if err := w.check(ctx); err != nil {
		return err
	}
	for i := range chunks {
		if err := chunks[i].Validate(); err != nil {
			return err
		}
	}
	insert := func() error {
		for _, c := range chunks {
			_, err := w.exec(stmtLogInsert, c.JobID, int64(c.Attempt), c.Seq, string(c.Stream), timeArg(c.At), c.Data)
			if w.s.D.ForeignKeyViolation(err) {
				return fmt.Errorf("%w: job %s", store.ErrNotFound, c.JobID)
			}
			if err != nil {
				return fmt.Errorf("store: append log %s/%d/%d: %w", c.JobID, c.Attempt, c.Seq, err)
			}
		}
		return nil
	}
	if len(chunks) == 1 && !w.s.D.StatementErrorAbortsTx {
		return insert()
	}
	return w.atomically(insert)
}

func (w *Writer) EventAppend(ctx context.Context, events []store.Event) (err error) {
	defer w.guard(&err)
	mode := w.queueable()
	if err := w.checkOp(ctx, mode); err != nil {
		return err
	}
	var raise int64 // the largest id set by the caller
	for i := range events {
		if err := events[i].Validate(); err != nil {
			return err
		}
		raise = max(raise, events[i].ID)
	}
	stored := events
	if raise > 0 {
		stored = storedEvents(events)
		for i := range stored {
			if stored[i].ID == 0 {
				return fmt.Errorf("%w: events: ids set on some events of a batch, not on all", store.ErrInvalid)
			}
		}
	}
	if mode == opPiped {
		if raise == 0 && !w.eventsRaised {
			w.s.Pipe.QueueDraw(w.s.D.EventRaise, nil, nil)
		}
		w.eventsRaised = raise == 0
		w.queueEvents(stored, raise > 0)
		return nil
	}
	if raise > 0 {
		w.eventsRaised = false
		return w.atomically(func() error { return w.insertEvents(stored, true) })
	}
	// The store numbers them: past every id given, synthesised ones too,
	// once per transaction until an event with a given id is stored.
	if !w.eventsRaised {
		if _, err := w.s.WConn.ExecContext(bg, w.s.D.EventRaise); err != nil {
			return fmt.Errorf("store: append events: raise the ids: %w", err)
		}
		w.eventsRaised = true
	}
	insert := func() error { return w.insertEvents(events, false) }
	if len(events) == 1 {
		return insert()
	}
	ids := make([]int64, len(events))
	for i := range events {
		ids[i] = events[i].ID
	}
	err = w.atomically(insert)
	if err != nil { // the inserts were undone: so are the ids
		for i := range events {
			events[i].ID = ids[i]
		}
	}
	return err
}

// storedEvents returns the events that are rows: not Synthesised.
func storedEvents(events []store.Event) []store.Event {
	n := 0
	for i := range events {
		if !events[i].Synthesised {
			n++
		}
	}
	if n == len(events) {
		return events
	}
	out := make([]store.Event, 0, n)
	for _, e := range events {
		if !e.Synthesised {
			out = append(out, e)
		}
	}
	return out
}

// eventChunk is how many events one INSERT statement carries: one
// multi-row statement costs about as much as one single-row insert.
const eventChunk = 64

// insertEvents inserts events in multi-row statements. The writer is the
// only one inserting, and events use AUTOINCREMENT, so the rows of one
// statement get consecutive ids ending at its last insert id.
// With withIDs, the events' own ids are inserted.
func (w *Writer) insertEvents(events []store.Event, withIDs bool) error {
	for len(events) > 0 {
		n := min(len(events), eventChunk)
		if withIDs {
			if err := w.insertEventChunkWithIDs(events[:n]); err != nil {
				return err
			}
			events = events[n:]
			continue
		}
		if err := w.insertEventChunk(events[:n]); err != nil {
			return err
		}
		events = events[n:]
	}
	return nil
}

func (w *Writer) insertEventChunk(events []store.Event) error {
	args := eventArgs(events)
	st, err := w.eventStmt(len(events))
	if err != nil {
		return fmt.Errorf("store: append events: %w", err)
	}
	if w.s.D.EventIDsReturned {
		return returnedEventIDs(st, args, events)
	}
	res, err := st.ExecContext(bg, args...)
	if err != nil {
		return fmt.Errorf("store: append events: %w", err)
	}
	last, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("store: append events: %w", err)
	}
	for i := range events {
		events[i].ID = last - int64(len(events)-1-i)
	}
	return nil
}

func (w *Writer) insertEventChunkWithIDs(events []store.Event) error {
	st, err := w.eventIDStmt(len(events))
	if err != nil {
		return fmt.Errorf("store: append events: %w", err)
	}
	if _, err := st.ExecContext(bg, eventArgsWithIDs(events)...); err != nil {
		return fmt.Errorf("store: append events: %w", err)
	}
	return nil
}

// eventArgsWithIDs is eventArgs with each event's id first.
func eventArgsWithIDs(events []store.Event) []any {
	args := make([]any, 0, 9*len(events))
	for i := range events {
		e := &events[i]
		args = append(args, e.ID, strArg(e.JobID), int64(e.Attempt), e.Tenant, string(e.Type), timeArg(e.At), e.Actor,
			rawJSONArg(e.Detail), strArg(e.ScheduleID))
	}
	return args
}

func eventArgs(events []store.Event) []any {
	args := make([]any, 0, 8*len(events))
	for i := range events {
		e := &events[i]
		args = append(args, strArg(e.JobID), int64(e.Attempt), e.Tenant, string(e.Type), timeArg(e.At), e.Actor,
			rawJSONArg(e.Detail), strArg(e.ScheduleID))
	}
	return args
}

// returnedEventIDs runs an event insert ending in RETURNING id: a
// sequence hands the rows of one statement increasing ids in VALUES
// order, and the writer is the only one inserting, so the sorted ids are
// the events' in order.
func returnedEventIDs(st *sql.Stmt, args []any, events []store.Event) error {
	rows, err := st.QueryContext(bg, args...)
	if err != nil {
		return fmt.Errorf("store: append events: %w", err)
	}
	defer rows.Close()
	ids := make([]int64, 0, len(events))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("store: append events: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: append events: %w", err)
	}
	if len(ids) != len(events) {
		return fmt.Errorf("store: append events: %d ids for %d events", len(ids), len(events))
	}
	slices.Sort(ids)
	for i := range events {
		events[i].ID = ids[i]
	}
	return nil
}

// eventStmt returns the prepared insert of n events, preparing it once.
func (w *Writer) eventStmt(n int) (*sql.Stmt, error) {
	if st := w.s.eventStmts[n]; st != nil {
		return st, nil
	}
	st, err := w.s.prepareOn(eventInsertSQL(n, w.s.D.EventIDsReturned))
	if err != nil {
		return nil, err
	}
	w.s.eventStmts[n] = st
	return st, nil
}

// eventIDStmt returns the prepared insert of n events with their ids.
func (w *Writer) eventIDStmt(n int) (*sql.Stmt, error) {
	if st := w.s.eventIDStmts[n]; st != nil {
		return st, nil
	}
	st, err := w.s.prepareOn(w.s.D.rebind(eventInsertWithIDsSQL(n)))
	if err != nil {
		return nil, err
	}
	w.s.eventIDStmts[n] = st
	return st, nil
}

// eventInsertWithIDsSQL is the insert of n events with their ids.
func eventInsertWithIDsSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO events (id, job_id, attempt, tenant, type, at, actor, detail, schedule_id) VALUES `)
	writeRows(&b, n, 9)
	return b.String()
}

// eventInsertSQL is the insert of n events, reading their ids back if
// returning.
func eventInsertSQL(n int, returning bool) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO events (job_id, attempt, tenant, type, at, actor, detail, schedule_id) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
	}
	if returning {
		b.WriteString(" RETURNING id")
	}
	return b.String()
}

func (w *Writer) WorkerUpsert(ctx context.Context, wk store.Worker) (err error) {
	defer w.guard(&err)
	if err := w.check(ctx); err != nil {
		return err
	}
	if err := wk.Validate(); err != nil {
		return err
	}
	types, err := jsonArg(wk.Types)
	if err != nil {
		return err
	}
	labels, err := jsonArg(wk.Labels)
	if err != nil {
		return err
	}
	var handlers any // NULL: not reported; "[]": none
	if wk.Handlers != nil {
		b, _ := json.Marshal(wk.Handlers)
		handlers = string(b)
	}
	_, err = w.exec(stmtWorkerUpsert, wk.ID, wk.Name, types, labels, int64(wk.Slots),
		wk.Resources.MilliCPU, wk.Resources.MemoryMB, wk.Resources.GPU, string(wk.State),
		timeArg(wk.RegisteredAt), timeArg(wk.LastSeenAt), handlers)
	if err != nil {
		return fmt.Errorf("store: upsert worker %s: %w", wk.ID, err)
	}
	return nil
}

func (w *Writer) WorkerTouch(ctx context.Context, id string, lastSeenAt time.Time) (err error) {
	defer w.guard(&err)
	return w.mustAffect(ctx, "touch worker "+id, stmtWorkerTouch, timeArg(lastSeenAt), id)
}

func (w *Writer) WorkerDelete(ctx context.Context, id string) (err error) {
	defer w.guard(&err)
	return w.mustAffect(ctx, "delete worker "+id, stmtWorkerDelete, id)
}

func (w *Writer) ScheduleUpsert(ctx context.Context, s store.Schedule) (err error) {
	defer w.guard(&err)
	if err := w.check(ctx); err != nil {
		return err
	}
	if err := s.Validate(); err != nil {
		return err
	}
	buffered, err := jsonArg(timesArg(s.Buffered))
	if err != nil {
		return err
	}
	tags, err := jsonArg(s.Tags)
	if err != nil {
		return err
	}
	_, err = w.exec(stmtScheduleUpsert, s.ID, s.Tenant, s.Name, s.Spec, s.Timezone, rawJSONArg(s.Template),
		s.Overlap, s.Enabled, timeArg(s.NextRunAt), timeArg(s.LastRunAt),
		timeArg(s.CreatedAt), timeArg(s.UpdatedAt), msArg(s.CatchupWindow), msArg(s.Jitter),
		timeArg(s.StartAt), timeArg(s.EndAt), s.PauseNote, s.PauseOnFailure, buffered, tags)
	if err != nil {
		return fmt.Errorf("store: upsert schedule %s: %w", s.ID, err)
	}
	return nil
}

func (w *Writer) ScheduleDelete(ctx context.Context, id string) (err error) {
	defer w.guard(&err)
	return w.mustAffect(ctx, "delete schedule "+id, stmtScheduleDelete, id)
}

func (w *Writer) WebhookInsert(ctx context.Context, h store.Webhook) (err error) {
	defer w.guard(&err)
	if err := w.check(ctx); err != nil {
		return err
	}
	if err := h.Validate(); err != nil {
		return err
	}
	kinds, err := jsonArg(h.Kinds)
	if err != nil {
		return err
	}
	tenants, err := jsonArg(h.Tenants)
	if err != nil {
		return err
	}
	n, err := w.affected(stmtWebhookInsert, h.Name, h.URL, h.Secret, kinds, tenants, timeArg(h.CreatedAt), h.CreatedBy)
	if err != nil {
		return fmt.Errorf("store: insert webhook %s: %w", h.Name, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: webhook %s", store.ErrExists, h.Name)
	}
	return nil
}

func (w *Writer) WebhookDelete(ctx context.Context, name string) (err error) {
	defer w.guard(&err)
	return w.mustAffect(ctx, "delete webhook "+name, stmtWebhookDelete, name)
}

func (w *Writer) LaneStateSet(ctx context.Context, l store.LaneState) (err error) {
	defer w.guard(&err)
	if err := w.check(ctx); err != nil {
		return err
	}
	if err := l.Validate(); err != nil {
		return err
	}
	if _, err := w.exec(stmtLaneStateSet, l.Lane, l.Paused, l.Note, timeArg(l.ChangedAt), l.ChangedBy); err != nil {
		return fmt.Errorf("store: set lane state %s: %w", l.Lane, err)
	}
	return nil
}

func (w *Writer) APIKeyInsert(ctx context.Context, k store.APIKey) (err error) {
	defer w.guard(&err)
	if err := w.check(ctx); err != nil {
		return err
	}
	if err := k.Validate(); err != nil {
		return err
	}
	n, err := w.affected(stmtAPIKeyInsert, k.KeyHash, k.Tenant, string(k.Role), k.Name, timeArg(k.CreatedAt),
		k.CreatedBy, timeArg(k.ExpiresAt))
	if err != nil {
		return fmt.Errorf("store: insert api key: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: api key", store.ErrExists)
	}
	return nil
}

func (w *Writer) APIKeyDelete(ctx context.Context, keyHash string) (err error) {
	defer w.guard(&err)
	return w.mustAffect(ctx, "delete api key", stmtAPIKeyDelete, keyHash)
}

// mustAffect runs a statement that must change one row, ErrNotFound if it
// changed none.
func (w *Writer) mustAffect(ctx context.Context, what string, id stmtID, args ...any) error {
	if err := w.check(ctx); err != nil {
		return err
	}
	n, err := w.affected(id, args...)
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s", store.ErrNotFound, what)
	}
	return nil
}
