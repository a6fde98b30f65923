package sqlstore

import (
	"fmt"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// The attempt a job row holds (package store, "The finished attempt in
// the job row"): its columns as those of an execution row, the union of
// both that every reader of executions reads, and the move of a held
// attempt into an execution row when its job leaves its terminal state.

// heldExprs are the expressions of the jobs table that give back each
// column of execColumns for the attempt a row holds.
var heldExprs = map[string]string{
	"job_id": "id", "attempt": "attempt", "worker_id": "worker_id", "leased_at": "leased_at",
	"wait_ms": "attempt_wait_ms", "started_at": "started_at", "finished_at": "finished_at",
	"outcome": "attempt_outcome", "exit_code": "exit_code", "failure_class": "failure_class", "error": "last_error",
	"duration_ms": "COALESCE(attempt_duration_ms, 0)", "sla_met": "attempt_sla_met",
	"sla_violation_pct": "COALESCE(attempt_sla_violation_pct, 0)",
	"result_state":      nullText, "result_url": nullText, "result_error": nullText, "result_tries": "0",
	"result_next_at": nullBigint,
	"cpu_user_us":    "attempt_cpu_user_us", "cpu_system_us": "attempt_cpu_system_us",
	"peak_rss_bytes": "attempt_peak_rss_bytes", "usage_source": "attempt_usage_source",
	"lease_event_id": "lease_event_id", "start_event_id": "start_event_id", "start_event_at": "start_event_at",
	"end_event_id": "end_event_id",
}

// heldMarker is the condition of a job row that holds an attempt.
const heldMarker = "attempt_outcome IS NOT NULL"

// heldSelect lists execColumns as the held attempt's expressions (named
// as the execution's columns when alias), for cols (nil: all of them).
func heldSelect(cols []string, alias bool) string {
	if cols == nil {
		cols = execColumns
	}
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = heldExprs[c]
		if alias && parts[i] != c {
			parts[i] += " AS " + c
		}
	}
	return strings.Join(parts, ", ")
}

// attemptsFrom is a relation of every attempt, stored in an execution row
// or held by a job row, with the columns of executions (to be aliased by
// the caller); ex narrows the executions branch and held the jobs branch
// (beyond heldMarker), so that each branch is a range of its own index.
// Its arguments are ex's then held's.
func attemptsFrom(ex, held where) (string, []any) {
	held.conds = append([]string{heldMarker}, held.conds...)
	q := "(SELECT " + strings.Join(execColumns, ", ") + " FROM executions" + ex.sql() +
		" UNION ALL SELECT " + heldSelect(nil, true) + " FROM jobs" + held.sql() + ")"
	return q, append(append([]any{}, ex.args...), held.args...)
}

// finishedRange narrows both branches of attemptsFrom to the attempts
// finished in (after, before), each bound when set (executions_finished,
// jobs_finished: a held attempt finished with its job).
func finishedRange(ex, held *where, after, before time.Time) {
	for _, w := range []*where{ex, held} {
		if !after.IsZero() {
			w.add("finished_at > ?", timeArg(after))
		}
		if !before.IsZero() {
			w.add("finished_at < ?", timeArg(before))
		}
	}
}

// heldBranch is q, a query of "FROM executions e", over the attempts
// the job rows hold instead.
func heldBranch(q string) string {
	return strings.Replace(q, "FROM executions e", "FROM (SELECT "+heldSelect(nil, true)+" FROM jobs WHERE "+heldMarker+") e", 1)
}

// heldInsertCols are the columns an execution row takes from a held
// attempt (the result columns keep their defaults: a held attempt has no
// result upload).
var heldInsertCols = func() []string {
	var out []string
	for _, c := range execColumns {
		if !strings.HasPrefix(c, "result_") {
			out = append(out, c)
		}
	}
	return out
}()

// releaseHeld moves the attempt p's job row holds, if any, into an
// execution row and clears it from the row, under p's guards, before the
// UPDATE of p: all in the operation's transaction. A row that holds no
// attempt is not changed (p may set a live attempt's event columns).
func (w *Writer) releaseHeld(p *store.JobTransitionParams) error {
	guard := " WHERE id = ? AND " + heldMarker
	args := []any{p.ID}
	if p.ExpectAttempt != store.AnyAttempt {
		guard += " AND attempt = ?"
		args = append(args, int64(p.ExpectAttempt))
	}
	if len(p.FromStates) > 0 {
		guard += " AND " + w.s.D.StateGuard + " IN (" + placeholders(len(p.FromStates)) + ")"
		for _, s := range p.FromStates {
			args = append(args, string(s))
		}
	}
	clear := make([]string, len(releasedCols))
	for i, c := range releasedCols {
		clear[i] = c + " = NULL"
	}
	for _, q := range []string{
		"INSERT INTO executions (" + strings.Join(heldInsertCols, ", ") + ") SELECT " +
			heldSelect(heldInsertCols, false) + " FROM jobs" + guard,
		"UPDATE jobs SET " + strings.Join(clear, ", ") + guard,
	} {
		if _, err := w.s.WConn.ExecContext(bg, w.s.D.rebind(q), args...); err != nil {
			return fmt.Errorf("store: transition job %s: give up its held attempt: %w", p.ID, err)
		}
	}
	return nil
}
