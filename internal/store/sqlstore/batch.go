package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/fairwayhq/fairway/internal/store"
)

// Batched inserts. One multi-row INSERT costs about as much as a
// single-row one: the dispatcher's execution rows go through here, a chunk
// at a time, and on SQLite (Dialect.BatchInserts) its job inserts
// (batched.go, insertPrepared). (On SQLite, multi-row UPDATE ... FROM
// (VALUES ...) measured slower than one prepared UPDATE per job, so
// transitions stay one by one there.)

// batchChunks are the row counts statements are prepared for; a batch is
// cut greedily into them, so few distinct statements are ever prepared.
var batchChunks = [...]int{256, 64, 16, 4, 1}

type batchKey struct {
	table string // "jobs", "job_specs"; "" for executions
	shape insertShape
	rows  int
}

// maxBatchStmts bounds the prepared multi-row statements (shapes times
// chunk sizes); beyond it batchStmt returns nil and the caller runs its
// statement unprepared.
const maxBatchStmts = 256

func (w *Writer) batchStmt(key batchKey, render func() string) (*writerStmt, error) {
	if st, ok := w.s.batches[key]; ok {
		return st, nil
	}
	if len(w.s.batches) >= maxBatchStmts {
		return nil, nil
	}
	st, err := w.s.prepareWriter(render())
	if err != nil {
		return nil, err
	}
	w.s.batches[key] = st
	return st, nil
}

// eachChunk calls fn for consecutive chunks of n items sized by batchChunks.
func eachChunk(n int, fn func(from, rows int) error) error {
	for from := 0; from < n; {
		rows := 1
		for _, c := range batchChunks {
			if n-from >= c {
				rows = c
				break
			}
		}
		if err := fn(from, rows); err != nil {
			return err
		}
		from += rows
	}
	return nil
}

func writeRows(b *strings.Builder, n, cols int) {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
}

// ExecutionUpsertMany inserts or replaces many executions as one
// operation; ErrNotFound (and nothing stored) if a job does not exist.
func (w *Writer) ExecutionUpsertMany(ctx context.Context, es []store.Execution) (err error) {
	defer w.guard(&err)
	mode := w.queueable()
	if err := w.checkOp(ctx, mode); err != nil {
		return err
	}
	for i := range es {
		if err := es[i].Validate(); err != nil {
			return err
		}
	}
	rows := execRows(es)
	if mode == opPiped {
		w.queueExecutions(rows)
		return nil
	}
	return w.atomically(func() error {
		for _, group := range execGroups(rows) {
			if err := eachChunk(len(group), func(from, n int) error { return w.upsertExecChunk(group[from : from+n]) }); err != nil {
				return err
			}
		}
		return nil
	})
}

// execColumns is the column order of the execution upsert.
var execColumns = []string{"job_id", "attempt", "worker_id", "leased_at", "wait_ms", "started_at", "finished_at",
	"outcome", "exit_code", "failure_class", "error", "duration_ms", "sla_met", "sla_violation_pct",
	"result_state", "result_url", "result_error", "result_tries", "result_next_at",
	"cpu_user_us", "cpu_system_us", "peak_rss_bytes", "usage_source",
	"lease_event_id", "start_event_id", "start_event_at", "end_event_id"}

// execTable is execColumns with their defaults (shapes.go): an upsert
// writes only the columns an execution sets.
var execTable = newInsertTable("executions", execColumns, []string{"job_id", "attempt"},
	[]string{"duration_ms", "sla_violation_pct", "result_tries"})

// execRows is es as rows to insert, by shape.
func execRows(es []store.Execution) []shapedRow {
	rows := make([]shapedRow, len(es))
	for i := range es {
		rows[i].shape, rows[i].args = execTable.shape(execArgs(&es[i]))
	}
	return rows
}

// execGroups groups rows by shape, unless two rows upsert one attempt:
// then their order matters, and the groups are runs of one shape.
func execGroups(rows []shapedRow) [][]shapedRow {
	seen := make(map[[2]any]bool, len(rows))
	for _, r := range rows {
		k := [2]any{r.args[0], r.args[1]} // job_id and attempt are always written
		if seen[k] {
			return runs(rows)
		}
		seen[k] = true
	}
	return byShape(rows)
}

func (w *Writer) upsertExecChunk(rows []shapedRow) error {
	sh := rows[0].shape
	st, err := w.batchStmt(batchKey{shape: sh, rows: len(rows)}, func() string { return execBatchSQL(sh, len(rows)) })
	if err != nil {
		return fmt.Errorf("store: prepare executions: %w", err)
	}
	if st != nil {
		_, err = w.execStmt(st, rowArgs(rows))
	} else { // too many shapes prepared: this one runs unprepared
		_, err = w.s.WConn.ExecContext(bg, w.s.D.rebind(execBatchSQL(sh, len(rows))), rowArgs(rows)...)
	}
	if w.s.D.ForeignKeyViolation(err) {
		return fmt.Errorf("%w: an execution's job does not exist", store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: upsert executions: %w", err)
	}
	return nil
}

// execArgs is e's values in execColumns order.
func execArgs(e *store.Execution) []any {
	args := make([]any, 0, len(execColumns))
	args = append(args, e.JobID, int64(e.Attempt), strArg(e.WorkerID),
		timeArg(e.LeasedAt), waitArg(e), timeArg(e.StartedAt), timeArg(e.FinishedAt), strArg(string(e.Outcome)),
		intPtrArg(e.ExitCode), strArg(string(e.FailureClass)), strArg(e.Error), msArg(e.Duration),
		boolPtrArg(e.SLAMet), e.SLAViolationPct, strArg(string(e.ResultState)), strArg(e.ResultURL),
		strArg(e.ResultError), int64(e.ResultTries), timeArg(e.ResultNextAt))
	args = appendUsageArgs(args, e.Usage)
	return append(args, idArg(e.LeaseEventID), idArg(e.StartEventID), timeArg(e.StartEventAt), idArg(e.EndEventID))
}

// appendUsageArgs appends cpu_user_us, cpu_system_us, peak_rss_bytes and
// usage_source: NULLs when the usage was not measured.
func appendUsageArgs(args []any, u store.Usage) []any {
	if !u.Measured() {
		return append(args, nil, nil, nil, nil)
	}
	return append(args, u.CPUUser.Microseconds(), u.CPUSystem.Microseconds(), u.PeakRSSBytes, u.Source)
}

// waitArg is a leased execution's wait in milliseconds, NULL when it has
// no lease.
func waitArg(e *store.Execution) any {
	if e.LeasedAt.IsZero() {
		return nil
	}
	return e.Wait.Milliseconds()
}

// execBatchSQL upserts rows executions of shape sh. A column the shape
// leaves out takes its default, in a new row and in a replaced one
// (excluded holds the row as it would have been inserted): the upsert
// replaces every column, as one that bound them all.
func execBatchSQL(sh insertShape, rows int) string {
	cols, n := execTable.columns(sh)
	var b strings.Builder
	b.WriteString("INSERT INTO executions (" + cols + ") VALUES ")
	writeRows(&b, rows, n)
	b.WriteString(execUpsertTail)
	return b.String()
}

// execUpsertTail is the ON CONFLICT clause of an execution upsert.
var execUpsertTail = func() string {
	var b strings.Builder
	b.WriteString(" ON CONFLICT (job_id, attempt) DO UPDATE SET ")
	for i, c := range execColumns[2:] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c + " = excluded." + c)
	}
	return b.String()
}()
