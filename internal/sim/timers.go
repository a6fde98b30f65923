package sim

import (
	"fmt"

	"github.com/fairwayhq/fairway/internal/policy"
)

type timerKind uint8

const (
	tReady  timerKind = iota // run_at reached: the job's wait starts
	tCancel                  // cancel_at
	tReprio                  // reprioritize.at
)

// timer is a per-job instant other than arrival and completion. Only jobs
// that use run_at, cancel_at or reprioritize have one.
type timer struct {
	at   int64
	seq  uint64
	kind timerKind
	j    *simJob
	prio int
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
