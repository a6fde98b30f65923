package store

import (
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

// State is where a job is in its lifecycle.
type State string

// Job states. blocked waits on dependencies or run_at; retry_wait is the
// back-off between a failed attempt and the next; the last three are
// terminal.
const (
	StateBlocked   State = "blocked"
	StatePending   State = "pending"
	StateLeased    State = "leased"
	StateRunning   State = "running"
	StateRetryWait State = "retry_wait"
	StateSucceeded State = "succeeded"
	StateFailed    State = "failed"
	StateCancelled State = "cancelled"
)

// AllStates returns every state in lifecycle order.
func AllStates() []State {
	return []State{StateBlocked, StatePending, StateLeased, StateRunning,
		StateRetryWait, StateSucceeded, StateFailed, StateCancelled}
}

// UnfinishedStates returns the non-terminal states.
func UnfinishedStates() []State {
	return []State{StateBlocked, StatePending, StateLeased, StateRunning, StateRetryWait}
}

// TerminalStates returns the states a job never leaves.
func TerminalStates() []State {
	return []State{StateSucceeded, StateFailed, StateCancelled}
}

// Valid reports whether s is one of the known states.
func (s State) Valid() bool {
	switch s {
	case StateBlocked, StatePending, StateLeased, StateRunning, StateRetryWait,
		StateSucceeded, StateFailed, StateCancelled:
		return true
	}
	return false
}

// Terminal reports whether s is succeeded, failed or cancelled.
func (s State) Terminal() bool {
	return s == StateSucceeded || s == StateFailed || s == StateCancelled
}

// Condition is what a dependent job needs of the job it waits on.
type Condition string

// Dependency conditions, as stored and as spelled by the API.
const (
	CondSuccess Condition = "success" // the dependency succeeded
	CondFailure Condition = "failure" // the dependency failed
	CondAny     Condition = "any"     // the dependency ended in any way
)

// Valid reports whether c is a known condition.
func (c Condition) Valid() bool { return c == CondSuccess || c == CondFailure || c == CondAny }

// Policy returns the scheduling engine's form of c.
func (c Condition) Policy() policy.Condition {
	switch c {
	case CondFailure:
		return policy.AfterFailure
	case CondAny:
		return policy.AfterAny
	}
	return policy.AfterSuccess
}

// Dependency names a job that must finish (as Condition says) before the
// dependent job is runnable. Stored as JSON {"job_id", "condition"}.
type Dependency struct {
	JobID     string    `json:"job_id"`
	Condition Condition `json:"condition"`
}

// RetryKind is how the delay between attempts grows.
type RetryKind string

// Retry kinds. The empty kind means "no retry policy given".
const (
	RetryFixed       RetryKind = "fixed"
	RetryExponential RetryKind = "exponential"
	RetryImmediate   RetryKind = "immediate"
)

// RetryPolicy says when a failed attempt is retried. The store keeps it; the
// server computes delays.
type RetryPolicy struct {
	Kind     RetryKind
	Delay    time.Duration // first (or fixed) delay; stored in milliseconds
	MaxDelay time.Duration // cap for exponential growth; stored in milliseconds
	Jitter   bool
	// RetryOn lists the failure classes worth a retry; empty means the
	// server's default set.
	RetryOn []FailureClass
}

// SLAPolicy is what happens when a run exceeds its limits (seed 002).
type SLAPolicy string

// SLA policies.
const (
	SLAStrict      SLAPolicy = "strict"       // kill at Timeout
	SLAFlexible    SLAPolicy = "flexible"     // alert at Timeout, keep running
	SLAWarningOnly SLAPolicy = "warning_only" // record warnings only
)

// FailureClass is why an attempt failed; retry policies select on it.
type FailureClass string

// Failure classes.
const (
	FailExitCode   FailureClass = "exit_code"   // the process exited non-zero
	FailTimeout    FailureClass = "timeout"     // killed at its max time
	FailKilled     FailureClass = "killed"      // killed by a signal not ours
	FailOOM        FailureClass = "oom"         // out of memory
	FailLostWorker FailureClass = "lost_worker" // lease expired, worker gone
	FailCancelled  FailureClass = "cancelled"   // cancelled while running
	FailStartError FailureClass = "start_error" // the command could not start
	// FailPreempted: stopped for a job of higher priority and queued
	// again, the attempt not charged. The execution's outcome is stored as
	// cancelled (the column's constraint predates it) and read back as
	// preempted.
	FailPreempted FailureClass = "preempted"
	// FailSnoozed: the handler asked to run again later; the job waits,
	// the attempt not charged. Stored as cancelled, read back as snoozed.
	FailSnoozed FailureClass = "snoozed"
	// FailSnoozeLimit: the job asked to snooze past its max_snoozes.
	FailSnoozeLimit FailureClass = "snooze_limit"
)

// Valid reports whether c is one of the failure classes.
func (c FailureClass) Valid() bool {
	switch c {
	case FailExitCode, FailTimeout, FailKilled, FailOOM, FailLostWorker, FailCancelled, FailStartError:
		return true
	}
	return false
}

// Job is one stored job: its definition, its current state and the
// bookkeeping of its latest attempt.
//
// Times have microsecond precision and come back in UTC; the zero time is
// stored as NULL. Durations are stored in milliseconds. Empty slices, maps
// and byte strings come back nil.
type Job struct {
	ID          string // server-assigned; see NewID
	Tenant      string
	Name        string // optional human label
	Type        string
	Lane        string
	Key         string // resource key: conflicts and cost learning
	FairnessKey string
	Priority    int
	OnDemand    bool
	Resources   policy.Resources
	Labels      []string // worker labels the job needs
	Tags        []string // free-form, for people and list filters
	Command     []string // argv
	Env         map[string]string
	Dir         string
	Shell       bool   // run Command joined through /bin/sh -c
	Payload     []byte // opaque input for SDK handlers

	// IdempotencyKey, when set, makes (Tenant, IdempotencyKey) unique among
	// jobs created within the idempotency window; see JobInsert.
	IdempotencyKey string
	// SubmitToken is the token of the submit that created the job ("":
	// none) as the job stores it (package store, "Submit tokens"): the
	// submit's first job holds the token, its i-th job "token:i". A
	// submit sent again with the token within SubmitTokenWindow is
	// answered with those jobs.
	SubmitToken string
	// TraceParent is the job's W3C trace context: its submit span's, or
	// the one it was submitted with ("" for none).
	TraceParent string
	// Unique, when set, makes the job unique among its tenant's jobs with
	// the same values of the rule's fields; see JobInsert and UniqueRule.
	Unique *UniqueRule
	// Snoozes counts attempts that ended snoozed (ReturnedLeases counts
	// them too: they are not charged); MaxSnoozes caps them, 0 meaning
	// the server's default.
	Snoozes, MaxSnoozes int

	State       State
	Attempt     int // fencing token: incremented at every lease
	MaxAttempts int
	// ReturnedLeases counts leases handed back without the job having run
	// (never started on the worker, or never received by it). They are
	// not charged against MaxAttempts: see ChargedAttempts.
	ReturnedLeases int
	Retry          RetryPolicy
	Timeout        time.Duration // max run time
	Expected       time.Duration // SLA warning threshold
	SLAPolicy      SLAPolicy
	RunAt          time.Time
	DependsOn      []Dependency
	ScheduleID     string    // the schedule that created the job, if any
	ScheduledFor   time.Time // the nominal time of its schedule's slot
	Held           bool      // set aside until released: never leased meanwhile
	NotPreemptible bool      // never stopped for a job of higher priority
	// OutputLimit is the most output (stdout and stderr together, bytes)
	// kept of one attempt; 0 means the server's default.
	OutputLimit int64
	// ResultLocation is the URL (file://, s3://) that every ended
	// attempt's output and result are written under; "" for none.
	ResultLocation string

	CreatedAt       time.Time
	UpdatedAt       time.Time
	EnqueuedAt      time.Time // last (re)insert into the pending set
	StartedAt       time.Time // latest attempt's start
	FinishedAt      time.Time
	WorkerID        string
	LeaseExpiresAt  time.Time
	CancelRequested bool
	LastError       string
	ExitCode        *int // nil: no exit code (not run, or no process)
	FailureClass    FailureClass
	Result          []byte // optional output summary

	// The live attempt's leased and started events (package store,
	// "Attempt history in the execution row"): their ids (0: none) and
	// times. They leave the job row when the attempt ends.
	LeaseEventID int64
	LeasedAt     time.Time
	StartEventID int64
	StartEventAt time.Time

	// The submitted event the job row holds (package store, "The
	// submitted event in the job row"): its id (0: none, the event is
	// a row), its actor, and the priority the job was submitted with
	// once a reprioritize changed it (nil: Priority).
	SubmitEventID  int64
	SubmitActor    string
	SubmitPriority *int
}

// Validate checks what every driver relies on: an id, a tenant, a type, a
// known state, a creation time, known enumerations and dependencies with
// an id and a known condition.
func (j *Job) Validate() error {
	switch {
	case j.ID == "":
		return fmt.Errorf("%w: job: empty id", ErrInvalid)
	case j.Tenant == "":
		return fmt.Errorf("%w: job %s: empty tenant", ErrInvalid, j.ID)
	case j.Type == "":
		return fmt.Errorf("%w: job %s: empty type", ErrInvalid, j.ID)
	case !j.State.Valid():
		return fmt.Errorf("%w: job %s: unknown state %q", ErrInvalid, j.ID, j.State)
	case j.CreatedAt.IsZero():
		return fmt.Errorf("%w: job %s: zero created_at", ErrInvalid, j.ID)
	case !validRetryKind(j.Retry.Kind):
		return fmt.Errorf("%w: job %s: unknown retry kind %q", ErrInvalid, j.ID, j.Retry.Kind)
	case !validSLAPolicy(j.SLAPolicy):
		return fmt.Errorf("%w: job %s: unknown sla policy %q", ErrInvalid, j.ID, j.SLAPolicy)
	case j.OutputLimit < 0:
		return fmt.Errorf("%w: job %s: negative output limit", ErrInvalid, j.ID)
	case j.Snoozes < 0 || j.MaxSnoozes < 0:
		return fmt.Errorf("%w: job %s: negative snoozes or max_snoozes", ErrInvalid, j.ID)
	}
	if j.Unique != nil {
		if err := j.Unique.Validate(); err != nil {
			return fmt.Errorf("job %s: %w", j.ID, err)
		}
	}
	for _, d := range j.DependsOn {
		if d.JobID == "" || !d.Condition.Valid() {
			return fmt.Errorf("%w: job %s: bad dependency %+v", ErrInvalid, j.ID, d)
		}
	}
	return nil
}

func validRetryKind(k RetryKind) bool {
	return k == "" || k == RetryFixed || k == RetryExponential || k == RetryImmediate
}

func validSLAPolicy(p SLAPolicy) bool {
	return p == "" || p == SLAStrict || p == SLAFlexible || p == SLAWarningOnly
}

// AnyAttempt as JobTransitionParams.ExpectAttempt disables the attempt guard.
const AnyAttempt = -1

// JobTransitionParams is one fenced change of a job. The change applies only
// if the job's current attempt equals ExpectAttempt (unless AnyAttempt) and
// its current state is one of FromStates (unless FromStates is empty);
// otherwise JobTransition reports ErrConflict and changes nothing.
type JobTransitionParams struct {
	ID            string
	FromStates    []State
	ExpectAttempt int
	At            time.Time // becomes updated_at; required
	Set           JobSet
}

// JobSet lists the columns a transition writes; a nil field is left as it
// is. Setting a string to "" or a time to the zero time stores NULL.
type JobSet struct {
	State           *State
	Attempt         *int
	ReturnedLeases  *int
	Snoozes         *int
	Priority        *int
	WorkerID        *string
	LeaseExpiresAt  *time.Time
	EnqueuedAt      *time.Time
	StartedAt       *time.Time
	FinishedAt      *time.Time
	RunAt           *time.Time
	CancelRequested *bool
	Held            *bool
	LastError       *string
	ExitCode        *int
	ClearExitCode   bool // store NULL as exit code; ExitCode must be nil
	FailureClass    *FailureClass
	Result          *[]byte
	Timeout         *time.Duration // extend-SLA
	Expected        *time.Duration // extend-SLA
	MaxAttempts     *int           // retry of an ended job: its one more attempt
	// The live attempt's events (Job.LeaseEventID ...); 0 and the zero
	// time clear them.
	LeaseEventID *int64
	LeasedAt     *time.Time
	StartEventID *int64
	StartEventAt *time.Time
	// SubmitPriority keeps the priority the job was submitted with, for
	// its submitted event, when a reprioritize changes Priority.
	SubmitPriority *int
	// HeldAttempt, with a terminal State, is the attempt that ends the
	// job, kept by the job row instead of an execution row (package
	// store, "The finished attempt in the job row"): the store writes
	// its own fields (Outcome, Wait, Duration, SLA, Usage, EndEventID);
	// the fields the job row shares with it (HeldExecution) are the
	// row's, as this transition leaves them. Its ResultState must be
	// none.
	HeldAttempt *Execution
}

// Validate checks the params before any SQL runs.
func (p *JobTransitionParams) Validate() error {
	switch {
	case p.ID == "":
		return fmt.Errorf("%w: transition: empty job id", ErrInvalid)
	case p.At.IsZero():
		return fmt.Errorf("%w: transition %s: zero At", ErrInvalid, p.ID)
	case p.ExpectAttempt < AnyAttempt:
		return fmt.Errorf("%w: transition %s: ExpectAttempt %d", ErrInvalid, p.ID, p.ExpectAttempt)
	case p.Set.State != nil && !p.Set.State.Valid():
		return fmt.Errorf("%w: transition %s: unknown state %q", ErrInvalid, p.ID, *p.Set.State)
	case p.Set.ClearExitCode && p.Set.ExitCode != nil:
		return fmt.Errorf("%w: transition %s: ExitCode and ClearExitCode both set", ErrInvalid, p.ID)
	}
	if h := p.Set.HeldAttempt; h != nil {
		switch {
		case p.Set.State == nil || !p.Set.State.Terminal():
			return fmt.Errorf("%w: transition %s: a held attempt without a terminal state", ErrInvalid, p.ID)
		case h.JobID != p.ID || h.Outcome == "" || h.ResultState != "":
			return fmt.Errorf("%w: transition %s: held attempt %s/%d outcome %q result %q", ErrInvalid, p.ID,
				h.JobID, h.Attempt, h.Outcome, h.ResultState)
		}
		if err := h.Validate(); err != nil {
			return err
		}
	}
	for _, s := range p.FromStates {
		if !s.Valid() {
			return fmt.Errorf("%w: transition %s: unknown from-state %q", ErrInvalid, p.ID, s)
		}
	}
	return nil
}

// LeavesTerminal reports whether the transition may take a job out of a
// terminal state (to an unfinished one, from a terminal state or with no
// state guard): the store then gives up the attempt the row holds, into
// an execution row (package store, "The finished attempt in the job
// row").
func (p *JobTransitionParams) LeavesTerminal() bool {
	if p.Set.State == nil || p.Set.State.Terminal() {
		return false
	}
	if len(p.FromStates) == 0 {
		return true
	}
	for _, s := range p.FromStates {
		if s.Terminal() {
			return true
		}
	}
	return false
}

// Ptr returns a pointer to v, for JobSet fields.
func Ptr[T any](v T) *T { return &v }

// JobListParams filters and pages JobList. Zero fields do not filter.
// Jobs come newest first: by created_at, then id, both descending.
type JobListParams struct {
	Tenant        string
	States        []State
	Type          string
	Lane          string
	Types         []string // any of these types (with Type: Type too)
	Lanes         []string // any of these lanes (with Lane: Lane too)
	ScheduleID    string
	Tag           string       // jobs that carry this tag
	FailureClass  FailureClass // jobs whose last attempt failed so
	CreatedAfter  time.Time    // created_at > CreatedAfter
	CreatedBefore time.Time    // created_at < CreatedBefore
	Limit         int          // 0 = DefaultListLimit; capped at MaxListLimit
	Cursor        string       // NextCursor of the previous page; "" = first page
}

// JobPage is one page of JobList. NextCursor is "" on the last page.
type JobPage struct {
	Jobs       []Job
	NextCursor string
}

// List limits shared by every list call that takes a Limit.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// ClampLimit returns limit bounded to [1, max], def when limit <= 0.
func ClampLimit(limit, def, max int) int {
	if limit <= 0 {
		return def
	}
	if limit > max {
		return max
	}
	return limit
}

// PolicyJob returns what the scheduling engine needs of j, to rebuild its
// index from JobListUnfinished at start.
func (j *Job) PolicyJob() policy.Job {
	pj := policy.Job{
		ID: j.ID, Type: j.Type, Key: j.Key, Tenant: j.Tenant, Lane: j.Lane, FairnessKey: j.FairnessKey,
		Priority: j.Priority, OnDemand: j.OnDemand, Resources: j.Resources, Labels: j.Labels,
		EnqueuedAt: j.EnqueuedAt, RunAt: j.RunAt,
	}
	for _, d := range j.DependsOn {
		pj.DependsOn = append(pj.DependsOn, policy.Dependency{JobID: d.JobID, Condition: d.Condition.Policy()})
	}
	return pj
}

// ChargedAttempts is the number of attempts counted against MaxAttempts:
// every lease but those handed back without the job having run.
func (j *Job) ChargedAttempts() int { return j.Attempt - j.ReturnedLeases }
