package dispatch

import (
	"fmt"
	"slices"
	"time"
)

// A worker calls in at least once a heartbeat interval: its heartbeat
// is held for at most that long, and the next one leaves when the answer
// comes. One that has not called for two intervals (at most halfway from
// one interval to the lease TTL) has missed its heartbeats: it died, or
// cannot reach the server. Until its lease TTL runs out it is not
// declared lost, but it is offered no new work: its free slots leave the
// engine's placement, and the leases waiting in its mailbox, which have
// not left the server, go back to the queue for other workers. Its
// running jobs stay its own. Its next call, if any, brings it back.
func (d *Dispatcher) silentAfter() time.Duration {
	hb, ttl := d.cfg.Server.HeartbeatInterval.D(), d.leaseTTL()
	return min(2*hb, (hb+ttl)/2)
}

// markSilent takes the workers that missed their heartbeats out of
// placement.
func (d *Dispatcher) markSilent(tx *txn) {
	after := d.silentAfter()
	for _, wk := range sortedWorkers(d.workers) {
		if wk.silent || tx.now.Sub(wk.lastSeen) <= after {
			continue
		}
		silentFor := tx.now.Sub(wk.lastSeen).Round(time.Millisecond)
		d.log.Warn("worker missed its heartbeats: no new work for it until it calls again",
			"worker", wk.w.ID, "name", wk.w.Name, "silent_for", silentFor)
		d.setSilent(tx, wk, true)
		reason := fmt.Sprintf("worker %s silent for %s: it missed its heartbeats", wk.w.ID, silentFor)
		for _, it := range slices.Clone(wk.mailbox) {
			rec := d.mailRec(wk, it)
			if rec == nil || it.sent {
				continue
			}
			d.withdrawLease(tx, rec, map[string]any{"worker": wk.w.ID, "reason": reason})
		}
	}
}

// setSilent takes wk's free capacity out of placement, or gives it back.
func (d *Dispatcher) setSilent(tx *txn, wk *workerRec, silent bool) {
	if _, err := d.eng.SetWorkerOffline(wk.w.ID, silent); err != nil {
		tx.fatal(fmt.Errorf("engine: worker %s offline %v: %w", wk.w.ID, silent, err))
		return
	}
	wk.silent = silent
	if !silent {
		d.log.Info("worker called again: offered work again", "worker", wk.w.ID, "name", wk.w.Name)
	}
}
