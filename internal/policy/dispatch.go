package policy

import (
	"fmt"
	"time"
)

// Next makes one dispatch decision at now (DESIGN §3):
//
//  1. runnable set: delayed jobs whose RunAt has come join their queues;
//  2. lanes in DRF order: smallest weighted dominant share first;
//  3. in each lane, every group whose type cap, tier cap and worker fit
//     admit it offers its best class head that passes the tenant cap and
//     conflict checks (blocked heads are parked, never waited behind);
//  4. the lane's best offer by (score, fairness-key cost, enqueue, submit
//     order) is admitted on the most specialised fitting worker, and its
//     key is charged the estimated cost.
//
// The first lane with an admissible job wins. It reports false when nothing
// can be admitted now.
func (e *Engine) Next(now time.Time) (Assignment, bool) {
	e.advance(now)
	if e.free <= 0 {
		return Assignment{}, false
	}
	e.gen++
	e.clearPlan()
	for i, l := range e.lanesByShare() {
		l.turn = i
		if o, ok := e.bestInLane(l, now); ok {
			return e.admit(o, now), true
		}
	}
	return Assignment{}, false
}

// Dispatch makes decisions until nothing more can be admitted or max
// assignments were made (max <= 0: no limit).
func (e *Engine) Dispatch(now time.Time, max int) []Assignment {
	var out []Assignment
	for max <= 0 || len(out) < max {
		a, ok := e.Next(now)
		if !ok {
			break
		}
		out = append(out, a)
	}
	return out
}

// Advance applies the passage of time without deciding anything: jobs whose
// RunAt has come join their queues, idle keys and old estimates are
// forgotten. Next does this itself; an owner with no free capacity calls it
// to keep the engine's view current.
func (e *Engine) Advance(now time.Time) { e.advance(now) }

// advance applies the passage of time: due jobs, idle keys, old estimates.
func (e *Engine) advance(now time.Time) {
	e.now = now.UnixNano()
	e.promoteDue(now)
	if len(e.limits) > 0 {
		e.wakeTokens(now)
	}
	e.evictIdleKeys(now)
	e.costs.evict(now)
}

// lanesByShare returns the lanes with queued jobs that are not paused,
// smallest weighted dominant share first, ties by name.
func (e *Engine) lanesByShare() []*lane {
	ls := e.scratch[:0]
	for _, l := range e.laneList {
		if l.queued == 0 || l.paused {
			continue
		}
		l.share = dominantShare(l.usage, l.slots, e.capacity, e.capSlots, l.cfg.Weight)
		ls = append(ls, l)
		for i := len(ls) - 1; i > 0 && ls[i].share < ls[i-1].share; i-- {
			ls[i], ls[i-1] = ls[i-1], ls[i]
		}
	}
	e.scratch = ls
	return ls
}

// offer is a lane's candidate: the head of class c in group g.
type offer struct {
	g     *group
	c     *class
	score int64
	w     *worker // placement chosen under reservations; nil: choose at admit
	fill  bool    // placed on a reserved worker by backfill
}

func (o offer) better(p offer) bool {
	if o.score != p.score {
		return o.score > p.score
	}
	return tieBefore(&o.c.rank, &p.c.rank)
}

// bestInLane finds the lane's best admissible offer. A group's heap top
// has the group's highest score even when its cost snapshot is stale (cost
// only breaks ties), so groups are first ranked by that peeked score, and
// only those that can still beat the best offer so far pay for the full
// check (cost refresh, tenant cap, conflicts), best first.
//
// The lane first makes its reservations (reserve.go); they and those of
// the lanes before it in this decision's DRF order bind the placement.
func (e *Engine) bestInLane(l *lane, now time.Time) (offer, bool) {
	cands, open, ranked, found := e.planLane(l, now, true)
	e.cands = cands[:0]
	if ranked && (!found || len(e.reserved) == 0 || e.placeAround(&open, now)) {
		return open, found // the best admissible offer, placeable as it is
	}
	return e.bestOffer(cands, now, len(e.reserved) > 0, l.cfg.Backfill.Depth)
}

// bestOffer ranks the candidates' validated heads and returns the best.
// With place, each is also placed under the reservations (placeAround):
// one that every free hole it fits is closed to is skipped, as a job
// blocked by a cap is, and the scan stops after depth such skips.
func (e *Engine) bestOffer(cands []candidate, now time.Time, place bool, depth int) (offer, bool) {
	n := now.UnixNano()
	var best offer
	found := false
	skipped := 0
	for len(cands) > 0 {
		i := bestCandidate(cands)
		cand := cands[i]
		if found && cand.score < best.score {
			break
		}
		c := e.top(cand.g, now)
		if c == nil {
			cands = removeCandidate(cands, i)
			continue
		}
		o := offer{g: cand.g, c: c, score: cand.g.realScore(c, n) + cand.rarity}
		if o.score < cand.score {
			cands[i].score = o.score // its head was parked: rank it again
			continue
		}
		cands = removeCandidate(cands, i)
		if place && !e.placeAround(&o, now) {
			if skipped++; skipped >= depth {
				break
			}
			continue
		}
		if !found || o.better(best) {
			best, found = o, true
		}
	}
	return best, found
}

// candidate is an admissible group with its peeked top score.
type candidate struct {
	g      *group
	score  int64
	rarity int64
}

// The groups that pass their caps and that some registered worker could
// run, but no free one fits, are collected in e.blocked.
func (e *Engine) candidates(l *lane, n int64) []candidate {
	cands := e.cands[:0]
	e.blocked = e.blocked[:0]
	for i := 0; i < len(l.groups); i++ {
		g := l.groups[i]
		if g.queued == 0 {
			if len(g.classes) == 0 {
				l.dropGroup(i)
				i--
			}
			continue
		}
		free, ok := e.groupAdmits(g, n)
		if !ok {
			if g.passesCaps(n) && g.fit.anyWorker() {
				if c := g.peek(n); c != nil {
					e.blocked = append(e.blocked, candidate{g: g, score: g.realScore(c, n)})
				}
			}
			continue
		}
		if c := g.peek(n); c != nil {
			r := rarity(l, free)
			cands = append(cands, candidate{g: g, score: g.realScore(c, n) + r, rarity: r})
		}
	}
	return cands
}

func bestCandidate(cs []candidate) int {
	b := 0
	for i := 1; i < len(cs); i++ {
		if cs[i].score > cs[b].score {
			b = i
		}
	}
	return b
}

func removeCandidate(cs []candidate, i int) []candidate {
	last := len(cs) - 1
	cs[i] = cs[last]
	return cs[:last]
}

func (l *lane) dropGroup(i int) {
	g := l.groups[i]
	g.inLane = false
	last := len(l.groups) - 1
	l.groups[i] = l.groups[last]
	l.groups[last] = nil
	l.groups = l.groups[:last]
}

func rarity(l *lane, freeSlots int) int64 {
	if l.cfg.RarityBonus == 0 || freeSlots == 0 {
		return 0
	}
	return l.cfg.RarityBonus / int64(freeSlots)
}

// groupAdmits applies the checks shared by all of a group's jobs: type cap,
// tier cap, group-wide rate limits, and a free worker that supports and
// fits them. It returns the number of free slots that could run them.
func (e *Engine) groupAdmits(g *group, n int64) (int, bool) {
	if m := g.typ.cfg.MaxConcurrency; m > 0 && g.typ.running >= m {
		return 0, false
	}
	if g.tr != nil && g.tr.MaxRunning > 0 && g.tr.running >= g.tr.MaxRunning {
		return 0, false
	}
	if len(g.buckets) > 0 && !e.groupBucketsReady(g, n) {
		return 0, false
	}
	fits, slots := g.fit.fit(e.gen)
	return slots, fits
}

// top returns the group's best class whose head passes the per-job checks,
// cleaning up on the way: stale costs are refreshed, tombstones dropped,
// classes of a tenant at its cap or quota parked with the tenant, heads
// whose resource key is held by a conflicting job parked with that key,
// and classes or heads without a rate-limit token set aside until it
// comes.
func (e *Engine) top(g *group, now time.Time) *class {
	n := now.UnixNano()
	for {
		c := g.peek(n)
		if c == nil {
			return nil
		}
		if g.refreshCost(c) {
			continue
		}
		h := c.head()
		switch {
		case h.state != stateQueued:
			c.jobs.popHead()
			g.place(c, n)
		case c.tnt.max > 0 && c.tnt.running >= c.tnt.max, !c.tnt.quotaFits(g.shape):
			c.tenantParked = true
			g.unplace(c)
			c.tnt.parked = append(c.tnt.parked, c)
		case e.heldConflict(h) != nil:
			c.jobs.popHead()
			g.queued--
			g.ln.queued--
			e.park(e.heldConflict(h), h, g)
			g.place(c, n)
		case (len(g.tenantLimits) > 0 || len(g.keyLimits) > 0) && e.rateBlocked(g, c, now):
			// The class waits on its tenant's bucket, or its head on its
			// key's, until the next token (ratelimit.go).
		default:
			return c
		}
	}
}

// admit starts the offer's head job on the chosen worker and charges its
// fairness key.
func (e *Engine) admit(o offer, now time.Time) Assignment {
	g, c := o.g, o.c
	h := c.jobs.popHead()
	g.queued--
	g.ln.queued--
	g.ln.pending--
	g.place(c, now.UnixNano())

	w := o.w
	if w == nil {
		w = g.fit.choose()
	}
	w.freeSlots--
	w.free = w.free.Sub(h.job.Resources)
	w.running++
	w.addJob(h)
	e.free--
	e.running++
	e.gen++

	l := g.ln
	l.usage = l.usage.Add(h.job.Resources)
	l.slots++
	h.typ.running++
	if h.tr != nil {
		h.tr.running++
	}
	h.tnt.running++
	h.tnt.used = h.tnt.used.Add(h.job.Resources)
	if len(e.limits) > 0 {
		e.takeTokens(g, h, now.UnixNano())
	}
	if id := h.conflictID(); id.group != "" {
		e.holdKey(e.conflictSlot(id), h)
		e.leaveQueue(h, now) // the key is held now: no one stands in
	}
	cost := e.costs.lookup(h.typ, h.job.Key, now)
	h.fk.cost += cost

	h.state, h.cls, h.grp = stateRunning, nil, nil
	h.wk, h.admittedAt, h.cost = w, now, cost
	if o.fill {
		e.backfilled++
	}
	return Assignment{
		JobID: h.job.ID, WorkerID: w.ID, Lane: l.name, Tenant: h.tnt.name, FairnessKey: h.fk.name,
		Resources: h.job.Resources, Score: o.score, Cost: cost, Backfill: o.fill,
	}
}

// Finish ends a running job: its slot and resources return to the pool,
// parked work it blocked is released, and, unless the outcome is Released,
// jobs waiting on it are resolved. A run that ended on its own (Succeeded or
// Failed) updates the cost estimate of its (type, resource key) with its
// run time, now − admission; a cancelled or released run says nothing
// about what the job costs and is not observed. Dependents dropped
// because the outcome can never satisfy them are returned.
func (e *Engine) Finish(id string, now time.Time, out Outcome) ([]Dropped, error) {
	en, ok := e.jobs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if en.state != stateRunning {
		return nil, fmt.Errorf("%w: %s is %s", ErrNotRunning, id, en.state)
	}
	e.release(en, now)
	if out == Succeeded || out == Failed {
		e.costs.observe(en.typ.name, en.job.Key, now.Sub(en.admittedAt).Seconds(), en.cost, now)
	}
	delete(e.jobs, id)
	en.state = stateDead
	e.keyLost(en.fk, now)
	if out == Released {
		return nil, nil
	}
	return e.resolveDependents(id, out, now), nil
}

// release returns a running entry's capacity and unblocks what it blocked.
func (e *Engine) release(en *entry, now time.Time) {
	w := en.wk
	w.running--
	w.dropJob(en)
	e.victimStopped(en)
	if !w.removed {
		w.freeSlots++
		w.free = w.free.Add(en.job.Resources)
		if !w.offline {
			e.free++
		}
	}
	e.running--
	e.gen++
	l := en.ln
	l.usage = l.usage.Sub(en.job.Resources)
	l.slots--
	en.typ.running--
	if en.tr != nil {
		en.tr.running--
	}
	en.tnt.used = en.tnt.used.Sub(en.job.Resources)
	e.releaseTenant(en.tnt, now)
	if id := en.conflictID(); id.group != "" {
		e.releaseConflict(e.conflicts[id], en, now)
	}
}

func (e *Engine) releaseTenant(t *tenant, now time.Time) {
	t.running--
	if len(t.parked) == 0 || (t.max > 0 && t.running >= t.max) {
		return
	}
	parked := t.parked
	t.parked = nil
	n := now.UnixNano()
	for _, c := range parked {
		c.tenantParked = false
		c.grp.place(c, n)
	}
}

func (e *Engine) releaseConflict(cs *conflictSlot, en *entry, now time.Time) {
	if cs == nil || !cs.release(en) || len(cs.holders) > 0 {
		return
	}
	e.wakeAll(cs, now)
}

// release drops en from the key's holders, reporting whether it held it.
func (s *conflictSlot) release(en *entry) bool {
	for i, h := range s.holders {
		if h == en {
			s.holders = append(s.holders[:i], s.holders[i+1:]...)
			return true
		}
	}
	return false
}
