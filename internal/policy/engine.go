package policy

import (
	"fmt"
	"math"
	"sort"
)

// Engine is the policy core: the pending set, the admission rules and the
// ordering. It is not safe for concurrent use; its owner serialises calls.
// It does no I/O, starts no goroutine and never reads the clock: every call
// that depends on time takes now.
type Engine struct {
	cfg Config

	lanes    map[string]*lane
	laneList []*lane // sorted by name
	tiers    []*tier // by MinPriority descending
	types    map[string]*jobType
	tenants  map[string]*tenant
	keys     map[string]*fairKey
	costs    costBook

	jobs       map[string]*entry
	delayed    delayedHeap
	dependents map[string][]*entry
	conflicts  map[conflictID]*conflictSlot

	workers  map[string]*worker
	compat   map[string]*compatSet
	fitKeys  map[fitID]*fitKey
	capacity Resources
	capSlots int
	free     int // free slots over all workers
	running  int

	seq      uint64
	gen      uint64 // decision generation, for per-decision caches
	now      int64  // the latest now the engine was told (advance), unix ns
	idleKeys fifo[idleMark]
	released []string // jobs that became runnable since TakeReleased
	track    bool     // whether to keep released
	scratch  []*lane
	cands    []candidate

	// This decision's reservations (reserve.go), planned again at every
	// decision; blocked is planning's scratch.
	reserved         []reservation
	opens, blocked   []candidate
	round            []candidate
	endsBuf          []runningEnd
	reservationsMade int
	backfilled       int
	preempted        int
	// stops holds the preemptions in flight (preempt.go): per victim its
	// stop deadline and the job it is stopped for, per waiting job its
	// victims still running. Empty but for them, so entries stay lean.
	stops map[*entry]*stopState

	// Rate limits (ratelimit.go): the limits in config order, the
	// wake-ups at token times, and the bucket count that triggers a sweep.
	limits  []*rateLimit
	wakes   wakeHeap
	sweepAt int
}

type lane struct {
	name   string
	cfg    LaneConfig
	open   slope // queued jobs
	od     slope // on-demand jobs
	groups []*group
	byID   map[groupID]*group
	queued int // in class heaps
	// freeParked are parked on a free key behind their class's
	// representative (conflict.go): queued in all but the heap.
	freeParked int

	usage   Resources
	slots   int // running jobs
	share   float64
	pending int  // every job of the lane not running: queued, parked, delayed, waiting
	paused  bool // admits nothing (PauseLane)
	turn    int  // position in the last plan's DRF order (reserve.go)
}

type groupID struct {
	typ   *jobType
	tr    *tier
	fit   *fitKey
	od    bool
	shape Resources
}

type fitID struct {
	selector string
	shape    Resources
}

type tier struct {
	TierConfig
	running int
}

type jobType struct {
	name    string
	cfg     TypeConfig
	running int
}

type tenant struct {
	name    string
	max     int
	running int
	parked  []*class
	// The quota (quota.go): its limits, math.MaxInt64 where none, and
	// what the tenant's running jobs hold.
	hasQuota bool
	quota    Resources
	used     Resources
}

type conflictID struct{ group, key string }

type conflictSlot struct {
	id conflictID
	// holders are the running jobs on the key: one, except after a
	// Restore of jobs that already ran together.
	holders []*entry
	// The jobs waiting for the key, a queue per class (conflict.go).
	queues  []*parkQueue
	byClass map[parkKey]*parkQueue
}

// New builds an engine for cfg, filling defaults.
func New(cfg Config) (*Engine, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:        c,
		lanes:      map[string]*lane{},
		types:      map[string]*jobType{},
		tenants:    map[string]*tenant{},
		keys:       map[string]*fairKey{},
		costs:      newCostBook(c.Cost),
		jobs:       map[string]*entry{},
		dependents: map[string][]*entry{},
		conflicts:  map[conflictID]*conflictSlot{},
		workers:    map[string]*worker{},
		compat:     map[string]*compatSet{},
		fitKeys:    map[fitID]*fitKey{},
		stops:      map[*entry]*stopState{},
	}
	for name, lc := range c.Lanes {
		l := &lane{name: name, cfg: lc, byID: map[groupID]*group{}}
		l.open, l.od = laneSlopes(lc)
		e.lanes[name] = l
		e.laneList = append(e.laneList, l)
	}
	sort.Slice(e.laneList, func(i, j int) bool { return e.laneList[i].name < e.laneList[j].name })
	for _, t := range c.Tiers {
		e.tiers = append(e.tiers, &tier{TierConfig: t})
	}
	for _, r := range c.RateLimits {
		e.limits = append(e.limits, newRateLimit(r))
	}
	e.sweepAt = minSweep
	return e, nil
}

func laneSlopes(lc LaneConfig) (open, od slope) {
	open = slope{step: lc.Aging.Step, interval: int64(lc.Aging.Interval), cap: math.MaxInt64}
	if open.step == 0 {
		open.interval = 0
	}
	od = open
	od.bonus = lc.OnDemand.Bonus
	if lc.OnDemand.Step > 0 {
		od.step, od.interval, od.cap = lc.OnDemand.Step, int64(lc.OnDemand.Interval), lc.OnDemand.MaxAging
	}
	return open, od
}

// Config returns the normalised configuration in force.
func (e *Engine) Config() Config { return e.cfg }

func (e *Engine) jobType(name string) *jobType {
	t, ok := e.types[name]
	if !ok {
		t = &jobType{name: name, cfg: e.cfg.Types[name]}
		e.types[name] = t
	}
	return t
}

func (e *Engine) tenant(name string) *tenant {
	t, ok := e.tenants[name]
	if !ok {
		tc := e.cfg.Tenants[name]
		t = &tenant{name: name, max: tc.MaxRunning, hasQuota: !tc.Quota.IsZero(), quota: tc.Quota.limits()}
		e.tenants[name] = t
	}
	return t
}

func (e *Engine) tierOf(prio int) *tier {
	for _, t := range e.tiers {
		if prio >= t.MinPriority && prio <= t.MaxPriority {
			return t
		}
	}
	return nil
}

// heldConflict returns the slot of the entry's resource key when a
// conflicting job is running on it.
func (e *Engine) heldConflict(en *entry) *conflictSlot {
	id := en.conflictID()
	if id.group == "" {
		return nil
	}
	if s := e.conflicts[id]; s != nil && len(s.holders) > 0 {
		return s
	}
	return nil
}

func (e *Engine) conflictSlot(id conflictID) *conflictSlot {
	s, ok := e.conflicts[id]
	if !ok {
		s = &conflictSlot{id: id}
		e.conflicts[id] = s
	}
	return s
}

func (e *Engine) releaseConflictSlot(s *conflictSlot) {
	if s != nil && len(s.holders) == 0 && len(s.queues) == 0 && e.conflicts[s.id] == s {
		delete(e.conflicts, s.id)
	}
}

func (e *Engine) fitKey(typ string, labels []string, shape Resources) *fitKey {
	sel := selectorKey(typ, labels)
	id := fitID{sel, shape}
	if f, ok := e.fitKeys[id]; ok {
		return f
	}
	set, ok := e.compat[sel]
	if !ok {
		set = &compatSet{typ: typ, labels: labels}
		for _, w := range e.workerList() {
			if w.supports(typ, labels) {
				set.workers = append(set.workers, w)
			}
		}
		e.compat[sel] = set
	}
	f := &fitKey{set: set, shape: shape}
	e.fitKeys[id] = f
	return f
}

func (e *Engine) workerList() []*worker {
	ws := make([]*worker, 0, len(e.workers))
	for _, w := range e.workers {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].ID < ws[j].ID })
	return ws
}

// AddWorker registers an executor and its capacity.
func (e *Engine) AddWorker(w Worker) error {
	if w.ID == "" {
		return fmt.Errorf("%w: worker id is empty", ErrInvalidJob)
	}
	if _, ok := e.workers[w.ID]; ok {
		return fmt.Errorf("%w: %s", ErrDuplicateWorker, w.ID)
	}
	if w.Slots < 0 || w.Resources.negative() {
		return fmt.Errorf("%w: worker %s: slots and resources must be >= 0", ErrInvalidJob, w.ID)
	}
	wk := &worker{Worker: w, free: w.Resources, freeSlots: w.Slots}
	if len(w.Types) > 0 {
		wk.typeSet = map[string]bool{}
		for _, t := range w.Types {
			wk.typeSet[t] = true
		}
	}
	wk.labelSet = map[string]bool{}
	for _, l := range w.Labels {
		wk.labelSet[l] = true
	}
	e.workers[w.ID] = wk
	for _, set := range e.compat {
		if wk.supports(set.typ, set.labels) {
			set.workers = append(set.workers, wk)
			sort.Slice(set.workers, func(i, j int) bool { return set.workers[i].ID < set.workers[j].ID })
		}
	}
	e.capacity = e.capacity.Add(w.Resources)
	e.capSlots += w.Slots
	e.free += w.Slots
	e.gen++
	return nil
}

// RemoveWorker unregisters an executor. Jobs still running on it stay
// running in the engine until their owner calls Finish for them (typically
// with Released); their IDs are returned.
func (e *Engine) RemoveWorker(id string) ([]string, error) {
	wk, ok := e.workers[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownWorker, id)
	}
	delete(e.workers, id)
	wk.removed = true
	for _, set := range e.compat {
		for i, w := range set.workers {
			if w == wk {
				set.workers = append(set.workers[:i], set.workers[i+1:]...)
				break
			}
		}
	}
	e.capacity = e.capacity.Sub(wk.Resources)
	e.capSlots -= wk.Slots
	if !wk.offline {
		e.free -= wk.freeSlots
	}
	e.gen++
	var ids []string
	for _, en := range e.jobs {
		if en.state == stateRunning && en.wk == wk {
			ids = append(ids, en.job.ID)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// SetType sets a job type's configuration after New. It is refused while
// the engine holds jobs of that type, whose groups were built on the old
// configuration.
func (e *Engine) SetType(name string, cfg TypeConfig) error {
	if err := cfg.validate(e.cfg.Lanes); err != nil {
		return fmt.Errorf("%w: types.%s.%v", ErrInvalidConfig, name, err)
	}
	if t, ok := e.types[name]; ok {
		for _, en := range e.jobs {
			if en.typ == t {
				return fmt.Errorf("%w: type %s has live jobs", ErrInvalidConfig, name)
			}
		}
		t.cfg = cfg
	}
	e.cfg.Types[name] = cfg
	return nil
}

// AddTier adds a tier after New. It is refused when it overlaps a tier or
// when the engine holds a job whose priority falls in its band.
func (e *Engine) AddTier(t TierConfig) error {
	tiers, err := normalizeTiers(append(append([]TierConfig(nil), e.cfg.Tiers...), t))
	if err != nil {
		return err
	}
	for _, en := range e.jobs {
		if en.job.Priority >= t.MinPriority && en.job.Priority <= t.MaxPriority {
			return fmt.Errorf("%w: tier %d-%d: job %s has a priority in its band", ErrInvalidConfig, t.MinPriority, t.MaxPriority, en.job.ID)
		}
	}
	e.cfg.Tiers = tiers
	for _, tc := range tiers {
		if tc.MinPriority == t.MinPriority {
			e.tiers = append(e.tiers, &tier{TierConfig: tc})
		}
	}
	sort.Slice(e.tiers, func(i, j int) bool { return e.tiers[i].MinPriority > e.tiers[j].MinPriority })
	return nil
}

// holder is the job named as holding the key (the first of its holders).
func (s *conflictSlot) holder() *entry { return s.holders[0] }
