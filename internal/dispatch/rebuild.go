package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
)

// rebuild loads the unfinished jobs and active workers from the store and
// rebuilds the engine, as at start. Workers get one lease TTL from now to
// call in. Repairs that need a write (a job whose worker is gone, a job
// whose dependency can no longer be met) are queued for the first batch.
func (d *Dispatcher) rebuild(ctx context.Context) error {
	if err := d.reset(); err != nil {
		return err
	}
	if err := d.loadLaneStates(ctx); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	lastID, err := d.st.EventLastID(ctx)
	if err != nil {
		return fmt.Errorf("rebuild: event ids: %w", err)
	}
	d.lastEventID = lastID
	now := d.clock.Now()
	workers, err := d.st.WorkerList(ctx)
	if err != nil {
		return fmt.Errorf("rebuild: workers: %w", err)
	}
	for _, w := range workers {
		d.noteSeen(w)
		if w.State == store.WorkerGone {
			continue
		}
		if err := d.addWorker(w, now); err != nil {
			return fmt.Errorf("rebuild: worker %s: %w", w.ID, err)
		}
	}
	jobs, err := d.st.JobListUnfinished(ctx)
	if err != nil {
		return fmt.Errorf("rebuild: jobs: %w", err)
	}
	for _, j := range jobs {
		if err := d.restoreJob(ctx, j); err != nil {
			return fmt.Errorf("rebuild: job %s: %w", j.ID, err)
		}
	}
	if err := d.loadSchedules(ctx); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if err := d.loadTokens(ctx, now); err != nil {
		return fmt.Errorf("rebuild: submit tokens: %w", err)
	}
	d.log.Info("dispatcher: state rebuilt", "jobs", len(jobs), "workers", len(d.workers), "schedules", len(d.scheds))
	return nil
}

func (d *Dispatcher) addWorker(w store.Worker, now time.Time) error {
	if err := d.eng.AddWorker(policy.Worker{ID: w.ID, Types: w.Types, Labels: w.Labels, Slots: w.Slots, Resources: w.Resources}); err != nil {
		return err
	}
	d.workers[w.ID] = &workerRec{w: w, lastSeen: now, jobs: map[string]*jobRec{}, draining: w.State == store.WorkerDraining,
		nudge: make(chan struct{}, 1)}
	return nil
}

func (d *Dispatcher) restoreJob(ctx context.Context, j store.Job) error {
	rec := &jobRec{job: j}
	d.jobs[j.ID] = rec
	d.byState.add(rec)
	d.byTenant[j.Tenant]++
	switch j.State {
	case store.StateLeased, store.StateRunning:
		return d.restoreRunning(rec)
	}
	deps, ok, err := d.liveDependencies(ctx, rec)
	if err != nil || !ok {
		return err
	}
	pj := policyJob(j)
	pj.DependsOn = deps
	now := d.clock.Now()
	if len(deps) == 0 && !j.RunAt.After(now) {
		// Became runnable while the server was down.
		d.pending = append(d.pending, func(tx *txn) { d.markRunnable(tx, rec) })
	}
	if err := d.eng.Submit(pj, now); err != nil {
		return err
	}
	if j.Held {
		return d.eng.Hold(j.ID, now)
	}
	return nil
}

// restoreRunning puts a leased or running job back on its worker, or, when
// the worker is gone, queues a repair that treats the lease as lost.
func (d *Dispatcher) restoreRunning(rec *jobRec) error {
	wk := d.workers[rec.job.WorkerID]
	if wk == nil {
		d.pending = append(d.pending, func(tx *txn) { d.leaseLost(tx, rec, "worker gone at restart") })
		return nil
	}
	at := rec.job.StartedAt
	if at.IsZero() {
		at = rec.job.UpdatedAt
	}
	if err := d.eng.Restore(policyJob(rec.job), wk.w.ID, at, 0); err != nil {
		return err
	}
	// The job row keeps the lease time with the leased event; without it
	// (leased before it did), started_at, the lease time or a reported
	// start, is the best bound the row keeps.
	rec.leasedAt, rec.deliveredAt, rec.restored = rec.job.LeasedAt, d.clock.Now(), true
	if rec.leasedAt.IsZero() {
		rec.leasedAt = at
	}
	rec.leaseTimeout = rec.job.Timeout
	rec.worker = wk
	wk.jobs[rec.job.ID] = rec
	return nil
}

// liveDependencies keeps the dependencies still unfinished; a finished one
// is checked against its condition, and an unmet one queues a repair that
// cancels the dependent (ok false: the job must not be queued).
func (d *Dispatcher) liveDependencies(ctx context.Context, rec *jobRec) ([]policy.Dependency, bool, error) {
	var live []policy.Dependency
	for _, dep := range rec.job.DependsOn {
		if _, ok := d.jobs[dep.JobID]; ok {
			live = append(live, policy.Dependency{JobID: dep.JobID, Condition: dep.Condition.Policy()})
			continue
		}
		done, err := d.st.JobGet(ctx, dep.JobID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, false, err
		}
		if err == nil && conditionMet(dep.Condition, done.State) {
			continue
		}
		depID := dep.JobID
		d.pending = append(d.pending, func(tx *txn) { d.dropDependent(tx, rec, depID) })
		return nil, false, nil
	}
	return live, true, nil
}

func conditionMet(c store.Condition, s store.State) bool {
	switch c {
	case store.CondFailure:
		return s == store.StateFailed
	case store.CondAny:
		return s.Terminal()
	}
	return s == store.StateSucceeded
}
