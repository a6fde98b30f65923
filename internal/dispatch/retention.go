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
//
// A job's chunk deletes its executions and output too, which may be many
// rows: the jobs' chunk halves while a chunk takes longer than
// purgeSlow, and grows back while it is quick.
const (
	purgeEvery       = 5 * time.Second
	purgeBehindEvery = 100 * time.Millisecond
	purgeChunk       = 250
	purgeMinChunk    = 10
	purgeSlow        = 20 * time.Millisecond
)

// purge forgets idempotency claims past their window and, with retentions
// configured, finished jobs and audit events older than theirs. It
// reports how far behind each purge is (fairway_retention_backlog_seconds).
func (d *Dispatcher) purge(tx *txn) {
	if tx.now.Before(d.purgeDue) {
		return
	}
	p, err := tx.w.IdempotencyPurge(tx.ctx, tx.now.Add(-store.IdempotencyWindow), purgeChunk)
	if err != nil {
		tx.fatal(fmt.Errorf("purge idempotency keys: %w", err))
		return
	}
	behind := !p.NextAt.IsZero()
	// Events first: a job's submitted event its row still holds becomes
	// an event row when the job is deleted (store doc.go, "The submitted
	// event in the job row"), unless the events' retention took it
	// already, as it does when it is not longer than the jobs'.
	if r := d.cfg.Server.EventRetention(); r > 0 {
		cutoff := tx.now.Add(-r)
		p, err := tx.w.EventDeleteBefore(tx.ctx, cutoff, purgeChunk)
		if err != nil {
			tx.fatal(fmt.Errorf("purge events: %w", err))
			return
		}
		behind = d.purged(tx, "events", cutoff, p) || behind
	}
	if r := d.cfg.Server.Retention.D(); r > 0 {
		cutoff := tx.now.Add(-r)
		began := time.Now()
		p, err := tx.w.JobDeleteFinished(tx.ctx, cutoff, d.jobChunk())
		if err != nil {
			tx.fatal(fmt.Errorf("purge finished jobs: %w", err))
			return
		}
		d.purgeJobChunk = nextPurgeChunk(d.jobChunk(), time.Since(began))
		behind = d.purged(tx, "jobs", cutoff, p) || behind
	}
	d.purgeDue = tx.now.Add(purgeEvery)
	if behind {
		d.purgeDue = tx.now.Add(purgeBehindEvery)
	}
}

// jobChunk is how many jobs the next purge deletes at most.
func (d *Dispatcher) jobChunk() int {
	if d.purgeJobChunk == 0 {
		return purgeChunk
	}
	return d.purgeJobChunk
}

// nextPurgeChunk is the jobs' chunk after one that took took: half as
// large after a slow one, twice after a quick one, within
// [purgeMinChunk, purgeChunk].
func nextPurgeChunk(chunk int, took time.Duration) int {
	switch {
	case took > purgeSlow:
		return max(chunk/2, purgeMinChunk)
	case took < purgeSlow/4:
		return min(chunk*2, purgeChunk)
	}
	return chunk
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
