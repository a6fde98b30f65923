package sim

import (
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

type timerKind uint8

const (
	tReady  timerKind = iota // run_at reached: the job's wait starts
	tCancel                  // cancel_at
	tReprio                  // reprioritize.at
	tStop                    // a preempted job's grace ends: it stops
)

// timer is a per-job instant other than arrival and completion. Only jobs
// that use run_at, cancel_at or reprioritize have one.
type timer struct {
	at   int64
	seq  uint64
	kind timerKind
	j    *simJob
	prio int
	// tStop: the admission it stops (a job that ended and was admitted
	// again since is left alone) and the job it is stopped for.
	admit int64
	forID string
}

func (r *runner) addTimer(at int64, k timerKind, j *simJob, prio int) {
	r.timers.push(timer{at: at, seq: r.seq, kind: k, j: j, prio: prio})
	r.seq++
}

// armTimers starts copy i's wait now or arms its run_at, and arms its
// cancel and reprioritize instants.
func (r *runner) armTimers(j *simJob, i int) {
	g := j.g
	if j.ready > r.now {
		r.addTimer(j.ready, tReady, j, 0)
	} else {
		r.makeReady(j)
	}
	shift := int64(i) * g.every
	if g.hasCancel {
		r.addTimer(g.cancelAt+shift, tCancel, j, 0)
	}
	if g.hasReprio {
		r.addTimer(g.reprioAt+shift, tReprio, j, g.reprioPrio)
	}
}

// fireTimers applies every timer due now, in arming order.
func (r *runner) fireTimers() error {
	for r.timers.len() > 0 && r.timers.peek().at <= r.now {
		t := r.timers.pop()
		var err error
		switch t.kind {
		case tReady:
			if t.j.state == stWaitReady {
				r.makeReady(t.j)
			}
		case tCancel:
			err = r.cancel(t.j)
		case tReprio:
			err = r.reprioritize(t.j, t.prio)
		case tStop:
			err = r.stop(t)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) makeReady(j *simJob) {
	j.state = stPending
	r.stats.ready(j, r.now)
}

// unqueue takes a job that never ran out of the backlog statistics.
func (r *runner) unqueue(j *simJob) {
	if j.state == stPending {
		r.stats.unqueue(j, r.now)
	}
}

// cancel ends a pending job with Cancel or a running one with Finish; an
// ended job is left alone.
func (r *runner) cancel(j *simJob) error {
	var dropped []policy.Dropped
	var err error
	switch j.state {
	case stEnded:
		return nil
	case stRunning:
		dropped, err = r.eng.Finish(j.id, r.at(), policy.Cancelled)
		r.stats.stopRunning(j, r.now)
		r.stats.cancelledRunning++
	default:
		dropped, err = r.eng.Cancel(j.id, r.at())
		r.unqueue(j)
		r.stats.cancelledPending++
	}
	if err != nil {
		return fmt.Errorf("sim: cancel %s: %w", j.id, err)
	}
	if err := r.retire(j, Cancel, policy.Cancelled); err != nil {
		return err
	}
	return r.dropAll(dropped)
}

// reprioritize changes a job's priority if it has not started.
func (r *runner) reprioritize(j *simJob, prio int) error {
	if j.state != stWaitReady && j.state != stPending {
		return nil
	}
	if err := r.eng.Reprioritize(j.id, prio, r.at()); err != nil {
		return fmt.Errorf("sim: reprioritize %s: %w", j.id, err)
	}
	j.prio = prio
	return r.emitJob(j, Reprioritize)
}

// preempt asks the engine which running jobs to stop for the jobs that
// have waited past their preempt_after, and stops each when its grace
// ends (the simulator's workers use all of it).
func (r *runner) preempt() error {
	for _, p := range r.eng.Preemptions(r.at()) {
		at := int64(p.GraceEnds.Sub(Epoch))
		for _, id := range p.Victims {
			j := r.jobs[id]
			if j == nil || j.state != stRunning {
				return fmt.Errorf("sim: engine preempts %q, which the simulator does not hold as running", id)
			}
			r.timers.push(timer{at: at, seq: r.seq, kind: tStop, j: j, admit: j.admit, forID: p.JobID})
			r.seq++
		}
	}
	return nil
}

// stop ends a preempted job's run and queues it again with its age.
func (r *runner) stop(t timer) error {
	j := t.j
	if j.state != stRunning || j.admit != t.admit {
		return nil // it ended in the grace, or runs again
	}
	if err := r.eng.Unadmit(j.id, r.at()); err != nil {
		return fmt.Errorf("sim: stop %s: %w", j.id, err)
	}
	r.running.removeFunc(func(x *simJob) bool { return x == j })
	r.stats.stopRunning(j, r.now)
	r.stats.preempted++
	var ev Event
	if r.emitting {
		ev = r.event(j, Preempt)
		ev.Ran, ev.For = time.Duration(r.now-j.admit), t.forID
	}
	j.state, j.worker, j.ready = stPending, "", r.now
	r.stats.ready(j, r.now)
	if !r.emitting {
		return nil
	}
	return r.emit(ev)
}
