package sim

import (
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

// jobState is where a job stands in the simulation.
type jobState uint8

const (
	stWaitReady jobState = iota // arrived, run_at still ahead
	stPending                   // ready, not admitted
	stRunning
	stEnded
)

// simJob is the simulator's record of a job between arrival and its end.
type simJob struct {
	g       *jobGen
	id      string
	key     string
	fk      string // effective fairness key
	tenant  string
	lane    string
	prio    int
	res     policy.Resources
	state   jobState
	arrive  int64
	ready   int64 // max(arrival, run_at): when its wait starts
	admit   int64
	dur     int64
	end     int64
	seq     uint64
	worker  string
	dropDep string
	sched   *simSched // the schedule that fired it, if any
	nominal int64     // its slot's nominal time (scheduled jobs)
	snoozed int       // runs that ended snoozed so far

	fkAcc, laneAcc *acc
}

// arrive submits every copy whose arrival is now, in (entry, copy) order.
func (r *runner) arrive() error {
	for r.arrivals.len() > 0 && r.arrivals.peek().next <= r.now {
		cur := r.arrivals.pop()
		if err := r.submit(cur.g, cur.i); err != nil {
			return err
		}
		cur.i++
		if cur.i < cur.g.count {
			cur.next = cur.g.arrival(cur.i)
			r.arrivals.push(cur)
		}
	}
	return nil
}

// submit builds copy i of g, hands it to the engine and arms its timers.
func (r *runner) submit(g *jobGen, i int) error {
	j := r.newJob(g, i)
	if !r.arrived {
		r.first, r.arrived = r.now, true
	}
	deps, failed, err := r.resolveDeps(g, i)
	if err != nil {
		return err
	}
	r.stats.arrive(j)
	if failed != "" {
		return r.dropAtArrival(j, failed)
	}
	if g.hasCost {
		r.eng.SetEstimate(g.typ, j.key, g.cost, r.at())
	}
	if err := r.eng.Submit(r.policyJob(j, deps), r.at()); err != nil {
		return fmt.Errorf("%w: jobs[%d] copy %d (id %q): %w", ErrScenario, g.index, i, j.id, err)
	}
	r.jobs[j.id] = j
	if err := r.emitJob(j, Arrive); err != nil {
		return err
	}
	r.armTimers(j, i)
	return nil
}

func (r *runner) newJob(g *jobGen, i int) *simJob {
	key, fk, tenant := g.key.render(i), g.fk.render(i), g.tenant.render(i)
	if fk == "" {
		fk = tenant
	}
	j := &simJob{
		g: g, id: g.jobID(i, key), key: key, fk: fk, tenant: tenant,
		lane: r.laneOf(g), prio: r.priorityOf(g), res: r.resourcesOf(g),
		arrive: r.now, ready: r.now, dur: g.dur,
	}
	if g.hasRunAt {
		j.ready = max(r.now, g.runAt+int64(i)*g.every)
	}
	j.fkAcc, j.laneAcc = r.stats.key(fk), r.stats.lane(j.lane)
	return j
}

// laneOf, priorityOf and resourcesOf apply the defaults documented on
// policy.Job: the job's value, else its type's, else the engine's.
func (r *runner) laneOf(g *jobGen) string {
	if g.lane != "" {
		return g.lane
	}
	if l := r.c.cfg.Types[g.typ].Lane; l != "" {
		return l
	}
	return policy.DefaultLane
}

func (r *runner) priorityOf(g *jobGen) int {
	if !g.prioDef {
		return g.prio
	}
	if p := r.c.cfg.Types[g.typ].Priority; p != nil {
		return *p
	}
	return policy.DefaultPriority
}

func (r *runner) resourcesOf(g *jobGen) policy.Resources {
	if !g.res.IsZero() {
		return g.res
	}
	return r.c.cfg.Types[g.typ].Resources
}

func (r *runner) policyJob(j *simJob, deps []policy.Dependency) policy.Job {
	g := j.g
	pj := policy.Job{
		ID: j.id, Type: g.typ, Key: j.key, Tenant: j.tenant, Lane: g.lane, FairnessKey: j.fk,
		Priority: g.prio, PriorityDefault: g.prioDef, OnDemand: g.onDemand,
		Resources: g.res, Labels: g.labels, DependsOn: deps, NotPreemptible: g.keep,
	}
	if j.ready > j.arrive {
		pj.RunAt = Epoch.Add(time.Duration(j.ready))
	}
	return pj
}

// resolveDeps turns copy i's depends_on into engine dependencies. A
// dependency the engine still holds is passed on; one that already
// succeeded is satisfied; one that ended otherwise makes the job fail
// (its ID is returned); one that has not arrived yet is a scenario error.
func (r *runner) resolveDeps(g *jobGen, i int) ([]policy.Dependency, string, error) {
	var out []policy.Dependency
	for k, t := range g.deps {
		id := t.render(i)
		if _, held := r.eng.Job(id); held {
			out = append(out, policy.Dependency{JobID: id, Condition: policy.AfterSuccess})
			continue
		}
		res, seen := r.finished[id]
		switch {
		case !seen:
			return nil, "", fmt.Errorf("%w: jobs[%d].depends_on[%d]: job %q has not arrived by t=%.3f (copy %d)",
				ErrScenario, g.index, k, id, time.Duration(r.now).Seconds(), i)
		case res != policy.Succeeded:
			return nil, id, nil
		}
	}
	return out, "", nil
}

// dropAtArrival ends a job whose dependency had already failed: the engine
// never sees it.
func (r *runner) dropAtArrival(j *simJob, dep string) error {
	j.dropDep = dep
	r.jobs[j.id] = j
	if err := r.emitJob(j, Arrive); err != nil {
		return err
	}
	r.stats.dropped++
	return r.retire(j, Drop, policy.Cancelled)
}

func (r *runner) emitJob(j *simJob, k Kind) error {
	if !r.emitting {
		return nil
	}
	return r.emit(r.event(j, k))
}
