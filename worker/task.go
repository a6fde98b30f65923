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

// startState tracks the start report of a task.
type startState int

const (
	startNone    startState = iota
	startQueued             // waiting for the start batcher
	startSending            // in a start request
	startSent               // the request is over (acknowledged or given up)
	startSkipped            // finished first: the completion carries started_at
)

// task is one leased attempt held by the worker, from the lease until its
// completion is acknowledged or it is dropped.
type task struct {
	key       taskKey
	sess      session // the registration it was leased under
	job       api.Job
	expires   time.Time
	startedAt time.Time
	ctx       context.Context
	cancel    context.CancelCauseFunc
	startDone chan struct{} // closed when start reaches startSent or startSkipped
	gate      startGate     // orders the start among its lease answer
	slotHolds atomic.Int32  // 2 at the lease: the handler and the held set

	mu         sync.Mutex
	deadline   *time.Timer   // strict timeout; moved by extended SLAs
	timeout    time.Duration // the strict run-time limit as last heard from the server
	start      startState
	finished   bool // the handler returned
	dropped    bool // revoked or registration lost: report nothing
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
		key:       taskKey{jobID: job.ID, attempt: l.Attempt},
		sess:      sess,
		job:       job,
		expires:   l.LeaseExpiresAt,
		ctx:       ctx,
		cancel:    cancel,
		startDone: make(chan struct{}),
		out:       outputCap{limit: max(job.OutputLimitBytes, 0)},
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

// queueStart marks the start report as waiting for the batcher.
func (t *task) queueStart() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start = startQueued
}

// claimStart moves a queued start report into a request, unless the task
// finished or was dropped first (then no start is sent at all).
func (t *task) claimStart() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.start != startQueued {
		return false
	}
	if t.finished || t.dropped {
		t.start = startSkipped
		close(t.startDone)
		return false
	}
	t.start = startSending
	return true
}

// releaseStart ends a start report that was in a request: it was answered,
// given up, or made pointless because the task finished meanwhile (its
// completion carries started_at).
func (t *task) releaseStart() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.start == startSending {
		t.start = startSent
		close(t.startDone)
	}
}

// requeueStart puts a start report that was in a failed request back in
// the queue, unless the task finished or was dropped meanwhile: then the
// report is given up. It reports whether the report is to be queued.
func (t *task) requeueStart() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.start != startSending {
		return false
	}
	if t.finished || t.dropped {
		t.start = startSkipped
		close(t.startDone)
		return false
	}
	t.start = startQueued
	return true
}

// settleStart marks the handler finished. A start report still queued is
// skipped; one in a request is waited for, so that the server sees the
// start before the completion.
func (t *task) settleStart() {
	t.mu.Lock()
	t.finished = true
	st := t.start
	if st == startQueued {
		t.start = startSkipped
		close(t.startDone)
	}
	t.mu.Unlock()
	if st == startSending {
		<-t.startDone
	}
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
