package worker

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/fairwayhq/fairway/api"
)

// maxLeaseBatch is the most jobs one lease request may ask for.
const maxLeaseBatch = 1000

// slotPool counts the worker's free slots. The lease loop takes what is
// free before asking; leases that come back with a completion report take
// their slots after the fact (take), so the count may dip below zero for a
// moment when both happen at once: the server never leases more than the
// worker's slots, and the lease loop's surplus goes back when its answer
// brings fewer jobs than it asked for.
type slotPool struct {
	mu      sync.Mutex
	free    int
	more    chan struct{} // closed (and replaced) when free grows
	waiting bool          // acquire is blocked: every slot is taken
	onWait  func()        // called, without mu, when acquire begins to wait
}

func newSlotPool(n int) *slotPool {
	return &slotPool{free: n, more: make(chan struct{}), onWait: func() {}}
}

// acquire waits for a free slot, then takes up to max in all.
func (p *slotPool) acquire(ctx context.Context, max int) (int, bool) {
	for {
		p.mu.Lock()
		if p.free > 0 {
			n := min(p.free, max)
			p.free -= n
			p.waiting = false
			p.mu.Unlock()
			return n, true
		}
		began := !p.waiting
		p.waiting = true
		more := p.more
		p.mu.Unlock()
		if began {
			p.onWait()
		}
		select {
		case <-more:
		case <-ctx.Done():
			p.mu.Lock()
			p.waiting = false
			p.mu.Unlock()
			return 0, false
		}
	}
}

// saturated reports whether the lease loop waits for a slot: every slot
// is taken, and only a completion report can bring the next jobs.
func (p *slotPool) saturated() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting
}

// take counts n slots used by leases that arrived unasked.
func (p *slotPool) take(n int) {
	p.mu.Lock()
	p.free -= n
	p.mu.Unlock()
}

func (p *slotPool) release(n int) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	p.free += n
	close(p.more)
	p.more = make(chan struct{})
	p.mu.Unlock()
}

// pollLoop long-polls for leases while there are free slots, asking for
// as many jobs as there are free slots. There is one such loop: the server
// answers a worker's earlier poll empty when a new one arrives.
func (w *Worker) pollLoop(ctx context.Context) {
	fails := 0
	for {
		n, ok := w.slots.acquire(ctx, min(w.opts.Slots, maxLeaseBatch))
		if !ok {
			return
		}
		got, err := w.leaseOnce(ctx, n)
		w.slots.release(n - got)
		if err == nil {
			fails = 0
			continue
		}
		if !w.pollFailed(ctx, err, fails) {
			return
		}
		fails++
	}
}

// leaseOnce asks for up to n jobs and launches those it gets.
func (w *Worker) leaseOnce(ctx context.Context, n int) (int, error) {
	sess, err := w.session(ctx)
	if err != nil {
		return 0, err
	}
	callCtx, cancel := context.WithTimeout(ctx, w.opts.PollWait+w.opts.RequestTimeout)
	leases, err := w.client.Lease(callCtx, sess.id, n, w.opts.PollWait)
	cancel()
	if err != nil {
		if classify(err) == errGone {
			w.sessionLost(sess.gen)
		}
		return 0, err
	}
	if ctx.Err() != nil {
		return 0, nil // stopping: Deregister hands these back
	}
	if len(leases) > n {
		w.log.Error("the server leased more jobs than asked; ignoring the extra ones", "asked", n, "got", len(leases))
		leases = leases[:n]
	}
	w.launchAll(sess, leases)
	if len(leases) > 0 {
		// Let the attempts just launched start before this goroutine
		// asks for more: their goroutines wait behind it, and the next
		// long poll (its request built, handed to the transport's
		// goroutines, written) would otherwise run first. Measured on 2
		// CPUs, fairway bench latency: the handler began a median 50 µs
		// after the lease's answer arrived, 15 µs with the yield.
		runtime.Gosched()
	}
	return len(leases), nil
}

// launchAll starts leased attempts, in priority order (see startGates).
func (w *Worker) launchAll(sess session, leases []api.Lease) {
	gates := startGates(leases)
	for i, l := range leases {
		var g startGate
		if gates != nil {
			g = gates[i]
		}
		w.launch(sess, l, g)
	}
}

// pollFailed handles a failed lease request; it reports whether to go on.
func (w *Worker) pollFailed(ctx context.Context, err error, fails int) bool {
	if ctx.Err() != nil || errors.Is(err, errStopping) {
		return false
	}
	switch classify(err) {
	case errGone:
		return true // the next request registers again
	case errRetry:
		d := w.backoff.delay(fails, err)
		w.log.Warn("lease request failed, retrying", "err", err, "retry_in", d)
		return sleep(ctx, d)
	}
	w.fail(fmt.Errorf("lease: %w", err))
	return false
}

// launch starts running a leased attempt.
func (w *Worker) launch(sess session, l api.Lease, g startGate) {
	t := newTask(w.jobsCtx, sess, l)
	t.gate = g
	w.track(t)
	go w.execute(t) // not in w.bg: shutdown bounds the wait for jobs itself
}
