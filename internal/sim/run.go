package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

// Epoch is virtual time zero: the engine sees scenario time t as Epoch + t.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Options control a run.
type Options struct {
	// Stop, when > 0, stops the clock: instants after it are not processed
	// and the summary is taken at Stop.
	Stop time.Duration
	// Sink, when set, receives every event in order; an error aborts the run.
	Sink func(Event) error
	// Record keeps every event in Result.Events (for tests and small runs).
	Record bool
}

// Result is what a run produced.
type Result struct {
	Events  []Event // only with Options.Record
	Summary Summary
}

// Run simulates the scenario in virtual time; see the package comment.
func Run(s *Scenario, opt Options) (Result, error) {
	return RunContext(context.Background(), s, opt)
}

// RunContext is Run, stopping early with ctx's error when ctx is done.
func RunContext(ctx context.Context, s *Scenario, opt Options) (Result, error) {
	c, err := s.compile()
	if err != nil {
		return Result{}, err
	}
	r, err := newRunner(c, opt)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	err = r.loop(ctx)
	wall := time.Since(start) - r.sinkTime
	return Result{Events: r.events, Summary: r.summary(wall)}, err
}

// runner is one run's state.
type runner struct {
	c        *compiled
	opt      Options
	eng      *policy.Engine
	emitting bool

	now, end int64 // nanoseconds since Epoch
	first    int64 // first arrival
	arrived  bool

	arrivals minHeap[*cursor]
	running  minHeap[*simJob]
	timers   minHeap[timer]
	seq      uint64

	jobs     map[string]*simJob        // arrived and not ended
	finished map[string]policy.Outcome // only when some job has dependencies

	stats    *collector
	events   []Event
	sinkTime time.Duration
}

// cursor is the next copy of a jobs[] entry to arrive.
type cursor struct {
	g    *jobGen
	i    int
	next int64
}

func newRunner(c *compiled, opt Options) (*runner, error) {
	eng, err := newEngine(c)
	if err != nil {
		return nil, err
	}
	r := &runner{
		c: c, opt: opt, eng: eng, emitting: opt.Record || opt.Sink != nil,
		jobs: map[string]*simJob{}, stats: newCollector(),
	}
	if c.hasDeps {
		r.finished = map[string]policy.Outcome{}
	}
	r.initHeaps()
	r.startSchedules()
	for _, g := range c.gens {
		r.arrivals.push(&cursor{g: g, next: g.at})
	}
	return r, nil
}

func newEngine(c *compiled) (*policy.Engine, error) {
	eng, err := policy.New(c.cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrScenario, err)
	}
	for _, w := range c.workers {
		if err := eng.AddWorker(w); err != nil {
			return nil, fmt.Errorf("%w: workers: %w", ErrScenario, err)
		}
	}
	return eng, nil
}

// initHeaps sets the orders: arrivals by time then file order, running
// jobs by end then admission order, timers by time then arming order.
func (r *runner) initHeaps() {
	r.arrivals.less = func(a, b *cursor) bool {
		if a.next != b.next {
			return a.next < b.next
		}
		return a.g.index < b.g.index
	}
	r.running.less = func(a, b *simJob) bool {
		if a.end != b.end {
			return a.end < b.end
		}
		return a.seq < b.seq
	}
	r.timers.less = func(a, b timer) bool {
		if a.at != b.at {
			return a.at < b.at
		}
		return a.seq < b.seq
	}
}

// at is the engine time of the current instant.
func (r *runner) at() time.Time { return Epoch.Add(time.Duration(r.now)) }

// loop processes instants in time order. At each: completions, then
// arrivals, then timers (run_at, cancel, reprioritize), then dispatch until
// the engine admits nothing more.
func (r *runner) loop(ctx context.Context) error {
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				r.end = r.now
				return err
			}
		}
		t, ok := r.nextInstant()
		if !ok {
			r.end = r.now
			return nil
		}
		if r.opt.Stop > 0 && t > int64(r.opt.Stop) {
			r.end = int64(r.opt.Stop)
			return nil
		}
		prev := r.now
		r.now = t
		err := r.instant()
		r.stats.hold(prev, t, r.eng.ReservedIdleSlots())
		if err != nil {
			r.end = r.now
			return err
		}
	}
}

func (r *runner) instant() error {
	steps := [...]func() error{r.completions, r.arrive, r.schedules, r.fireTimers, r.dispatch, r.preempt}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// nextInstant is the earliest pending arrival, completion, timer or due
// delayed job.
func (r *runner) nextInstant() (int64, bool) {
	r.pruneStale()
	var t int64
	found := false
	consider := func(x int64) {
		if !found || x < t {
			t, found = x, true
		}
	}
	if r.arrivals.len() > 0 {
		consider(r.arrivals.peek().next)
	}
	if r.running.len() > 0 {
		consider(r.running.peek().end)
	}
	if r.timers.len() > 0 {
		consider(r.timers.peek().at)
	}
	if slot, ok := r.nextSlot(); ok {
		consider(slot)
	}
	if at, ok := r.eng.NextPreemption(); ok {
		if d := int64(at.Sub(Epoch)); d > r.now {
			consider(d)
		}
	}
	if due, ok := r.eng.NextDue(); ok {
		if d := int64(due.Sub(Epoch)); d > r.now {
			consider(d)
		}
	}
	if tok, ok := r.eng.NextToken(); ok {
		if d := int64(tok.Sub(Epoch)); d > r.now {
			consider(d)
		}
	}
	return t, found
}

// pruneStale drops heap heads that no longer stand for anything: the end
// of a job cancelled while running, the timers of a job that has ended. They
// would otherwise make empty instants and stretch the makespan.
func (r *runner) pruneStale() {
	for r.running.len() > 0 && r.running.peek().state != stRunning {
		r.running.pop()
	}
	for r.timers.len() > 0 && r.timers.peek().j.state == stEnded {
		r.timers.pop()
	}
}

// completions finishes every running job whose end has come.
func (r *runner) completions() error {
	for r.running.len() > 0 && r.running.peek().end <= r.now {
		j := r.running.pop()
		if j.state != stRunning {
			continue // cancelled while running
		}
		if j.snoozed < j.g.snoozes {
			if err := r.snooze(j); err != nil {
				return err
			}
			continue
		}
		dropped, err := r.eng.Finish(j.id, r.at(), policy.Succeeded)
		if err != nil {
			return fmt.Errorf("sim: finish %s: %w", j.id, err)
		}
		r.stats.stopRunning(j, r.now)
		r.stats.done++
		if err := r.retire(j, Done, policy.Succeeded); err != nil {
			return err
		}
		if err := r.dropAll(dropped); err != nil {
			return err
		}
	}
	return nil
}

// snooze ends a run snoozed, as the server does: the engine gets the job
// back (Released) and again with run_at at the end of the delay; until
// then it waits, blocked, like a job whose run_at is ahead.
func (r *runner) snooze(j *simJob) error {
	if _, err := r.eng.Finish(j.id, r.at(), policy.Released); err != nil {
		return fmt.Errorf("sim: snooze %s: %w", j.id, err)
	}
	r.stats.stopRunning(j, r.now)
	r.stats.snoozed++
	var ev Event
	if r.emitting {
		ev = r.event(j, Snooze)
		ev.Worker, ev.Ran = j.worker, time.Duration(r.now-j.admit)
	}
	j.snoozed++
	j.state, j.worker, j.ready = stWaitReady, "", r.now+j.g.snoozeDelay
	if err := r.eng.Submit(r.policyJob(j, nil), r.at()); err != nil {
		return fmt.Errorf("sim: snooze %s: %w", j.id, err)
	}
	r.addTimer(j.ready, tReady, j, 0)
	if !r.emitting {
		return nil
	}
	return r.emit(ev)
}

// dispatch asks the engine for decisions until it has none.
func (r *runner) dispatch() error {
	for {
		a, ok := r.eng.Next(r.at())
		if !ok {
			return nil
		}
		j := r.jobs[a.JobID]
		if j == nil || j.state == stRunning {
			return fmt.Errorf("sim: engine admitted %q, which the simulator does not hold as pending", a.JobID)
		}
		if j.state == stWaitReady {
			r.makeReady(j)
		}
		j.state, j.admit, j.worker = stRunning, r.now, a.WorkerID
		j.end, j.seq = r.now+j.dur, r.seq
		r.seq++
		r.running.push(j)
		r.stats.admit(j, r.now)
		if j.sched != nil {
			j.sched.scheduledAdmitted(j, r.now)
		}
		if r.emitting {
			ev := r.event(j, Admit)
			ev.Lane, ev.Score, ev.Cost = a.Lane, a.Score, a.Cost
			ev.Wait = time.Duration(r.now - j.ready)
			if err := r.emit(ev); err != nil {
				return err
			}
		}
	}
}

// retire forgets an ended job and emits its final event.
func (r *runner) retire(j *simJob, k Kind, out policy.Outcome) error {
	wasRunning := j.state == stRunning
	j.state = stEnded
	delete(r.jobs, j.id)
	if j.sched != nil {
		j.sched.scheduledEnded(j)
	}
	if r.finished != nil {
		r.finished[j.id] = out
	}
	if !r.emitting {
		return nil
	}
	ev := r.event(j, k)
	if wasRunning {
		ev.Worker, ev.Ran = j.worker, time.Duration(r.now-j.admit)
	}
	return r.emit(ev)
}

// dropAll records the jobs the engine dropped because a dependency failed.
func (r *runner) dropAll(dropped []policy.Dropped) error {
	for _, d := range dropped {
		j := r.jobs[d.JobID]
		if j == nil {
			return fmt.Errorf("sim: engine dropped unknown job %q", d.JobID)
		}
		r.unqueue(j)
		r.stats.dropped++
		j.dropDep = d.DependencyID
		if err := r.retire(j, Drop, policy.Cancelled); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) emit(ev Event) error {
	if r.opt.Record {
		r.events = append(r.events, ev)
	}
	if r.opt.Sink == nil {
		return nil
	}
	t0 := time.Now()
	err := r.opt.Sink(ev)
	r.sinkTime += time.Since(t0)
	return err
}

func (r *runner) event(j *simJob, k Kind) Event {
	return Event{
		At: time.Duration(r.now), Kind: k, ID: j.id, Type: j.g.typ, Key: j.key,
		FairnessKey: j.fk, Tenant: j.tenant, Lane: j.lane, Priority: j.prio,
		OnDemand: j.g.onDemand, Resources: j.res, Worker: j.worker, Dependency: j.dropDep,
	}
}
