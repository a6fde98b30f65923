package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/fairwayhq/fairway/api"
)

// maxLeaseBatch is the most jobs one lease request may ask for.
const maxLeaseBatch = 1000

// slotPool holds one token per free slot.
type slotPool chan struct{}

func newSlotPool(n int) slotPool {
	p := make(slotPool, n)
	p.release(n)
	return p
}

// acquire waits for one free slot, then takes up to max in all.
func (p slotPool) acquire(ctx context.Context, max int) (int, bool) {
	select {
	case <-p:
	case <-ctx.Done():
		return 0, false
	}
	n := 1
	for n < max {
		select {
		case <-p:
			n++
		default:
			return n, true
		}
	}
	return n, true
}

func (p slotPool) release(n int) {
	for range n {
		p <- struct{}{}
	}
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
	gates := startGates(leases)
	for i, l := range leases {
		var g startGate
		if gates != nil {
			g = gates[i]
		}
		w.launch(sess, l, g)
	}
	return len(leases), nil
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
