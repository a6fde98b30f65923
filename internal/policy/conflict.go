package policy

import "time"

// Conflict parking.
//
// Jobs of one conflict group with equal resource keys never run together:
// while a job holds (group, key), the others wait in the key's slot, out of
// every class heap, so a blocked job costs nothing per decision.
//
// A key can be wanted by many jobs of one class (seed 001's git proxy: a
// thousand fetches of one repository by one client). Waking them all when
// the key frees, only to park all but one again at the next decision, costs
// O(waiting) per release. So the slot keeps its parked jobs in one queue per
// class they would join (group and class key), ordered as the class orders
// them (enqueue time, then submit order), and a release wakes only the best
// job of each queue: its representative. The others cannot be admitted
// before it — they are behind it in the same class — and once any job takes
// the key they are blocked again. The decisions are therefore those of
// waking everyone.
//
// The invariant: while the key is free, every non-empty queue has its
// representative queued in its class, ahead of every job of the queue. A
// representative leaves its class by admission (the key is then held), by
// being parked again (another job took the key) or by being unlinked
// (cancel, hold, reprioritize): then, if the key is free, the next job of
// its queue becomes the representative. While another class's job holds
// the key, a representative may stay queued and earlier jobs of its class
// be parked behind it; when the key frees, the earliest of them takes over
// (wake). More jobs queued than the representatives is harmless: it is
// what waking everyone would give.

// parkKey names the class a parked job would join: its group and class key.
type parkKey struct {
	g  *group
	ck classKey
}

// parkQueue is one class's jobs parked on a key, best first, and the one
// woken to stand for them while the key is free.
type parkQueue struct {
	slot *conflictSlot
	key  parkKey
	jobs jobHeap
	rep  *entry // queued in its class while the key is free; nil otherwise
}

// park puts en, runnable but blocked by the key's holder, in the queue of
// its class on the slot.
func (e *Engine) park(cs *conflictSlot, en *entry, g *group) {
	pk := parkKey{g, classKey{en.job.Priority, en.fk, en.tnt}}
	q := cs.byClass[pk]
	if q == nil {
		if cs.byClass == nil {
			cs.byClass = map[parkKey]*parkQueue{}
		}
		q = &parkQueue{slot: cs, key: pk}
		cs.byClass[pk] = q
		cs.queues = append(cs.queues, q)
	}
	if q.rep == en {
		q.rep = nil // a representative parked again: the key is held
	}
	en.state, en.cls, en.grp, en.pq = stateConflict, nil, nil, q
	q.jobs.push(en)
}

// unpark takes a parked en out of its queue.
func (e *Engine) unpark(en *entry) {
	q := en.pq
	q.jobs.remove(en.heapIdx)
	en.pq = nil
	if len(q.slot.holders) == 0 {
		q.key.g.ln.freeParked--
	}
	e.dropQueueIfIdle(q)
}

// dropQueueIfIdle forgets a queue with no parked job and no
// representative, and the slot once nothing holds or waits for it.
func (e *Engine) dropQueueIfIdle(q *parkQueue) {
	if len(q.jobs) > 0 || q.rep != nil {
		return
	}
	cs := q.slot
	if cs.byClass[q.key] != q {
		return // already dropped
	}
	delete(cs.byClass, q.key)
	for i, o := range cs.queues {
		if o == q {
			cs.queues = append(cs.queues[:i], cs.queues[i+1:]...)
			break
		}
	}
	e.releaseConflictSlot(cs)
}

// wakeAll makes every queue of a slot whose key just freed put its best job
// back in its class.
func (e *Engine) wakeAll(cs *conflictSlot, now time.Time) {
	e.countFreeParked(cs, +1)
	for _, q := range cs.queues { // wake never parks: the key is free
		e.wake(q, now)
	}
	e.releaseConflictSlot(cs)
}

// wake queues q's best job as its representative, unless the one it has
// is still ahead of every parked job. A representative stays queued while
// the key is taken by another job and its class's earlier jobs may be
// parked behind it meanwhile: then the earliest parked job takes over and
// the old one stays queued as an ordinary job of its class.
func (e *Engine) wake(q *parkQueue, now time.Time) {
	if len(q.jobs) == 0 || (q.rep != nil && q.rep.before(q.jobs[0])) {
		return
	}
	if old := q.rep; old != nil {
		old.pq = nil
	}
	en := q.jobs.popHead() // en.pq is q already
	q.key.g.ln.freeParked--
	q.rep = en
	e.enqueue(en, now)
}

// leaveQueue is called when a representative leaves its class for good
// (admitted or unlinked): the queue loses it, and if the key is free the
// next job of the queue stands in.
func (e *Engine) leaveQueue(en *entry, now time.Time) {
	q := en.pq
	if q == nil {
		return
	}
	en.pq = nil
	if q.rep != en {
		return
	}
	q.rep = nil
	if len(q.slot.holders) == 0 {
		e.wake(q, now)
	}
	e.dropQueueIfIdle(q)
}

// remove takes the entry at index i out of the heap.
func (h *jobHeap) remove(i int) {
	old := *h
	n := len(old) - 1
	en := old[i]
	if i != n {
		old.swap(i, n)
	}
	old[n] = nil
	*h = old[:n]
	if i != n {
		h.down(i)
		h.up(i)
	}
	en.heapIdx = -1
}

// unparkIfFree queues a job parked behind its class's representative while
// the key is free, so that Explain and Reason rank it among the queued jobs
// it competes with, as they would if every parked job had been woken (which
// changes no decision: it is behind the representative in its class).
func (e *Engine) unparkIfFree(en *entry, now time.Time) {
	if en.state != stateConflict || e.heldConflict(en) != nil {
		return
	}
	e.unpark(en)
	e.enqueue(en, now)
}

// holdKey makes en a holder of the slot's key. The first holder turns the
// key's parked jobs from free-parked (counted as queued) to blocked.
func (e *Engine) holdKey(cs *conflictSlot, en *entry) {
	if len(cs.holders) == 0 {
		e.countFreeParked(cs, -1)
	}
	cs.holders = append(cs.holders, en)
}

// countFreeParked adds (sign +1) or removes (-1) the slot's parked jobs to
// or from their lanes' free-parked counts, as the key frees or is taken.
func (e *Engine) countFreeParked(cs *conflictSlot, sign int) {
	for _, q := range cs.queues {
		q.key.g.ln.freeParked += sign * len(q.jobs)
	}
}

// eachFreeParked calls f with each job of lane l parked on a free key, and
// the group it would join.
func (e *Engine) eachFreeParked(l *lane, f func(g *group, x *entry)) {
	if l.freeParked == 0 {
		return
	}
	for _, cs := range e.conflicts {
		if len(cs.holders) > 0 {
			continue
		}
		for _, q := range cs.queues {
			if q.key.g.ln != l {
				continue
			}
			for _, x := range q.jobs {
				f(q.key.g, x)
			}
		}
	}
}
