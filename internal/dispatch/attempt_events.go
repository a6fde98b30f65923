package dispatch

import (
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// An attempt's leased, started and outcome events are held by its rows
// rather than stored as event rows whenever a reader gives them back the
// same (package store, "Attempt history in the execution row"): the job
// row while the attempt lives, the execution row once it ended. These
// functions move them along; lease, startAttempt and finish record them.

// lateStart records the start of an attempt reported only with its
// completion. The execution row this completion writes holds it (its
// time is the row's finished_at, its detail the row's started_at): the
// record keeps its id, with no start time, for execution.
func (d *Dispatcher) lateStart(tx *txn, rec *jobRec, wk *workerRec, end attemptEnd) {
	want := store.StartedEvent(tx.nextEventID(), rec.job.ID, rec.job.Attempt, rec.job.Tenant, tx.now, wk.w.ID, end.started)
	// The event recorded is want by the completion's actor: the same
	// detail (the start time), encoded once. A zero start has none in
	// want, and is recorded with its own.
	ev := want
	ev.Actor = end.actor
	if end.started.IsZero() {
		ev = tx.peekEvent(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventStarted, end.actor,
			map[string]any{"started_at": end.started.UTC()})
	}
	ev = tx.draw(ev)
	if tx.keep(ev, want) {
		rec.job.StartEventID, rec.job.StartEventAt = ev.ID, time.Time{}
	}
}

// moveAttemptEvents hands the live attempt's events from the record (the
// job row) to e, its execution row, each one that e gives back the same;
// any other one becomes an event row, with its id. The transition that
// ends the attempt then clears them from the job row (leaveJobRow).
func moveAttemptEvents(tx *txn, rec *jobRec, e *store.Execution) {
	j := &rec.job
	if j.LeaseEventID != 0 {
		live := store.LeasedEvent(j.LeaseEventID, j.ID, j.Attempt, j.Tenant, j.LeasedAt, j.WorkerID)
		if sameEvent(live, store.LeasedEvent(j.LeaseEventID, e.JobID, e.Attempt, j.Tenant, e.LeasedAt, e.WorkerID)) {
			e.LeaseEventID = j.LeaseEventID
		} else {
			tx.add(live)
		}
	}
	switch {
	case j.StartEventID == 0:
	case j.StartEventAt.IsZero(): // reported with this completion (lateStart), which checked it
		e.StartEventID = j.StartEventID
	default:
		live := store.StartedEvent(j.StartEventID, j.ID, j.Attempt, j.Tenant, j.StartEventAt, j.WorkerID, time.Time{})
		if sameEvent(live, store.StartedEvent(j.StartEventID, e.JobID, e.Attempt, j.Tenant, j.StartEventAt, e.WorkerID, time.Time{})) {
			e.StartEventID, e.StartEventAt = j.StartEventID, j.StartEventAt
		} else {
			tx.add(live)
		}
	}
	j.LeaseEventID, j.StartEventID = 0, 0
}

// live reports whether a job in state s has a live attempt.
func live(s store.State) bool { return s == store.StateLeased || s == store.StateRunning }

// leaveJobRow is part of every transition that ends the live attempt:
// the events the job row still holds (no execution row took them: a lease
// withdrawn or handed back) become event rows with their ids, and set
// clears the row's attempt event columns.
func leaveJobRow(tx *txn, rec *jobRec, set *store.JobSet) {
	if set.State == nil || !live(rec.job.State) || live(*set.State) || set.HeldAttempt != nil {
		return // a held attempt keeps its events in the job row (holdAttempt)
	}
	for _, ev := range store.LiveAttemptEvents(rec.job) {
		tx.add(ev)
	}
	var none int64
	set.LeaseEventID, set.StartEventID = &none, &none
	set.LeasedAt, set.StartEventAt = &time.Time{}, &time.Time{}
}

// holdAttempt makes set, the transition that ends the job with the
// attempt e, keep e in the job row instead of an execution row (package
// store, "The finished attempt in the job row") when the row gives e back
// exactly: an attempt with no result upload, whose fields the job row
// shares (worker, times, exit code, failure class, error, event ids)
// are the row's once set is applied. row is the job row as stored before
// the attempt's end (its events not yet moved). It reports whether it
// did; if not, set is unchanged and e is to be written as a row.
func holdAttempt(rec *jobRec, row store.Job, set *store.JobSet, e store.Execution, now time.Time) bool {
	if e.ResultState != "" || e.Outcome == "" {
		return false
	}
	held := *set
	held.HeldAttempt = &e
	// The attempt's event columns, as the row stores them: a start
	// reported with this completion (lateStart) is not stored yet.
	storedStart, storedStartAt := row.StartEventID, row.StartEventAt
	if storedStartAt.IsZero() {
		storedStart = 0
	}
	if e.LeaseEventID != row.LeaseEventID {
		held.LeaseEventID = &e.LeaseEventID
	}
	if !e.LeasedAt.Equal(row.LeasedAt) {
		held.LeasedAt = &e.LeasedAt
	}
	if e.StartEventID != storedStart {
		held.StartEventID = &e.StartEventID
	}
	if !e.StartEventAt.Equal(storedStartAt) {
		held.StartEventAt = &e.StartEventAt
	}
	after := jobRec{job: row}
	after.apply(held, now)
	if !sameExecution(store.HeldExecution(after.job, e), e) {
		return false
	}
	*set = held
	return true
}

// sameExecution reports whether a and b read back the same from the
// store, which keeps times to the microsecond and durations to the
// millisecond.
func sameExecution(a, b store.Execution) bool {
	us := func(t time.Time) time.Time { return t.Truncate(time.Microsecond) }
	sameTime := func(x, y time.Time) bool { return us(x).Equal(us(y)) }
	sameCode := (a.ExitCode == nil) == (b.ExitCode == nil) && (a.ExitCode == nil || *a.ExitCode == *b.ExitCode)
	return a.JobID == b.JobID && a.Attempt == b.Attempt && a.WorkerID == b.WorkerID && sameTime(a.LeasedAt, b.LeasedAt) &&
		a.Wait.Milliseconds() == b.Wait.Milliseconds() && sameTime(a.StartedAt, b.StartedAt) &&
		sameTime(a.FinishedAt, b.FinishedAt) && a.Outcome == b.Outcome && sameCode && a.FailureClass == b.FailureClass &&
		a.Error == b.Error && a.LeaseEventID == b.LeaseEventID && a.StartEventID == b.StartEventID &&
		sameTime(a.StartEventAt, b.StartEventAt) && a.EndEventID == b.EndEventID
}
