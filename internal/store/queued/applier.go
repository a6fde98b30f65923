package queued

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/fairwayhq/fairway/internal/store"
)

// Op is one recorded Writer operation, replayed by the Applier.
type Op func(w store.Writer) error

// Apply is the driver's part of the Applier: it runs run (the operations
// of the queued Writes, in order) in one transaction, unless hasOps is
// false, and reports each Write's durable channel, in order, once the
// commit is durable; it returns the transaction's error instead, and
// then reports nothing.
type Apply func(run func(w store.Writer) error, hasOps bool, durable []chan error) error

// item is one recorded Write waiting for, or inside, the Applier's
// transaction.
type item struct {
	ops     []Op
	rows    []string      // the rows it inserts or changes (StartConcurrent only)
	durable chan error    // what WriteDeferred returned: nil once durable
	applied chan struct{} // closed once committed or failed (reads wait on it)
}

// ErrApplyFailed marks the failure of the Applier's transaction: the store
// refuses writes until resumed.
var ErrApplyFailed = errors.New("store: a queued transaction failed; the store refuses writes until its writer has rebuilt its state and resumed")

// Applier runs queued Writes in transactions of its own goroutine.
type Applier struct {
	apply Apply
	stage Stage // set instead of apply by StartConcurrent

	mu       sync.Mutex
	cond     *sync.Cond // signalled when queue, inTx or flying changes
	queue    []*item    // waiting, in Enqueue order
	inTx     []*item    // taken by the running transaction (Start)
	flying   []*flight  // StartConcurrent's transactions, oldest first
	ready    *Readiness
	err      error // sticky
	stopping bool
	done     chan struct{}
}

// maxWaiting is how many recorded Writes may wait for the Applier; the
// next Enqueue waits for it to take them.
const maxWaiting = 1

// Start starts an Applier whose transactions apply runs; it reports
// whether a Write waits to ready.
func Start(apply Apply, ready *Readiness) *Applier {
	a := &Applier{apply: apply, ready: ready, done: make(chan struct{})}
	a.cond = sync.NewCond(&a.mu)
	go a.run()
	return a
}

// enqueue hands a recorded Write to the Applier, first waiting while
// maxWaiting others wait, and returns its durable channel. The caller
// serializes its Writes (one enqueue or direct Write at a time).
func (a *Applier) enqueue(ops []Op, rows []string) <-chan error {
	q := &item{ops: ops, rows: rows, durable: make(chan error, 1), applied: make(chan struct{})}
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.queue) >= maxWaiting && a.err == nil {
		a.cond.Wait()
	}
	if a.err != nil {
		q.durable <- a.err
		close(q.applied)
		return q.durable
	}
	a.queue = append(a.queue, q)
	a.ready.setWaiting(len(a.queue))
	a.cond.Broadcast()
	return q.durable
}

// idle reports whether nothing is queued or being applied; the caller
// holds mu.
func (a *Applier) idle() bool { return len(a.queue) == 0 && len(a.inTx) == 0 && len(a.flying) == 0 }

// lastTaken is the newest Write a transaction has taken (the running one,
// or the newest flight), nil when none; the caller holds mu.
func (a *Applier) lastTaken() *item {
	if len(a.inTx) > 0 {
		return a.inTx[len(a.inTx)-1]
	}
	if len(a.flying) > 0 {
		b := a.flying[len(a.flying)-1].batch
		return b[len(b)-1]
	}
	return nil
}

// Barrier waits until everything queued when it was called has been
// committed (or has failed).
func (a *Applier) Barrier(ctx context.Context) error {
	a.mu.Lock()
	last := a.lastTaken()
	if len(a.queue) > 0 {
		last = a.queue[len(a.queue)-1]
	}
	a.mu.Unlock()
	if last == nil {
		return nil
	}
	select {
	case <-last.applied:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Drain waits, without a deadline, until the Applier is idle. The caller
// serializes its Writes, so nothing new is queued meanwhile.
func (a *Applier) Drain() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for !a.idle() {
		a.cond.Wait()
	}
}

// Resume accepts writes again after a failed queued transaction.
func (a *Applier) Resume() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.err = nil
}

// Failed returns the sticky error of a failed queued transaction.
func (a *Applier) Failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func (a *Applier) run() {
	defer close(a.done)
	for {
		a.mu.Lock()
		for len(a.queue) == 0 && !a.stopping {
			a.cond.Wait()
		}
		if len(a.queue) == 0 {
			a.mu.Unlock()
			return
		}
		a.inTx, a.queue = a.queue, nil
		a.ready.setWaiting(0)
		a.cond.Broadcast()
		batch := a.inTx
		a.mu.Unlock()

		a.applyBatch(batch)

		a.mu.Lock()
		a.inTx = nil
		a.cond.Broadcast()
		a.mu.Unlock()
	}
}

// applyBatch has the driver run the batch's operations in one
// transaction; a failure fails the batch and everything after it.
func (a *Applier) applyBatch(batch []*item) {
	durable := make([]chan error, len(batch))
	for i, q := range batch {
		durable[i] = q.durable
	}
	err := a.apply(runOps(batch), hasOps(batch), durable)
	if err != nil {
		a.fail(batch, err)
		return
	}
	for _, q := range batch {
		close(q.applied)
	}
}

// hasOps reports whether any Write of batch recorded an operation.
func hasOps(batch []*item) bool {
	return slices.ContainsFunc(batch, func(q *item) bool { return len(q.ops) > 0 })
}

// runOps is the function that replays batch's operations, in order, on a
// transaction's Writer.
func runOps(batch []*item) func(w store.Writer) error {
	return func(w store.Writer) error {
		for _, q := range batch {
			for _, o := range q.ops {
				if err := o(w); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// fail answers the failed batch and everything queued behind it with the
// error, and makes the store refuse writes.
func (a *Applier) fail(batch []*item, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failLocked(batch, err)
}

// failLocked is fail; the caller holds mu.
func (a *Applier) failLocked(batch []*item, err error) {
	a.err = fmt.Errorf("%w: %w", ErrApplyFailed, err)
	for _, q := range append(batch, a.queue...) {
		q.durable <- a.err
		close(q.applied)
	}
	a.queue = nil
	a.ready.setWaiting(0)
}

// Close applies what is queued and stops the goroutine.
func (a *Applier) Close() {
	a.mu.Lock()
	a.stopping = true
	a.cond.Broadcast()
	a.mu.Unlock()
	<-a.done
}
