package worker

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// shutdown is the graceful stop, once no more jobs are leased: it waits for
// the running jobs until drainCtx is done, cancels the rest (they are
// handed back, not reported, unless they still succeed), delivers the
// completions and output, stops the heartbeats and deregisters. It
// returns an error if jobs had to be cancelled.
func (w *Worker) shutdown(drainCtx context.Context, stopHeartbeats func()) error {
	w.closeSessions()
	if jobs := w.runningJobs(); len(jobs) > 0 {
		until := "until Stop's context ends"
		if dl, ok := drainCtx.Deadline(); ok {
			until = "up to " + time.Until(dl).Round(time.Second).String()
		}
		w.log.Warn("stopping: leasing no more jobs; waiting "+until+" for the running jobs to finish (a forced stop hands them back uncharged)",
			"running", len(jobs), "jobs", strings.Join(jobs, ","))
	} else {
		w.log.Info("stopping: leasing no more jobs", "running", 0)
	}
	var err error
	if !w.waitUntil(drainCtx, func() bool { return w.running == 0 }) {
		n := w.cancelRunning(ErrShutdown)
		err = fmt.Errorf("worker: %d running jobs cancelled when the drain ended: %w", n, context.Cause(drainCtx))
		w.log.Warn("drain ended; cancelling running jobs", "jobs", n)
		w.waitBounded(w.killWait, "jobs ignored their cancellation; abandoning them",
			func() bool { return w.running == 0 })
	}
	w.waitBounded(w.flushWait, "completions not delivered", func() bool { return w.unacked == 0 })
	flushCtx, cancel := context.WithTimeout(w.netCtx, w.flushWait)
	w.flushLogs(flushCtx)
	cancel()
	stopHeartbeats()
	w.deregister()
	return err
}

// waitBounded waits up to d for cond (called under w.mu), logging msg with
// the counters if it does not hold by then.
func (w *Worker) waitBounded(d time.Duration, msg string, cond func() bool) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if !w.waitUntil(ctx, cond) {
		w.mu.Lock()
		running, unacked := w.running, w.unacked
		w.mu.Unlock()
		w.log.Error(msg, "running", running, "unacknowledged", unacked)
	}
}

// deregister tells the server the worker is leaving; it releases the jobs
// still held for another attempt.
func (w *Worker) deregister() {
	sess := w.currentSession()
	if !sess.valid() {
		return
	}
	ctx, cancel := context.WithTimeout(w.netCtx, deregisterWait)
	defer cancel()
	err := w.retry(ctx, "deregister", func() error {
		return w.call(ctx, func(ctx context.Context) error { return w.client.Deregister(ctx, sess.id) })
	})
	if err != nil && classify(err) != errGone {
		w.log.Warn("deregister failed; the server will expire this worker", "err", err)
		return
	}
	w.log.Info("deregistered", "worker_id", sess.id)
}

// runningJobs lists the ids of the jobs whose handler has not returned.
func (w *Worker) runningJobs() []string {
	w.mu.Lock()
	ts := make([]*task, 0, len(w.held))
	for _, t := range w.held {
		ts = append(ts, t)
	}
	w.mu.Unlock()
	var ids []string
	for _, t := range ts {
		if !t.isFinished() {
			ids = append(ids, t.key.jobID)
		}
	}
	sort.Strings(ids)
	return ids
}
