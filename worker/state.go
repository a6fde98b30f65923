package worker

import (
	"context"
)

// The held set and the counters, under w.mu. Every change of running or
// unacked closes w.notify, which waiters re-read.

// track adds a leased attempt to the held set.
func (w *Worker) track(t *task) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held[t.key] = t
	w.running++
}

// doneRunning records that an attempt's handler has returned.
func (w *Worker) doneRunning(t *task) {
	w.mu.Lock()
	w.running--
	w.broadcastLocked()
	w.mu.Unlock()
	w.releaseSlot(t)
}

// releaseSlot frees the attempt's slot on the second call: once its
// handler has returned and it has left the held set. Until its completion
// is acknowledged the server counts it against the worker's slots, so
// asking for a new job earlier would only make the lease wait.
func (w *Worker) releaseSlot(t *task) {
	if t.slotHolds.Add(-1) == 0 {
		w.slots.release(1)
	}
}

// markReporting counts a completion about to be queued, unless the
// attempt was dropped meanwhile.
func (w *Worker) markReporting(t *task) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.forgotten {
		return false
	}
	t.reporting = true
	w.unacked++
	return true
}

// forget removes an attempt from the held set: its completion was
// acknowledged or refused, or it was dropped. It is idempotent.
func (w *Worker) forget(t *task) {
	w.mu.Lock()
	first := !t.forgotten
	if first {
		t.forgotten = true
		if w.held[t.key] == t {
			delete(w.held, t.key)
		}
		if t.reporting {
			w.unacked--
			w.broadcastLocked()
		}
	}
	w.mu.Unlock()
	t.cancel(nil) // releases the context; a no-op if it was cancelled already
	if first {
		w.releaseSlot(t)
	}
}

func (w *Worker) broadcastLocked() {
	close(w.notify)
	w.notify = make(chan struct{})
}

// changed returns a channel closed at the next change of the counters.
func (w *Worker) changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.notify
}

func (w *Worker) runningCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running
}

// waitUntil waits for cond (called under w.mu) to hold; false if ctx ended
// first.
func (w *Worker) waitUntil(ctx context.Context, cond func() bool) bool {
	for {
		w.mu.Lock()
		ok, ch := cond(), w.notify
		w.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// cancelRunning cancels every attempt whose handler is still running and
// returns how many there were.
func (w *Worker) cancelRunning(cause error) int {
	w.mu.Lock()
	ts := make([]*task, 0, len(w.held))
	for _, t := range w.held {
		ts = append(ts, t)
	}
	w.mu.Unlock()
	n := 0
	for _, t := range ts {
		if !t.isFinished() {
			t.cancel(cause)
			n++
		}
	}
	return n
}
