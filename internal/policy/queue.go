package policy

import "math"

// slope is how a group's jobs gain score while they wait.
//
// Aging counts the boundaries of a fixed grid of width interval crossed
// between enqueue and now: aging = step·(⌊now/I⌋ − ⌊enq/I⌋), at most cap.
// Because every job of a group is measured on the same grid, the uncapped
// score p + bonus + aging equals inv + step·⌊now/I⌋ with
// inv = p + bonus − step·⌊enq/I⌋ independent of now: the order of a group's
// jobs never changes with time, so a heap keyed on inv stays valid.
type slope struct {
	step     int64
	interval int64 // nanoseconds; 0 when step is 0
	cap      int64 // math.MaxInt64: no cap
	bonus    int64
}

func (s slope) bucket(t int64) int64 {
	if s.step == 0 {
		return 0
	}
	return floorDiv(t, s.interval)
}

func (s slope) aging(enq, now int64) int64 {
	a := s.step * (s.bucket(now) - s.bucket(enq))
	if a > s.cap {
		return s.cap
	}
	return a
}

func (s slope) score(prio int, enq, now int64) int64 {
	return int64(prio) + s.bonus + s.aging(enq, now)
}

func (s slope) inv(prio int, enq int64) int64 {
	return int64(prio) + s.bonus - s.step*s.bucket(enq)
}

func (s slope) capped(enq, now int64) bool {
	return s.cap != math.MaxInt64 && s.step*(s.bucket(now)-s.bucket(enq)) >= s.cap
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// class holds one (fairness key, tenant)'s jobs of one priority inside a
// group. Its jobs share priority and slope, so the earliest-enqueued is
// always the best of them and the class competes in its group through its
// head; they share the tenant, so a tenant cap parks the class as a whole.
type class struct {
	grp  *group
	prio int
	fk   *fairKey
	tnt  *tenant
	jobs jobHeap

	where int8   // heapNone, heapOpen or heapCapped
	ver   uint32 // bumped at every (re)placement: older heap entries are void
	// tenantParked: out of both heaps, parked with its tenant (cap or
	// quota) or on a tenant's rate-limit bucket until its next token.
	tenantParked bool

	// Snapshot of the ordering key, taken when the class is placed and,
	// lazily at the top of its heap, when the fairness key's cost changes.
	rank rank
}

const (
	heapNone int8 = iota
	heapOpen
	heapCapped
)

func (c *class) head() *entry { return c.jobs[0] }

// rank is a class's ordering key, stored inline in the heap entry so that
// sifting compares array elements without touching class structs.
type rank struct {
	key  int64   // inv of the head (open heap) or prio (capped heap)
	cost float64 // fairness-key cost snapshot
	enq  int64   // head enqueue time
	seq  uint64  // head submit order
}

// before is the in-group order: higher key, lower cost, earlier head.
func (r *rank) before(o *rank) bool {
	if r.key != o.key {
		return r.key > o.key
	}
	return tieBefore(r, o)
}

// tieBefore orders two ranks of equal score: lower cost, then earlier head.
func tieBefore(a, b *rank) bool {
	if a.cost != b.cost {
		return a.cost < b.cost
	}
	if a.enq != b.enq {
		return a.enq < b.enq
	}
	return a.seq < b.seq
}

// classHeap is a 4-ary max-heap of class entries by rank. Entries are
// never removed from the middle: re-placing a class bumps its version and
// pushes a new entry, and void entries are dropped when they reach the top.
// Sifts therefore move plain values and write no back-pointers.
type classHeap []heapEntry

type heapEntry struct {
	rank
	c   *class
	ver uint32
}

const arity = 4

func (h classHeap) up(i int) {
	x := h[i]
	for i > 0 {
		p := (i - 1) / arity
		if !x.before(&h[p].rank) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

func (h classHeap) down(i int) {
	n := len(h)
	x := h[i]
	for {
		first := arity*i + 1
		if first >= n {
			break
		}
		m := first
		last := min(first+arity, n)
		for j := first + 1; j < last; j++ {
			if h[j].before(&h[m].rank) {
				m = j
			}
		}
		if !h[m].before(&x.rank) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
}

func (h *classHeap) push(c *class) {
	*h = append(*h, heapEntry{c.rank, c, c.ver})
	h.up(len(*h) - 1)
}

func (h *classHeap) pop() {
	old := *h
	n := len(old) - 1
	old[0] = old[n]
	old[n] = heapEntry{}
	*h = old[:n]
	if n > 0 {
		h.down(0)
	}
}

// top returns the best live class, dropping void entries on the way.
func (h *classHeap) top() *class {
	for len(*h) > 0 {
		e := &(*h)[0]
		if e.ver == e.c.ver && e.c.where != heapNone {
			return e.c
		}
		h.pop()
	}
	return nil
}

// setTopCost updates the cost of the top entry (which must be live) and
// restores heap order.
func (h classHeap) setTopCost(cost float64) {
	h[0].cost = cost
	h[0].c.rank.cost = cost
	h.down(0)
}

// group gathers a lane's queued jobs that are alike for every admission
// check but the per-job ones: same type, labels, resource shape and tier,
// and the same slope (queued or on-demand). Type caps, tier caps and worker
// fit are therefore decided once per group.
type group struct {
	ln    *lane
	typ   *jobType
	tr    *tier
	fit   *fitKey
	od    bool
	sl    slope
	shape Resources

	classes map[classKey]*class
	open    classHeap // heads not yet at the aging cap, keyed by inv
	capped  classHeap // heads at the aging cap, keyed by priority
	queued  int       // live queued jobs
	inLane  bool

	// Rate limits (ratelimit.go): the buckets every job of the group
	// draws on, and the limits it draws on per tenant and per key.
	buckets      []*bucket
	tenantLimits []*rateLimit
	keyLimits    []*rateLimit
}

type classKey struct {
	prio int
	fk   *fairKey
	tnt  *tenant
}

// realScore is the class head's score at now, rarity excluded.
func (g *group) realScore(c *class, now int64) int64 {
	h := c.head()
	return g.sl.score(c.prio, h.enq, now)
}

// place puts c in the heap its head belongs to at now, or drops it when it
// has no jobs left. A tenant-parked class stays out of both heaps.
func (g *group) place(c *class, now int64) {
	g.unplace(c)
	if len(c.jobs) == 0 {
		delete(g.classes, classKey{c.prio, c.fk, c.tnt})
		return
	}
	if c.tenantParked {
		return
	}
	h := c.head()
	c.rank = rank{key: g.sl.inv(c.prio, h.enq), cost: c.fk.cost, enq: h.enq, seq: h.seq}
	c.where = heapOpen
	if g.sl.capped(h.enq, now) {
		c.rank.key = int64(c.prio)
		c.where = heapCapped
	}
	g.heap(c.where).push(c)
}

// unplace voids the class's heap entry (it is dropped lazily).
func (g *group) unplace(c *class) {
	c.ver++
	c.where = heapNone
}

func (g *group) heap(where int8) *classHeap {
	if where == heapCapped {
		return &g.capped
	}
	return &g.open
}

// peek returns the best placed class at now without any admission check:
// it moves open heads that reached the aging cap to the capped heap, then
// compares the two heap tops by real score. Costs may be stale here.
func (g *group) peek(now int64) *class {
	for {
		o := g.open.top()
		if o == nil || !g.sl.capped(o.rank.enq, now) {
			break
		}
		g.place(o, now)
	}
	o, c := g.open.top(), g.capped.top()
	switch {
	case o == nil:
		return c
	case c == nil:
		return o
	}
	if so, sc := g.realScore(o, now), g.realScore(c, now); so != sc {
		if so > sc {
			return o
		}
		return c
	}
	if tieBefore(&o.rank, &c.rank) {
		return o
	}
	return c
}

// refreshCost brings the cost snapshot of c, a heap top returned by peek,
// up to date, and reports whether it was stale. Costs only grow while a
// key has queued jobs, so a stale snapshot only ever flatters its class:
// fixing it at the top of the heap (and never elsewhere) keeps the top
// exact.
func (g *group) refreshCost(c *class) bool {
	if c.rank.cost == c.fk.cost {
		return false
	}
	g.heap(c.where).setTopCost(c.fk.cost)
	return true
}
