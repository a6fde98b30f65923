package policy

import (
	"fmt"
	"time"
)

// Submit adds a pending job. Defaults come from the job's type; an empty
// FairnessKey means the tenant; a zero EnqueuedAt means now. Dependencies
// must name jobs the engine holds (the caller resolves finished ones).
func (e *Engine) Submit(j Job, now time.Time) error {
	en, err := e.newEntry(j, now)
	if err != nil {
		return err
	}
	e.jobs[j.ID] = en
	e.keyGained(en.fk)
	en.ln.pending++
	for _, d := range en.job.DependsOn {
		e.dependents[d.JobID] = append(e.dependents[d.JobID], en)
	}
	en.pendingDeps = len(en.job.DependsOn)
	if en.pendingDeps > 0 {
		en.state = stateWaiting
		return nil
	}
	e.makeRunnable(en, now)
	return nil
}

func (e *Engine) newEntry(j Job, now time.Time) (*entry, error) {
	if j.ID == "" {
		return nil, fmt.Errorf("%w: id is empty", ErrInvalidJob)
	}
	if _, ok := e.jobs[j.ID]; ok {
		return nil, fmt.Errorf("%w: %s", ErrDuplicateJob, j.ID)
	}
	if j.Resources.negative() {
		return nil, fmt.Errorf("%w: %s: resources must be >= 0", ErrInvalidJob, j.ID)
	}
	typ := e.jobType(j.Type)
	if j.Lane == "" {
		j.Lane = typ.cfg.Lane
	}
	if j.Lane == "" {
		j.Lane = DefaultLane
	}
	ln, ok := e.lanes[j.Lane]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownLane, j.Lane)
	}
	if j.PriorityDefault {
		j.Priority = DefaultPriority
		if typ.cfg.Priority != nil {
			j.Priority = *typ.cfg.Priority
		}
		j.PriorityDefault = false
	}
	if j.Resources.IsZero() {
		j.Resources = typ.cfg.Resources
	}
	if j.FairnessKey == "" {
		j.FairnessKey = j.Tenant
	}
	if j.EnqueuedAt.IsZero() {
		j.EnqueuedAt = now
	}
	j.Labels = normalizeLabels(j.Labels)
	for _, d := range j.DependsOn {
		if _, ok := e.jobs[d.JobID]; !ok {
			return nil, fmt.Errorf("%w: %s waits on %s", ErrUnknownDependency, j.ID, d.JobID)
		}
	}
	e.seq++
	en := &entry{
		job: fieldsOf(j), seq: e.seq, enq: j.EnqueuedAt.UnixNano(),
		typ: typ, ln: ln, tr: e.tierOf(j.Priority), tnt: e.tenant(j.Tenant),
		fk: e.fairKey(j.FairnessKey), heapIdx: -1,
	}
	return en, nil
}

// makeRunnable moves an entry whose dependencies are met into the delayed
// heap or its class.
func (e *Engine) makeRunnable(en *entry, now time.Time) {
	if !en.job.RunAt.IsZero() {
		en.enq = max(en.enq, en.job.RunAt.UnixNano()) // no age before it may run
	}
	if en.job.RunAt.After(now) {
		en.state = stateDelayed
		e.delayed.push(en)
		return
	}
	e.enqueue(en, now)
}

// enqueue puts a runnable entry in its group's class, or parks it if a
// conflicting job holds its resource key.
func (e *Engine) enqueue(en *entry, now time.Time) {
	if cs := e.heldConflict(en); cs != nil {
		e.park(cs, en, e.group(en))
		return
	}
	g := e.group(en)
	ck := classKey{en.job.Priority, en.fk, en.tnt}
	c, ok := g.classes[ck]
	if !ok {
		c = &class{grp: g, prio: ck.prio, fk: ck.fk, tnt: ck.tnt}
		g.classes[ck] = c
	}
	en.state, en.grp, en.cls = stateQueued, g, c
	var wasHead *entry
	if len(c.jobs) > 0 {
		wasHead = c.head()
	}
	c.jobs.push(en)
	g.queued++
	en.ln.queued++
	if !g.inLane {
		g.inLane = true
		en.ln.groups = append(en.ln.groups, g)
	}
	if c.where == heapNone || c.head() != wasHead {
		g.place(c, now.UnixNano())
	}
}

func (e *Engine) group(en *entry) *group {
	od := en.job.OnDemand
	f := e.fitKey(en.typ.name, en.job.Labels, en.job.Resources)
	id := groupID{typ: en.typ, tr: en.tr, fit: f, od: od, shape: en.job.Resources}
	l := en.ln
	g, ok := l.byID[id]
	if !ok {
		sl := l.open
		if od {
			sl = l.od
		}
		g = &group{ln: l, typ: en.typ, tr: en.tr, fit: f, od: od, sl: sl, shape: en.job.Resources, classes: map[classKey]*class{}}
		if len(e.limits) > 0 {
			e.groupBuckets(g, en.job.Labels, e.now)
		}
		l.byID[id] = g
	}
	return g
}

// promoteDue moves delayed jobs whose RunAt has come into their queues.
// A job's age counts from when it became runnable: its RunAt, not its
// submit time.
func (e *Engine) promoteDue(now time.Time) {
	for len(e.delayed) > 0 && !e.delayed[0].job.RunAt.After(now) {
		en := e.delayed.pop()
		if en.state == stateDelayed {
			en.enq = max(en.enq, en.job.RunAt.UnixNano())
			e.enqueue(en, now)
			e.noteReleased(en)
		}
	}
}

// Cancel removes a job that is not running, in O(1): a queued job is
// tombstoned and dropped lazily when it reaches the head of its class.
// Jobs waiting on it whose condition can no longer hold are dropped too and
// returned. A running job must be ended with Finish.
func (e *Engine) Cancel(id string, now time.Time) ([]Dropped, error) {
	en, ok := e.jobs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if en.state == stateRunning {
		return nil, fmt.Errorf("%w: %s is running", ErrNotPending, id)
	}
	e.retire(en, now)
	return e.resolveDependents(id, Cancelled, now), nil
}

// retire tombstones a non-running entry and forgets it.
func (e *Engine) retire(en *entry, now time.Time) {
	e.unlink(en, now)
	delete(e.jobs, en.job.ID)
	en.ln.pending--
	e.keyLost(en.fk, now)
}

// unlink takes an entry out of whatever structure counts it, leaving a
// tombstone where removal would cost more than O(1). A representative of
// parked jobs hands over to the next of them (conflict.go).
func (e *Engine) unlink(en *entry, now time.Time) {
	switch en.state {
	case stateQueued:
		en.grp.queued--
		en.ln.queued--
		e.leaveQueue(en, now)
	case stateConflict:
		e.unpark(en)
	case stateWaiting:
		for _, d := range en.job.DependsOn {
			e.dropDependent(d.JobID, en)
		}
	}
	en.state = stateDead
}

func (e *Engine) dropDependent(depID string, en *entry) {
	ds := e.dependents[depID]
	for i, d := range ds {
		if d == en {
			ds = append(ds[:i], ds[i+1:]...)
			break
		}
	}
	if len(ds) == 0 {
		delete(e.dependents, depID)
		return
	}
	e.dependents[depID] = ds
}

// Reprioritize changes a pending job's priority, keeping its enqueue time
// (so it keeps its age). A queued job is tombstoned and re-inserted.
func (e *Engine) Reprioritize(id string, priority int, now time.Time) error {
	en, ok := e.jobs[id]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if en.state == stateRunning {
		return fmt.Errorf("%w: %s is running", ErrNotPending, id)
	}
	if en.state == stateConflict {
		// Parked in its class's queue: it moves to its new class's.
		e.unpark(en)
		en.job.Priority = priority
		en.tr = e.tierOf(priority)
		e.enqueue(en, now)
		return nil
	}
	if en.state != stateQueued {
		en.job.Priority = priority
		en.tr = e.tierOf(priority)
		return nil
	}
	fresh := *en
	fresh.job.Priority = priority
	fresh.tr = e.tierOf(priority)
	fresh.cls, fresh.grp, fresh.heapIdx, fresh.pq = nil, nil, -1, nil
	e.unlink(en, now)
	e.jobs[id] = &fresh
	e.enqueue(&fresh, now)
	return nil
}

// resolveDependents tells the jobs waiting on id how it ended. Those whose
// condition holds lose a pending dependency (and become runnable at zero);
// those whose condition can never hold are dropped, transitively.
func (e *Engine) resolveDependents(id string, out Outcome, now time.Time) []Dropped {
	var dropped []Dropped
	queue := []depEvent{{id, out}}
	for len(queue) > 0 {
		ev := queue[0]
		queue = queue[1:]
		ds := e.dependents[ev.id]
		delete(e.dependents, ev.id)
		for _, en := range ds {
			if en.state != stateWaiting {
				continue
			}
			if satisfies(conditionOn(en, ev.id), ev.out) {
				en.pendingDeps--
				if en.pendingDeps == 0 && en.held {
					en.state = stateHeld // its dependencies are met, but it stays aside
					continue
				}
				if en.pendingDeps == 0 {
					// It waited on others, not in a queue: its age
					// starts now.
					en.enq = max(en.enq, now.UnixNano())
					e.makeRunnable(en, now)
					if en.state != stateDelayed {
						e.noteReleased(en)
					}
				}
				continue
			}
			e.retire(en, now)
			dropped = append(dropped, Dropped{JobID: en.job.ID, DependencyID: ev.id})
			queue = append(queue, depEvent{en.job.ID, Cancelled})
		}
	}
	return dropped
}

type depEvent struct {
	id  string
	out Outcome
}

func conditionOn(en *entry, depID string) Condition {
	for _, d := range en.job.DependsOn {
		if d.JobID == depID {
			return d.Condition
		}
	}
	return AfterAny
}

func satisfies(c Condition, out Outcome) bool {
	switch c {
	case AfterSuccess:
		return out == Succeeded
	case AfterFailure:
		return out == Failed
	}
	return true
}
