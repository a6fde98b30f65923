package policy

import (
	"cmp"
	"slices"
	"time"
)

// Preemption (DESIGN §3.8, seed 000's v2; opt-in per lane and per tier).
//
// A job that holds a reservation (reserve.go) and has waited longer than
// its preempt_after (its tier's, else its lane's; 0: never) may take its
// demand back from running jobs of strictly lower priority. Victims are
// chosen on one worker that could run it: there, the running jobs of
// strictly lower priority, never one marked NotPreemptible, and of
// another lane only when that lane's dominant share is above its fair
// share (its weight over the weights of the lanes with work: Kueue's
// reclaim). Among them the engine takes the fewest jobs that, with what
// is free, cover the job's demand and a slot, and among sets of that size
// the one losing the least progress (time run so far); no more are
// stopped than needed. The worker needing the fewest victims wins, then
// the least progress lost, then placement's order.
//
// The engine only decides. Its owner stops the victims (a cancel with a
// reason and the kill grace) and calls Unadmit for each once it has
// stopped: the victim is queued again with its age, and nothing is
// observed as cost. Until then a victim is marked: it is expected to end
// by the grace's end (so the waiting job's reservation sits on its worker
// and nothing refills the freed units), it is not chosen again, and the
// waiting job preempts nothing more while its victims stop.

// Preemption is one decision to stop running jobs for a waiting one.
type Preemption struct {
	JobID     string   // the waiting job
	WorkerID  string   // where its victims run
	Victims   []string // running jobs to stop, least progress first
	GraceEnds time.Time
}

// Preemptions decides, at now, which running jobs to stop for the jobs
// that hold a reservation and have waited past their preempt_after. Call
// it after Dispatch has admitted what it could. Victims are marked until
// their owner calls Unadmit (or Finish) for them.
func (e *Engine) Preemptions(now time.Time) []Preemption {
	if !e.preemptionOn() {
		return nil
	}
	e.advance(now)
	e.gen++
	e.plan(e.lanesByShare(), now)
	var out []Preemption
	for i := range e.reserved {
		en := e.reserved[i].en
		after := e.preemptAfter(en)
		if after <= 0 || e.stops[en] != nil || now.Sub(time.Unix(0, en.enq)) < after {
			continue
		}
		w, victims := e.chooseVictims(en, now)
		if w == nil {
			continue
		}
		grace := now.Add(en.ln.cfg.Preemption.Grace)
		p := Preemption{JobID: en.job.ID, WorkerID: w.ID, GraceEnds: grace}
		for _, v := range victims {
			e.stops[v] = &stopState{by: grace, forJob: en}
			p.Victims = append(p.Victims, v.job.ID)
		}
		e.stops[en] = &stopState{victims: len(victims), by: grace}
		e.preempted += len(victims)
		out = append(out, p)
	}
	return out
}

// preemptionOn reports whether any lane or tier allows preemption.
func (e *Engine) preemptionOn() bool {
	for _, l := range e.laneList {
		if l.cfg.Preemption.After > 0 {
			return true
		}
	}
	for _, t := range e.tiers {
		if t.PreemptAfter > 0 {
			return true
		}
	}
	return false
}

func (e *Engine) preemptAfter(en *entry) time.Duration {
	if en.tr != nil && en.tr.PreemptAfter > 0 {
		return en.tr.PreemptAfter
	}
	return en.ln.cfg.Preemption.After
}

// chooseVictims picks the worker and the fewest running jobs there to
// stop for en, or nil when no worker has enough to take.
func (e *Engine) chooseVictims(en *entry, now time.Time) (*worker, []*entry) {
	var best *worker
	var bestVictims []*entry
	var bestLost time.Duration
	for _, w := range en.grp.fit.set.workers {
		if w.removed || w.offline || w.Slots <= 0 || !w.Resources.Covers(en.job.Resources) || e.stoppingOn(w) {
			continue
		}
		victims := e.victimsOn(en, w, now)
		if victims == nil {
			continue
		}
		lost := progressLost(victims, now)
		if best == nil || len(victims) < len(bestVictims) ||
			(len(victims) == len(bestVictims) && (lost < bestLost || (lost == bestLost && placementBefore(w, 0, best, 0)))) {
			best, bestVictims, bestLost = w, victims, lost
		}
	}
	return best, bestVictims
}

// stoppingOn reports whether some job on w is already being stopped.
func (e *Engine) stoppingOn(w *worker) bool {
	for _, x := range w.jobs {
		if e.stops[x] != nil {
			return true
		}
	}
	return false
}

// victimsOn returns the fewest jobs on w to stop for en, least progress
// lost among sets of that size, or nil when stopping every candidate would
// not free enough. Up to exactSearch candidates every set is tried; past
// that, greedily least progress first, then any victim not needed is
// dropped again, most progress first.
func (e *Engine) victimsOn(en *entry, w *worker, now time.Time) []*entry {
	var cands []*entry
	for _, x := range w.jobs {
		if e.mayPreempt(en, x) {
			cands = append(cands, x)
		}
	}
	slices.SortFunc(cands, func(a, b *entry) int {
		if c := b.admittedAt.Compare(a.admittedAt); c != 0 {
			return c // later admitted: less progress
		}
		return cmp.Compare(b.seq, a.seq)
	})
	enough := func(set []*entry) bool {
		free, slots := w.free, w.freeSlots
		for _, x := range set {
			free, slots = free.Add(x.job.Resources), slots+1
		}
		return slots > 0 && free.Covers(en.job.Resources)
	}
	if !enough(cands) {
		return nil
	}
	if len(cands) <= exactSearch {
		return fewestSet(cands, enough, now)
	}
	var taken []*entry
	for _, x := range cands {
		if enough(taken) {
			break
		}
		taken = append(taken, x)
	}
	for i := len(taken) - 1; i >= 0; i-- {
		without := slices.Delete(slices.Clone(taken), i, i+1)
		if enough(without) {
			taken = without
		}
	}
	return taken
}

// exactSearch is the most candidates whose every subset is tried.
const exactSearch = 12

// fewestSet returns, among the subsets of cands that are enough, one of
// the fewest jobs with the least progress lost (cands are sorted least
// progress first, and the result keeps that order).
func fewestSet(cands []*entry, enough func([]*entry) bool, now time.Time) []*entry {
	var best []*entry
	var bestLost time.Duration
	set := make([]*entry, 0, len(cands))
	for mask := 1; mask < 1<<len(cands); mask++ {
		set = set[:0]
		for i, x := range cands {
			if mask&(1<<i) != 0 {
				set = append(set, x)
			}
		}
		if best != nil && len(set) > len(best) {
			continue
		}
		if !enough(set) {
			continue
		}
		lost := progressLost(set, now)
		if best == nil || len(set) < len(best) || lost < bestLost {
			best, bestLost = slices.Clone(set), lost
		}
	}
	return best
}

// mayPreempt reports whether x, running, may be stopped for en.
func (e *Engine) mayPreempt(en, x *entry) bool {
	if x.job.NotPreemptible || e.stops[x] != nil || x.job.Priority >= en.job.Priority {
		return false
	}
	return x.ln == en.ln || e.overFairShare(x.ln)
}

// overFairShare reports whether the lane's dominant share is above its
// fair share: its weight over the weights of the lanes with work.
func (e *Engine) overFairShare(l *lane) bool {
	var total float64
	for _, o := range e.laneList {
		if o.slots > 0 || o.queued > 0 {
			total += o.cfg.Weight
		}
	}
	if total == 0 {
		return false
	}
	return dominantShare(l.usage, l.slots, e.capacity, e.capSlots, 1) > l.cfg.Weight/total
}

func progressLost(victims []*entry, now time.Time) time.Duration {
	var d time.Duration
	for _, v := range victims {
		d += now.Sub(v.admittedAt)
	}
	return d
}

// stopState is a preemption in flight: for a victim, when its grace ends
// and the job it is stopped for; for that job, its victims still running
// and when their grace ends.
type stopState struct {
	by      time.Time
	forJob  *entry
	victims int
}

// stopDeadline is when a victim being preempted will have stopped.
func (e *Engine) stopDeadline(x *entry) (time.Time, bool) {
	if len(e.stops) == 0 {
		return time.Time{}, false
	}
	st := e.stops[x]
	if st == nil || st.forJob == nil {
		return time.Time{}, false
	}
	return st.by, true
}

// victimStopped clears a victim's mark when it stops or ends, and the
// waiting job's once its last victim has.
func (e *Engine) victimStopped(x *entry) {
	if len(e.stops) == 0 {
		return
	}
	st := e.stops[x]
	if st == nil || st.forJob == nil {
		return
	}
	delete(e.stops, x)
	if w := e.stops[st.forJob]; w != nil {
		if w.victims--; w.victims <= 0 {
			delete(e.stops, st.forJob)
		}
	}
}

// PreemptedCount is how many victims Preemptions has chosen since the
// engine was made.
func (e *Engine) PreemptedCount() int { return e.preempted }

// NextPreemption is when, as the last plan stands, the first reserved job
// that may preempt reaches its preempt_after: the owner's next call to
// Preemptions. false when no reserved job may preempt.
func (e *Engine) NextPreemption() (time.Time, bool) {
	var next time.Time
	found := false
	for i := range e.reserved {
		en := e.reserved[i].en
		after := e.preemptAfter(en)
		if after <= 0 || e.stops[en] != nil || en.state != stateQueued {
			continue
		}
		if t := time.Unix(0, en.enq).Add(after); !found || t.Before(next) {
			next, found = t, true
		}
	}
	return next, found
}
