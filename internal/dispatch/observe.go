package dispatch

import (
	"time"

	"github.com/fairwayhq/fairway/internal/metrics"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/tracing"
)

// Metrics of jobs are recorded once the batch that made the change is
// durable (tx.then), so that a batch that rolls back counts nothing.

// observe runs f with the metrics once the batch is durable, after its
// after-commit actions (settle).
func (d *Dispatcher) observe(tx *txn, f func(m *metrics.Metrics)) {
	if d.metrics == nil {
		return
	}
	tx.observed = append(tx.observed, f)
}

// noteStarted observes an attempt's wait from its enqueue, and the
// schedule lag of a scheduled job's first attempt.
func (d *Dispatcher) noteStarted(tx *txn, rec *jobRec, started time.Time) {
	j := &rec.job
	lane, typ, wait, lag := j.Lane, j.Type, started.Sub(j.EnqueuedAt), time.Duration(-1)
	if !j.ScheduledFor.IsZero() && j.ChargedAttempts() == 1 {
		lag = max(started.Sub(j.ScheduledFor), 0)
	}
	d.observe(tx, func(m *metrics.Metrics) { m.JobStarted(lane, typ, wait, lag) })
}

// noteAttemptEnded counts an ended attempt with its run time.
func (d *Dispatcher) noteAttemptEnded(tx *txn, rec *jobRec, e store.Execution) {
	lane, typ, outcome, class := rec.job.Lane, rec.job.Type, string(e.Outcome), string(e.FailureClass)
	ran := time.Duration(-1)
	if !e.StartedAt.IsZero() {
		ran = e.Duration
	}
	d.observe(tx, func(m *metrics.Metrics) { m.AttemptEnded(lane, typ, outcome, class, ran) })
	d.traceAttempt(tx, rec, e)
}

// traceAttempt writes the ended attempt's spans once the batch is
// durable (package tracing).
func (d *Dispatcher) traceAttempt(tx *txn, rec *jobRec, e store.Execution) {
	if !d.tracer.Enabled() || rec.job.TraceParent == "" {
		return
	}
	a := tracing.Attempt{
		TraceParent: rec.job.TraceParent, JobID: rec.job.ID, Type: rec.job.Type, Tenant: rec.job.Tenant, Lane: rec.job.Lane,
		Worker: e.WorkerID, Attempt: e.Attempt, LeasedAt: e.LeasedAt, StartedAt: e.StartedAt, FinishedAt: e.FinishedAt,
		Outcome: string(e.Outcome), FailureClass: string(e.FailureClass), Error: e.Error,
	}
	if e.Wait > 0 {
		a.ReadyAt = e.LeasedAt.Add(-e.Wait)
	}
	t := d.tracer
	tx.then(func() { t.AttemptEnded(a) })
}

// noteFinished counts a job in its final state.
func (d *Dispatcher) noteFinished(tx *txn, rec *jobRec, state store.State, class store.FailureClass) {
	lane, typ := rec.job.Lane, rec.job.Type
	d.observe(tx, func(m *metrics.Metrics) { m.JobFinished(lane, typ, string(state), string(class)) })
}

// Snapshot is the state the metrics' gauges read at scrape time: the
// unfinished jobs per lane and tenant, and the workers per state. ok is
// false when the dispatcher does not run.
func (d *Dispatcher) snapshot() metrics.Snapshot {
	type key struct{ lane, tenant string }
	counts := map[key]*metrics.LaneTenantCount{}
	var order []key
	for _, rec := range d.jobs {
		k := key{rec.job.Lane, rec.job.Tenant}
		c := counts[k]
		if c == nil {
			c = &metrics.LaneTenantCount{Lane: k.lane, Tenant: k.tenant}
			counts[k] = c
			order = append(order, k)
		}
		if rec.job.State == store.StateLeased || rec.job.State == store.StateRunning {
			c.Running++
		} else {
			c.Pending++
		}
	}
	out := metrics.Snapshot{Workers: map[string]int{}}
	for _, k := range order {
		out.Jobs = append(out.Jobs, *counts[k])
	}
	for _, wk := range d.workers {
		if wk.draining {
			out.Workers[string(store.WorkerDraining)]++
		} else {
			out.Workers[string(store.WorkerActive)]++
		}
	}
	return out
}
