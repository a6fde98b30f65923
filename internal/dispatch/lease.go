package dispatch

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/wire"
)

func (d *Dispatcher) leaseTTL() time.Duration { return d.cfg.Server.LeaseTTL.D() }

// outputLimit is the output kept of one of the job's attempts: its own
// limit, or the server's default for a job stored before it had one.
func (d *Dispatcher) outputLimit(rec *jobRec) int64 {
	if rec.job.OutputLimit > 0 {
		return rec.job.OutputLimit
	}
	def, _ := d.cfg.Server.OutputLimits()
	return int64(def)
}

// lease records the engine's admission of rec on wk: a new attempt, and
// the lease in the worker's mailbox, which it leaves once this batch is
// durable. The start is folded into the lease: the job is running from
// this write on, its started_at the lease time until the worker reports
// the real start (recordStart), and no separate start is needed.
func (d *Dispatcher) lease(tx *txn, rec *jobRec, wk *workerRec) {
	attempt := rec.job.Attempt + 1
	exp := tx.now.Add(d.leaseTTL())
	from := []store.State{rec.job.State}
	set := store.JobSet{State: store.Ptr(store.StateRunning), Attempt: &attempt, WorkerID: &wk.w.ID, LeaseExpiresAt: &exp, StartedAt: &tx.now}
	// The event is the one the job row gives back (store.LeasedEvent),
	// built once: the row holds it while the attempt lives.
	ev := tx.draw(store.LeasedEvent(tx.nextEventID(), rec.job.ID, attempt, rec.job.Tenant, tx.now, wk.w.ID))
	ev.Synthesised = true
	set.LeaseEventID, set.LeasedAt = &ev.ID, &tx.now
	if !d.transition(tx, rec, from, set) {
		return
	}
	rec.worker, rec.leasedAt, rec.deliveredAt = wk, tx.now, time.Time{}
	rec.held, rec.startReported, rec.restored, rec.preemptFor = false, false, false, ""
	rec.slaWarned, rec.slaViolated, rec.timedOut = false, false, false
	rec.leaseTimeout = rec.job.Timeout
	wk.jobs[rec.job.ID] = rec
	tx.add(ev)
	rec.outputBytes, rec.outputCut = 0, false
	l := api.Lease{Job: wire.Job(rec.job), Attempt: attempt, LeaseExpiresAt: exp.UTC(),
		TraceParent: d.tracer.AttemptParent(rec.job.TraceParent, rec.job.ID, attempt)}
	l.Job.OutputLimitBytes = d.outputLimit(rec)
	wk.mailbox = append(wk.mailbox, mailItem{lease: l, seq: tx.seq})
}

// deliver answers, once their leases may leave, the completion reports
// owed leases (oldest first), then the worker's long-poll.
func (d *Dispatcher) deliver(wk *workerRec) {
	kept := wk.owed[:0]
	for _, p := range wk.owed {
		if !d.answer(wk, p, true) {
			kept = append(kept, p)
		}
	}
	clear(wk.owed[len(kept):])
	wk.owed = kept
	if wk.poll != nil && len(wk.mailbox) > 0 && d.answer(wk, wk.poll, false) {
		wk.poll = nil
	}
}

// oweLeases answers a completion report's request for up to max leases,
// now or, when it is held back (see takeMail), at a later delivery.
func (d *Dispatcher) oweLeases(wk *workerRec, p *poller) {
	if !d.answer(wk, p, true) {
		wk.owed = append(wk.owed, p)
	}
}

// answer sends p the leases that may leave and reports whether it did;
// empty answers only when always.
func (d *Dispatcher) answer(wk *workerRec, p *poller, always bool) bool {
	if p.heldFor > d.durable {
		return false
	}
	out, heldFor := d.takeMail(wk, p.max, p.heldFor == 0)
	if heldFor > 0 {
		p.heldFor = heldFor
		return false
	}
	if len(out) == 0 && !always {
		return false
	}
	p.ch <- out
	return true
}

// takeMail takes up to max of the worker's leases that may leave (their
// batch is durable), highest priority first and otherwise in admission
// order, since the worker starts them in that order; leases no longer
// current (cancelled meanwhile) are dropped.
//
// With mayHold, when a lease of higher priority than one that may leave
// is in a batch not yet durable, nothing is taken and the batch to wait
// for is returned instead: the answer then carries both, and the worker
// starts the higher job first. Sent now, the lower jobs would start
// while the higher one, already accepted, waits for the next request.
func (d *Dispatcher) takeMail(wk *workerRec, max int, mayHold bool) ([]api.Lease, uint64) {
	var ready []int // indexes into the mailbox
	kept := 0
	for _, it := range wk.mailbox {
		if d.mailRec(wk, it) == nil {
			continue
		}
		wk.mailbox[kept] = it
		if it.seq <= d.durable {
			ready = append(ready, kept)
		}
		kept++
	}
	clear(wk.mailbox[kept:])
	wk.mailbox = wk.mailbox[:kept]
	if mayHold {
		if seq := d.higherOnTheWay(wk, ready); seq > 0 {
			return nil, seq
		}
	}
	if len(ready) == 0 {
		return nil, 0
	}
	slices.SortStableFunc(ready, func(a, b int) int {
		return cmp.Compare(wk.mailbox[b].lease.Job.Priority, wk.mailbox[a].lease.Job.Priority)
	})
	ready = ready[:min(len(ready), max)]
	out := make([]api.Lease, 0, len(ready))
	now := d.clock.Now()
	for _, i := range ready {
		l := wk.mailbox[i].lease
		d.jobs[l.Job.ID].deliveredAt = now
		out = append(out, l)
		wk.mailbox[i].sent = true
	}
	wk.mailbox = slices.DeleteFunc(wk.mailbox, func(it mailItem) bool { return it.sent })
	return out, 0
}

// higherOnTheWay returns the latest batch, not yet durable, holding a
// lease of wk's that outranks a ready one or, with none ready, that took
// a withdrawn lease's slot; 0 if there is none.
func (d *Dispatcher) higherOnTheWay(wk *workerRec, ready []int) uint64 {
	lowest := math.MaxInt
	for _, i := range ready {
		lowest = min(lowest, wk.mailbox[i].lease.Job.Priority)
	}
	var seq uint64
	for _, it := range wk.mailbox {
		if it.seq <= d.durable {
			continue
		}
		if (len(ready) > 0 && it.lease.Job.Priority > lowest) || (len(ready) == 0 && it.preempting) {
			seq = max(seq, it.seq)
		}
	}
	return seq
}

// mailRec returns the job of a mailbox item whose lease is still wk's live
// attempt, or nil for one cancelled, withdrawn or expired meanwhile.
func (d *Dispatcher) mailRec(wk *workerRec, it mailItem) *jobRec {
	if !d.current(wk, it.lease.Job.ID, it.lease.Attempt) {
		return nil
	}
	return d.jobs[it.lease.Job.ID]
}

// current reports whether (id, attempt) is the live attempt held by wk.
func (d *Dispatcher) current(wk *workerRec, id string, attempt int) bool {
	rec := d.jobs[id]
	return rec != nil && rec.worker == wk && rec.job.Attempt == attempt
}

// openPoll registers a long-poll; a previous one of the same worker is
// answered empty.
func (d *Dispatcher) openPoll(wk *workerRec, p *poller) {
	if wk.poll != nil {
		wk.poll.ch <- nil
	}
	wk.poll = p
	d.deliver(wk)
}

// withdrawPoll ends a long-poll that timed out, unless it was answered.
func (d *Dispatcher) withdrawPoll(wk *workerRec, p *poller) {
	if wk != nil && wk.poll == p {
		wk.poll = nil
		p.ch <- nil
	}
}

func (d *Dispatcher) closePollers() {
	for _, wk := range d.workers {
		wk.closePolls()
	}
}

// closePolls answers the worker's waiting requests empty.
func (wk *workerRec) closePolls() {
	if wk.poll != nil {
		wk.poll.ch <- nil
		wk.poll = nil
	}
	for _, p := range wk.owed {
		p.ch <- nil
	}
	wk.owed = nil
}

// startAttempt applies an older worker's start call: the job already runs
// since its lease, and the call reports the attempt's real start.
func (d *Dispatcher) startAttempt(tx *txn, wk *workerRec, a api.JobAttempt) api.ItemResult {
	rec := d.jobs[a.JobID]
	if rec == nil || rec.worker != wk || rec.job.Attempt != a.Attempt {
		return staleResult(a.JobID, a.Attempt)
	}
	rec.held = true
	if !d.recordStart(tx, rec, a.StartedAt) {
		return staleResult(a.JobID, a.Attempt)
	}
	return api.ItemResult{JobID: a.JobID, OK: true}
}

// recordStart records the real start of rec's attempt the first time its
// worker reports it (reported nil: the server's clock): started_at moves
// from the lease time to it (clampStart), the started event is written
// and the wait is observed. Later reports change nothing. It reports false
// when the store refused the write.
func (d *Dispatcher) recordStart(tx *txn, rec *jobRec, reported *time.Time) bool {
	if rec.startReported {
		return true
	}
	started := clampStart(reported, rec.leasedAt, tx.now)
	if rec.restored && started.Equal(rec.job.StartedAt) {
		rec.startReported = true // reported before the restart
		return true
	}
	if !started.Equal(rec.job.StartedAt) || rec.job.State == store.StateLeased {
		// A job leased by an older server is still in state leased.
		set := store.JobSet{State: store.Ptr(store.StateRunning), StartedAt: &started}
		if !d.transition(tx, rec, []store.State{store.StateRunning, store.StateLeased}, set) {
			return false
		}
	}
	rec.startReported = true
	tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventStarted, "worker:"+rec.worker.w.ID,
		map[string]any{"started_at": started.UTC()})
	d.noteStarted(tx, rec, started)
	return true
}

// clampStart is the start time to store for a start reported by a worker
// (nil: now). A worker's clock is not the server's, so the report is
// clamped to what the server knows: no earlier than the lease (the job
// cannot start before it) and no later than now (it has started, or
// ended). Stored times have microsecond precision.
func clampStart(reported *time.Time, leasedAt, now time.Time) time.Time {
	t := now
	if reported != nil && !reported.IsZero() {
		t = *reported
	}
	if !leasedAt.IsZero() && t.Before(leasedAt) {
		t = leasedAt
	}
	if t.After(now) {
		t = now
	}
	return t.UTC().Truncate(time.Microsecond)
}

func staleResult(id string, attempt int) api.ItemResult {
	return api.ItemResult{JobID: id, Error: &api.ErrorBody{Code: api.CodeStaleAttempt,
		Message: fmt.Sprintf("attempt %d of job %s is not current: the lease was revoked or expired", attempt, id)}}
}

// heartbeat extends the worker's liveness and tells it which of the jobs it
// holds must be cancelled or are no longer its own. It also reconciles the
// other way (reconcile).
//
// The first listed of held are the worker's own list (the rest, leased to
// it since it sent the request, count as listed but not as held: the
// worker may never have received them). An attempt of its own list shows
// the worker holds it, and one that carries started_at reports its real
// start: a job that runs longer than a heartbeat interval has its
// started_at corrected from the lease time before it ends (recordStart).
func (d *Dispatcher) heartbeat(tx *txn, wk *workerRec, held []api.JobAttempt, listed int) api.HeartbeatResponse {
	resp := api.HeartbeatResponse{LeaseExpiresAt: tx.now.Add(d.leaseTTL()).UTC()}
	d.reconcile(tx, wk, held)
	for i, a := range held {
		rec := d.jobs[a.JobID]
		current := rec != nil && rec.worker == wk && rec.job.Attempt == a.Attempt
		if current && i < listed {
			rec.held = true
			if a.StartedAt != nil && !d.recordStart(tx, rec, a.StartedAt) {
				current = false
			}
		}
		switch {
		case !current:
			resp.Revoked = append(resp.Revoked, api.JobAttempt{JobID: a.JobID, Attempt: a.Attempt})
		case rec.job.CancelRequested:
			resp.Cancel = append(resp.Cancel, api.JobAttempt{JobID: a.JobID, Attempt: a.Attempt})
		case rec.preemptFor != "":
			resp.Preempt = append(resp.Preempt, api.JobAttempt{JobID: a.JobID, Attempt: a.Attempt})
		case rec.job.Timeout != rec.leaseTimeout:
			resp.Deadlines = append(resp.Deadlines, api.Deadline{JobID: a.JobID, Attempt: a.Attempt, TimeoutMS: rec.job.Timeout.Milliseconds()})
		}
	}
	return resp
}

// news says whether resp tells the worker something its previous
// heartbeat answer did not, and remembers resp's news for the next one.
func (wk *workerRec) news(resp api.HeartbeatResponse) bool {
	var b strings.Builder
	for _, a := range resp.Cancel {
		fmt.Fprintf(&b, "c%s/%d;", a.JobID, a.Attempt)
	}
	for _, a := range resp.Revoked {
		fmt.Fprintf(&b, "r%s/%d;", a.JobID, a.Attempt)
	}
	for _, a := range resp.Preempt {
		fmt.Fprintf(&b, "p%s/%d;", a.JobID, a.Attempt)
	}
	for _, d := range resp.Deadlines {
		fmt.Fprintf(&b, "d%s/%d=%d;", d.JobID, d.Attempt, d.TimeoutMS)
	}
	key := b.String()
	changed := key != "" && key != wk.lastNews
	wk.lastNews = key
	return changed
}

// execution fills the current attempt's execution with the identity
// fields from the record and the attempt's events. It is written once,
// when the attempt ends (an execution row, or held by the job row:
// holdAttempt); while it runs, the job row holds what the execution
// would, its events included (moveAttemptEvents).
func (d *Dispatcher) execution(tx *txn, rec *jobRec, e store.Execution) store.Execution {
	e.JobID, e.Attempt = rec.job.ID, rec.job.Attempt
	if rec.worker != nil {
		e.WorkerID = rec.worker.w.ID
	}
	e.LeasedAt = rec.leasedAt
	e.Wait = waitBeforeLease(rec)
	if e.StartedAt.IsZero() && !rec.undelivered() {
		// The job row's started_at: the reported start, or the lease
		// time when the attempt ended before its worker reported one. A
		// lease that never left the server has none.
		e.StartedAt = rec.job.StartedAt
	}
	moveAttemptEvents(tx, rec, &e)
	return e
}

// waitBeforeLease is how long the attempt waited for its lease: from the
// later of its enqueue and its run-at time; 0 when it has no lease.
func waitBeforeLease(rec *jobRec) time.Duration {
	if rec.leasedAt.IsZero() {
		return 0
	}
	ready := rec.job.EnqueuedAt
	if rec.job.RunAt.After(ready) {
		ready = rec.job.RunAt
	}
	if ready.IsZero() {
		return 0
	}
	return max(rec.leasedAt.Sub(ready), 0)
}

// reconcile handles the attempts handed to the worker more than a heartbeat
// interval ago that it does not list: it holds every attempt from the
// moment it receives the lease until its completion is acknowledged, so
// such an attempt is not running there. One the worker never showed it
// held (no heartbeat listed it, no report named it) never reached it (its
// lease was committed but the answer was lost, e.g. the server crashed
// before sending it): it goes back to the queue without being charged
// (handBack), or ends cancelled if a cancel was asked meanwhile. One the
// worker held was lost on the worker and ends as lost. After a restart no
// attempt counts as held until its worker lists it again.
func (d *Dispatcher) reconcile(tx *txn, wk *workerRec, held []api.JobAttempt) {
	listed := make(map[api.JobAttempt]bool, len(held))
	for _, a := range held {
		listed[api.JobAttempt{JobID: a.JobID, Attempt: a.Attempt}] = true
	}
	grace := d.cfg.Server.HeartbeatInterval.D()
	for _, rec := range sortedRecs(wk.jobs) {
		if rec.deliveredAt.IsZero() || tx.now.Sub(rec.deliveredAt) <= grace {
			continue
		}
		switch {
		case listed[api.JobAttempt{JobID: rec.job.ID, Attempt: rec.job.Attempt}]:
		case !rec.held && rec.job.CancelRequested:
			d.finish(tx, rec, store.StateCancelled, attemptEnd{outcome: store.OutcomeCancelled, class: store.FailCancelled,
				err: "cancelled; the lease never reached the worker", started: rec.job.StartedAt, actor: "system"})
		case !rec.held:
			d.handBack(tx, rec, "the lease never reached the worker")
		default:
			d.leaseLost(tx, rec, "the worker does not hold this attempt")
		}
	}
}
