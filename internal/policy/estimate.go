package policy

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"time"
)

// Basis says what an estimated start rests on, from the surest to the
// least sure. An estimate takes the least sure basis of the run times it
// adds up.
type Basis string

// Bases of an estimate.
const (
	BasisLearnedCost Basis = "learned_cost" // every run time counted was learned (cost EMA of its type and resource key)
	BasisTimeout     Basis = "timeout"      // some run time is only bounded: the job's timeout, nothing learned
	BasisUnknown     Basis = "unknown"      // some run time is a guess: the type's default cost, no timeout
)

func (b Basis) rank() int {
	return slices.Index([]Basis{BasisLearnedCost, BasisTimeout, BasisUnknown}, b)
}

func lessSure(a, b Basis) Basis {
	if b.rank() > a.rank() {
		return b
	}
	return a
}

// StartEstimate is when a queued job may start, and how sure that is.
type StartEstimate struct {
	At    time.Time // zero when Basis is BasisUnknown
	Basis Basis
	// Reason says, for an unknown estimate, whose run time is not known.
	Reason string
}

// EstimateStart estimates when a queued job starts. A job holding a
// reservation starts when its reservation does. Otherwise only the slots
// of workers that could run the job count: each is free at now if its
// worker has room for the job, else when its running job is expected to
// end (expectedEnd: never before now plus the overrun margin). The jobs
// ahead of it in its lane that could use those workers take, in dispatch
// order, the slot that frees first, each for its own expected run time;
// the job starts when a slot frees after them, and not before its demand
// fits on one of the workers. Caps, conflicts and the other lanes' share
// are not modelled. When the time rests on a run time nothing bounds (no
// learned cost, no timeout), the estimate is unknown and says whose; it
// never gives a time built on a guess. ok is false when the job is not
// queued or no registered worker could ever run it.
func (e *Engine) EstimateStart(id string, now time.Time) (StartEstimate, bool) {
	en, found := e.jobs[id]
	if !found || en.state != stateQueued {
		return StartEstimate{}, false
	}
	e.advance(now)
	e.gen++
	e.plan(e.lanesByShare(), now)
	if en.state != stateQueued {
		return StartEstimate{}, false // parked on a conflict by the plan
	}
	if r := e.reservationOf(en); r != nil {
		return knownOrNot(slotEnd{at: r.at, basis: r.basis, why: firstUnknown(e, r.waits, now)}), true
	}
	ws := e.couldRunNow(en)
	if len(ws) == 0 {
		return StartEstimate{}, false
	}
	free := e.slotEnds(en, ws, now)
	if len(free) == 0 {
		return StartEstimate{}, false
	}
	for _, x := range e.queuedAhead(en, now) {
		if !competes(x, ws) {
			continue
		}
		d, b := e.runTime(x)
		s := heap.Pop(&free).(slotEnd)
		s.at, s.basis = s.at.Add(d), lessSure(s.basis, b)
		if b == BasisUnknown && s.why == "" {
			s.why = x.job.ID
		}
		heap.Push(&free, s)
	}
	start := free[0]
	if fit, ok := e.earliestAnyFit(en, ws, now); ok && fit.at.After(start.at) {
		start = fit
	}
	return knownOrNot(start), true
}

// slotEnd is when a slot frees, what that rests on and, when it rests on
// a guess, whose run time was guessed.
type slotEnd struct {
	at    time.Time
	basis Basis
	why   string
}

func knownOrNot(s slotEnd) StartEstimate {
	if s.basis == BasisUnknown {
		return StartEstimate{Basis: BasisUnknown, Reason: fmt.Sprintf(
			"the run time of job %s is not known: nothing was learned for its type and resource key, and it has no timeout", s.why)}
	}
	return StartEstimate{At: s.at, Basis: s.basis}
}

func firstUnknown(e *Engine, xs []*entry, now time.Time) string {
	for _, x := range xs {
		if _, b := e.expectedEnd(x, now); b == BasisUnknown {
			return x.job.ID
		}
	}
	return ""
}

// couldRunNow lists the registered workers that could ever run en.
func (e *Engine) couldRunNow(en *entry) []*worker {
	var ws []*worker
	for _, w := range en.grp.fit.set.workers {
		if !w.removed && !w.offline && w.Slots > 0 && w.Resources.Covers(en.job.Resources) {
			ws = append(ws, w)
		}
	}
	return ws
}

func competes(x *entry, ws []*worker) bool {
	for _, w := range ws {
		if w.supports(x.typ.name, x.job.Labels) {
			return true
		}
	}
	return false
}

// slotEnds is the heap of the workers' slots by when each frees for en.
func (e *Engine) slotEnds(en *entry, ws []*worker, now time.Time) slotTimes {
	var free slotTimes
	for _, w := range ws {
		if w.free.Covers(en.job.Resources) {
			for range w.freeSlots {
				free = append(free, slotEnd{at: now, basis: BasisLearnedCost})
			}
		}
		for _, x := range w.jobs {
			end, b := e.expectedEnd(x, now)
			s := slotEnd{at: end, basis: b}
			if b == BasisUnknown {
				s.why = x.job.ID
			}
			free = append(free, s)
		}
	}
	heap.Init(&free)
	return free
}

// earliestAnyFit is when en's demand first fits on one of ws, by the
// expected ends of their running jobs.
func (e *Engine) earliestAnyFit(en *entry, ws []*worker, now time.Time) (slotEnd, bool) {
	var best slotEnd
	found := false
	for _, w := range ws {
		r := e.fitTime(en, w, now)
		if !found || r.at.Before(best.at) {
			best, found = slotEnd{at: r.at, basis: r.basis, why: firstUnknown(e, r.waits, now)}, true
		}
	}
	return best, found
}

// runTime is a job's expected run time and what it rests on: the learned
// cost of its (type, resource key), else its timeout, else its type's
// default cost (at least a second).
func (e *Engine) runTime(x *entry) (time.Duration, Basis) {
	if c, ok := e.Estimate(x.typ.name, x.job.Key); ok {
		return seconds(c), BasisLearnedCost
	}
	if x.job.Timeout > 0 {
		return x.job.Timeout, BasisTimeout
	}
	return seconds(max(x.typ.cfg.DefaultCost, 1)), BasisUnknown
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// queuedAhead lists the lane's queued jobs that rank ahead of en, in
// dispatch order.
func (e *Engine) queuedAhead(en *entry, now time.Time) []*entry {
	_, ahead := e.ahead(en, now)
	slices.SortFunc(ahead, func(a, b rankedEntry) int {
		switch {
		case a.score != b.score:
			return cmp.Compare(b.score, a.score)
		case aheadOf(a.x, b.x):
			return -1
		case aheadOf(b.x, a.x):
			return 1
		}
		return 0
	})
	out := make([]*entry, len(ahead))
	for i, r := range ahead {
		out[i] = r.x
	}
	return out
}

// slotTimes is a min-heap of the times slots free up.
type slotTimes []slotEnd

func (s slotTimes) Len() int           { return len(s) }
func (s slotTimes) Less(i, j int) bool { return s[i].at.Before(s[j].at) }
func (s slotTimes) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s *slotTimes) Push(x any)        { *s = append(*s, x.(slotEnd)) }
func (s *slotTimes) Pop() any {
	old := *s
	t := old[len(old)-1]
	*s = old[:len(old)-1]
	return t
}
