package queued

import (
	"sync"

	"github.com/fairwayhq/fairway/internal/store"
)

// Stage is the driver's part of a concurrent Applier (StartConcurrent):
// on its connection slot (0 or 1) it begins a transaction, runs run in
// it (unless hasOps is false) and returns once the statements have run,
// with the transaction left open for Commit or Rollback. Two stages run
// at once, on the two slots. With commitNow (no other transaction is in
// flight) it commits at once, in the same round trip, and returns once
// the commit is durable; the Staged's Commit then has nothing to do.
type Stage func(slot int, run func(w store.Writer) error, hasOps, commitNow bool) (Staged, error)

// Staged is a transaction whose statements have run.
type Staged interface {
	// Commit commits and returns once the commit is durable.
	Commit() error
	// Rollback rolls back.
	Rollback()
}

// Slots is how many transactions a concurrent Applier runs at once: its
// Stage gets slot numbers 0 to Slots-1.
const Slots = 2

// flight is a batch in its own transaction, on a goroutine of its own.
type flight struct {
	batch    []*item
	touched  map[string]struct{} // the rows its Writes insert or change (item.rows)
	slot     int
	done     bool  // finished (guarded by the Applier's mu)
	err      error // its failure, or its predecessor's
	finished chan struct{}
}

// StartConcurrent starts an Applier that runs up to two batches at once,
// each in its own transaction on its own connection slot, and commits
// them in order: batch n+1's statements run while batch n's run or
// commit, and n+1 commits only once n has. A batch that touches a row
// that a batch in flight inserts or changes waits for that batch to
// finish before it begins (an uncommitted row, or its uncommitted
// version, is not what another transaction's guarded statement sees). A
// failure fails its batch, every batch after it (rolled back) and every
// one queued.
func StartConcurrent(stage Stage, ready *Readiness) *Applier {
	a := &Applier{stage: stage, ready: ready, done: make(chan struct{})}
	a.cond = sync.NewCond(&a.mu)
	go a.runConcurrent()
	return a
}

func (a *Applier) runConcurrent() {
	defer close(a.done)
	next := 0
	for {
		a.mu.Lock()
		for {
			a.retireFinished()
			if len(a.queue) > 0 && len(a.flying) < Slots {
				break
			}
			if a.stopping && len(a.queue) == 0 && len(a.flying) == 0 {
				a.mu.Unlock()
				return
			}
			a.cond.Wait()
		}
		batch := a.queue
		a.queue = nil
		a.ready.setWaiting(0)
		f := &flight{batch: batch, touched: touchedBy(batch), slot: next, finished: make(chan struct{})}
		next = (next + 1) % Slots
		var pred, dep *flight
		for _, g := range a.flying {
			if touchesAny(batch, g.touched) {
				dep = g
			}
			pred = g
		}
		a.flying = append(a.flying, f)
		a.noteSlots()
		a.cond.Broadcast()
		a.mu.Unlock()

		go a.fly(f, pred, dep)
	}
}

// fly runs f's transaction: it waits for dep (the newest flight that
// touches a row f touches; flights finish in order, so the older ones
// have too), runs f's statements, waits for its predecessor to finish,
// and commits. A
// flight with no predecessor (the applier was idle) commits with its
// statements, in one round trip.
func (a *Applier) fly(f, pred, dep *flight) {
	if dep != nil {
		<-dep.finished
	}
	staged, err := a.stage(f.slot, runOps(f.batch), hasOps(f.batch), pred == nil || finishedWell(pred))
	if pred != nil {
		<-pred.finished
		if pred.err != nil {
			if err == nil {
				staged.Rollback()
			}
			err = pred.err
		}
	}
	if err == nil {
		err = staged.Commit()
	}
	if err == nil {
		for _, q := range f.batch {
			q.durable <- nil
			close(q.applied)
		}
	}
	a.mu.Lock()
	f.done, f.err = true, err
	a.cond.Broadcast()
	a.mu.Unlock()
	close(f.finished)
}

// finishedWell reports whether f has committed.
func finishedWell(f *flight) bool {
	select {
	case <-f.finished:
		return f.err == nil
	default:
		return false
	}
}

// retireFinished takes the finished flights, oldest first, out of
// flying; a failed one fails its Writes and everything queued. The caller
// holds mu.
func (a *Applier) retireFinished() {
	retired := false
	for len(a.flying) > 0 && a.flying[0].done {
		f := a.flying[0]
		a.flying = a.flying[1:]
		retired = true
		if f.err != nil {
			a.failLocked(f.batch, f.err)
		}
		a.cond.Broadcast()
	}
	if retired {
		a.noteSlots()
	}
}

// noteSlots tells the Readiness whether every slot is taken; called
// where flying changes. The caller holds mu.
func (a *Applier) noteSlots() { a.ready.setFull(len(a.flying) >= Slots) }

// touchesAny reports whether a Write of batch touches one of rows.
func touchesAny(batch []*item, rows map[string]struct{}) bool {
	if len(rows) == 0 {
		return false
	}
	for _, q := range batch {
		for _, row := range q.rows {
			if _, ok := rows[row]; ok {
				return true
			}
		}
	}
	return false
}

// touchedBy is the set of rows batch inserts or changes.
func touchedBy(batch []*item) map[string]struct{} {
	var rows map[string]struct{}
	for _, q := range batch {
		for _, row := range q.rows {
			if rows == nil {
				rows = make(map[string]struct{})
			}
			rows[row] = struct{}{}
		}
	}
	return rows
}
