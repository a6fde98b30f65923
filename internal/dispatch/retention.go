package dispatch

import (
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/internal/metrics"
	"github.com/fairwayhq/fairway/internal/store"
)

// Retention deletes old rows in small chunks, one chunk per kind in a
// batch's transaction, so that no batch waits long on it. Caught up, it
// looks again every purgeEvery; behind (a chunk left rows due), it comes
// back purgeBehindEvery later, which deletes up to
// purgeChunk/purgeBehindEvery rows a second: far more than the dispatcher
// can finish jobs, so the purge keeps pace with any sustained rate.
const (
	purgeEvery       = 5 * time.Second
	purgeBehindEvery = 100 * time.Millisecond
	purgeChunk       = 250
)

// purge forgets idempotency claims past their window and, with retentions
// configured, finished jobs and audit events older than theirs. It
// reports how far behind each purge is (fairway_retention_backlog_seconds).
func (d *Dispatcher) purge(tx *txn) {
	if tx.now.Before(d.purgeDue) {
		return
	}
	if _, err := tx.w.IdempotencyPurge(tx.ctx, tx.now.Add(-store.IdempotencyWindow)); err != nil {
		tx.fatal(fmt.Errorf("purge idempotency keys: %w", err))
		return
	}
	behind := false
	if r := d.cfg.Server.Retention.D(); r > 0 {
		cutoff := tx.now.Add(-r)
		p, err := tx.w.JobDeleteFinished(tx.ctx, cutoff, purgeChunk)
		if err != nil {
			tx.fatal(fmt.Errorf("purge finished jobs: %w", err))
			return
		}
		behind = d.purged(tx, "jobs", cutoff, p) || behind
	}
	if r := d.cfg.Server.EventRetention(); r > 0 {
		cutoff := tx.now.Add(-r)
		p, err := tx.w.EventDeleteBefore(tx.ctx, cutoff, purgeChunk)
		if err != nil {
			tx.fatal(fmt.Errorf("purge events: %w", err))
			return
		}
		behind = d.purged(tx, "events", cutoff, p) || behind
	}
	d.purgeDue = tx.now.Add(purgeEvery)
	if behind {
		d.purgeDue = tx.now.Add(purgeBehindEvery)
	}
}

// purged records one purge's outcome in the metrics once the batch is
// durable, and reports whether rows due remain.
func (d *Dispatcher) purged(tx *txn, what string, cutoff time.Time, p store.Purged) bool {
	var backlog time.Duration
	if !p.NextAt.IsZero() {
		backlog = max(cutoff.Sub(p.NextAt), 0)
	}
	deleted := p.Deleted
	d.observe(tx, func(m *metrics.Metrics) { m.RetentionPurged(what, deleted, backlog) })
	return !p.NextAt.IsZero()
}
