package worker

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// taskKey names one attempt of a job.
type taskKey struct {
	jobID   string
	attempt int
}

// task is one leased attempt held by the worker, from the lease until its
// completion is acknowledged or it is dropped.
type task struct {
	key       taskKey
	sess      session // the registration it was leased under
	job       api.Job
	expires   time.Time
	startedAt time.Time    // set by the attempt's goroutine before the handler runs
	startedNS atomic.Int64 // startedAt for other goroutines (unix ns; 0: not started)
	ctx       context.Context
	cancel    context.CancelCauseFunc
	gate      startGate    // orders the start among its lease answer
	slotHolds atomic.Int32 // 2 at the lease: the handler and the held set

	mu         sync.Mutex
	deadline   *time.Timer   // strict timeout; moved by extended SLAs
	timeout    time.Duration // the strict run-time limit as last heard from the server
	finished   bool          // the handler returned
	dropped    bool          // revoked or registration lost: report nothing
	exitCode   *int
	usage      *api.Usage
	completion api.Completion // set before it is queued
	// preemptFile is where a command job is told it was preempted: "1" is
	// written to it before the process is stopped (FAIRWAY_PREEMPTED_FILE).
	preemptFile string

	// Guarded by the worker's mutex.
	forgotten bool // out of the held set
	reporting bool // its completion was queued

	// Guarded by the log shipper's mutex.
	logSeq      int64
	openLog     *logEntry
	logsClosed  bool
	logBuffered int       // bytes of the task's chunks not yet taken for sending
	logGap      int64     // bytes the server refused, to mark before the next output
	out         outputCap // the head and tail kept within the output limit
}

func newTask(parent context.Context, sess session, l api.Lease) *task {
	job := l.Job
	job.Attempt = l.Attempt
	if l.TraceParent != "" {
		job.TraceParent = l.TraceParent
	}
	ctx, cancel := context.WithCancelCause(withTraceParent(parent, job.TraceParent))
	t := &task{
		key:     taskKey{jobID: job.ID, attempt: l.Attempt},
		sess:    sess,
		job:     job,
		expires: l.LeaseExpiresAt,
		ctx:     ctx,
		cancel:  cancel,
		out:     outputCap{limit: max(job.OutputLimitBytes, 0)},
	}
	t.slotHolds.Store(2)
	return t
}

// attempt is the task as the protocol names it.
func (t *task) attempt() api.JobAttempt {
	return api.JobAttempt{JobID: t.key.jobID, Attempt: t.key.attempt}
}

// requestCancel cancels the handler; its outcome is reported as cancelled.
func (t *task) requestCancel() { t.cancel(ErrCancelled) }

// requestPreempt stops the handler because a job of higher priority takes
// its capacity: a command finds its FAIRWAY_PREEMPTED_FILE written before
// its SIGTERM, a Go handler's context ends with ErrPreempted, and the
// outcome is reported as preempted (the job is queued again, the attempt
// not charged).
func (t *task) requestPreempt() {
	t.mu.Lock()
	file := t.preemptFile
	t.mu.Unlock()
	if file != "" {
		_ = os.WriteFile(file, []byte("1\n"), 0o600) // best effort: the SIGTERM still tells
	}
	t.cancel(ErrPreempted)
}

func (t *task) setPreemptFile(path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.preemptFile = path
}

// revoke cancels the handler and marks the attempt as not to be reported.
func (t *task) revoke() {
	t.mu.Lock()
	t.dropped = true
	t.mu.Unlock()
	t.cancel(ErrRevoked)
}

func (t *task) isDropped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dropped
}

func (t *task) isFinished() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.finished
}

func (t *task) setUsage(u api.Usage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.usage = &u
}

func (t *task) setExitCode(code int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.exitCode = &code
}

// markFinished marks the handler returned.
func (t *task) markFinished() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finished = true
}

// markStarted records the attempt's real start, which the worker reports
// to the server with its heartbeats and its completion: the server counts
// the job running from its lease, and takes the reported start as its
// started_at.
func (t *task) markStarted(at time.Time) {
	t.startedAt = at
	t.startedNS.Store(at.UnixNano())
}

// attemptStarted is the attempt as a heartbeat lists it: with its start
// if the handler began by startedBy.
func (t *task) attemptStarted(startedBy time.Time) api.JobAttempt {
	a := t.attempt()
	if ns := t.startedNS.Load(); ns != 0 && ns <= startedBy.UnixNano() {
		at := time.Unix(0, ns).UTC()
		a.StartedAt = &at
	}
	return a
}

// extendDeadline moves the strict timeout to timeout after the start (the
// server extended the job's SLA). If the deadline timer has fired already,
// the kill waits on the server's answer (deadlineReached) and sees the new
// limit through rearm.
func (t *task) extendDeadline(timeout time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.deadline == nil {
		return
	}
	t.timeout = timeout
	left := timeout - time.Since(t.startedAt)
	if t.deadline.Stop() {
		t.deadline.Reset(max(left, 0))
	}
}

// rearm restarts the deadline timer if the limit now lies ahead, and
// reports whether it did.
func (t *task) rearm() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	left := t.timeout - time.Since(t.startedAt)
	if t.deadline == nil || left <= 0 {
		return false
	}
	t.deadline.Reset(left)
	return true
}

func (t *task) stopDeadline() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.deadline != nil {
		t.deadline.Stop()
	}
}
