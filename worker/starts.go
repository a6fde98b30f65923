package worker

import (
	"context"

	"github.com/fairwayhq/fairway/api"
)

// maxStartBatch bounds the jobs of one start request.
const maxStartBatch = 500

// startLoop sends start reports: each waits BatchWindow for others to share
// its request. A task that finishes before its report goes out sends none
// (its completion carries started_at). After a transient failure the
// reports go back to the head of the queue and the loop backs off; a task
// finishing meanwhile then drops its report.
func (w *Worker) startLoop(ctx context.Context) {
	fails := 0
	for w.starts.wait(ctx) {
		gather(ctx, w.opts.BatchWindow, w, func() bool { return w.starts.len() >= maxStartBatch })
		if ctx.Err() != nil {
			return
		}
		var failed error
		for _, group := range groupBy(claimStarts(w.starts.take(maxStartBatch, 0, nil)), taskGen) {
			if err := w.sendStarts(ctx, group); err != nil {
				failed = err
			}
		}
		if failed == nil {
			fails = 0
			continue
		}
		d := w.backoff.delay(fails, failed)
		fails++
		w.log.Warn("start report failed, retrying", "err", failed, "retry_in", d)
		if !sleep(ctx, d) {
			return
		}
	}
}

// claimStarts keeps the tasks whose start report is still wanted.
func claimStarts(ts []*task) []*task {
	var batch []*task
	for _, t := range ts {
		if t.claimStart() {
			batch = append(batch, t)
		}
	}
	return batch
}

// sendStarts reports one session's starts. It returns the error of a
// transient failure, after putting the reports back in the queue.
func (w *Worker) sendStarts(ctx context.Context, batch []*task) error {
	sess := batch[0].sess
	var results []api.ItemResult
	err := w.call(ctx, func(ctx context.Context) (err error) {
		results, err = w.client.Start(ctx, sess.id, startItems(batch))
		return err
	})
	switch {
	case err == nil:
		w.applyStartResults(batch, results)
	case classify(err) == errGone:
		w.sessionLost(sess.gen)
	case classify(err) == errRetry && ctx.Err() == nil:
		var again []*task
		for _, t := range batch {
			if t.requeueStart() {
				again = append(again, t)
			}
		}
		w.starts.addFront(again)
		return err
	default:
		w.log.Error("start report refused", "err", err, "jobs", len(batch))
	}
	for _, t := range batch {
		t.releaseStart()
	}
	return nil
}

func startItems(batch []*task) []api.JobAttempt {
	items := make([]api.JobAttempt, len(batch))
	for i, t := range batch {
		at := t.startedAt
		items[i] = t.attempt()
		items[i].StartedAt = &at
	}
	return items
}

// applyStartResults stops the tasks whose start was refused as stale.
func (w *Worker) applyStartResults(batch []*task, results []api.ItemResult) {
	byID := make(map[string]*task, len(batch))
	for _, t := range batch {
		byID[t.key.jobID] = t
	}
	for _, r := range results {
		t := byID[r.JobID]
		if r.OK || r.Error == nil || t == nil {
			continue
		}
		if itemKind(r.Error) == errStale {
			w.log.Info("start refused: attempt no longer current, stopping it",
				"job", r.JobID, "attempt", t.key.attempt, "code", r.Error.Code)
			t.revoke()
			continue
		}
		w.log.Warn("start refused", "job", r.JobID, "attempt", t.key.attempt,
			"code", r.Error.Code, "message", r.Error.Message)
	}
}
