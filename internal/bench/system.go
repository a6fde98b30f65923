package bench

import (
	"context"
	"time"
)

// This file is the contract between the workloads and the system under
// test. It is peerbench's System interface unchanged, so that the
// workloads are the same code path for every system; here there is one
// implementation, fairway's (fairway.go).
//
// A System's worker must call WorkerConfig.OnStart(job) as the first thing
// it does for each job execution and then report success; it must carry
// the Job fields (Seq, EnqueuedAt, Class) through the queue unchanged (in
// the job's payload).

// Class is a job's priority class.
type Class uint8

// The classes. The values travel in job payloads.
const (
	ClassNormal Class = iota // the system's default priority
	ClassHigh                // priority workload: the urgent jobs
	ClassLow                 // priority workload: the bulk backlog
)

func (c Class) String() string {
	switch c {
	case ClassHigh:
		return "high"
	case ClassLow:
		return "low"
	}
	return "normal"
}

// Job is what a system carries from the producer to its worker.
type Job struct {
	Seq        int64 // 1-based, unique within one run; index into the recorder
	EnqueuedAt int64 // unix nanoseconds, stamped just before the insert call
	Class      Class
	// LeasedAt is when the system handed the job to a worker, unix ns, if
	// it says (fairway: the lease's time); 0 if not known.
	LeasedAt int64
}

// WorkerConfig is passed to StartWorkers.
type WorkerConfig struct {
	Concurrency int
	// Priorities is true for the priority workload: jobs of ClassHigh must
	// be preferred over ClassLow.
	Priorities bool
	// OnStart must be called by the worker at the start of every job
	// execution (also for repeated executions of the same job).
	OnStart func(Job)
}

// Info describes how a system is configured, for the summary lines. Values
// must not contain spaces.
type Info struct {
	Durability       string // e.g. sqlite:wal,fsync_before_ack
	BatchMode        string // how InsertBatch is done
	BatchSize        int    // jobs per batch call
	BatchParallelism int    // concurrent batch calls used by InsertBatch
	SupportsPriority bool
	// Config lists the settings that bound throughput or latency.
	Config string
}

// System is one job-queue system under test.
type System interface {
	Name() string
	Info(ctx context.Context) (Info, error)
	// Reset leaves the system with an empty queue and nothing left from an
	// earlier run.
	Reset(ctx context.Context) error
	// InsertBatch inserts jobs with the system's bulk API.
	InsertBatch(ctx context.Context, jobs []Job) error
	// Insert inserts a single job, committed on return.
	Insert(ctx context.Context, job Job) error
	// StartWorkers starts processing with the given concurrency. stop must
	// shut the workers down (bounded by its context) and release them.
	StartWorkers(ctx context.Context, cfg WorkerConfig) (stop func(context.Context) error, err error)
	// Outstanding is the number of jobs the system has not yet recorded as
	// finished (waiting, running or to be retried).
	Outstanding(ctx context.Context) (int64, error)
	Close() error
}

// Params are the workload sizes, from the command line.
type Params struct {
	Jobs            int           // drain: jobs inserted before workers start
	Concurrency     int           // drain/steady/latency: worker concurrency
	Producers       int           // steady: producer goroutines
	Duration        time.Duration // steady/latency: producing time
	Rate            float64       // latency: jobs per second
	Low, High       int           // priority: job counts
	HighAfter       int           // priority: insert the high jobs once this many low jobs started
	PrioConcurrency int           // priority: worker concurrency
	Warmup          time.Duration // steady/latency: idle time after starting workers
	MaxJobs         int           // steady: bound on jobs inserted
	DrainTimeout    time.Duration // bound on waiting for the queue to empty
	StopTimeout     time.Duration // bound on a graceful worker shutdown
	Schedules       SchedulesParams
	Commands        CommandsParams
}
