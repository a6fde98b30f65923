package worker

import (
	"context"
	"errors"

	"github.com/fairwayhq/fairway/api"
)

// Bounds of one complete request (the server takes 8 MiB).
const (
	maxCompleteBatch = 500
	maxCompleteBytes = 4 << 20
)

// bulkReport is the backlog of completions from which another report may
// go out while one is in flight. Under heavy load the server then applies
// one report while the other's batch is being made durable, instead of
// idling through every fsync and round trip (measured: +11-30% drained
// jobs per second in paired runs of fairway bench drain). Below it one
// report at a time is enough, and a second would only put more leases on
// the way while a higher-priority job may be arriving (it doubled the low
// jobs starting after a high one was accepted in fairway bench priority).
const bulkReport = 32

// reportsInFlight bounds the completion reports in flight at once: the
// one completeLoop sends, and those bulkCompleteLoop's copies send while a
// backlog of bulkReport or more waits. The server on SQLite works a
// report in three stages one after the other — the dispatcher's step, the
// transaction, the fsync — and each stage can hold a report of its own
// only while three are in flight: with two, one stage idles in every
// cycle (fairway bench drain, alternating pairs, three against two: work
// jobs/s 1.09x served on SQLite, 12 pairs, and 1.07x embedded, 7; on
// PostgreSQL, whose drain is bound by the CPUs, 1.03x served and 0.99x
// embedded, 5 pairs each). A fourth measured 0.95x against three.
const reportsInFlight = 3

// errNotAccepted stands for completions the server asked to send again.
var errNotAccepted = errors.New("some completions were not accepted, retrying")

// completeLoop sends completions. Each report waits up to BatchWindow for
// others to share its request, less when no job is left running, and not
// at all while the worker is saturated (every slot taken, the lease loop
// waiting for one): then the report is what brings the next jobs (it asks
// for as many leases as it frees slots), and reports sent at once batch
// by themselves, the completions that end while one is in flight going
// in the next. A worker with free slots has a lease request waiting at
// the server already, so its reports can wait for the window without
// delaying any job. The job's output
// is flushed first, so that the server has it before the job ends. A
// completion is retried until the server acknowledges it or refuses it
// (stale attempt); it is dropped without a word only when its attempt was
// revoked or its registration lost.
func (w *Worker) completeLoop(ctx context.Context) {
	fails := 0
	for w.completes.wait(ctx) {
		gather(ctx, w.opts.BatchWindow, w, func() bool {
			return w.completes.len() >= maxCompleteBatch || w.runningCount() == 0 || w.slots.saturated()
		})
		if ctx.Err() != nil {
			if n := w.completes.len(); n > 0 {
				w.log.Error("worker stopped with completions undelivered", "jobs", n)
			}
			return
		}
		failed := w.reportNext(ctx, 1)
		if failed == nil {
			fails = 0
			continue
		}
		d := w.backoff.delay(fails, failed)
		fails++
		w.log.Warn("completion report failed, retrying", "err", failed, "retry_in", d)
		if !sleep(ctx, d) {
			return
		}
	}
}

// bulkCompleteLoop sends another report while one or more are in flight,
// but only when bulkReport completions or more wait (see bulkReport); the
// worker runs reportsInFlight-1 of them beside completeLoop.
func (w *Worker) bulkCompleteLoop(ctx context.Context) {
	for w.completes.waitBulk(ctx) {
		if w.reporting.Load() == 0 {
			continue // completeLoop sends the first report
		}
		// Nothing is taken unless bulkReport wait (take checks it under
		// the queue's lock). A failed report is back in the queue for
		// completeLoop, which owns the retry back-off.
		_ = w.reportNext(ctx, bulkReport)
	}
}

// reportNext takes the next batch of completions, if atLeast or more
// wait, flushes the output first, and reports it, one request per
// session. It returns the error of a report whose completions are back in
// the queue to be retried.
func (w *Worker) reportNext(ctx context.Context, atLeast int) error {
	batch := w.pruneDropped(w.completes.take(atLeast, maxCompleteBatch, maxCompleteBytes, completionSize))
	if len(batch) == 0 {
		return nil
	}
	w.flushLogs(ctx)
	var failed error
	for _, group := range groupBy(batch, taskGen) {
		if err := w.sendCompletions(ctx, group); err != nil {
			failed = err
		}
	}
	return failed
}

// takingJobs reports whether the worker still leases jobs.
func (w *Worker) takingJobs() bool { return w.leaseCtx != nil && w.leaseCtx.Err() == nil }

// claimUnasked counts the slots of the leases that came back with a
// completion report and returns those to start. A worker that has stopped
// taking jobs leaves them: deregistering hands them back.
func (w *Worker) claimUnasked(leases []api.Lease) []api.Lease {
	if len(leases) == 0 || !w.takingJobs() {
		return nil
	}
	w.slots.take(len(leases))
	return leases
}

// pruneDropped forgets the tasks that were revoked meanwhile.
func (w *Worker) pruneDropped(ts []*task) []*task {
	kept := make([]*task, 0, len(ts))
	for _, t := range ts {
		if t.isDropped() {
			w.forget(t)
			continue
		}
		kept = append(kept, t)
	}
	return kept
}

// sendCompletions reports one session's completions. It returns an error
// when some must be retried; they are back at the head of the queue.
//
// While the worker takes jobs, the report also asks for as many new leases
// as it frees slots: the server answers with the jobs it leased to this
// worker in the same batch, which saves the lease request's round trip.
func (w *Worker) sendCompletions(ctx context.Context, batch []*task) error {
	sess := batch[0].sess
	leaseMax := 0
	if w.takingJobs() {
		leaseMax = len(batch)
	}
	var results []api.ItemResult
	var leases []api.Lease
	w.reporting.Add(1)
	err := w.call(ctx, func(ctx context.Context) (err error) {
		results, leases, err = w.client.CompleteAndLease(ctx, sess.id, completions(batch), leaseMax)
		return err
	})
	w.reporting.Add(-1)
	switch {
	case err == nil:
		// The new leases take their slots before the acknowledged jobs
		// free theirs, so that the lease loop does not ask for slots that
		// are already filled.
		leases = w.claimUnasked(leases)
		retry := w.applyCompleteResults(batch, results)
		w.launchAll(sess, leases)
		if len(retry) == 0 {
			return nil
		}
		w.completes.addFront(retry)
		return errNotAccepted
	case classify(err) == errGone:
		w.sessionLost(sess.gen)
	case classify(err) == errRetry && ctx.Err() == nil:
		w.completes.addFront(batch)
		return err
	case len(batch) > 1 && ctx.Err() == nil:
		// One bad item may spoil the request: try them one by one.
		w.log.Warn("completion report refused, reporting one by one", "err", err, "jobs", len(batch))
		return w.sendEach(ctx, batch)
	default:
		w.log.Error("completion not delivered", "job", batch[0].key.jobID, "attempt", batch[0].key.attempt, "err", err)
		w.forgetAll(batch)
	}
	return nil
}

func (w *Worker) sendEach(ctx context.Context, batch []*task) error {
	var failed error
	for _, t := range batch {
		if err := w.sendCompletions(ctx, []*task{t}); err != nil {
			failed = err
		}
	}
	return failed
}

// completionSize estimates the JSON size of a task's completion.
func completionSize(t *task) int {
	return 256 + len(t.completion.Result) + 2*len(t.completion.Error)
}

func completions(batch []*task) []api.Completion {
	out := make([]api.Completion, len(batch))
	for i, t := range batch {
		out[i] = t.completion
	}
	return out
}

// applyCompleteResults forgets the acknowledged and refused completions and
// returns those to send again. A 200 answer with no item for a job counts
// as an acknowledgement.
func (w *Worker) applyCompleteResults(batch []*task, results []api.ItemResult) (retry []*task) {
	byID := make(map[string]api.ItemResult, len(results))
	for _, r := range results {
		byID[r.JobID] = r
	}
	for _, t := range batch {
		r, ok := byID[t.key.jobID]
		switch {
		case !ok || r.OK || r.Error == nil:
			w.forget(t)
		case itemKind(r.Error) == errRetry:
			retry = append(retry, t)
		case itemKind(r.Error) == errStale:
			w.log.Info("completion refused: attempt no longer current",
				"job", t.key.jobID, "attempt", t.key.attempt, "code", r.Error.Code)
			w.forget(t)
		default:
			w.log.Error("completion refused", "job", t.key.jobID, "attempt", t.key.attempt,
				"code", r.Error.Code, "message", r.Error.Message)
			w.forget(t)
		}
	}
	return retry
}

func (w *Worker) forgetAll(ts []*task) {
	for _, t := range ts {
		w.forget(t)
	}
}
