package dispatch

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/metrics"
	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/wire"
)

// submitted is the outcome of one spec of a submit.
type submitted struct {
	// job is the job answered: the new job's record, or a copy of a
	// duplicate's original as it was then; nil when none.
	job          *store.Job
	rec          *jobRec // nil when deduplicated
	deduplicated bool
	warning      string // said in the answer (no registered worker can run it now)
	err          error  // a client error (*FieldError, *QuotaError)
	// uniqueMatch is the rule that deduplicated it, if a unique rule did.
	uniqueMatch *api.UniqueMatch
}

// checkRunnable applies server.unrunnable to a job that no registered
// worker could run now (type, labels, capacity): by default it is
// accepted, with a warning for the answer; refuse_unseen refuses it
// unless a worker that could run it registered before (it may be
// restarting, as in a rolling deploy); refuse refuses it. A job without
// a command is refused unless some worker, registered or seen before,
// has a handler for its type.
func (d *Dispatcher) checkRunnable(j store.Job, idx int, batch bool) (string, error) {
	mode := d.cfg.Server.UnrunnablePolicy()
	// prefix names the job in a batch's answer; formatted only for one,
	// as most jobs of a batch need none.
	prefix := func() string {
		if !batch {
			return ""
		}
		return "jobs[" + strconv.Itoa(idx) + "]: "
	}
	if len(j.Command) == 0 && !d.cfg.Server.AcceptUnrunnable && !d.someWorkerRunsWithoutCommand(j.Type) {
		if mode == config.UnrunnableRefuse || !d.seenRunsWithoutCommand(j.Type) {
			e := badField("command", "the job has no command, and no registered worker has a handler for type %q that runs jobs without one: "+
				`give the command to run ("command": ["echo","hi"]; with the CLI, after --: fairway submit %s -- echo hi)`, j.Type, j.Type)
			if batch {
				e.Field = fmt.Sprintf("jobs[%d].command", idx)
			}
			return "", e
		}
		return prefix() + fmt.Sprintf("no registered worker has a handler for type %q now; one that had registered before (it may be restarting): "+
			"the job is queued (reason no_compatible_worker) and starts once such a worker registers", j.Type), nil
	}
	ok, why := d.eng.Feasible(policyJob(j))
	if ok {
		return "", nil
	}
	seen := d.seenCouldRun(j)
	if mode == config.UnrunnableRefuse || (mode == config.UnrunnableRefuseUnseen && !seen) {
		return "", &UnrunnableError{prefix() + why + "; start a worker that can run it, or change the job's type, labels or resources (server.unrunnable: accept queues such jobs)"}
	}
	warning := why + " now; the job is queued (reason no_compatible_worker) and starts once a worker that can run it registers"
	if seen {
		warning += " (one that could registered before: it may be restarting)"
	}
	return prefix() + warning, nil
}

// someWorkerRunsWithoutCommand says whether a job of typ without a
// command could run: some registered worker has an SDK handler for typ
// (or for every type), or did not say (workers before handlers were
// reported). With no worker registered the job is accepted and waits, as
// checkRunnable does for capacity.
func (d *Dispatcher) someWorkerRunsWithoutCommand(typ string) bool {
	if len(d.workers) == 0 {
		return true
	}
	for _, wk := range d.workers {
		if wk.w.Handlers == nil || slices.Contains(wk.w.Handlers, typ) || slices.Contains(wk.w.Handlers, "*") {
			return true
		}
	}
	return false
}

type idemKey struct{ tenant, key string }

// submitJobs inserts jobs in the batch's transaction. Every job is checked
// first (quotas, dependencies); if any fails, none is inserted.
func (d *Dispatcher) submitJobs(tx *txn, jobs []store.Job) []submitted {
	return d.submitJobsAs(tx, jobs, "")
}

// submitJobsAs is submitJobs recording actor as the submitter in the
// audit trail ("": the jobs' tenant, "tenant:NAME").
func (d *Dispatcher) submitJobsAs(tx *txn, jobs []store.Job, actor string) []submitted {
	tok, tokened, err := tokenOf(jobs)
	if err != nil {
		return failAll(make([]submitted, len(jobs)), err)
	}
	if tokened {
		if r, ok := d.tokens.get(tok, tx.now); ok {
			return d.resubmitted(tx, jobs, r, actor)
		}
	}
	out := d.insertJobsAs(tx, storedTokens(jobs), actor)
	if tokened && tx.err == nil {
		d.learnToken(tx, tok, out)
	}
	return out
}

// insertJobsAs is submitJobsAs for a submit that no token answers.
func (d *Dispatcher) insertJobsAs(tx *txn, jobs []store.Job, actor string) []submitted {
	out := make([]submitted, len(jobs))
	deps := make([][]policy.Dependency, len(jobs))
	warnings := make([]string, len(jobs))
	adding := map[string]int{}
	claimNow := inPlace(tx, jobs)
	holders := tx.holders
	if !claimNow {
		var err error
		if holders, err = d.keyHolders(tx, jobs); err != nil {
			return failAll(out, err)
		}
	}
	for i := range jobs {
		adding[jobs[i].Tenant]++
		if err := d.checkQuota(jobs[i].Tenant, adding[jobs[i].Tenant]); err != nil {
			return failAll(out, err)
		}
		warning, err := d.checkRunnable(jobs[i], i, len(jobs) > 1)
		if err != nil {
			return failAll(out, err)
		}
		warnings[i] = warning
		if err := d.checkKeyOfDeletedJob(tx, jobs[i], holders); err != nil {
			return failAll(out, err)
		}
		ds, err := d.checkDependencies(tx, jobs[i], jobs[:i], i, len(jobs) > 1)
		if err != nil {
			return failAll(out, err)
		}
		deps[i] = ds
	}
	inBatch := map[idemKey]store.Job{}
	for i := range jobs {
		out[i] = d.insertJob(tx, jobs[i], deps[i], inBatch, holders, actor, claimNow)
		if tx.err != nil {
			return out
		}
		if !out[i].deduplicated {
			out[i].warning = warnings[i]
		}
	}
	return out
}

// checkKeyOfDeletedJob refuses a job whose idempotency key is held, inside
// its window, by a job that retention has deleted: the key stays bound
// for the whole window (no second job), and there is no job left to
// return as the original. holders are keyHolders' answer for the batch;
// a claim the dispatcher keeps (claiming, claims.go) may name such a job
// too.
func (d *Dispatcher) checkKeyOfDeletedJob(tx *txn, j store.Job, holders map[store.Claim]string) error {
	if j.IdempotencyKey == "" {
		return nil
	}
	holder, ok := holders[store.Claim{Tenant: j.Tenant, Key: j.IdempotencyKey}]
	if !ok {
		holder, ok = d.keptClaim(idemKey{j.Tenant, j.IdempotencyKey}, tx.now)
	}
	if !ok || d.jobs[holder] != nil {
		return nil
	}
	_, err := d.st.JobGet(tx.ctx, holder)
	if errors.Is(err, store.ErrNotFound) {
		return &KeyOfDeletedJobError{Key: j.IdempotencyKey, JobID: holder}
	}
	return err
}

// keyHolders returns the committed holders of the jobs' idempotency keys
// inside the window: those the batch read (readHolders), and the others
// read now, in one query per few hundred keys rather than one per job (a
// round trip each on PostgreSQL).
func (d *Dispatcher) keyHolders(tx *txn, jobs []store.Job) (map[store.Claim]string, error) {
	var missing []store.Claim
	for _, c := range claimsOf(jobs) {
		if !tx.read[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return tx.holders, nil
	}
	got, err := d.st.IdempotencyHolders(tx.ctx, missing, tx.now.Add(-store.IdempotencyWindow))
	if err != nil {
		return nil, err
	}
	if tx.holders == nil {
		tx.holders, tx.read = map[store.Claim]string{}, map[store.Claim]bool{}
	}
	for _, c := range missing {
		tx.read[c] = true
		if id, ok := got[c]; ok {
			tx.holders[c] = id
		}
	}
	return tx.holders, nil
}

func failAll(out []submitted, err error) []submitted {
	for i := range out {
		out[i].err = err
	}
	return out
}

// checkQuota applies the tenant's and the server's max_queued.
func (d *Dispatcher) checkQuota(tenant string, adding int) error {
	if m := d.cfg.Tenants[tenant].MaxQueued; m > 0 && d.byTenant[tenant]+adding > m {
		msg := fmt.Sprintf("tenant %s has %d unfinished jobs; its limit is %d", tenant, d.byTenant[tenant], m)
		d.alerts.OverQuota(tenant, msg, d.clock.Now())
		return &QuotaError{msg}
	}
	if m := d.cfg.Server.MaxQueued; m > 0 && len(d.jobs)+adding > m {
		return &QuotaError{fmt.Sprintf("the server holds %d unfinished jobs; its limit is %d", len(d.jobs), m)}
	}
	return nil
}

// checkDependencies returns the dependencies the engine must wait for. A
// dependency must be a job of the same tenant, unfinished, or finished in
// a way that meets its condition; earlier jobs of the same batch count.
func (d *Dispatcher) checkDependencies(tx *txn, j store.Job, earlier []store.Job, idx int, batch bool) ([]policy.Dependency, error) {
	var live []policy.Dependency
	for i, dep := range j.DependsOn {
		field := fmt.Sprintf("depends_on[%d].job_id", i)
		if batch {
			field = fmt.Sprintf("jobs[%d].%s", idx, field)
		}
		if rec := d.jobs[dep.JobID]; rec != nil {
			if rec.job.Tenant != j.Tenant {
				return nil, badField(field, "no job %s", dep.JobID)
			}
			live = append(live, policy.Dependency{JobID: dep.JobID, Condition: dep.Condition.Policy()})
			continue
		}
		done, err := d.st.JobGet(tx.ctx, dep.JobID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && done.Tenant != j.Tenant) {
			return nil, badField(field, "no job %s", dep.JobID)
		}
		if err != nil {
			return nil, err
		}
		if !conditionMet(dep.Condition, done.State) {
			return nil, badField(field, "job %s ended %s; condition %s can never hold", dep.JobID, done.State, dep.Condition)
		}
	}
	return live, nil
}

// insertJob stores one job and queues it, or finds the job that holds its
// idempotency key (claims.go): a key the dispatcher knows free is claimed
// by JobInsertFreeKey, which leaves the Write deferred; claimNow (inPlace)
// claims it with JobInsertBatched, whose claim answers a held key.
func (d *Dispatcher) insertJob(tx *txn, j store.Job, deps []policy.Dependency, inBatch map[idemKey]store.Job,
	holders map[store.Claim]string, actor string, claimNow bool) submitted {
	if actor == "" {
		actor = "tenant:" + j.Tenant
	}
	j.ID = store.NewID(tx.now)
	j.CreatedAt, j.UpdatedAt, j.EnqueuedAt = tx.now, tx.now, tx.now
	j.State = store.StatePending
	if len(deps) > 0 || j.RunAt.After(tx.now) {
		j.State = store.StateBlocked
	}
	ev := submittedEvent(tx, &j, actor) // peeks the id: a duplicate draws none
	var err error
	if j.IdempotencyKey != "" && j.Unique == nil {
		if holder, ok := d.heldKey(j, tx.now, inBatch, holders); ok {
			return d.duplicate(tx, j, &store.DuplicateError{Tenant: j.Tenant, Key: j.IdempotencyKey, JobID: holder}, inBatch, actor)
		}
		if claimNow {
			err = tx.w.JobInsertBatched(tx.ctx, j)
		} else {
			err = tx.w.JobInsertFreeKey(tx.ctx, j)
		}
	} else {
		err = tx.w.JobInsertBatched(tx.ctx, j)
	}
	var dup *store.DuplicateError
	var uniq *store.UniqueError
	if errors.As(err, &uniq) {
		return d.uniqueDuplicate(tx, j, uniq, actor)
	}
	if errors.As(err, &dup) {
		if claimNow {
			// The checks before the inserts did not see the holder.
			held := map[store.Claim]string{{Tenant: j.Tenant, Key: j.IdempotencyKey}: dup.JobID}
			var gone *KeyOfDeletedJobError
			if err := d.checkKeyOfDeletedJob(tx, j, held); errors.As(err, &gone) {
				return submitted{err: err}
			} else if err != nil {
				tx.fatal(fmt.Errorf("read holder of a claimed key: %w", err))
				return submitted{}
			}
		}
		return d.duplicate(tx, j, dup, inBatch, actor)
	}
	if err != nil {
		tx.fatal(fmt.Errorf("insert job: %w", err))
		return submitted{}
	}
	if j.IdempotencyKey != "" {
		inBatch[idemKey{j.Tenant, j.IdempotencyKey}] = j
		d.noteClaim(tx, j)
	}
	pj := policyJob(j)
	pj.DependsOn = deps
	if err := d.eng.Submit(pj, tx.now); err != nil {
		tx.fatal(fmt.Errorf("engine submit %s: %w", j.ID, err))
		return submitted{}
	}
	rec := &jobRec{job: j}
	d.jobs[j.ID] = rec
	d.byState.add(rec)
	d.byTenant[j.Tenant]++
	if j.State == store.StatePending {
		tx.arrive(rec)
	}
	tx.add(tx.draw(ev))
	lane, typ := j.Lane, j.Type
	d.observe(tx, func(m *metrics.Metrics) { m.JobSubmitted(lane, typ) })
	return submitted{job: &rec.job, rec: rec}
}

// submittedEvent returns the submitted event of j, the next event id's,
// without drawing the id: a job the store refuses (a duplicate) records
// none. The event is the one j's row gives back (store.JobSubmittedEvent:
// created_at is tx.now, the detail the type, lane and priority), so j
// holds it (package store, "The submitted event in the job row") and it
// is marked synthesised, with one encoding of its detail. insertJob
// records it, with tx.draw, once the job is in.
func submittedEvent(tx *txn, j *store.Job, actor string) store.Event {
	j.SubmitEventID, j.SubmitActor, j.SubmitPriority = *tx.lastID+1, actor, nil
	ev := store.JobSubmittedEvent(*j)
	ev.Synthesised = true
	return ev
}

// currentJob is job id as it is now: from memory while unfinished, else
// from the store (the original a duplicate, a unique rule or a submit
// token answers with).
func (d *Dispatcher) currentJob(tx *txn, id string) (store.Job, error) {
	if rec := d.jobs[id]; rec != nil {
		return rec.job, nil
	}
	return d.st.JobGet(tx.ctx, id)
}

func (d *Dispatcher) duplicate(tx *txn, j store.Job, dup *store.DuplicateError, inBatch map[idemKey]store.Job, actor string) submitted {
	orig, ok := inBatch[idemKey{j.Tenant, j.IdempotencyKey}]
	if !ok {
		var err error
		if orig, err = d.currentJob(tx, dup.JobID); err != nil {
			tx.fatal(fmt.Errorf("read original of duplicate: %w", err))
			return submitted{}
		}
	}
	tx.event(orig.ID, orig.Attempt, orig.Tenant, store.EventDeduplicated, actor, map[string]string{"idempotency_key": j.IdempotencyKey})
	return submitted{job: &orig, deduplicated: true}
}

// jobID is the answered job's id ("": none).
func (s submitted) jobID() string {
	if s.job == nil {
		return ""
	}
	return s.job.ID
}

// response renders a submit's outcome once its batch has committed.
func (s submitted) response(d *Dispatcher) api.SubmitResponse {
	job := *s.job
	if s.rec != nil {
		job = s.rec.job
	}
	r := api.SubmitResponse{Job: wire.Job(job), Deduplicated: s.deduplicated, UniqueMatch: s.uniqueMatch}
	if s.warning != "" {
		r.Warnings = []string{s.warning}
	}
	if job.State == store.StateLeased || job.State == store.StateRunning {
		r.EstimatedStart = wire.TimePtr(job.UpdatedAt)
	}
	return r
}
