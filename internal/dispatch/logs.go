package dispatch

import (
	"github.com/fairwayhq/fairway/internal/store"
)

// appendLogs stores the chunks of jobs this worker holds or held: the
// attempt must not be newer than the job's current one.
func (d *Dispatcher) appendLogs(tx *txn, wk *workerRec, chunks []store.LogChunk) int {
	keep := chunks[:0]
	for _, c := range chunks {
		rec := d.jobs[c.JobID]
		if rec != nil && c.Attempt > rec.job.Attempt {
			continue
		}
		if rec != nil && c.Attempt == rec.job.Attempt && !d.withinOutputLimit(tx, rec, len(c.Data)) {
			continue
		}
		if c.At.IsZero() {
			c.At = tx.now
		}
		keep = append(keep, c)
	}
	if len(keep) == 0 {
		return 0
	}
	if err := tx.w.LogAppend(tx.ctx, keep); err != nil {
		if isOpError(err) {
			return 0
		}
		tx.fatal(err)
	}
	return len(keep)
}

// outputSlack is what a worker may send beyond a job's output limit: the
// truncation marker and chunk boundaries.
const outputSlack = 4 << 10

// withinOutputLimit counts n more bytes of output of rec's current attempt
// and reports whether they are within its limit. The worker keeps the
// head and the tail within the limit itself; this is the backstop against
// one that does not, so that no worker can fill the disk: past the limit
// chunks are refused, with one output_truncated event per attempt.
func (d *Dispatcher) withinOutputLimit(tx *txn, rec *jobRec, n int) bool {
	limit := d.outputLimit(rec) + outputSlack
	if rec.outputBytes+int64(n) > limit {
		if !rec.outputCut {
			rec.outputCut = true
			tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventOutputTruncated, "system",
				map[string]any{"limit_bytes": limit - outputSlack, "by": "server"})
		}
		return false
	}
	rec.outputBytes += int64(n)
	return true
}
