package policy

import (
	"cmp"
	"container/heap"
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
	At    time.Time
	Basis Basis
}

// EstimateStart estimates when a queued job starts. The pool's slots are
// free at now, or when their running job is expected to end: its start plus
// its expected run time (runTime), never before now. The jobs ahead of it
// in its lane take, in dispatch order, the slot that frees first, each for
// its own expected run time; the job starts when a slot frees after them.
// Caps, conflicts, placement constraints and the other lanes' share are
// not modelled: the estimate is the earliest the pool's capacity allows.
// ok is false when the job is not queued or the pool has no slot.
func (e *Engine) EstimateStart(id string, now time.Time) (StartEstimate, bool) {
	en, found := e.jobs[id]
	if !found || en.state != stateQueued || e.capSlots == 0 {
		return StartEstimate{}, false
	}
	basis := BasisLearnedCost
	free := make(slotTimes, 0, e.capSlots)
	for _, x := range e.jobs {
		if x.state != stateRunning {
			continue
		}
		d, b := e.runTime(x)
		basis = lessSure(basis, b)
		end := x.admittedAt.Add(d)
		if end.Before(now) {
			end = now // overran its expected run time: it may end any moment
		}
		free = append(free, end)
	}
	for len(free) < e.capSlots {
		free = append(free, now)
	}
	heap.Init(&free)
	for _, x := range e.queuedAhead(en, now) {
		d, b := e.runTime(x)
		basis = lessSure(basis, b)
		t := heap.Pop(&free).(time.Time)
		heap.Push(&free, t.Add(d))
	}
	return StartEstimate{At: free[0], Basis: basis}, true
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
type slotTimes []time.Time

func (s slotTimes) Len() int           { return len(s) }
func (s slotTimes) Less(i, j int) bool { return s[i].Before(s[j]) }
func (s slotTimes) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s *slotTimes) Push(x any)        { *s = append(*s, x.(time.Time)) }
func (s *slotTimes) Pop() any {
	old := *s
	t := old[len(old)-1]
	*s = old[:len(old)-1]
	return t
}
