package policy

import "time"

// entryState is where a job's entry sits inside the engine.
type entryState uint8

const (
	stateWaiting  entryState = iota // dependencies not yet satisfied
	stateDelayed                    // RunAt in the future
	stateQueued                     // in a class heap, runnable
	stateConflict                   // parked: a conflicting job holds its resource key
	stateRunning                    // admitted, holding a slot
	stateHeld                       // set aside by Hold: in no queue until Release
	stateDead                       // tombstone: cancelled, reprioritized away or finished
	stateRateWait                   // out of its class until its key's bucket has a token (ratelimit.go)
)

var stateNames = [...]string{"waiting", "delayed", "queued", "conflict", "running", "held", "dead", "rate_limited"}

func (s entryState) String() string { return stateNames[s] }

// jobFields are the parts of a Job the engine reads after submit; the
// type, lane, tenant and fairness key live behind the entry's pointers and
// the enqueue time in enq, so an entry does not carry them twice.
type jobFields struct {
	ID        string
	Key       string
	Priority  int
	OnDemand  bool
	Resources Resources
	Labels    []string
	RunAt     time.Time
	DependsOn []Dependency
	Timeout   time.Duration
	// NotPreemptible: never a preemption victim.
	NotPreemptible bool
}

func fieldsOf(j Job) jobFields {
	return jobFields{ID: j.ID, Key: j.Key, Priority: j.Priority, OnDemand: j.OnDemand, Resources: j.Resources,
		Labels: j.Labels, RunAt: j.RunAt, DependsOn: j.DependsOn, Timeout: j.Timeout, NotPreemptible: j.NotPreemptible}
}

// entry is the engine's record of one job. The job's own fields are copied
// in; the pointers resolve its type, lane, tier, tenant and fairness key once
// at submit so that dispatch never looks a string up in a map.
type entry struct {
	job   jobFields
	seq   uint64 // submit order: the last tie-breaker
	state entryState

	enq int64 // EnqueuedAt in unix nanoseconds
	typ *jobType
	ln  *lane
	tr  *tier // nil: no tier
	tnt *tenant
	fk  *fairKey
	grp *group
	cls *class     // set while queued (possibly tombstoned inside it)
	pq  *parkQueue // while parked on a key, or queued as its class's representative

	heapIdx     int // index in cls.jobs or in the delayed heap
	pendingDeps int
	held        bool // Hold was called and Release not yet
	// reservedOnce is set the first time the job holds a reservation
	// (counted once in BackfillStats).
	reservedOnce bool
	// resvWorker is the worker a decision reserved for it (reserve.go,
	// reserveFor): later decisions keep it while it can take the job.
	resvWorker *worker
	// wakeAt is the token time a job in stateRateWait waits for.
	wakeAt int64

	// While running.
	wk         *worker
	admittedAt time.Time
	cost       float64
}

// before orders entries inside one class: earlier enqueue first, then
// submit order.
func (en *entry) before(o *entry) bool {
	if en.enq != o.enq {
		return en.enq < o.enq
	}
	return en.seq < o.seq
}

// jobHeap is a min-heap of entries by (enq, seq): a class's jobs.
type jobHeap []*entry

func (h jobHeap) less(i, j int) bool { return h[i].before(h[j]) }

func (h jobHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx = i
	h[j].heapIdx = j
}

func (h *jobHeap) push(en *entry) {
	en.heapIdx = len(*h)
	*h = append(*h, en)
	h.up(en.heapIdx)
}

func (h *jobHeap) popHead() *entry {
	old := *h
	n := len(old) - 1
	head := old[0]
	old.swap(0, n)
	old[n] = nil
	*h = old[:n]
	h.down(0)
	head.heapIdx = -1
	return head
}

func (h jobHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h jobHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.swap(i, m)
		i = m
	}
}

// delayedHeap is a min-heap of entries by RunAt, then seq.
type delayedHeap []*entry

func (h delayedHeap) less(i, j int) bool {
	a, b := h[i].job.RunAt, h[j].job.RunAt
	if !a.Equal(b) {
		return a.Before(b)
	}
	return h[i].seq < h[j].seq
}

func (h delayedHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx = i
	h[j].heapIdx = j
}

func (h *delayedHeap) push(en *entry) {
	en.heapIdx = len(*h)
	*h = append(*h, en)
	for i := en.heapIdx; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.swap(i, p)
		i = p
	}
}

func (h *delayedHeap) pop() *entry {
	old := *h
	n := len(old) - 1
	top := old[0]
	old.swap(0, n)
	old[n] = nil
	*h = old[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.swap(i, m)
		i = m
	}
	top.heapIdx = -1
	return top
}

// conflictID is the (conflict group, resource key) the entry would hold
// while running; its group is empty when the type conflicts with nothing.
func (en *entry) conflictID() conflictID {
	return conflictID{en.typ.cfg.ConflictGroup, en.job.Key}
}
