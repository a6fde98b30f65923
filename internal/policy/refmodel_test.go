package policy

// refModel is a brute-force reference of the scheduling model (DESIGN §3),
// written from the documentation and independent of the engine's data
// structures: no heaps, no groups, no classes, no lazy parking, no caches.
// Every decision scans every job and every worker. It is slow and obviously
// correct, which is what a property test needs to compare the engine with.

import (
	"fmt"
	"math"
	"sort"
	"time"
)

type refWorker struct {
	Worker
	types     map[string]bool // nil: every type
	labels    map[string]bool
	freeSlots int
	free      Resources
	removed   bool
}

type refJob struct {
	Job                 // normalized as the engine documents it
	seq        uint64   // submit order
	enq        int64    // EnqueuedAt, unix nanoseconds; moved to when its dependencies were met
	running    bool     // admitted and not finished
	waiting    int      // dependencies not yet satisfied
	resolved   []string // dependencies already satisfied
	worker     *refWorker
	admittedAt time.Time
	cost       float64
	readyAt    time.Time  // when its dependencies were met (or it was submitted)
	resvW      *refWorker // the worker a decision reserved for it
}

type refKey struct {
	cost      float64
	held      int // jobs of the key the engine holds, running included
	idleSince time.Time
}

type refEstID struct{ typ, key string }

type refEst struct {
	value    float64
	lastUsed time.Time
}

type refModel struct {
	cfg        Config // the engine's normalised config
	workers    map[string]*refWorker
	jobs       map[string]*refJob
	dependents map[string][]*refJob // dependency id -> jobs waiting on it, in submit order
	keys       map[string]*refKey
	est        map[refEstID]*refEst
	seq        uint64
}

// newRefModel starts a model of an engine built with cfg, the engine's
// normalised config (deep-copied: the model never shares engine state).
func newRefModel(cfg Config) *refModel {
	c := cfg
	c.Lanes, c.Types, c.Tenants = map[string]LaneConfig{}, map[string]TypeConfig{}, map[string]TenantConfig{}
	for k, v := range cfg.Lanes {
		c.Lanes[k] = v
	}
	for k, v := range cfg.Types {
		c.Types[k] = v
	}
	for k, v := range cfg.Tenants {
		c.Tenants[k] = v
	}
	c.Tiers = append([]TierConfig(nil), cfg.Tiers...)
	return &refModel{
		cfg:        c,
		workers:    map[string]*refWorker{},
		jobs:       map[string]*refJob{},
		dependents: map[string][]*refJob{},
		keys:       map[string]*refKey{},
		est:        map[refEstID]*refEst{},
	}
}

// ---- workers ----

func (m *refModel) addWorker(w Worker) {
	rw := &refWorker{Worker: w, labels: map[string]bool{}, freeSlots: w.Slots, free: w.Resources}
	if len(w.Types) > 0 {
		rw.types = map[string]bool{}
		for _, t := range w.Types {
			rw.types[t] = true
		}
	}
	for _, l := range w.Labels {
		rw.labels[l] = true
	}
	m.workers[w.ID] = rw
}

func (m *refModel) removeWorker(id string) []string {
	w := m.workers[id]
	w.removed = true
	delete(m.workers, id)
	var ids []string
	for _, j := range m.jobs {
		if j.running && j.worker == w {
			ids = append(ids, j.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

func (m *refModel) sortedWorkers() []*refWorker {
	ws := make([]*refWorker, 0, len(m.workers))
	for _, w := range m.workers {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].ID < ws[j].ID })
	return ws
}

func (w *refWorker) supports(typ string, labels []string) bool {
	if w.types != nil && !w.types[typ] {
		return false
	}
	for _, l := range labels {
		if !w.labels[l] {
			return false
		}
	}
	return true
}

func (m *refModel) capacity() (Resources, int) {
	var r Resources
	slots := 0
	for _, w := range m.workers {
		r = r.Add(w.Resources)
		slots += w.Slots
	}
	return r, slots
}

func (m *refModel) freeSlots() int {
	n := 0
	for _, w := range m.workers {
		n += w.freeSlots
	}
	return n
}

// ---- jobs ----

// normalize applies the documented defaults of Submit.
func (m *refModel) normalize(j Job, now time.Time) Job {
	tc := m.cfg.Types[j.Type]
	if j.Lane == "" {
		j.Lane = tc.Lane
	}
	if j.Lane == "" {
		j.Lane = DefaultLane
	}
	if j.PriorityDefault {
		j.Priority = DefaultPriority
		if tc.Priority != nil {
			j.Priority = *tc.Priority
		}
		j.PriorityDefault = false
	}
	if j.Resources.IsZero() {
		j.Resources = tc.Resources
	}
	if j.FairnessKey == "" {
		j.FairnessKey = j.Tenant
	}
	if j.EnqueuedAt.IsZero() {
		j.EnqueuedAt = now
	}
	if len(j.Labels) > 0 {
		ls := append([]string(nil), j.Labels...)
		sort.Strings(ls)
		out := ls[:0]
		for i, l := range ls {
			if i == 0 || l != ls[i-1] {
				out = append(out, l)
			}
		}
		j.Labels = out
	} else {
		j.Labels = nil
	}
	return j
}

func (m *refModel) key(name string) *refKey {
	if k, ok := m.keys[name]; ok {
		return k
	}
	k := &refKey{}
	if m.cfg.Cost.AdvanceNewKeys {
		min, any := 0.0, false
		for _, o := range m.keys {
			if o.held > 0 && (!any || o.cost < min) {
				min, any = o.cost, true
			}
		}
		k.cost = min
	}
	m.keys[name] = k
	return k
}

func (m *refModel) keyLost(name string, now time.Time) {
	k := m.keys[name]
	k.held--
	if k.held == 0 {
		k.idleSince = now
	}
}

// advance is what every decision and Explain does first: forget fairness
// keys idle for KeyTTL. (Due jobs need no promotion: runnable() looks at
// RunAt directly. Estimates unused for EstimateTTL may be evicted, but the
// engine documents that it may do so late; the harness synchronises them
// from the engine and checks the bounds, see propHarness.syncEstimates.)
func (m *refModel) advance(now time.Time) {
	for name, k := range m.keys {
		if k.held == 0 && now.Sub(k.idleSince) >= m.cfg.Cost.KeyTTL {
			delete(m.keys, name)
		}
	}
}

// submit records a job the engine accepted.
func (m *refModel) submit(j Job, now time.Time) *refJob {
	j = m.normalize(j, now)
	k := m.key(j.FairnessKey)
	k.held++
	m.seq++
	rj := &refJob{Job: j, seq: m.seq, enq: j.EnqueuedAt.UnixNano(), waiting: len(j.DependsOn), readyAt: now}
	m.jobs[j.ID] = rj
	for _, d := range j.DependsOn {
		m.dependents[d.JobID] = append(m.dependents[d.JobID], rj)
	}
	return rj
}

// retire forgets a job that is not running (cancel or dropped dependent).
func (m *refModel) retire(j *refJob, now time.Time) {
	delete(m.jobs, j.ID)
	if j.waiting > 0 {
		for _, d := range j.DependsOn {
			ds := m.dependents[d.JobID]
			for i, x := range ds {
				if x == j {
					ds = append(ds[:i:i], ds[i+1:]...)
					break
				}
			}
			if len(ds) == 0 {
				delete(m.dependents, d.JobID)
			} else {
				m.dependents[d.JobID] = ds
			}
		}
	}
	m.keyLost(j.FairnessKey, now)
}

func refSatisfies(c Condition, out Outcome) bool {
	switch c {
	case AfterSuccess:
		return out == Succeeded
	case AfterFailure:
		return out == Failed
	}
	return true
}

// resolve tells the dependents of id how it ended, transitively.
func (m *refModel) resolve(id string, out Outcome, now time.Time) []Dropped {
	var dropped []Dropped
	type ev struct {
		id  string
		out Outcome
	}
	queue := []ev{{id, out}}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		ds := m.dependents[e.id]
		delete(m.dependents, e.id)
		for _, j := range ds {
			if m.jobs[j.ID] != j || j.waiting == 0 {
				continue
			}
			cond := AfterAny
			for _, d := range j.DependsOn {
				if d.JobID == e.id {
					cond = d.Condition
					break
				}
			}
			if refSatisfies(cond, e.out) {
				j.waiting--
				j.resolved = append(j.resolved, e.id)
				if j.waiting == 0 {
					// docs/scheduling.md: a job ages from when it became
					// runnable — its dependencies met ...
					j.readyAt = now
					j.enq = max(j.enq, now.UnixNano())
				}
				continue
			}
			m.retire(j, now)
			dropped = append(dropped, Dropped{JobID: j.ID, DependencyID: e.id})
			queue = append(queue, ev{j.ID, Cancelled})
		}
	}
	return dropped
}

func (m *refModel) cancel(id string, now time.Time) []Dropped {
	m.retire(m.jobs[id], now)
	return m.resolve(id, Cancelled, now)
}

func (m *refModel) lookupCost(typ, key string, now time.Time) float64 {
	if v, ok := m.est[refEstID{typ, key}]; ok {
		v.lastUsed = now
		return v.value
	}
	if c := m.cfg.Types[typ].DefaultCost; c > 0 {
		return c
	}
	return m.cfg.Cost.DefaultCost
}

// restore records Engine.Restore: a job put straight into the running
// state on w, its fairness key not charged again.
func (m *refModel) restore(j Job, w *refWorker, admittedAt time.Time, cost float64) *refJob {
	j.DependsOn = nil
	rj := m.submit(j, admittedAt)
	rj.running, rj.worker, rj.admittedAt, rj.cost = true, w, admittedAt, cost
	w.freeSlots--
	w.free = w.free.Sub(rj.Resources)
	return rj
}

func (m *refModel) setEstimate(typ, key string, v float64, now time.Time) {
	m.est[refEstID{typ, key}] = &refEst{value: v, lastUsed: now}
}

func (m *refModel) admit(j *refJob, w *refWorker, now time.Time) float64 {
	j.running, j.worker, j.admittedAt = true, w, now
	w.freeSlots--
	w.free = w.free.Sub(j.Resources)
	j.cost = m.lookupCost(j.Type, j.Key, now)
	m.keys[j.FairnessKey].cost += j.cost
	return j.cost
}

func (m *refModel) finish(id string, now time.Time, out Outcome) []Dropped {
	j := m.jobs[id]
	if !j.worker.removed {
		j.worker.freeSlots++
		j.worker.free = j.worker.free.Add(j.Resources)
	}
	// Only a run that ended on its own says what the job costs (Finish's
	// documentation): cancelled and released runs are not observed.
	if out == Succeeded || out == Failed {
		prev := j.cost
		if v, ok := m.est[refEstID{j.Type, j.Key}]; ok {
			prev = v.value
		}
		a := m.cfg.Cost.Alpha
		m.setEstimate(j.Type, j.Key, a*now.Sub(j.admittedAt).Seconds()+(1-a)*prev, now)
	}
	delete(m.jobs, id)
	m.keyLost(j.FairnessKey, now)
	if out == Released {
		return nil
	}
	return m.resolve(id, out, now)
}

// unadmit undoes a running job's admission: its capacity is free again
// and it waits with the age it had (its key stays charged).
func (m *refModel) unadmit(id string) {
	j := m.jobs[id]
	if !j.worker.removed {
		j.worker.freeSlots++
		j.worker.free = j.worker.free.Add(j.Resources)
	}
	j.running, j.worker, j.admittedAt, j.cost = false, nil, time.Time{}, 0
}

// ---- admission ----

func (m *refModel) runnable(j *refJob, now time.Time) bool {
	return !j.running && j.waiting == 0 && !j.RunAt.After(now)
}

func (m *refModel) tierOf(prio int) (TierConfig, bool) {
	for _, t := range m.cfg.Tiers {
		if prio >= t.MinPriority && prio <= t.MaxPriority {
			return t, true
		}
	}
	return TierConfig{}, false
}

// running lists the running jobs in submit order.
func (m *refModel) running() []*refJob {
	var out []*refJob
	for _, j := range m.jobs {
		if j.running {
			out = append(out, j)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].seq < out[b].seq })
	return out
}

// refBlock is one admission check a job fails.
type refBlock struct {
	code   Code
	holder string // for conflicts: a running job holding the key
}

// refCounts is what the per-job admission checks count: running jobs per
// type, tier and tenant, and who holds each (conflict group, key).
type refCounts struct {
	typ, tier, tenant map[string]int
	holder            map[[2]string]string
}

func (m *refModel) counts() refCounts {
	c := refCounts{typ: map[string]int{}, tier: map[string]int{}, tenant: map[string]int{}, holder: map[[2]string]string{}}
	for _, r := range m.running() {
		c.typ[r.Type]++
		if t, ok := m.tierOf(r.Priority); ok {
			c.tier[t.Name]++
		}
		c.tenant[r.Tenant]++
		if g := m.cfg.Types[r.Type].ConflictGroup; g != "" {
			if _, ok := c.holder[[2]string{g, r.Key}]; !ok {
				c.holder[[2]string{g, r.Key}] = r.ID
			}
		}
	}
	return c
}

// blocks lists, in the engine's documented check order, every admission
// check the runnable job j fails right now. Empty: j is admissible.
func (m *refModel) blocks(j *refJob) []refBlock { return m.blocksWith(j, m.counts()) }

func (m *refModel) blocksWith(j *refJob, c refCounts) []refBlock {
	var out []refBlock
	anyWorker := false
	for _, w := range m.workers {
		if w.supports(j.Type, j.Labels) && w.Slots > 0 && w.Resources.Covers(j.Resources) {
			anyWorker = true
		}
	}
	if !anyWorker {
		out = append(out, refBlock{code: CodeNoCompatibleWorker})
	}
	if t, ok := m.tierOf(j.Priority); ok && t.MaxRunning > 0 && c.tier[t.Name] >= t.MaxRunning {
		out = append(out, refBlock{code: CodeTierCap})
	}
	if mc := m.cfg.Types[j.Type].MaxConcurrency; mc > 0 && c.typ[j.Type] >= mc {
		out = append(out, refBlock{code: CodeTypeCap})
	}
	if mr := m.cfg.Tenants[j.Tenant].MaxRunning; mr > 0 && c.tenant[j.Tenant] >= mr {
		out = append(out, refBlock{code: CodeTenantCap})
	}
	if g := m.cfg.Types[j.Type].ConflictGroup; g != "" {
		if h, ok := c.holder[[2]string{g, j.Key}]; ok {
			out = append(out, refBlock{code: CodeConflict, holder: h})
		}
	}
	if m.freeFit(j) == 0 {
		out = append(out, refBlock{code: CodeNoFreeSlot})
	}
	return out
}

// freeFit is n of the rarity bonus: free slots on workers that support the
// job and have the resources it asks for.
func (m *refModel) freeFit(j *refJob) int {
	n := 0
	for _, w := range m.workers {
		if w.supports(j.Type, j.Labels) && w.freeSlots > 0 && w.free.Covers(j.Resources) {
			n += w.freeSlots
		}
	}
	return n
}

// ageFrom is e_j of docs/scheduling.md, when the job became runnable: its
// enqueue time, moved to the moment its dependencies were met (see resolve)
// and to its RunAt if it had to wait for it. A job submitted when its
// RunAt had already passed keeps its enqueue time, as the engine does today
// (TestRegressRunAtAgeSurvivesResubmit); the workload never submits such a
// job with a backdated EnqueuedAt, so either answer agrees here.
func (m *refModel) ageFrom(j *refJob) int64 {
	if j.RunAt.After(j.readyAt) {
		return max(j.enq, j.RunAt.UnixNano())
	}
	return j.enq
}

// score is the job's score at now, rarity excluded, computed from the
// formula in queue.go: step·(⌊now/I⌋ − ⌊enq/I⌋), capped for on-demand jobs,
// plus the on-demand bonus.
func (m *refModel) score(j *refJob, now time.Time) int64 {
	lc := m.cfg.Lanes[j.Lane]
	step, interval, capAt, bonus := lc.Aging.Step, int64(lc.Aging.Interval), int64(-1), int64(0)
	if j.OnDemand {
		bonus = lc.OnDemand.Bonus
		if lc.OnDemand.Step > 0 {
			step, interval, capAt = lc.OnDemand.Step, int64(lc.OnDemand.Interval), lc.OnDemand.MaxAging
		}
	}
	var aging int64
	if step > 0 {
		fl := func(t int64) int64 { // ⌊t/interval⌋ for any sign of t
			q := t / interval
			if t%interval != 0 && t < 0 {
				q--
			}
			return q
		}
		aging = step * (fl(now.UnixNano()) - fl(m.ageFrom(j)))
		if capAt >= 0 && aging > capAt {
			aging = capAt
		}
	}
	return int64(j.Priority) + bonus + aging
}

func (m *refModel) rarity(j *refJob) int64 {
	b := m.cfg.Lanes[j.Lane].RarityBonus
	n := m.freeFit(j)
	if b == 0 || n == 0 {
		return 0
	}
	return b / int64(n)
}

// fullScore is the score a decision compares: rarity included.
func (m *refModel) fullScore(j *refJob, now time.Time) int64 {
	return m.score(j, now) + m.rarity(j)
}

// ahead reports whether a goes before b inside a lane: higher score, lower
// fairness-key cost, earlier enqueue, earlier submit.
func (m *refModel) ahead(a, b *refJob, now time.Time) bool {
	sa, sb := m.fullScore(a, now), m.fullScore(b, now)
	if sa != sb {
		return sa > sb
	}
	ca, cb := m.keys[a.FairnessKey].cost, m.keys[b.FairnessKey].cost
	if ca != cb {
		return ca < cb
	}
	if ea, eb := m.ageFrom(a), m.ageFrom(b); ea != eb {
		return ea < eb
	}
	return a.seq < b.seq
}

// share is the lane's weighted dominant share (slots count as a resource).
func (m *refModel) share(lane string) float64 {
	capRes, capSlots := m.capacity()
	var use Resources
	slots := 0
	for _, j := range m.jobs {
		if j.running && j.Lane == lane {
			use = use.Add(j.Resources)
			slots++
		}
	}
	s := 0.0
	frac := func(u, c int64) {
		if c > 0 {
			if f := float64(u) / float64(c); f > s {
				s = f
			}
		}
	}
	frac(use.MilliCPU, capRes.MilliCPU)
	frac(use.MemoryMB, capRes.MemoryMB)
	frac(use.GPU, capRes.GPU)
	frac(int64(slots), int64(capSlots))
	return s / m.cfg.Lanes[lane].Weight
}

// laneOrder is the DRF order: smallest weighted dominant share, then name.
func (m *refModel) laneOrder() []string {
	var names []string
	for n := range m.cfg.Lanes {
		names = append(names, n)
	}
	sort.Slice(names, func(a, b int) bool {
		sa, sb := m.share(names[a]), m.share(names[b])
		if sa != sb {
			return sa < sb
		}
		return names[a] < names[b]
	})
	return names
}

// admissible lists the runnable, admissible jobs of a lane, best first.
func (m *refModel) admissible(lane string, now time.Time) []*refJob {
	c := m.counts()
	var out []*refJob
	for _, j := range m.jobs {
		if j.Lane == lane && m.runnable(j, now) && len(m.blocksWith(j, c)) == 0 {
			out = append(out, j)
		}
	}
	score := map[*refJob]int64{}
	for _, j := range out {
		score[j] = m.fullScore(j, now)
	}
	sort.Slice(out, func(a, b int) bool {
		if sa, sb := score[out[a]], score[out[b]]; sa != sb {
			return sa > sb
		}
		return m.ahead(out[a], out[b], now)
	})
	return out
}

// refPick is the reference decision.
type refPick struct {
	job    *refJob
	worker *refWorker
	score  int64
	lane   string
	fill   bool // a backfill onto a reserved worker
}

// pick is what Next should admit at now, if anything: the best admissible
// job of the first lane in DRF order that has one placeable without
// breaking a reservation. A kind of job (type, labels, resources, tier,
// on-demand) whose best job cannot be placed is skipped as a whole, and a
// lane gives up after Backfill.Depth skipped kinds.
func (m *refModel) pick(now time.Time) (refPick, bool) {
	if m.freeSlots() <= 0 {
		return refPick{}, false
	}
	var res []refReservation
	c := m.counts()
	for turn, lane := range m.laneOrder() {
		res = m.planLane(lane, turn, c, now, res, true)
		skipped, failed := 0, map[string]bool{}
		for _, j := range m.admissible(lane, now) {
			k := m.kind(j)
			if failed[k] {
				continue
			}
			w, fill := m.placeAround(j, now, res)
			if w == nil {
				failed[k] = true
				if skipped++; skipped >= m.cfg.Lanes[lane].Backfill.Depth {
					break
				}
				continue
			}
			return refPick{job: j, worker: w, score: m.fullScore(j, now), lane: lane, fill: fill}, true
		}
	}
	return refPick{}, false
}

// ---- reservations (docs/scheduling.md, "Reservations and backfill") ----

type refReservation struct {
	waits    []*refJob // the running jobs whose ends free its demand
	job      *refJob
	w        *refWorker
	at       time.Time
	deadline time.Time // a backfill must be predicted to end by it
	turn     int       // its lane's position in the DRF order
}

// kind is what the engine decides placement for as a whole.
func (m *refModel) kind(j *refJob) string {
	t, _ := m.tierOf(j.Priority)
	return fmt.Sprintf("%s|%v|%+v|%s|%v", j.Type, j.Labels, j.Resources, t.Name, j.OnDemand)
}

// plan lists the reservations: per lane in DRF order, the ready jobs
// (runnable, blocked by nothing but a free hole) best first; each that
// ranks above every admissible job of its lane reserves the worker where
// it fits earliest, at most Backfill.Reservations per lane and one per
// kind and per worker.
//
// A decision (pick) plans lane by lane, up to the lane that admits, and
// remembers each reservation's worker on its job; later plans keep that
// worker while it can take the job. plan, for the queries, plans every
// lane and remembers nothing.
func (m *refModel) plan(now time.Time) []refReservation {
	var out []refReservation
	c := m.counts()
	for turn, lane := range m.laneOrder() {
		out = m.planLane(lane, turn, c, now, out, false)
	}
	return out
}

func (m *refModel) planLane(lane string, turn int, c refCounts, now time.Time, out []refReservation, remember bool) []refReservation {
	lc := m.cfg.Lanes[lane]
	if lc.Backfill.Off {
		return out
	}
	{
		var ready []*refJob
		for _, j := range m.jobs {
			if j.Lane != lane || !m.runnable(j, now) {
				continue
			}
			if bs := m.blocksWith(j, c); len(bs) == 0 || (len(bs) == 1 && bs[0].code == CodeNoFreeSlot) {
				ready = append(ready, j)
			}
		}
		sort.Slice(ready, func(a, b int) bool { return m.ahead(ready[a], ready[b], now) })
		made, tried := 0, map[string]bool{}
		for _, j := range ready {
			if made >= lc.Backfill.Reservations || m.freeFit(j) > 0 {
				break
			}
			if k := m.kind(j); !tried[k] {
				tried[k] = true
				var r refReservation
				ok := false
				if w := j.resvW; w != nil && !w.removed && m.workers[w.ID] == w && w.Slots > 0 && w.Resources.Covers(j.Resources) && !refReserved(out, w) {
					r, ok = refReservation{job: j, w: w}, true
					r.at, r.deadline, _, r.waits = m.fitTime(j, w, now)
				} else if r, ok = m.earliestFit(j, now, out); ok && remember {
					j.resvW = r.w
				}
				if ok {
					r.turn = turn
					out = append(out, r)
					made++
				}
			}
		}
	}
	return out
}

func (m *refModel) earliestFit(j *refJob, now time.Time, taken []refReservation) (refReservation, bool) {
	var best refReservation
	var bestKey time.Time
	found := false
	for _, w := range m.sortedWorkers() {
		if !w.supports(j.Type, j.Labels) || w.Slots <= 0 || !w.Resources.Covers(j.Resources) || refReserved(taken, w) {
			continue
		}
		at, deadline, bound, waits := m.fitTime(j, w, now)
		key := at
		if !bound.IsZero() {
			key = bound
		}
		if !found || key.Before(bestKey) || (key.Equal(bestKey) && refVersatility(w) < refVersatility(best.w)) {
			best, bestKey, found = refReservation{job: j, w: w, at: at, deadline: deadline, waits: waits}, key, true
		}
	}
	return best, found
}

func (m *refModel) turn(lane string) int {
	for i, l := range m.laneOrder() {
		if l == lane {
			return i
		}
	}
	return -1
}

func refReserved(rs []refReservation, w *refWorker) bool {
	for _, r := range rs {
		if r.w == w {
			return true
		}
	}
	return false
}

// fitTime is when j's demand and a slot are free on w, by the expected
// ends of the jobs running there (ties: earlier admitted first), the
// backfill deadline: the latest end predicted at admission (learned cost
// or timeout, no overrun margin) of the jobs waited for, and their latest
// admission + timeout when each has a timeout (else zero).
func (m *refModel) fitTime(j *refJob, w *refWorker, now time.Time) (time.Time, time.Time, time.Time, []*refJob) {
	free, slots := w.free, w.freeSlots
	if slots > 0 && free.Covers(j.Resources) {
		return now, now, time.Time{}, nil
	}
	var on []*refJob
	for _, x := range m.running() {
		if x.worker == w {
			on = append(on, x)
		}
	}
	sort.SliceStable(on, func(a, b int) bool {
		ea, eb := m.expectedEnd(on[a], now), m.expectedEnd(on[b], now)
		if !ea.Equal(eb) {
			return ea.Before(eb)
		}
		return on[a].admittedAt.Before(on[b].admittedAt)
	})
	at, deadline := now, now
	var bound time.Time
	var waits []*refJob
	bounded := true
	for _, x := range on {
		free, slots, at = free.Add(x.Resources), slots+1, m.expectedEnd(x, now)
		waits = append(waits, x)
		d, _ := m.runTime(x)
		if x.Timeout > 0 && x.Timeout < d {
			d = x.Timeout
		}
		if p := x.admittedAt.Add(d); p.After(deadline) {
			deadline = p
		}
		if x.Timeout > 0 {
			if e := x.admittedAt.Add(x.Timeout); e.After(bound) {
				bound = e
			}
		} else {
			bounded = false
		}
		if slots > 0 && free.Covers(j.Resources) {
			break
		}
	}
	if !bounded {
		bound = time.Time{}
	}
	return at, deadline, bound, waits
}

// runTime: the learned cost, else the timeout, else the type's default
// cost (at least a second); known is false for the last.
func (m *refModel) runTime(j *refJob) (time.Duration, bool) {
	if est, ok := m.est[refEstID{j.Type, j.Key}]; ok {
		return time.Duration(est.value * float64(time.Second)), true
	}
	if j.Timeout > 0 {
		return j.Timeout, true
	}
	return time.Duration(max(m.cfg.Types[j.Type].DefaultCost, 1) * float64(time.Second)), false
}

// expectedEnd: admission + run time, no later than the timeout; a job
// past it is expected to end a second from now, or at its timeout if that
// comes first.
func (m *refModel) expectedEnd(x *refJob, now time.Time) time.Time {
	d, _ := m.runTime(x)
	end := x.admittedAt.Add(d)
	if x.Timeout > 0 && x.admittedAt.Add(x.Timeout).Before(end) {
		end = x.admittedAt.Add(x.Timeout)
	}
	if end.After(now) {
		return end
	}
	end = now.Add(time.Second)
	if t := x.admittedAt.Add(x.Timeout); x.Timeout > 0 && t.Before(end) && t.After(now) {
		end = t
	}
	return end
}

// placeAround picks the worker: among those that support j, are free and
// fit it, and that j may take under the reservations, the fewest
// supported types, then the tightest fit, then the ID.
func (m *refModel) placeAround(j *refJob, now time.Time, res []refReservation) (*refWorker, bool) {
	var best *refWorker
	var bestLeft float64
	bestFill := false
	for _, w := range m.sortedWorkers() {
		if !w.supports(j.Type, j.Labels) || w.freeSlots == 0 || !w.free.Covers(j.Resources) {
			continue
		}
		ok, fill := m.mayTake(j, w, now, res)
		if !ok {
			continue
		}
		l := m.leftover(w, j)
		switch {
		case best == nil:
		case refVersatility(w) != refVersatility(best):
			if refVersatility(w) > refVersatility(best) {
				continue
			}
		case l >= bestLeft:
			continue
		}
		best, bestLeft, bestFill = w, l, fill
	}
	return best, bestFill
}

func (m *refModel) leftover(w *refWorker, j *refJob) float64 {
	var s float64
	if c := w.Resources.MilliCPU; c > 0 {
		s += float64(w.free.MilliCPU-j.Resources.MilliCPU) / float64(c)
	}
	if c := w.Resources.MemoryMB; c > 0 {
		s += float64(w.free.MemoryMB-j.Resources.MemoryMB) / float64(c)
	}
	if c := w.Resources.GPU; c > 0 {
		s += float64(w.free.GPU-j.Resources.GPU) / float64(c)
	}
	return s
}

// mayTake: j may use w unless a reservation there binds it: one of
// another job that j does not outrank in its lane, when j is not known to
// end before it starts and would take units it needs.
func (m *refModel) mayTake(j *refJob, w *refWorker, now time.Time, res []refReservation) (ok, fill bool) {
	for _, r := range res {
		if r.w != w || r.job == j {
			continue
		}
		if r.job.Lane == j.Lane && m.ahead(j, r.job, now) {
			continue
		}
		if m.turn(j.Lane) < r.turn {
			continue // j's lane is served first by DRF
		}
		var d time.Duration
		est, known := m.est[refEstID{j.Type, j.Key}]
		if known {
			d = time.Duration(est.value * float64(time.Second))
		}
		if j.Timeout > 0 && (!known || j.Timeout < d) {
			d, known = j.Timeout, true
		}
		if known && !now.Add(d).After(r.deadline) {
			fill = true
			continue
		}
		if m.leavesRoom(r, j, now) {
			fill = true
			continue
		}
		return false, false
	}
	return true, fill
}

func (m *refModel) leavesRoom(r refReservation, j *refJob, now time.Time) bool {
	free, slots := r.w.free.Sub(j.Resources), r.w.freeSlots-1
	for _, x := range r.waits {
		free, slots = free.Add(x.Resources), slots+1
	}
	return slots > 0 && free.Covers(r.job.Resources)
}

// evictableEstimates reports whether some estimate has been unused for
// EstimateTTL, so that the engine may evict it at its next decision.
func (m *refModel) evictableEstimates(now time.Time) bool {
	for _, est := range m.est {
		if now.Sub(est.lastUsed) >= m.cfg.Cost.EstimateTTL {
			return true
		}
	}
	return false
}

// setType is Engine.SetType: refused while the engine holds a job of the
// type.
func (m *refModel) setType(name string, tc TypeConfig) bool {
	for _, j := range m.jobs {
		if j.Type == name {
			return false
		}
	}
	m.cfg.Types[name] = tc
	return true
}

// addTier is Engine.AddTier: refused when it overlaps a tier or a held
// job's priority falls in its band.
func (m *refModel) addTier(t TierConfig) bool {
	for _, o := range m.cfg.Tiers {
		if t.MinPriority <= o.MaxPriority && o.MinPriority <= t.MaxPriority {
			return false
		}
	}
	for _, j := range m.jobs {
		if j.Priority >= t.MinPriority && j.Priority <= t.MaxPriority {
			return false
		}
	}
	m.cfg.Tiers = append(m.cfg.Tiers, t)
	sort.SliceStable(m.cfg.Tiers, func(a, b int) bool { return m.cfg.Tiers[a].MinPriority > m.cfg.Tiers[b].MinPriority })
	return true
}

// refVersatility is the number of types a worker takes, every type
// counting as the most.
func refVersatility(w *refWorker) int {
	if w.types == nil {
		return math.MaxInt
	}
	return len(w.types)
}
