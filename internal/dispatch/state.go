package dispatch

import (
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
)

// jobRec is the dispatcher's record of an unfinished job: the stored row
// as last written, and where its current attempt is.
type jobRec struct {
	job      store.Job
	worker   *workerRec // while leased or running
	leasedAt time.Time
	// deliveredAt is when the lease was handed to the worker (or, after a
	// restart, when it was restored): from then on the worker's heartbeats
	// must list the attempt.
	deliveredAt time.Time
	// held is set once the worker showed it holds the attempt: a
	// heartbeat listed it, or it reported the start or the end. A lease
	// delivered but never held when a heartbeat should list it never
	// reached the worker (reconcile).
	held bool
	// startReported is set once the worker reported the attempt's real
	// start (with a heartbeat, a start call of an older worker, or its
	// completion); until then the job's started_at is the lease time.
	startReported bool
	// restored is set on a job rebuilt from the store at restart: whether
	// its stored started_at was reported is not known, so a report equal
	// to it is not a new start (recordStart).
	restored     bool
	slaWarned    bool
	slaViolated  bool
	timedOut     bool          // the server stopped it at its strict deadline
	leaseTimeout time.Duration // the max run time the worker was given
	// outputBytes counts the current attempt's stored output since this
	// server leased or restored it; outputCut is set once chunks beyond
	// the limit were refused (see appendLogs).
	outputBytes int64
	outputCut   bool
	// preemptFor is the waiting job this running attempt is being stopped
	// for (preempt_running.go); heartbeats tell its worker.
	preemptFor string
}

// undelivered says whether the attempt's lease is still in its worker's
// mailbox: it has not left the server, so taking it back costs nothing.
func (r *jobRec) undelivered() bool {
	return r.worker != nil && r.deliveredAt.IsZero()
}

// apply mirrors a committed transition into the record.
func (r *jobRec) apply(set store.JobSet, at time.Time) {
	j := &r.job
	j.UpdatedAt = at
	if set.State != nil {
		j.State = *set.State
	}
	if set.Attempt != nil {
		j.Attempt = *set.Attempt
	}
	if set.ReturnedLeases != nil {
		j.ReturnedLeases = *set.ReturnedLeases
	}
	if set.Priority != nil {
		j.Priority = *set.Priority
	}
	if set.SubmitPriority != nil {
		j.SubmitPriority = set.SubmitPriority
	}
	if set.WorkerID != nil {
		j.WorkerID = *set.WorkerID
	}
	if set.LeaseExpiresAt != nil {
		j.LeaseExpiresAt = *set.LeaseExpiresAt
	}
	if set.EnqueuedAt != nil {
		j.EnqueuedAt = *set.EnqueuedAt
	}
	if set.StartedAt != nil {
		j.StartedAt = *set.StartedAt
	}
	if set.FinishedAt != nil {
		j.FinishedAt = *set.FinishedAt
	}
	if set.RunAt != nil {
		j.RunAt = *set.RunAt
	}
	if set.CancelRequested != nil {
		j.CancelRequested = *set.CancelRequested
	}
	if set.Held != nil {
		j.Held = *set.Held
	}
	if set.LastError != nil {
		j.LastError = *set.LastError
	}
	if set.ExitCode != nil {
		j.ExitCode = set.ExitCode
	}
	if set.ClearExitCode {
		j.ExitCode = nil
	}
	if set.FailureClass != nil {
		j.FailureClass = *set.FailureClass
	}
	if set.Result != nil {
		j.Result = *set.Result
	}
	if set.Timeout != nil {
		j.Timeout = *set.Timeout
	}
	if set.Expected != nil {
		j.Expected = *set.Expected
	}
	if set.MaxAttempts != nil {
		j.MaxAttempts = *set.MaxAttempts
	}
	if set.Snoozes != nil {
		j.Snoozes = *set.Snoozes
	}
	if set.LeaseEventID != nil {
		j.LeaseEventID = *set.LeaseEventID
	}
	if set.LeasedAt != nil {
		j.LeasedAt = *set.LeasedAt
	}
	if set.StartEventID != nil {
		j.StartEventID = *set.StartEventID
	}
	if set.StartEventAt != nil {
		j.StartEventAt = *set.StartEventAt
	}
}

// workerRec is a registered worker: its liveness, the leases made for it
// but not yet handed over, and the long-poll waiting for them.
type workerRec struct {
	w        store.Worker
	lastSeen time.Time
	mailbox  []mailItem // in admission order
	poll     *poller
	// owed are the lease answers of completion reports that wait for a
	// higher-priority lease to become durable (see takeMail), oldest first.
	owed     []*poller
	jobs     map[string]*jobRec
	draining bool
	// silent: the worker missed its heartbeats; it is offered no new
	// work until it calls again (see markSilent).
	silent bool
	// nudge is signalled (after the commit is durable) when there is news
	// for the worker: a cancel, a revoked lease, an extended deadline. A
	// heartbeat holding its answer (wait_ms) wakes on it. lastNews is what
	// the last heartbeat answer said, so that the same news does not make
	// every following heartbeat return at once.
	nudge    chan struct{}
	lastNews string
}

// mailItem is a lease waiting for its worker. It may leave the server only
// once the batch that made it (seq) is durable; until it has left, a job
// of higher priority may take its slot (see preempt).
type mailItem struct {
	lease api.Lease
	seq   uint64
	sent  bool // taken by takeMail, about to leave the mailbox
	// preempting: the lease took the slot of a withdrawn one, which a
	// request of the worker may be waiting for (see takeMail).
	preempting bool
}

// poller is a request waiting for leases: a worker's long-poll, or the
// lease part of a completion report's answer.
type poller struct {
	max int
	ch  chan []api.Lease // buffered 1: answered exactly once
	// heldFor is the batch the answer waits for, once it has been held
	// back for a higher-priority lease in that batch; an answer is held
	// at most once.
	heldFor uint64
}

func policyJob(j store.Job) policy.Job {
	pj := policy.Job{
		ID: j.ID, Type: j.Type, Key: j.Key, Tenant: j.Tenant, Lane: j.Lane,
		FairnessKey: j.FairnessKey, Priority: j.Priority, OnDemand: j.OnDemand,
		Resources: j.Resources, Labels: j.Labels, EnqueuedAt: j.EnqueuedAt, RunAt: j.RunAt,
		Timeout: j.Timeout, NotPreemptible: j.NotPreemptible,
	}
	if pj.EnqueuedAt.IsZero() {
		pj.EnqueuedAt = j.CreatedAt
	}
	return pj
}
