package policy

import (
	"errors"
	"time"
)

// Errors returned by the engine. Wrapped errors carry detail; test with errors.Is.
var (
	ErrNotFound          = errors.New("job not found")
	ErrDuplicateJob      = errors.New("job already known")
	ErrUnknownLane       = errors.New("unknown lane")
	ErrUnknownDependency = errors.New("unknown dependency")
	ErrNotPending        = errors.New("job is not pending")
	ErrNotRunning        = errors.New("job is not running")
	ErrInvalidJob        = errors.New("invalid job")
	ErrDuplicateWorker   = errors.New("worker already registered")
	ErrUnknownWorker     = errors.New("unknown worker")
)

// Condition is what a dependent job needs of the job it waits on.
type Condition int

// Dependency conditions.
const (
	AfterSuccess Condition = iota // the dependency succeeded
	AfterFailure                  // the dependency failed
	AfterAny                      // the dependency ended in any way, cancel included
)

// Dependency names a job that must finish before this one is runnable.
type Dependency struct {
	JobID     string
	Condition Condition
}

// Job is what the engine schedules. Zero fields take the type's defaults:
// Priority (when PriorityDefault is true or the type has one), Lane,
// Resources. FairnessKey defaults to Tenant.
type Job struct {
	ID          string
	Type        string
	Key         string // resource key: what conflicts and cost learning are keyed on
	Tenant      string
	Lane        string
	FairnessKey string
	Priority    int
	// PriorityDefault asks for the type's default priority instead of Priority.
	PriorityDefault bool
	OnDemand        bool
	Resources       Resources
	Labels          []string // worker labels the job needs, all of them
	EnqueuedAt      time.Time
	RunAt           time.Time // zero or <= now: runnable at once
	DependsOn       []Dependency
	// Timeout bounds the job's run time (0: none). Only estimates read it.
	Timeout time.Duration
	// NotPreemptible keeps the job from ever being chosen as a victim of
	// preemption once it runs.
	NotPreemptible bool
}

// Outcome is how a running job ended, as told to Finish.
type Outcome int

// Outcomes.
const (
	Succeeded Outcome = iota
	Failed
	Cancelled
	// Released hands the job back without ending it (lease lost, retry to
	// come): capacity is freed, dependents keep waiting; the run time is not
	// observed as cost.
	Released
)

// Assignment is one admission decision: which job runs on which worker.
type Assignment struct {
	JobID       string
	WorkerID    string
	Lane        string
	Tenant      string
	FairnessKey string
	Resources   Resources // what the job holds while it runs, defaults applied
	Score       int64     // score at admission, priority points
	Cost        float64   // estimated cost charged to the fairness key
	// Backfill is set when the job took units of a worker reserved for a
	// better-ranked job, because it is predicted to end before the
	// reservation starts or leaves the reserved units free.
	Backfill bool
}

// Dropped is a dependent job the engine removed because a dependency ended
// in a way that can never satisfy it.
type Dropped struct {
	JobID        string
	DependencyID string
}

// Worker is a registered executor. Types empty means every type. Each of its
// Slots runs one job; Resources is shared by the worker's slots.
type Worker struct {
	ID        string
	Types     []string
	Labels    []string
	Slots     int
	Resources Resources
}
