package dispatch

import (
	"context"

	"github.com/fairwayhq/fairway/internal/store"
)

// LiveEvents answers the part of the audit feed the store holds in no
// index (store doc.go, "The hot row and its indexes"): the leased and
// started events of the live attempts of unfinished jobs that pass p's
// filters, in p's order, at most p's limit, as EventList would return
// them, and upTo, the last event id drawn when they were listed. It runs
// on the dispatcher's goroutine between two commands and answers once
// that batch is durable: every event with an id up to upTo is committed,
// and is in this answer or, if its attempt had ended, in the store.
func (d *Dispatcher) LiveEvents(ctx context.Context, p store.EventListParams) (evs []store.Event, upTo int64, err error) {
	err = d.submit(ctx, func(tx *txn) {
		upTo = d.lastEventID
		evs = d.liveEvents(&p)
	})
	return evs, upTo, err
}

// liveEvents lists the matching live attempt events of the jobs leased or
// running.
func (d *Dispatcher) liveEvents(p *store.EventListParams) []store.Event {
	var out []store.Event
	for _, st := range []store.State{store.StateLeased, store.StateRunning} {
		for _, rec := range d.byState[st] {
			// Cheap checks first: a poll of the feed's end passes over
			// every running job.
			if max(rec.job.LeaseEventID, rec.job.StartEventID) <= p.AfterID ||
				p.JobID != "" && rec.job.ID != p.JobID || p.Tenant != "" && rec.job.Tenant != p.Tenant {
				continue
			}
			for _, ev := range store.LiveAttemptEvents(rec.job.AsStored()) {
				if p.Matches(&ev) {
					out = append(out, ev)
				}
			}
		}
	}
	return p.Page(out)
}
