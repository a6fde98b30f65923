// Package scheduler is fairway's in-process scheduler: one queue for a Go
// program's foreground and background work, with seed 001's API
// (RegisterType, Submit, RunSync) on top of fairway's policy engine.
//
// # Model
//
// A job is a func(ctx) error of a registered JobType on a job ID. The job
// ID is the resource key (a repository URL, say): conflicts and cost
// learning are keyed on (type, job ID); it need not be unique. RunSync
// jobs carry a fairness key (typically the client); Submit jobs use the
// empty one.
//
// The engine is configured as seed 001: one lane with aging and rarity
// off, one pool of Options.MaxConcurrency slots, and for each distinct
// Priority(N) a tier of priorities [N, N] capped at N running jobs. Pending
// jobs are ordered by (priority, accumulated cost of the fairness key,
// arrival). A job is admitted, skipping those ahead of it that are blocked
// (no head-of-line blocking), when a global slot is free, its tier and its
// type are under their caps, and no job of the same non-empty conflict
// group runs on the same job ID.
//
// # Dispatcher and engine ownership
//
// The policy engine is single-threaded and never reads the clock. A mutex
// guards it, with the scheduler's own books (jobs, counters). Callers'
// goroutines enter it briefly to submit a job, to withdraw one whose
// RunSync ctx ended, or to read statistics; job goroutines enter it to
// report a finish. Admission decisions are made only by the dispatcher
// goroutine, started by New: woken through a one-slot channel whenever work
// arrives or a job finishes (wake-ups coalesce), it calls the engine's Next
// with Clock.Now() until nothing more is admissible, and starts one
// goroutine per admitted job. fn never runs under the mutex.
//
// # Running a job
//
// fn receives a ctx derived from the RunSync caller's ctx (so it carries
// its values and its cancellation), or from context.Background for Submit.
// A panic in fn is recovered into a *PanicError, and runtime.Goexit is
// reported as an error too: the job's slot is always returned. The job's
// outcome goes to the engine (Finish), then to the RunSync caller, or to
// the Logger for a failed Submit job.
//
// # Cost learning
//
// Admitting a job charges its fairness key the estimated cost of its
// (type, job ID): the type's DefaultCost at first, then an exponential
// moving average of observed wall time, estimate = α·observed +
// (1−α)·estimate (Options.Alpha, 0.3 by default), updated by the engine
// when the job finishes, from Clock.Now() at admission and at finish. A
// fairness key with no job for Options.KeyTTL is forgotten and starts
// again from zero. AccumulatedCost and EstimatedCost expose both numbers.
//
// # Cancellation and shutdown
//
// A RunSync whose ctx ends while the job is pending withdraws it from the
// engine (fn never runs) and returns ctx.Err(); once fn runs, its ctx is
// cancelled and RunSync returns what fn returns.
//
// Shutdown refuses new work (ErrClosed) and waits until every pending and
// running job has finished. If its ctx ends first, pending jobs are dropped
// (a waiting RunSync returns ErrClosed), running jobs' ctx is cancelled and
// Shutdown waits for them to return. Close does the same at once. Both
// stop the dispatcher before returning, and both wait for fn to return:
// a fn that ignores its ctx delays them. Do not call Shutdown, Close, or a
// RunSync that needs a slot the caller holds, from inside a job.
//
// RegisterType may be called at any time; a type registered once keeps its
// configuration (ErrTypeRegistered on a second call).
package scheduler
