package policy

import (
	"fmt"
	"strings"
	"time"
)

// Code is a stable, machine-readable reason a job is not running.
type Code string

// Explain codes, in the order the checks are made.
const (
	CodeRunning            Code = "running"
	CodeWaitingDependency  Code = "waiting_dependency"
	CodeNotYetDue          Code = "not_yet_due"
	CodeHeld               Code = "held"        // set aside until released
	CodeLanePaused         Code = "lane_paused" // the lane admits nothing until resumed
	CodeNoCompatibleWorker Code = "no_compatible_worker"
	CodeTierCap            Code = "tier_cap"
	CodeTypeCap            Code = "type_cap"
	CodeTenantCap          Code = "tenant_cap"
	// CodeTenantQuota: the tenant's running jobs and this one would hold
	// more than the tenant's quota of a resource.
	CodeTenantQuota Code = "tenant_quota"
	// CodeRateLimited: a rate limit's bucket it draws on has no token
	// until RateLimit.NextToken.
	CodeRateLimited Code = "rate_limited"
	CodeConflict    Code = "conflict"
	CodeNoFreeSlot  Code = "no_free_slot"
	// CodeReserved: no free hole fits it, and it holds a reservation: it
	// starts on the named worker once the jobs there it waits for end.
	CodeReserved Code = "reserved"
	// CodeBehindReservation: the free holes it fits are reserved for a
	// better-ranked job, and it is not predicted to end before that job
	// starts.
	CodeBehindReservation Code = "behind_reservation"
	// CodePreempting: it holds a reservation and running jobs of lower
	// priority are being stopped for it (preempt.go).
	CodePreempting    Code = "preempting"
	CodeLaneOverShare Code = "lane_over_share"
	CodeQueued        Code = "queued" // admissible; other jobs go first
)

// Explanation says why a job is not running: the first constraint that
// blocks it, and where it stands in its lane.
type Explanation struct {
	JobID    string
	Code     Code
	Message  string
	Blocker  string // job holding the conflict, or dependency waited on
	Lane     string
	Score    int64 // current score, rarity included (queued jobs)
	Position int   // 1-based rank among the lane's queued jobs (0: not queued)
	Queued   int   // queued jobs in the lane
	RunAt    time.Time
	// Reservation is set for CodeReserved (the job's own) and
	// CodeBehindReservation (the one it waits behind).
	Reservation *Reservation
	// RateLimit is set for CodeRateLimited, Quota for CodeTenantQuota.
	RateLimit *RateBlock
	Quota     *QuotaBlock
}

// Explain reports why the job is not running at now. It may tidy internal
// queues (as a dispatch decision would) but never admits anything.
func (e *Engine) Explain(id string, now time.Time) (Explanation, error) {
	en, ok := e.jobs[id]
	if !ok {
		return Explanation{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	e.advance(now)
	e.unparkIfFree(en, now)
	e.gen++
	e.plan(e.lanesByShare(), now) // may park en, as a decision would
	x := Explanation{JobID: id, Lane: en.ln.name, Queued: en.ln.queued + en.ln.freeParked}
	switch en.state {
	case stateRunning:
		x.Code, x.Message = CodeRunning, fmt.Sprintf("running on worker %s since %s", en.wk.ID, en.admittedAt.Format(time.RFC3339))
		return x, nil
	case stateWaiting:
		x.Blocker = e.firstPendingDependency(en)
		x.Code, x.Message = CodeWaitingDependency, fmt.Sprintf("waiting for job %s to finish", x.Blocker)
		return x, nil
	case stateDelayed:
		x.RunAt = en.job.RunAt
		x.Code, x.Message = CodeNotYetDue, fmt.Sprintf("not due until %s (in %s)", en.job.RunAt.Format(time.RFC3339), en.job.RunAt.Sub(now).Round(time.Millisecond))
		return x, nil
	case stateConflict:
		x.Blocker = e.conflicts[en.conflictID()].holder().job.ID
		x.Code, x.Message = CodeConflict, fmt.Sprintf("job %s holds %s/%s", x.Blocker, en.typ.cfg.ConflictGroup, en.job.Key)
		return x, nil
	case stateHeld:
		x.Code, x.Message = CodeHeld, "held: it starts only once released"
		return x, nil
	case stateRateWait:
		b := e.waitedBucket(en)
		rb := b.block()
		x.Code, x.Message, x.RateLimit = CodeRateLimited, rateMessage(b), &rb
		return x, nil
	}
	x.Score, x.Position = e.rank(en, now)
	x.Code, x.Message, x.Blocker = e.queuedBlock(en, now)
	switch x.Code {
	case CodeRateLimited:
		rb := e.emptyBucket(en, now.UnixNano()).block()
		x.RateLimit = &rb
	case CodeTenantQuota:
		qb := en.tnt.quotaBlock(en.job.Resources)
		x.Quota = &qb
	case CodeReserved, CodePreempting:
		pr := e.reservationOf(en).public()
		x.Reservation = &pr
	case CodeBehindReservation:
		pr := e.blockingReservation(en, x.Score, now).public()
		x.Reservation = &pr
	}
	if x.Code == CodeQueued {
		x.Message = fmt.Sprintf("admissible; %d job(s) ahead in lane %s", x.Position-1, x.Lane)
	}
	return x, nil
}

func (e *Engine) firstPendingDependency(en *entry) string {
	for _, d := range en.job.DependsOn {
		for _, w := range e.dependents[d.JobID] {
			if w == en {
				return d.JobID
			}
		}
	}
	return ""
}

// queuedBlock applies the admission checks in dispatch order.
// Reason is the code Explain would give for a job, without its rank: cheap
// enough to ask for every job of a list page (a REASON column).
func (e *Engine) Reason(id string, now time.Time) (Code, error) {
	en, ok := e.jobs[id]
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	e.advance(now)
	e.unparkIfFree(en, now)
	e.gen++
	e.plan(e.lanesByShare(), now) // may park en, as a decision would
	switch en.state {
	case stateRunning:
		return CodeRunning, nil
	case stateWaiting:
		return CodeWaitingDependency, nil
	case stateDelayed:
		return CodeNotYetDue, nil
	case stateConflict:
		return CodeConflict, nil
	case stateHeld:
		return CodeHeld, nil
	case stateRateWait:
		return CodeRateLimited, nil
	}
	code, _, _ := e.queuedBlock(en, now)
	return code, nil
}

func (e *Engine) queuedBlock(en *entry, now time.Time) (Code, string, string) {
	switch code := e.blockCode(en, now.UnixNano()); code {
	case CodeLanePaused:
		return code, fmt.Sprintf("lane %s is paused: nothing in it starts until it is resumed (running jobs finish)", en.ln.name), ""
	case CodeNoCompatibleWorker:
		return code, fmt.Sprintf("no registered worker supports type %q with %s", en.typ.name, describe(en)), ""
	case CodeTierCap:
		return code, fmt.Sprintf("tier %s runs %d of %d", en.tr.Name, en.tr.running, en.tr.MaxRunning), ""
	case CodeTypeCap:
		return code, fmt.Sprintf("type %s runs %d of %d", en.typ.name, en.typ.running, en.typ.cfg.MaxConcurrency), ""
	case CodeTenantCap:
		return code, fmt.Sprintf("tenant %s runs %d of %d", en.tnt.name, en.tnt.running, en.tnt.max), ""
	case CodeTenantQuota:
		return code, quotaMessage(en.tnt.quotaBlock(en.job.Resources)), ""
	case CodeRateLimited:
		return code, rateMessage(e.emptyBucket(en, now.UnixNano())), ""
	case CodeConflict:
		cs := e.heldConflict(en)
		return code, fmt.Sprintf("job %s holds %s/%s", cs.holder().job.ID, cs.id.group, cs.id.key), cs.holder().job.ID
	case CodeNoFreeSlot:
		if r := e.reservationOf(en); r != nil {
			if st := e.stops[en]; st != nil {
				return CodePreempting, fmt.Sprintf("preempting: %d job(s) on worker %s, grace ends at %s",
					st.victims, r.wk.ID, st.by.UTC().Format(time.RFC3339)), ""
			}
			return CodeReserved, reservedMessage(r), ""
		}
		return code, fmt.Sprintf("every worker that can run it is busy (%d free slots in the pool)", e.free), ""
	}
	if r := e.blockingReservation(en, e.scoreNow(en, now), now); r != nil {
		return CodeBehindReservation, fmt.Sprintf("the free capacity it fits is reserved for job %s (starts by %s on worker %s), and it is not predicted to end before then",
			r.en.job.ID, r.at.UTC().Format(time.RFC3339), r.wk.ID), r.en.job.ID
	}
	for _, l := range e.lanesByShare() {
		if l == en.ln {
			break
		}
		if _, ok := e.bestInLane(l, now); ok {
			return CodeLaneOverShare, fmt.Sprintf("lane %s has dominant share %.3f; lane %s (%.3f) goes first", en.ln.name, en.ln.share, l.name, l.share), ""
		}
	}
	return CodeQueued, "", ""
}

// blockCode is the first of the job's own admission checks that fails,
// CodeQueued if none does (the lanes' shares are not looked at).
func (e *Engine) blockCode(en *entry, now int64) Code {
	g := en.grp
	switch {
	case en.ln.paused:
		return CodeLanePaused
	case !g.fit.anyWorker():
		return CodeNoCompatibleWorker
	case en.tr != nil && en.tr.MaxRunning > 0 && en.tr.running >= en.tr.MaxRunning:
		return CodeTierCap
	case en.typ.cfg.MaxConcurrency > 0 && en.typ.running >= en.typ.cfg.MaxConcurrency:
		return CodeTypeCap
	case en.tnt.max > 0 && en.tnt.running >= en.tnt.max:
		return CodeTenantCap
	case !en.tnt.quotaFits(en.job.Resources):
		return CodeTenantQuota
	case e.emptyBucket(en, now) != nil:
		return CodeRateLimited
	case e.heldConflict(en) != nil:
		return CodeConflict
	}
	if fits, _ := g.fit.fit(e.gen); !fits {
		return CodeNoFreeSlot
	}
	return CodeQueued
}

// WaitsForSlot reports whether a queued job is held back by capacity alone:
// it passes its caps and conflict checks and every worker that could run it
// is full. It is Explain's check without the ranking, cheap enough to ask
// on every arrival.
func (e *Engine) WaitsForSlot(id string) bool {
	en, ok := e.jobs[id]
	return ok && en.state == stateQueued && e.blockCode(en, e.now) == CodeNoFreeSlot
}

func describe(en *entry) string {
	r := en.job.Resources
	s := fmt.Sprintf("cpu=%gm memory_mb=%d gpu=%d", float64(r.MilliCPU), r.MemoryMB, r.GPU)
	if len(en.job.Labels) > 0 {
		s += fmt.Sprintf(" labels=%v", en.job.Labels)
	}
	return s
}

// rank returns the job's score and 1-based position among its lane's
// queued jobs by the dispatch order. It walks the lane: Explain is a query,
// not a decision, and may be linear.
func (e *Engine) rank(en *entry, now time.Time) (int64, int) {
	mine, ahead := e.ahead(en, now)
	return mine, len(ahead) + 1
}

// rankedEntry is a queued job with its current score.
type rankedEntry struct {
	x     *entry
	score int64
}

// ahead returns en's score and the lane's queued jobs that rank ahead of
// it (higher score, or equal score and ahead by cost and arrival), in lane
// order. A job whose conflict key is held is not ahead: it cannot go
// first while the key is held, and it is left out whether or not a
// decision or an Explain has parked it yet, so that a position does not
// depend on what was looked at before.
func (e *Engine) ahead(en *entry, now time.Time) (int64, []rankedEntry) {
	n := now.UnixNano()
	score := func(x *entry) int64 {
		_, free := x.grp.fit.fit(e.gen)
		return x.grp.sl.score(x.job.Priority, x.enq, n) + rarity(x.ln, free)
	}
	mine := score(en)
	var ahead []rankedEntry
	for _, g := range en.ln.groups {
		for _, c := range g.classes {
			for _, x := range c.jobs {
				if x == en || x.state != stateQueued || e.heldConflict(x) != nil {
					continue
				}
				if s := score(x); s > mine || (s == mine && aheadOf(x, en)) {
					ahead = append(ahead, rankedEntry{x, s})
				}
			}
		}
	}
	e.eachFreeParked(en.ln, func(g *group, x *entry) {
		_, free := g.fit.fit(e.gen)
		s := g.sl.score(x.job.Priority, x.enq, n) + rarity(x.ln, free)
		if s > mine || (s == mine && aheadOf(x, en)) {
			ahead = append(ahead, rankedEntry{x, s})
		}
	})
	return mine, ahead
}

func aheadOf(x, en *entry) bool {
	if x.fk.cost != en.fk.cost {
		return x.fk.cost < en.fk.cost
	}
	return x.before(en)
}

// scoreNow is the job's score at now, rarity included, as a decision
// would compare it.
func (e *Engine) scoreNow(en *entry, now time.Time) int64 {
	_, free := en.grp.fit.fit(e.gen)
	return en.grp.sl.score(en.job.Priority, en.enq, now.UnixNano()) + rarity(en.ln, free)
}

func reservedMessage(r *reservation) string {
	ids := make([]string, len(r.waits))
	for i, x := range r.waits {
		ids[i] = x.job.ID
	}
	if r.basis == BasisUnknown {
		return fmt.Sprintf("reserved: starts on worker %s when %s end (their run times are not known: nothing learned, no timeout)",
			r.wk.ID, strings.Join(ids, ", "))
	}
	return fmt.Sprintf("reserved: starts by %s on worker %s, when %s end (expected ends from %s)",
		r.at.UTC().Format(time.RFC3339), r.wk.ID, strings.Join(ids, ", "), r.basis)
}

// waitedBucket is the bucket a job in stateRateWait waits on: the first
// of its key's buckets that is empty, or the one whose token time it
// waits for.
func (e *Engine) waitedBucket(en *entry) *bucket {
	var last *bucket
	for _, b := range e.bucketsOf(en, e.now) {
		if b.lim.kind != byKey {
			continue
		}
		if !b.ready(e.now) {
			return b
		}
		last = b
	}
	return last
}
