package sqlstore

import (
	"context"
	"database/sql"
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
	table string // "" for executions
	rows  int
}

func (w *Writer) batchStmt(key batchKey, render func() string) (*sql.Stmt, error) {
	if st, ok := w.s.batches[key]; ok {
		return st, nil
	}
	st, err := w.s.prepareOn(render())
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
	if mode == opPiped {
		w.queueExecutions(es)
		return nil
	}
	return w.atomically(func() error {
		return eachChunk(len(es), func(from, n int) error { return w.upsertExecChunk(es[from : from+n]) })
	})
}

const execCols = 27

func (w *Writer) upsertExecChunk(es []store.Execution) error {
	st, err := w.batchStmt(batchKey{rows: len(es)}, func() string { return execBatchSQL(len(es)) })
	if err != nil {
		return fmt.Errorf("store: prepare executions: %w", err)
	}
	_, err = st.ExecContext(bg, execArgs(es)...)
	if w.s.D.ForeignKeyViolation(err) {
		return fmt.Errorf("%w: an execution's job does not exist", store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: upsert executions: %w", err)
	}
	return nil
}

func execArgs(es []store.Execution) []any {
	args := make([]any, 0, execCols*len(es))
	for i := range es {
		e := &es[i]
		args = append(args, e.JobID, int64(e.Attempt), strArg(e.WorkerID),
			timeArg(e.LeasedAt), waitArg(e), timeArg(e.StartedAt), timeArg(e.FinishedAt), strArg(string(e.Outcome)),
			intPtrArg(e.ExitCode), strArg(string(e.FailureClass)), strArg(e.Error), msArg(e.Duration),
			boolPtrArg(e.SLAMet), e.SLAViolationPct, strArg(string(e.ResultState)), strArg(e.ResultURL),
			strArg(e.ResultError), int64(e.ResultTries), timeArg(e.ResultNextAt))
		args = appendUsageArgs(args, e.Usage)
		args = append(args, idArg(e.LeaseEventID), idArg(e.StartEventID), timeArg(e.StartEventAt), idArg(e.EndEventID))
	}
	return args
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

func execBatchSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO executions (job_id, attempt, worker_id, leased_at, wait_ms, started_at, finished_at,
		outcome, exit_code, failure_class, error, duration_ms, sla_met, sla_violation_pct,
		result_state, result_url, result_error, result_tries, result_next_at,
		cpu_user_us, cpu_system_us, peak_rss_bytes, usage_source,
		lease_event_id, start_event_id, start_event_at, end_event_id) VALUES `)
	writeRows(&b, n, execCols)
	b.WriteString(` ON CONFLICT (job_id, attempt) DO UPDATE SET worker_id = excluded.worker_id,
		leased_at = excluded.leased_at, wait_ms = excluded.wait_ms, started_at = excluded.started_at,
		finished_at = excluded.finished_at, outcome = excluded.outcome,
		exit_code = excluded.exit_code, failure_class = excluded.failure_class,
		error = excluded.error, duration_ms = excluded.duration_ms,
		sla_met = excluded.sla_met, sla_violation_pct = excluded.sla_violation_pct,
		result_state = excluded.result_state, result_url = excluded.result_url,
		result_error = excluded.result_error, result_tries = excluded.result_tries,
		result_next_at = excluded.result_next_at,
		cpu_user_us = excluded.cpu_user_us, cpu_system_us = excluded.cpu_system_us,
		peak_rss_bytes = excluded.peak_rss_bytes, usage_source = excluded.usage_source,
		lease_event_id = excluded.lease_event_id,
		start_event_id = excluded.start_event_id, start_event_at = excluded.start_event_at,
		end_event_id = excluded.end_event_id`)
	return b.String()
}
