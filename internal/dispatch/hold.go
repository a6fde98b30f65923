package dispatch

import (
	"context"
	"fmt"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

// Hold sets a job that has not started aside: it keeps its state
// (pending, blocked, retry_wait) and place in the audit trail, but is
// never leased until Release. The result is api.ResultHeld,
// ResultAlreadyHeld, ResultAlreadyRunning or ResultAlreadyFinished; ""
// when the job changed meanwhile.
func (d *Dispatcher) Hold(ctx context.Context, id, actor string) (string, error) {
	var result string
	err := d.submit(ctx, func(tx *txn) { result = d.setHeld(tx, id, true, actor) })
	return result, err
}

// Release makes a held job runnable again: api.ResultReleased,
// ResultNotHeld or ResultAlreadyFinished.
func (d *Dispatcher) Release(ctx context.Context, id, actor string) (string, error) {
	var result string
	err := d.submit(ctx, func(tx *txn) { result = d.setHeld(tx, id, false, actor) })
	return result, err
}

func (d *Dispatcher) setHeld(tx *txn, id string, held bool, actor string) string {
	rec := d.jobs[id]
	switch {
	case rec == nil:
		return api.ResultAlreadyFinished
	case rec.job.State == store.StateLeased || rec.job.State == store.StateRunning:
		if held {
			return api.ResultAlreadyRunning
		}
		return api.ResultNotHeld
	case rec.job.Held == held && held:
		return api.ResultAlreadyHeld
	case rec.job.Held == held:
		return api.ResultNotHeld
	}
	if !d.transition(tx, rec, []store.State{rec.job.State}, store.JobSet{Held: &held}) {
		return ""
	}
	var err error
	if held {
		err = d.eng.Hold(id, tx.now)
	} else {
		err = d.eng.Release(id, tx.now)
	}
	if err != nil {
		tx.fatal(fmt.Errorf("engine hold %s: %w", id, err))
		return ""
	}
	if held {
		tx.event(id, rec.job.Attempt, rec.job.Tenant, store.EventHeld, actor, nil)
		return api.ResultHeld
	}
	tx.event(id, rec.job.Attempt, rec.job.Tenant, store.EventReleased, actor, nil)
	if rec.job.State == store.StatePending {
		tx.arrive(rec)
	}
	return api.ResultReleased
}
