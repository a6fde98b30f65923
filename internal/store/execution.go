package store

import (
	"fmt"
	"time"
)

// Outcome is how one attempt ended.
type Outcome string

// Outcomes. The empty outcome means the attempt has not ended.
const (
	OutcomeSucceeded Outcome = "succeeded"
	OutcomeFailed    Outcome = "failed"
	OutcomeCancelled Outcome = "cancelled"
	OutcomeLost      Outcome = "lost"    // lease expired: the worker vanished
	OutcomeTimeout   Outcome = "timeout" // killed at its max time
)

// Valid reports whether o is empty or a known outcome.
func (o Outcome) Valid() bool {
	switch o {
	case "", OutcomeSucceeded, OutcomeFailed, OutcomeCancelled, OutcomeLost, OutcomeTimeout:
		return true
	}
	return false
}

// Execution is one attempt of a job; (JobID, Attempt) identifies it.
type Execution struct {
	JobID           string
	Attempt         int
	WorkerID        string
	LeasedAt        time.Time
	Wait            time.Duration // from becoming ready to LeasedAt (stored only with a lease)
	StartedAt       time.Time
	FinishedAt      time.Time
	Outcome         Outcome // "" while the attempt runs
	ExitCode        *int
	FailureClass    FailureClass
	Error           string
	Duration        time.Duration // stored in milliseconds
	SLAMet          *bool         // nil: no SLA measured
	SLAViolationPct float64       // how far past Expected, in percent of it
	Usage           Usage         // what the attempt's processes used, as the worker measured it

	// The attempt's result upload, for a job with a ResultLocation.
	ResultState  ResultState
	ResultURL    string    // where the attempt's objects are written
	ResultError  string    // the last failed try's error
	ResultTries  int       // tries made so far
	ResultNextAt time.Time // when a pending upload is tried next

	// The attempt's events this row holds (package store, "Attempt
	// history in the execution row"); 0: the event is a row of its own,
	// or there is none. StartEventAt zero with a StartEventID: the start
	// was reported with the completion (the event's time is FinishedAt).
	LeaseEventID int64
	StartEventID int64
	StartEventAt time.Time
	EndEventID   int64
}

// Usage is what an attempt's processes used, as its worker measured it.
// The zero Usage (no Source) means not measured: stored as NULLs.
type Usage struct {
	CPUUser, CPUSystem time.Duration // stored in microseconds
	PeakRSSBytes       int64         // memory high-water mark; 0 if unknown
	// Source is where the figures come from: "cgroup" (the job's own
	// cgroup) or "rusage" (wait4 of the command and of the escaped
	// processes the worker reaped); "" when not measured.
	Source string
}

// Measured reports whether the worker reported any usage.
func (u Usage) Measured() bool { return u.Source != "" }

// ResultState is how far an attempt's result upload has got.
type ResultState string

// Result states. The empty state means the attempt has nothing to upload.
const (
	ResultPending ResultState = "pending" // to be written (again) at ResultNextAt
	ResultWritten ResultState = "written" // every object is in place
	ResultFailed  ResultState = "failed"  // given up after the last try; ResultError says why
)

// Valid reports whether r is empty or a known result state.
func (r ResultState) Valid() bool {
	switch r {
	case "", ResultPending, ResultWritten, ResultFailed:
		return true
	}
	return false
}

// ResultUpdate records one try of an attempt's result upload. It is
// fenced by the try count: it applies only while the upload is pending
// with Tries-1 tries made, so that a try is recorded once.
type ResultUpdate struct {
	JobID   string
	Attempt int
	Tries   int         // tries made, this one included
	State   ResultState // ResultWritten, ResultFailed, or ResultPending to try again
	Error   string      // this try's error; "" when it was written
	NextAt  time.Time   // with ResultPending: when to try again
}

// Validate checks the key, the try count and the state.
func (u *ResultUpdate) Validate() error {
	switch {
	case u.JobID == "" || u.Attempt < 1:
		return fmt.Errorf("%w: result update: no execution named (%q, %d)", ErrInvalid, u.JobID, u.Attempt)
	case u.Tries < 1:
		return fmt.Errorf("%w: result update %s/%d: tries %d", ErrInvalid, u.JobID, u.Attempt, u.Tries)
	case u.State == "" || !u.State.Valid():
		return fmt.Errorf("%w: result update %s/%d: state %q", ErrInvalid, u.JobID, u.Attempt, u.State)
	case u.State == ResultPending && u.NextAt.IsZero():
		return fmt.Errorf("%w: result update %s/%d: pending without a next try", ErrInvalid, u.JobID, u.Attempt)
	}
	return nil
}

// Validate checks the key and the outcome.
func (e *Execution) Validate() error {
	switch {
	case e.JobID == "":
		return fmt.Errorf("%w: execution: empty job id", ErrInvalid)
	case e.Attempt < 0:
		return fmt.Errorf("%w: execution %s: attempt %d", ErrInvalid, e.JobID, e.Attempt)
	case !e.Outcome.Valid():
		return fmt.Errorf("%w: execution %s/%d: unknown outcome %q", ErrInvalid, e.JobID, e.Attempt, e.Outcome)
	case !e.ResultState.Valid():
		return fmt.Errorf("%w: execution %s/%d: unknown result state %q", ErrInvalid, e.JobID, e.Attempt, e.ResultState)
	case e.Wait < 0:
		return fmt.Errorf("%w: execution %s/%d: negative wait %s", ErrInvalid, e.JobID, e.Attempt, e.Wait)
	case e.Usage.CPUUser < 0 || e.Usage.CPUSystem < 0 || e.Usage.PeakRSSBytes < 0:
		return fmt.Errorf("%w: execution %s/%d: negative usage %+v", ErrInvalid, e.JobID, e.Attempt, e.Usage)
	}
	return nil
}

// ExecutionListParams selects executions. With JobID set, every attempt of
// that job comes back in attempt order (the other filters still apply).
// Without it, only finished attempts match and they come newest first, by
// (finished_at, job_id, attempt) descending.
type ExecutionListParams struct {
	JobID          string
	ScheduleID     string // executions of the schedule's jobs
	Tenant         string
	Type           string
	Outcomes       []Outcome
	FinishedAfter  time.Time // finished_at > FinishedAfter
	FinishedBefore time.Time // finished_at < FinishedBefore
	Limit          int       // 0 = DefaultListLimit (all attempts with JobID); capped at MaxListLimit
	AfterAttempt   int       // with JobID: only attempts after this one (paging)
}

// SummaryParams selects the finished executions a Summary covers.
type SummaryParams struct {
	JobID          string // one job's executions
	ScheduleID     string // the executions of a schedule's jobs
	Tenant         string
	Type           string
	Lane           string
	FinishedAfter  time.Time // finished_at > FinishedAfter
	FinishedBefore time.Time // finished_at < FinishedBefore
	Outcome        Outcome   // only executions that ended so ("" = every outcome)
	// Breakdowns fills Summary.ByTenant and Summary.ByType.
	Breakdowns bool
}

// GroupSummary is the finished executions of one tenant or one type.
type GroupSummary struct {
	ByOutcome map[Outcome]int64
	// SucceededDuration sums the run times of the succeeded ones.
	SucceededDuration time.Duration
}

// Summary aggregates finished executions: for /failures, /successes and
// /sla-compliance.
type Summary struct {
	Executions     int64 // finished executions matched
	ByOutcome      map[Outcome]int64
	ByFailureClass map[FailureClass]int64 // failed attempts with a class
	MeanDuration   time.Duration
	P50Duration    time.Duration // nearest-rank percentiles of the run time
	P95Duration    time.Duration
	P99Duration    time.Duration
	SLAMeasured    int64 // executions with a known SLAMet
	SLAMet         int64
	// MeanSLAViolationPct averages SLAViolationPct over the measured
	// executions that missed their SLA.
	MeanSLAViolationPct float64
	// SLAMeanDuration averages the run time of the measured executions.
	SLAMeanDuration time.Duration
	// ByTenant and ByType, with SummaryParams.Breakdowns: the same
	// executions grouped by their job's tenant, and by its type.
	ByTenant map[string]GroupSummary
	ByType   map[string]GroupSummary
}

// SLACompliance returns the percentage of measured executions that met their
// SLA, 100 when none was measured.
func (s Summary) SLACompliance() float64 {
	if s.SLAMeasured == 0 {
		return 100
	}
	return 100 * float64(s.SLAMet) / float64(s.SLAMeasured)
}

// HeldExecution is the execution a job row gives back when it holds its
// last attempt (package store, "The finished attempt in the job row"):
// h's own fields, and those the job row shares with an execution taken
// from j. The dispatcher holds an attempt e only when
// HeldExecution(j, e) is e, j being the row as the finishing transition
// leaves it.
func HeldExecution(j Job, h Execution) Execution {
	e := h
	e.JobID, e.Attempt, e.WorkerID, e.LeasedAt = j.ID, j.Attempt, j.WorkerID, j.LeasedAt
	e.StartedAt, e.FinishedAt, e.ExitCode, e.FailureClass, e.Error = j.StartedAt, j.FinishedAt, j.ExitCode, j.FailureClass, j.LastError
	e.LeaseEventID, e.StartEventID, e.StartEventAt = j.LeaseEventID, j.StartEventID, j.StartEventAt
	if e.LeasedAt.IsZero() {
		e.Wait = 0 // stored only with a lease
	}
	return e
}
