package sqlstore

import (
	"context"
	"slices"

	"github.com/fairwayhq/fairway/internal/store"
)

// Folded transitions. A job submitted and leased in one transaction (the
// dispatcher's step, when a worker waits) would be written twice: its
// held insert (JobInsertBatched), then an UPDATE of the row just
// inserted, a second row version (and WAL record) on PostgreSQL, a row
// rewrite on SQLite. When a transition targets a job whose insert is
// still held, foldTransition applies it to the held row instead: each
// set column (setFields, the same values the UPDATE binds) replaces the
// row's value, and updated_at takes the transition's time, so the row
// inserted is the row the INSERT and the UPDATE would leave. Its guard
// is checked against the held values (state and attempt); a miss, or a
// transition the row alone cannot take (a column the insert does not
// write, such as a held attempt's; a value computed from the row, an
// expr; the move out of a terminal state, releaseHeld), is not folded:
// the insert is flushed and the UPDATE runs as before, with its outcome.
// Nothing is committed that the unfolded path would not commit: the
// folded row is written by the same flush, in the same transaction.

// heldJob is a held insert: its values (jobArgs' order) and its index in
// heldTransitions.inserts; at is -1 when the id is held twice (the flush
// fails: nothing is folded).
type heldJob struct {
	args []any
	at   int
}

// foldCols is, for each of setFields, the position in jobInsertColumns of
// the column it writes, or -1 where the insert into jobs writes no such
// column (a held attempt's, a spec's).
var foldCols = func() []int {
	cols := make([]int, len(setFields))
	for i, f := range setFields {
		cols[i] = -1
		if n := slices.Index(jobInsertColumns, f.col); n >= 0 && !slices.Contains(specColumns, f.col) {
			cols[i] = n
		}
	}
	return cols
}()

var (
	colState     = slices.Index(jobInsertColumns, "state")
	colAttempt   = slices.Index(jobInsertColumns, "attempt")
	colUpdatedAt = slices.Index(jobInsertColumns, "updated_at")
)

// holdJob records the held insert of job id at index at of
// heldTransitions.inserts.
func (w *Writer) holdJob(id string, args []any, at int) {
	if w.held.jobs == nil {
		w.held.jobs = map[string]*heldJob{}
	}
	if w.held.jobs[id] != nil {
		at = -1
	}
	// args is the Writer's scratch (holdInsert clears and reuses it): the
	// held job keeps a copy.
	w.held.jobs[id] = &heldJob{args: slices.Clone(args), at: at}
}

// checkAndFold checks the Writer and p, without flushing what it holds,
// and folds p into its job's held insert where foldTransition can.
func (w *Writer) checkAndFold(ctx context.Context, p *store.JobTransitionParams) (folded bool, err error) {
	if err := w.checkOp(ctx, opHeld); err != nil {
		return false, err
	}
	if err := p.Validate(); err != nil {
		return false, err
	}
	return w.foldTransition(p), nil
}

// foldTransition applies p (validated) to its job's held insert, and
// reports whether it did; if not, nothing changed.
func (w *Writer) foldTransition(p *store.JobTransitionParams) bool {
	h := w.held.jobs[p.ID]
	if w.s.D.NoFold || h == nil || h.at < 0 || w.held.ids[p.ID] || p.LeavesTerminal() || p.Set.HeldAttempt != nil {
		return false
	}
	if p.ExpectAttempt != store.AnyAttempt && h.args[colAttempt] != int64(p.ExpectAttempt) {
		return false
	}
	if len(p.FromStates) > 0 {
		st, _ := h.args[colState].(string)
		if !slices.Contains(p.FromStates, store.State(st)) {
			return false
		}
	}
	args := slices.Clone(h.args)
	args[colUpdatedAt] = timeArg(p.At)
	for i := range setFields {
		v, ok := setFields[i].arg(&p.Set)
		if !ok {
			continue
		}
		if setFields[i].expr != "" || foldCols[i] < 0 {
			return false
		}
		args[foldCols[i]] = v
	}
	sh, vals := jobTable.shape(pick(args, hotArgs))
	w.held.inserts[h.at] = shapedRow{shape: sh, args: vals}
	h.args = args
	return true
}
