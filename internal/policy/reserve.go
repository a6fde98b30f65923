package policy

import (
	"cmp"
	"slices"
	"time"
)

// Reservations and backfill (Slurm's backfill, DESIGN §3.7).
//
// Admission skips a job that fits in no free hole, so that it does not
// block the jobs behind it. Without a limit that skip is starvation: a job
// that needs a whole worker waits behind a stream of small jobs for as long
// as the stream lasts, whatever its priority, because every unit that
// frees goes to the next small job.
//
// So at every decision, each lane whose best-ranked ready job (by the
// lane's own order: score, fairness-key cost, enqueue, submit order) fits
// no free hole reserves for it: the worker where it fits earliest, and the
// time it fits there, predicted from the expected ends of the jobs running
// on that worker (expectedEnd). The lane's next best blocked jobs reserve
// too, up to BackfillConfig.Reservations, each on a worker of its own.
//
// A reservation binds the other admissions onto its worker from its own
// lane and from the lanes after it in this decision's DRF order (a lane
// with a smaller share is served first anyway): such a job may take units
// there only if it is predicted to end before
// the reservation starts (its learned cost or its timeout; a job whose run
// time is only guessed never is), or if, taking them, it still leaves the
// reserved job's demand free at the reservation's start (it does not touch
// the reserved units). A job of the same lane that ranks above the
// reserved one is not bound: it goes first anyway. What a reservation holds
// back stays idle as it frees, so the worker drains for the reserved job.
//
// Reservations are not stored: they are planned again at every decision
// from the queue and the running jobs (their admission times, learned
// costs and timeouts), so a restarted or failed-over engine rebuilt from
// the store plans the same reservation, and the simulator is deterministic.

// reservation is a blocked job's claim on the worker where it fits first.
type reservation struct {
	en    *entry
	wk    *worker
	at    time.Time // predicted start: the last of waits ends
	basis Basis     // the least sure basis of the ends it waits for
	waits []*entry  // running jobs on wk whose ends free its demand
	// deadline is the end a backfill must be predicted by: the latest of
	// the ends predicted for waits when they were admitted. Unlike at it
	// does not move later as they overrun, so that a run time estimated
	// too short delays the reservation once, not for ever: once the
	// predictions have passed, nothing backfills by prediction.
	deadline time.Time
	// bound is the latest admission + timeout of waits when each has a
	// timeout (zero otherwise): when they have ended for certain.
	bound time.Time
	score int64 // the job's score and rank when planned: who outranks it
	rank  rank
}

// clearPlan forgets the last decision's reservations.
func (e *Engine) clearPlan() {
	for i := range e.reserved {
		e.reserved[i] = reservation{}
	}
	e.reserved = e.reserved[:0]
}

// plan makes every lane's reservations, in DRF order, as a decision that
// admits nothing would: for the queries (Explain, Reservations). A
// decision plans each lane just before choosing in it (bestInLane), so
// that it stops at the lane that admits: a reservation binds only its own
// lane and those after it.
func (e *Engine) plan(lanes []*lane, now time.Time) {
	e.clearPlan()
	for i, l := range lanes {
		l.turn = i
		cands, _, _, _ := e.planLane(l, now, false)
		e.cands = cands[:0]
	}
}

// planLane collects the lane's candidates and reserves for its best
// blocked jobs that no admissible job of the lane outranks. When it had
// to rank the admissible jobs for that, it returns the best of them
// (open, found): with no reservation in force it is the lane's choice.
//
// remember is true for a decision, which remembers the worker it reserves
// (reserveFor); the queries plan without changing anything.
func (e *Engine) planLane(l *lane, now time.Time, remember bool) (cands []candidate, open offer, ranked, found bool) {
	cands = e.candidates(l, now.UnixNano())
	if len(e.blocked) == 0 || l.cfg.Backfill.Off {
		return cands, offer{}, false, false
	}
	e.opens = append(e.opens[:0], cands...)
	open, found = e.bestOffer(e.opens, now, false, 0)
	if !found || e.blocked[bestCandidate(e.blocked)].score >= open.score {
		e.reserveBlocked(l, e.blocked, open, found, now, remember)
	}
	return cands, open, true, found
}

// reserveBlocked reserves for the lane's best blocked heads, best first
// by the lane's order, until one ranks below open, the lane's best
// admissible offer.
func (e *Engine) reserveBlocked(l *lane, blocked []candidate, open offer, haveOpen bool, now time.Time, remember bool) {
	for made := 0; made < l.cfg.Backfill.Reservations && len(blocked) > 0; {
		e.round = append(e.round[:0], blocked...)
		o, ok := e.bestOffer(e.round, now, false, 0)
		if !ok || (haveOpen && open.better(o)) {
			return
		}
		for i := range blocked {
			if blocked[i].g == o.g {
				blocked = removeCandidate(blocked, i)
				break
			}
		}
		r, ok := e.reserveFor(o.c.head(), now, remember)
		if !ok {
			continue
		}
		r.score, r.rank = o.score, o.c.rank
		if !r.en.reservedOnce {
			r.en.reservedOnce = true
			e.reservationsMade++
		}
		e.reserved = append(e.reserved, r)
		made++
	}
}

// passesCaps reports whether the group's type and tier caps and its
// group-wide rate limits admit one more: a group waiting for a token
// reserves nothing, so it never holds capacity idle.
func (g *group) passesCaps(n int64) bool {
	if m := g.typ.cfg.MaxConcurrency; m > 0 && g.typ.running >= m {
		return false
	}
	for _, b := range g.buckets {
		if !b.ready(n) {
			return false
		}
	}
	return g.tr == nil || g.tr.MaxRunning == 0 || g.tr.running < g.tr.MaxRunning
}

// reserveFor makes en's reservation: on the worker a decision chose for
// it before, while that worker can still take it, else on the one where
// it fits first (earliestFit), which a decision then remembers. A
// reservation that moved to whichever worker looks earliest at each
// decision would restart the drain at each move, and the bound would not
// hold (predictions change as run times are learned and jobs overrun).
// Queries (Explain, Reservations, Preemptions, EstimateStart) use the
// remembered worker but do not change it.
func (e *Engine) reserveFor(en *entry, now time.Time, remember bool) (reservation, bool) {
	if w := en.resvWorker; w != nil && e.canReserve(en, w) {
		return e.fitTime(en, w, now), true
	}
	r, ok := e.earliestFit(en, now)
	if ok && remember {
		en.resvWorker = r.wk
	}
	return r, ok
}

// canReserve reports whether w could hold en's reservation now.
func (e *Engine) canReserve(en *entry, w *worker) bool {
	return !w.removed && !w.offline && w.Slots > 0 && w.Resources.Covers(en.job.Resources) && !e.reservedWorker(w)
}

// earliestFit finds, among the workers that could ever run en and hold no
// reservation yet, the one where en fits first: by the timeouts of the
// jobs it would wait for when they all have one (a bound that only grows
// on a worker taking new work, never on a draining one), else by their
// expected ends; ties go to the worker supporting the fewest types, then
// the lowest ID (placement's order).
func (e *Engine) earliestFit(en *entry, now time.Time) (reservation, bool) {
	var best reservation
	found := false
	for _, w := range en.grp.fit.set.workers {
		if !e.canReserve(en, w) {
			continue
		}
		r := e.fitTime(en, w, now)
		if !found || r.key().Before(best.key()) || (r.key().Equal(best.key()) && placementBefore(w, 0, best.wk, 0)) {
			best, found = r, true
		}
	}
	return best, found
}

// key is what earliestFit compares: the timeout bound when known.
func (r *reservation) key() time.Time {
	if !r.bound.IsZero() {
		return r.bound
	}
	return r.at
}

func (e *Engine) reservedWorker(w *worker) bool {
	for i := range e.reserved {
		if e.reserved[i].wk == w {
			return true
		}
	}
	return false
}

// runningEnd is a running job with its expected end.
type runningEnd struct {
	en    *entry
	end   time.Time
	basis Basis
}

// ends returns the jobs running on w by expected end, earliest first.
func (e *Engine) ends(w *worker, now time.Time) []runningEnd {
	out := e.endsBuf[:0]
	for _, x := range w.jobs {
		end, b := e.expectedEnd(x, now)
		out = append(out, runningEnd{x, end, b})
	}
	slices.SortFunc(out, func(a, b runningEnd) int {
		if c := a.end.Compare(b.end); c != 0 {
			return c
		}
		if c := a.en.admittedAt.Compare(b.en.admittedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.en.seq, b.en.seq)
	})
	e.endsBuf = out
	return out
}

// fitTime is when en's demand and a slot are free on w: now if they are,
// else the expected end of the running job whose release completes them.
func (e *Engine) fitTime(en *entry, w *worker, now time.Time) reservation {
	r := reservation{en: en, wk: w, at: now, deadline: now, basis: BasisLearnedCost}
	free, slots := w.free, w.freeSlots
	if slots > 0 && free.Covers(en.job.Resources) {
		return r
	}
	r.deadline = now
	bounded := true
	for _, x := range e.ends(w, now) {
		free, slots = free.Add(x.en.job.Resources), slots+1
		r.at, r.basis = x.end, lessSure(r.basis, x.basis)
		r.waits = append(r.waits, x.en)
		if p := e.predictedEnd(x.en); p.After(r.deadline) {
			r.deadline = p
		}
		if t := x.en.job.Timeout; t > 0 && bounded {
			if end := x.en.admittedAt.Add(t); end.After(r.bound) {
				r.bound = end
			}
		} else {
			bounded = false
		}
		if slots > 0 && free.Covers(en.job.Resources) {
			break
		}
	}
	if !bounded {
		r.bound = time.Time{}
	}
	return r
}

// predictedEnd is when a running job was predicted to end at admission,
// as far as the engine knows now: its admission plus its learned cost, no
// later than its timeout. It stays in the past once the job overruns.
func (e *Engine) predictedEnd(x *entry) time.Time {
	d, _ := e.runTime(x)
	if t := x.job.Timeout; t > 0 && t < d {
		d = t
	}
	end := x.admittedAt.Add(d)
	if by, ok := e.stopDeadline(x); ok && by.Before(end) {
		return by
	}
	return end
}

// Overrun margin: a running job past its expected end is expected to end
// a second from now (never "now": an estimate learned from a few short
// runs must not say that a job which is visibly still running should
// have ended). The margin is the same for every overdue job, so that
// among them the one that started first is still expected to end first.
const minOverrun = time.Second

// expectedEnd is when a running job is expected to end, and what that
// rests on: its admission plus its expected run time (runTime), never
// later than its timeout, and never before now plus the overrun margin.
func (e *Engine) expectedEnd(x *entry, now time.Time) (time.Time, Basis) {
	d, b := e.runTime(x)
	end := x.admittedAt.Add(d)
	if t := x.job.Timeout; t > 0 && x.admittedAt.Add(t).Before(end) {
		end, b = x.admittedAt.Add(t), BasisTimeout
	}
	if by, ok := e.stopDeadline(x); ok && by.Before(end) {
		end, b = by, BasisTimeout // being preempted: stopped by the grace's end
	}
	if end.After(now) {
		return end, b
	}
	end = now.Add(minOverrun)
	if t := x.job.Timeout; t > 0 && x.admittedAt.Add(t).Before(end) && x.admittedAt.Add(t).After(now) {
		end = x.admittedAt.Add(t) // it is stopped by then
	}
	return end, b
}

// runBound is how long en would run if admitted now, when that is known
// well enough to backfill on: its learned cost, or its timeout when that
// is shorter or nothing was learned. A guessed run time does not count.
func (e *Engine) runBound(en *entry) (time.Duration, bool) {
	d, b := e.runTime(en)
	if t := en.job.Timeout; t > 0 && (b != BasisLearnedCost || t < d) {
		return t, true
	}
	return d, b == BasisLearnedCost
}

// placeAround places the offer on a free worker that fits it without
// breaking a reservation, most specialised first as choose does. It
// reports false when every free hole it fits is held for a better job.
func (e *Engine) placeAround(o *offer, now time.Time) bool {
	h := o.c.head()
	var best *worker
	var bestLeft float64
	bestFill := false
	for _, w := range o.g.fit.set.workers {
		if w.offline || w.freeSlots == 0 || !w.free.Covers(o.g.shape) {
			continue
		}
		ok, fill := e.mayTake(h, o.score, &o.c.rank, w, now)
		if !ok {
			continue
		}
		left := w.leftover(o.g.shape)
		if best == nil || placementBefore(w, left, best, bestLeft) {
			best, bestLeft, bestFill = w, left, fill
		}
	}
	o.w, o.fill = best, bestFill
	return best != nil
}

// mayTake reports whether h, of the given score and rank, may take units
// on w under the reservations there, and whether doing so is a backfill.
func (e *Engine) mayTake(h *entry, score int64, rk *rank, w *worker, now time.Time) (ok, fill bool) {
	for i := range e.reserved {
		r := &e.reserved[i]
		if r.wk != w || r.en == h {
			continue
		}
		if r.en.ln == h.ln && (score > r.score || (score == r.score && tieBefore(rk, &r.rank))) {
			continue // it outranks the reserved job in their lane
		}
		if h.ln.turn < r.en.ln.turn {
			continue // its lane comes first in DRF order: it is served before
		}
		if d, known := e.runBound(h); known && !now.Add(d).After(r.deadline) {
			fill = true
			continue
		}
		if e.leavesRoom(r, h) {
			fill = true
			continue
		}
		return false, false
	}
	return true, fill
}

// leavesRoom reports whether r's job would still find its demand and a
// slot free when the jobs it waits for have ended, if h ran on its worker
// for ever: h does not touch the units reserved. Only the waited-for jobs
// are counted as freeing theirs, whatever their predicted ends, so a
// guessed run time never makes room.
func (e *Engine) leavesRoom(r *reservation, h *entry) bool {
	free, slots := r.wk.free.Sub(h.job.Resources), r.wk.freeSlots-1
	for _, x := range r.waits {
		free, slots = free.Add(x.job.Resources), slots+1
	}
	return slots > 0 && free.Covers(r.en.job.Resources)
}

// Reservation is a queued job's claim on the worker where it fits first.
type Reservation struct {
	JobID    string
	Lane     string
	WorkerID string
	// StartsBy is when the jobs it waits for are expected to have ended.
	StartsBy time.Time
	// Basis is the least sure of those jobs' expected ends.
	Basis Basis
	// WaitsFor are the running jobs on the worker whose ends free its
	// demand, earliest expected end first.
	WaitsFor []string
}

// Reservations plans the reservations at now, as the next decision would,
// and returns them in DRF lane order. It may tidy queues as a decision
// does but admits nothing.
func (e *Engine) Reservations(now time.Time) []Reservation {
	e.advance(now)
	e.gen++
	e.plan(e.lanesByShare(), now)
	out := make([]Reservation, 0, len(e.reserved))
	for _, r := range e.reserved {
		out = append(out, r.public())
	}
	return out
}

func (r *reservation) public() Reservation {
	ids := make([]string, len(r.waits))
	for i, x := range r.waits {
		ids[i] = x.job.ID
	}
	return Reservation{JobID: r.en.job.ID, Lane: r.en.ln.name, WorkerID: r.wk.ID, StartsBy: r.at, Basis: r.basis, WaitsFor: ids}
}

// reservationOf returns the job's reservation in the current plan, if any.
func (e *Engine) reservationOf(en *entry) *reservation {
	for i := range e.reserved {
		if e.reserved[i].en == en {
			return &e.reserved[i]
		}
	}
	return nil
}

// BackfillStats counts, since the engine was made, the jobs that held a
// reservation at least once and the admissions that were backfills.
type BackfillStats struct {
	Reserved   int
	Backfilled int
}

// BackfillStats returns the reservation and backfill counters.
func (e *Engine) BackfillStats() BackfillStats {
	return BackfillStats{Reserved: e.reservationsMade, Backfilled: e.backfilled}
}

// ReservedIdleSlots returns the slots free now on the workers that hold
// a reservation in the last decision's plan: capacity held idle for the
// reserved jobs (after a decision that admitted nothing more, the plan is
// current).
func (e *Engine) ReservedIdleSlots() int {
	n := 0
	for _, r := range e.reserved {
		if !r.wk.removed && !r.wk.offline {
			n += r.wk.freeSlots
		}
	}
	return n
}

// blockingReservation returns the reservation that keeps en, a queued job
// that fits a free hole, from every such hole, or nil when one is open to
// it.
func (e *Engine) blockingReservation(en *entry, score int64, now time.Time) *reservation {
	if len(e.reserved) == 0 {
		return nil
	}
	rk := rank{cost: en.fk.cost, enq: en.enq, seq: en.seq}
	var first *reservation
	for _, w := range en.grp.fit.set.workers {
		if w.offline || w.freeSlots == 0 || !w.free.Covers(en.grp.shape) {
			continue
		}
		if ok, _ := e.mayTake(en, score, &rk, w, now); ok {
			return nil
		}
		if first == nil {
			for i := range e.reserved {
				if e.reserved[i].wk == w {
					first = &e.reserved[i]
					break
				}
			}
		}
	}
	return first
}
