package dispatch

import (
	"context"
	"slices"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/metrics"
	"github.com/fairwayhq/fairway/internal/store"
)

// The dispatcher's operations, as the HTTP API calls them: each runs one
// command on the dispatcher goroutine (in a batch's transaction) and
// returns once that transaction is durable. Nothing outside the
// dispatcher touches its state.

// SubmitResult is the outcome of one job of a submit.
type SubmitResult struct {
	Response api.SubmitResponse
	Err      error // a client error (*FieldError, *QuotaError, *UnrunnableError)
}

// Submit inserts the jobs in one transaction (all or none, see
// submitJobs); with wait it also returns a channel that receives the
// (single) job once it ends. actor is who submits, for the audit trail
// ("": the jobs' tenant).
func (d *Dispatcher) Submit(ctx context.Context, jobs []store.Job, wait bool, actor string) ([]SubmitResult, chan api.Job, error) {
	out := make([]SubmitResult, len(jobs))
	var waitCh chan api.Job
	claims := claimsOf(jobs)
	pre := d.prereadHolders(ctx, claims, len(jobs) == 1)
	err := d.send(ctx, command{arriving: arrivals(jobs), claims: claims, oneJob: len(jobs) == 1, pre: pre, apply: func(tx *txn) {
		res := d.submitJobsAs(tx, jobs, actor)
		if wait && res[0].err == nil && tx.err == nil {
			waitCh = d.addWaiter(res[0].jobID())
		}
		tx.then(func() {
			for i, one := range res {
				out[i] = SubmitResult{Err: one.err}
				if one.err == nil {
					out[i].Response = one.response(d)
				}
			}
		})
	}})
	return out, waitCh, err
}

// StopWaiting drops a waiter that Submit returned.
func (d *Dispatcher) StopWaiting(id string, ch chan api.Job) {
	_ = d.submit(context.Background(), func(tx *txn) { d.removeWaiter(id, ch) })
}

// Cancel cancels a job; the result is api.ResultCancelled,
// ResultCancelRequested or ResultAlreadyFinished, "" when the job changed
// meanwhile.
func (d *Dispatcher) Cancel(ctx context.Context, id, actor string) (string, error) {
	var result string
	err := d.submit(ctx, func(tx *txn) { result, _ = d.cancel(tx, id, actor) })
	return result, err
}

// Reprioritize sets a queued job's priority; results as for Cancel.
func (d *Dispatcher) Reprioritize(ctx context.Context, id string, priority int, actor string) (string, error) {
	var result string
	err := d.submit(ctx, func(tx *txn) { result, _ = d.reprioritize(tx, id, priority, actor) })
	return result, err
}

// ExtendSLA adds to an unfinished job's timeout; false when it has ended.
func (d *Dispatcher) ExtendSLA(ctx context.Context, id string, by time.Duration, actor string) (bool, error) {
	var live bool
	err := d.submit(ctx, func(tx *txn) { live = d.extendSLA(tx, id, by, actor) })
	return live, err
}

// Explain says why an unfinished job is not running; false when the
// dispatcher no longer holds it (it has ended).
func (d *Dispatcher) Explain(ctx context.Context, id string) (api.Explanation, bool, error) {
	var x api.Explanation
	var live bool
	err := d.submit(ctx, func(tx *txn) { x, live = d.explain(id, tx.now) })
	return x, live, err
}

// Reasons returns explain's code for each job of ids that waits.
func (d *Dispatcher) Reasons(ctx context.Context, ids []string) (map[string]string, error) {
	var out map[string]string
	err := d.submit(ctx, func(tx *txn) { out = d.reasons(ids, tx.now) })
	return out, err
}

// Lanes shows every lane's load; with a tenant, only that tenant's jobs
// are counted and the shares and capacity are left out.
func (d *Dispatcher) Lanes(ctx context.Context, tenant string) (api.LaneList, error) {
	var out api.LaneList
	err := d.submit(ctx, func(tx *txn) {
		if tenant != "" {
			out = d.tenantLanes(tenant)
		} else {
			out = d.lanes()
		}
	})
	return out, err
}

// TenantsHeld returns what each tenant's running jobs hold (cpu, memory,
// GPUs), against its quota.
func (d *Dispatcher) TenantsHeld(ctx context.Context) (map[string]api.Resources, error) {
	var out map[string]api.Resources
	err := d.submit(ctx, func(tx *txn) { out = d.tenantsHeld() })
	return out, err
}

// Workers lists the registered workers.
func (d *Dispatcher) Workers(ctx context.Context) (api.WorkerList, error) {
	var out api.WorkerList
	err := d.submit(ctx, func(tx *txn) { out = d.workerList() })
	return out, err
}

// Register records a new worker and returns its id.
func (d *Dispatcher) Register(ctx context.Context, req api.RegisterRequest) (string, error) {
	var id string
	var regErr error
	err := d.submit(ctx, func(tx *txn) {
		id, regErr = d.register(tx, req)
		tx.fatal(regErr)
	})
	return id, err
}

// workerCall runs fn for a known worker, counting the call as a sign of
// life; an unknown worker gets *errUnknownWorker.
func (d *Dispatcher) workerCall(ctx context.Context, id string, fn func(tx *txn, wk *workerRec)) error {
	known := true
	err := d.submit(ctx, func(tx *txn) {
		wk := d.workers[id]
		if wk == nil {
			known = false
			return
		}
		wk.lastSeen = tx.now
		if wk.silent {
			d.setSilent(tx, wk, false)
		}
		fn(tx, wk)
	})
	if err == nil && !known {
		return &UnknownWorkerError{id}
	}
	return err
}

// Lease long-polls for up to max leases for the worker, waiting at most
// wait for them. The slice is the caller's: each answer is a new one
// (takeMail), which the dispatcher keeps no reference to; the jobs'
// slices and maps it holds are still the dispatcher's.
func (d *Dispatcher) Lease(ctx context.Context, workerID string, max int, wait time.Duration) ([]api.Lease, error) {
	poll := &poller{max: max, ch: make(chan []api.Lease, 1)}
	if err := d.workerCall(ctx, workerID, func(tx *txn, wk *workerRec) { d.openPoll(wk, poll) }); err != nil {
		return nil, err
	}
	return d.awaitLeases(ctx, workerID, poll, wait), nil
}

// awaitLeases waits for the poll to be answered; past the wait (or when
// the client goes away) it withdraws the poll and takes whatever answer
// the dispatcher gives — leases handed over meanwhile are never lost.
func (d *Dispatcher) awaitLeases(ctx context.Context, workerID string, poll *poller, wait time.Duration) []api.Lease {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case ls := <-poll.ch:
		return ls
	case <-t.C:
	case <-ctx.Done():
	case <-d.done:
		return nil
	}
	err := d.submit(context.Background(), func(tx *txn) { d.withdrawPoll(d.workers[workerID], poll) })
	if err != nil {
		return nil
	}
	select {
	case ls := <-poll.ch:
		return ls
	default:
		return nil // the worker was removed meanwhile; its poll was closed
	}
}

// Start records that the worker started these attempts.
func (d *Dispatcher) Start(ctx context.Context, workerID string, attempts []api.JobAttempt) ([]api.ItemResult, error) {
	out := make([]api.ItemResult, len(attempts))
	err := d.workerCall(ctx, workerID, func(tx *txn, wk *workerRec) {
		for i, a := range attempts {
			out[i] = d.startAttempt(tx, wk, a)
		}
	})
	return out, err
}

// Heartbeat applies a heartbeat and, when it asks to wait and the answer
// holds no news, holds the answer until news is committed for the worker
// (its nudge), the wait (at most a heartbeat interval, so that liveness is
// unchanged) passes, or the client goes. On a nudge the heartbeat is
// applied again, so the answer reflects the news.
func (d *Dispatcher) Heartbeat(ctx context.Context, workerID string, req api.HeartbeatRequest) (api.HeartbeatResponse, error) {
	var out api.HeartbeatResponse
	var news bool
	var nudge chan struct{}
	again := false
	beat := func() error {
		return d.workerCall(ctx, workerID, func(tx *txn, wk *workerRec) {
			nudge = wk.nudge
			drain(nudge)
			held := req.Jobs
			if again {
				// The list is as old as the request: the worker also
				// holds what it was leased since.
				held = withCurrent(held, wk)
			}
			out = d.heartbeat(tx, wk, held, len(req.Jobs))
			news = wk.news(out)
		})
	}
	if err := beat(); err != nil || news || req.WaitMS == 0 {
		return out, err
	}
	timer := time.NewTimer(min(time.Duration(req.WaitMS)*time.Millisecond, d.cfg.Server.HeartbeatInterval.D()))
	defer timer.Stop()
	for {
		select {
		case <-nudge:
			again = true
			if err := beat(); err != nil || news {
				return out, err
			}
		case <-timer.C:
			return out, nil
		case <-ctx.Done():
			return out, nil
		case <-d.done:
			// The server is stopping: the beat was recorded, and the
			// worker learns the rest from its next one, elsewhere.
			return out, nil
		}
	}
}

// withCurrent adds to held the attempts wk holds by the server's records.
func withCurrent(held []api.JobAttempt, wk *workerRec) []api.JobAttempt {
	out := slices.Clone(held)
	listed := make(map[api.JobAttempt]bool, len(held))
	for _, a := range held {
		listed[api.JobAttempt{JobID: a.JobID, Attempt: a.Attempt}] = true
	}
	for _, rec := range sortedRecs(wk.jobs) {
		a := api.JobAttempt{JobID: rec.job.ID, Attempt: rec.job.Attempt}
		if !listed[a] {
			out = append(out, a)
		}
	}
	return out
}

// drain empties a nudge channel.
func drain(ch chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

// Complete applies the worker's reports of ended attempts; with leaseMax
// it also returns the leases made, in the same batch, into the slots the
// reports freed (the caller's slice, as Lease's).
func (d *Dispatcher) Complete(ctx context.Context, workerID string, results []api.Completion, leaseMax int) ([]api.ItemResult, []api.Lease, error) {
	out := make([]api.ItemResult, len(results))
	var owed *poller
	err := d.workerCall(ctx, workerID, func(tx *txn, wk *workerRec) {
		for i, c := range results {
			out[i] = d.complete(tx, wk, c)
		}
		if leaseMax > 0 {
			// Once the batch is durable, before long-polls are served: the
			// leases made in it (into the slots these results freed) go
			// back with this answer.
			owed = &poller{max: leaseMax, ch: make(chan []api.Lease, 1)}
			tx.then(func() { d.oweLeases(wk, owed) })
		}
	})
	if err != nil || owed == nil {
		return out, nil, err
	}
	select {
	case leases := <-owed.ch:
		return out, leases, nil
	case <-d.done:
		return out, nil, nil
	}
}

// AppendLogs stores the worker's log chunks; it returns how many it kept.
func (d *Dispatcher) AppendLogs(ctx context.Context, workerID string, chunks []store.LogChunk) (int, error) {
	accepted := 0
	err := d.workerCall(ctx, workerID, func(tx *txn, wk *workerRec) { accepted = d.appendLogs(tx, wk, chunks) })
	return accepted, err
}

// Deregister removes the worker, handing its unstarted and interrupted
// jobs back uncharged.
func (d *Dispatcher) Deregister(ctx context.Context, workerID string) error {
	return d.workerCall(ctx, workerID, func(tx *txn, wk *workerRec) { d.deregister(tx, wk) })
}

// MetricsSnapshot reads the state the metrics' gauges report; ok is false
// when the dispatcher does not answer (stopped, or busy past ctx).
func (d *Dispatcher) MetricsSnapshot(ctx context.Context) (metrics.Snapshot, bool) {
	var out metrics.Snapshot
	err := d.submit(ctx, func(tx *txn) { out = d.snapshot() })
	return out, err == nil
}
