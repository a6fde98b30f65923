package dispatch

import (
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/metrics"
	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/wire"
)

// attemptEnd is how an attempt ended, whoever observed it.
type attemptEnd struct {
	outcome  store.Outcome
	class    store.FailureClass
	exitCode *int
	err      string
	result   []byte
	started  time.Time
	duration time.Duration // measured by the worker when it says so
	usage    store.Usage   // measured by the worker when it says so
	actor    string
	// recordStart: the start was first reported with this end; the job
	// row's started_at takes it in the attempt's final write.
	recordStart bool
}

// complete applies a worker's report of an attempt's end.
func (d *Dispatcher) complete(tx *txn, wk *workerRec, c api.Completion) api.ItemResult {
	rec := d.jobs[c.JobID]
	if rec == nil || rec.worker != wk || rec.job.Attempt != c.Attempt {
		return staleResult(c.JobID, c.Attempt)
	}
	if bad := checkSnooze(c); bad != nil {
		return *bad
	}
	end := attemptEnd{
		outcome: store.Outcome(c.Outcome), class: store.FailureClass(c.FailureClass),
		exitCode: c.ExitCode, err: c.Error, result: c.Result, actor: "worker:" + wk.w.ID,
	}
	rec.held = true
	if !rec.startReported {
		// The completion carries the real start of an attempt whose start
		// no heartbeat reported: record it with the end, in this write.
		rec.startReported = true
		end.started = clampStart(c.StartedAt, rec.leasedAt, tx.now)
		end.recordStart = !(rec.restored && end.started.Equal(rec.job.StartedAt))
	} else {
		end.started = rec.job.StartedAt
	}
	if c.StartedAt != nil && c.FinishedAt != nil && !c.FinishedAt.Before(*c.StartedAt) {
		end.duration = c.FinishedAt.Sub(*c.StartedAt)
	}
	end.usage = storeUsage(c.Usage)
	if end.started.IsZero() || end.started.After(tx.now) {
		end.started = tx.now
	}
	// The store keeps microseconds: so does the started event's detail,
	// which the execution row gives back (moveAttemptEvents).
	end.started = end.started.Truncate(time.Microsecond)
	if end.outcome == store.OutcomeFailed && end.class == "" {
		end.class = store.FailExitCode
	}
	if end.recordStart && (c.Outcome == api.OutcomeSnoozed || c.Outcome == api.OutcomePreempted) {
		// Requeued below, with no execution row of this write to hold it:
		// the started event is a row.
		tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventStarted, end.actor, map[string]any{"started_at": end.started.UTC()})
		d.noteStarted(tx, rec, end.started)
		end.recordStart = false
	}
	if c.Outcome == api.OutcomeSnoozed {
		if rec.job.CancelRequested {
			end.outcome = store.OutcomeCancelled // ends below, as cancelled
		} else {
			d.snooze(tx, rec, end, time.Duration(c.SnoozeMS)*time.Millisecond)
			return api.ItemResult{JobID: c.JobID, OK: true}
		}
	}
	if c.Outcome == api.OutcomePreempted && !rec.job.CancelRequested {
		// A job cancelled while it was being preempted ends as cancelled
		// below (endAttempt), instead of going back to the queue.
		d.requeuePreempted(tx, rec, end)
		return api.ItemResult{JobID: c.JobID, OK: true}
	}
	if end.recordStart {
		// Reported with this completion: the execution row this
		// completion writes holds the started event (lateStart).
		d.lateStart(tx, rec, wk, end)
		d.noteStarted(tx, rec, end.started)
	}
	if end.outcome == store.OutcomeCancelled {
		end.class = store.FailCancelled
	}
	if end.class == store.FailTimeout {
		d.recordSLAViolation(tx, rec, tx.now.Sub(end.started))
	}
	if c.OutputDroppedBytes > 0 {
		tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventOutputTruncated, end.actor,
			map[string]any{"dropped_bytes": c.OutputDroppedBytes, "limit_bytes": d.outputLimit(rec), "by": "worker"})
	}
	d.endAttempt(tx, rec, end)
	return api.ItemResult{JobID: c.JobID, OK: true}
}

// endAttempt decides what an ended attempt means for the job: success,
// cancel, a retry, or a final failure.
func (d *Dispatcher) endAttempt(tx *txn, rec *jobRec, end attemptEnd) {
	if rec.timedOut && end.outcome != store.OutcomeSucceeded {
		end.outcome, end.class = store.OutcomeFailed, store.FailTimeout
	}
	switch {
	case end.outcome == store.OutcomeSucceeded:
		d.finish(tx, rec, store.StateSucceeded, end)
	case end.outcome == store.OutcomeCancelled || (rec.job.CancelRequested && !rec.timedOut):
		end.outcome, end.class = store.OutcomeCancelled, store.FailCancelled
		d.finish(tx, rec, store.StateCancelled, end)
	case d.retryable(rec, end.class):
		d.retry(tx, rec, end)
	default:
		d.finish(tx, rec, store.StateFailed, end)
	}
}

// defaultRetryOn is what is retried when a job's policy names nothing.
var defaultRetryOn = []store.FailureClass{store.FailExitCode, store.FailTimeout, store.FailKilled, store.FailOOM, store.FailLostWorker}

func (d *Dispatcher) retryable(rec *jobRec, class store.FailureClass) bool {
	if rec.job.ChargedAttempts() >= rec.job.MaxAttempts {
		return false
	}
	on := rec.job.Retry.RetryOn
	if len(on) == 0 {
		on = defaultRetryOn
	}
	for _, c := range on {
		if c == class {
			return true
		}
	}
	return false
}

// retry puts the job in retry_wait until its back-off has passed.
func (d *Dispatcher) retry(tx *txn, rec *jobRec, end attemptEnd) {
	runAt := tx.now.Add(d.backoff(rec.job.Retry, rec.job.Attempt))
	d.writeEnd(tx, rec, end)
	set := store.JobSet{
		State: store.Ptr(store.StateRetryWait), RunAt: &runAt, EnqueuedAt: &runAt,
		WorkerID: store.Ptr(""), LastError: &end.err, FailureClass: &end.class,
		CancelRequested: store.Ptr(false),
	}
	if end.exitCode != nil {
		set.ExitCode = end.exitCode
	}
	set.StartedAt = reportedStart(rec, end)
	if !d.transition(tx, rec, []store.State{store.StateLeased, store.StateRunning}, set) {
		return
	}
	d.releaseFromWorker(tx, rec, policy.Released)
	tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventRetryScheduled, end.actor,
		map[string]any{"class": end.class, "run_at": runAt.UTC(), "error": end.err})
	if err := d.eng.Submit(policyJob(rec.job), tx.now); err != nil {
		tx.fatal(fmt.Errorf("requeue %s: %w", rec.job.ID, err))
	}
}

// DefaultMaxBackoff caps exponential back-off when the retry policy sets no
// max_delay: the delay doubles from the policy's delay up to this.
const DefaultMaxBackoff = time.Hour

// backoff is the delay before attempt+1.
func (d *Dispatcher) backoff(p store.RetryPolicy, attempt int) time.Duration {
	return backoffDelay(p, attempt, d.rng.Int64N)
}

// backoffDelay is the delay before attempt+1 under p: the policy's delay
// (fixed), zero (immediate), or delay·2^(attempt-1) capped at max_delay, else
// at DefaultMaxBackoff (exponential). With jitter the delay is drawn
// uniformly from [delay/2, delay]; randN(n) returns a number in [0, n).
func backoffDelay(p store.RetryPolicy, attempt int, randN func(n int64) int64) time.Duration {
	delay := p.Delay
	switch p.Kind {
	case store.RetryImmediate:
		return 0
	case store.RetryExponential:
		ceiling := p.MaxDelay
		if ceiling <= 0 {
			ceiling = DefaultMaxBackoff
		}
		for i := 1; i < attempt && delay < ceiling; i++ {
			delay *= 2
		}
		delay = min(delay, ceiling)
	}
	if p.MaxDelay > 0 && delay > p.MaxDelay {
		delay = p.MaxDelay
	}
	if p.Jitter && delay > 0 {
		half := delay / 2
		delay = half + time.Duration(randN(int64(delay-half)+1))
	}
	return delay
}

// reportedStart is the start time to write on the job row with the
// attempt's end when the end brought the first report of the start, so
// that the job shows when its last attempt started as its execution does;
// none (zero) for a lease that never left the server; nil otherwise (the
// row holds it already).
func reportedStart(rec *jobRec, end attemptEnd) *time.Time {
	if rec.undelivered() {
		return &time.Time{}
	}
	if !end.recordStart {
		return nil
	}
	started := end.started
	return &started
}

// finish ends the job for good.
func (d *Dispatcher) finish(tx *txn, rec *jobRec, state store.State, end attemptEnd) {
	running := rec.job.State == store.StateLeased || rec.job.State == store.StateRunning
	row := rec.job // the job row as stored: the attempt's end moves its events in memory
	var exec store.Execution
	if running {
		exec = d.endedExecution(tx, rec, end)
	}
	set := store.JobSet{State: &state, FinishedAt: &tx.now, LastError: &end.err, CancelRequested: store.Ptr(false)}
	if end.class != "" {
		set.FailureClass = &end.class
	}
	if end.exitCode != nil {
		set.ExitCode = end.exitCode
	}
	if end.result != nil {
		set.Result = &end.result
	}
	set.StartedAt = reportedStart(rec, end)
	// The outcome event's id is drawn once the transition is made; the
	// execution takes it first, wherever it is kept.
	ev, want := outcomeEvents(tx, rec, state, end, exec, running)
	if running {
		if sameEvent(ev, want) {
			exec.EndEventID = ev.ID
		}
		if !holdAttempt(rec, row, &set, exec, tx.now) {
			tx.execs = append(tx.execs, exec)
		}
	}
	from := []store.State{rec.job.State}
	if !d.transition(tx, rec, from, set) {
		return
	}
	ev = tx.draw(ev)
	if running {
		tx.keep(ev, want) // the outcome event of exec, which the end event id does not change
	} else {
		tx.add(ev)
	}
	d.noteFinished(tx, rec, state, end.class)
	var dropped []policy.Dropped
	if running {
		dropped = d.releaseFromWorker(tx, rec, engineOutcome(state))
	} else {
		var err error
		if dropped, err = d.eng.Cancel(rec.job.ID, tx.now); err != nil {
			tx.fatal(fmt.Errorf("engine cancel %s: %w", rec.job.ID, err))
		}
	}
	d.forget(tx, rec)
	for _, dr := range dropped {
		if dep := d.jobs[dr.JobID]; dep != nil {
			d.dropDependent(tx, dep, dr.DependencyID)
		}
	}
}

// releaseFromWorker ends the attempt in the engine and detaches it. A
// leased or running job without a worker was found at restart with its
// worker gone: it was never restored into the engine, so there is nothing
// to end there.
func (d *Dispatcher) releaseFromWorker(tx *txn, rec *jobRec, out policy.Outcome) []policy.Dropped {
	if rec.worker == nil {
		return nil
	}
	delete(rec.worker.jobs, rec.job.ID)
	rec.worker = nil
	dropped, err := d.eng.Finish(rec.job.ID, tx.now, out)
	if err != nil {
		tx.fatal(fmt.Errorf("engine finish %s: %w", rec.job.ID, err))
	}
	return dropped
}

// forget drops a finished job from the index and wakes its waiters once
// the transaction commits (a job without waiters has none to wake: its
// answer is not built).
func (d *Dispatcher) forget(tx *txn, rec *jobRec) {
	delete(d.jobs, rec.job.ID)
	d.byState.remove(rec)
	if rec.job.ScheduleID != "" {
		d.scheduledJobEnded(tx, rec)
	}
	d.byTenant[rec.job.Tenant]--
	if d.byTenant[rec.job.Tenant] <= 0 {
		delete(d.byTenant, rec.job.Tenant)
	}
	if len(d.waiters[rec.job.ID]) == 0 {
		return // none can come: addWaiter wants the job in the index
	}
	job := wire.Job(rec.job)
	tx.then(func() {
		for _, ch := range d.waiters[job.ID] {
			ch <- job
		}
		delete(d.waiters, job.ID)
	})
}

// writeEnd records the attempt's execution with its outcome and SLA as
// an execution row.
func (d *Dispatcher) writeEnd(tx *txn, rec *jobRec, end attemptEnd) {
	tx.execs = append(tx.execs, d.endedExecution(tx, rec, end))
}

// endedExecution is the attempt's execution with its outcome and SLA,
// its events moved from the job row (moveAttemptEvents), not yet written.
func (d *Dispatcher) endedExecution(tx *txn, rec *jobRec, end attemptEnd) store.Execution {
	e := store.Execution{
		StartedAt: end.started, FinishedAt: tx.now, Outcome: end.outcome, ExitCode: end.exitCode,
		FailureClass: end.class, Error: end.err, Duration: end.duration, Usage: end.usage,
	}
	if e.Duration == 0 && !end.started.IsZero() {
		e.Duration = tx.now.Sub(end.started)
	}
	if e.Outcome == store.OutcomeFailed && e.FailureClass == store.FailTimeout {
		e.Outcome = store.OutcomeTimeout
	}
	e.SLAMet, e.SLAViolationPct = slaOf(rec.job, e.Duration)
	d.resultPending(tx, rec, &e)
	e = d.execution(tx, rec, e)
	d.noteAttemptEnded(tx, rec, e)
	return e
}

// storeUsage is the stored form of a worker's usage report (checked by
// the server: no negative figure, a known source).
func storeUsage(u *api.Usage) store.Usage {
	if u == nil {
		return store.Usage{}
	}
	return store.Usage{
		CPUUser: time.Duration(u.CPUUserUS) * time.Microsecond, CPUSystem: time.Duration(u.CPUSystemUS) * time.Microsecond,
		PeakRSSBytes: u.PeakRSSBytes, Source: u.Source,
	}
}

// slaOf says whether a run of duration met the job's SLA: within its max
// time, and by how much it passed its expected time, in percent.
func slaOf(j store.Job, dur time.Duration) (*bool, float64) {
	if j.Timeout == 0 && j.Expected == 0 {
		return nil, 0
	}
	met := j.Timeout == 0 || dur <= j.Timeout
	var pct float64
	if j.Expected > 0 && dur > j.Expected {
		pct = float64(dur-j.Expected) / float64(j.Expected) * 100
		if j.Timeout == 0 {
			met = false
		}
	}
	return &met, pct
}

// leaseLost ends an attempt whose worker vanished.
func (d *Dispatcher) leaseLost(tx *txn, rec *jobRec, reason string) {
	end := attemptEnd{outcome: store.OutcomeLost, class: store.FailLostWorker, err: reason, started: rec.job.StartedAt, actor: "system"}
	if rec.undelivered() {
		end.started = time.Time{} // the lease never left the server
	}
	tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventLeaseExpired, "system", map[string]string{"reason": reason})
	d.observe(tx, func(m *metrics.Metrics) { m.LeaseExpired() })
	d.endAttempt(tx, rec, end)
}

// dropDependent cancels a job whose dependency ended in a way that can
// never satisfy it. The engine has already dropped it.
func (d *Dispatcher) dropDependent(tx *txn, rec *jobRec, depID string) {
	msg := "dependency " + depID + " did not end as required"
	set := store.JobSet{State: store.Ptr(store.StateCancelled), FinishedAt: &tx.now, LastError: &msg}
	if !d.transition(tx, rec, []store.State{rec.job.State}, set) {
		return
	}
	tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventDependencyFailed, "system", map[string]string{"dependency": depID})
	d.forget(tx, rec)
}

func terminalEvent(s store.State) store.EventType {
	switch s {
	case store.StateSucceeded:
		return store.EventSucceeded
	case store.StateCancelled:
		return store.EventCancelled
	}
	return store.EventFailed
}

func engineOutcome(s store.State) policy.Outcome {
	switch s {
	case store.StateSucceeded:
		return policy.Succeeded
	case store.StateCancelled:
		return policy.Cancelled
	}
	return policy.Failed
}

func eventDetail(end attemptEnd) map[string]any {
	m := map[string]any{}
	if end.class != "" {
		m["class"] = end.class
	}
	if end.exitCode != nil {
		m["exit_code"] = *end.exitCode
	}
	if end.err != "" {
		m["error"] = end.err
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// outcomeEvents builds the event an attempt's end records (ev) and, for
// an attempt that ran, the outcome event its execution exec gives back
// (want), each once: ev shares want's detail when it says the same.
func outcomeEvents(tx *txn, rec *jobRec, state store.State, end attemptEnd, exec store.Execution, running bool) (ev, want store.Event) {
	if running {
		want = store.OutcomeEvent(tx.nextEventID(), rec.job.Tenant, exec)
		if exec.FailureClass == end.class && exec.Error == end.err && sameExitCode(exec.ExitCode, end.exitCode) {
			return store.Event{ID: want.ID, JobID: rec.job.ID, Attempt: rec.job.Attempt, Tenant: rec.job.Tenant,
				Type: terminalEvent(state), At: tx.now, Actor: end.actor, Detail: want.Detail}, want
		}
	}
	return tx.peekEvent(rec.job.ID, rec.job.Attempt, rec.job.Tenant, terminalEvent(state), end.actor, eventDetail(end)), want
}

// sameExitCode reports whether two exit codes are the same (nil: none).
func sameExitCode(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
