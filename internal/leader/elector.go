package leader

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"
)

// Elector campaigns for the leadership and leads while it can renew.
type Elector struct {
	DB    DB
	Lease Lease
	Log   *slog.Logger
}

// DefaultTTL is a lease's length unless Lease.TTL says otherwise: a
// standby takes over within it after the leader dies without resigning.
const DefaultTTL = 2 * time.Second

// SkewAllowance is how much of a lease a leader leaves unused: it stops
// leading at TTL − SkewAllowance after it sent its last successful
// campaign or renewal, on its own clock, while the others count the TTL on
// the database's clock from when the statement ran (later). The allowance
// absorbs the two clocks running at different rates and the time between
// the step-down decision and the last request stopping.
func SkewAllowance(ttl time.Duration) time.Duration { return ttl / 5 }

// Run campaigns until ctx ends. Each won term runs lead with a context
// that ends when the term does: ctx ends, the term is deposed, or the
// local bound passes (TTL − SkewAllowance after the last renewal that
// succeeded was sent; renewals are tried every TTL/3, each bounded by
// that deadline). lead must return once its context ends; Run waits for
// it, resigns the term if it still holds it, and campaigns again (unless
// ctx has ended). A campaign that fails (the database is out of reach), or
// a term that ends within a TTL, makes the next campaign wait longer:
// jittered back-off, capped at TTL.
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context, t Term)) {
	if e.Lease.TTL <= 0 {
		e.Lease.TTL = DefaultTTL
	}
	if e.Log == nil {
		e.Log = slog.New(slog.DiscardHandler)
	}
	every := e.Lease.TTL / 3
	failures := 0
	for ctx.Err() == nil {
		sent := time.Now()
		cctx, cancel := context.WithTimeout(ctx, every)
		t, ok, err := e.Lease.Campaign(cctx, e.DB)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			failures++
			e.Log.Warn("leader: campaign failed", "err", err, "failures", failures)
		case ok:
			e.Log.Info("leader: elected", "term", t.Number, "holder", t.Holder)
			e.tenure(ctx, t, sent, lead)
			if time.Now().Sub(sent) >= e.Lease.TTL {
				failures = 0
				continue // led a while: campaign again at once
			}
			failures++ // the term ended at once (the store could not be opened)
		default:
			failures = 0
		}
		sleep(ctx, campaignPause(every, e.Lease.TTL, failures))
	}
}

// campaignPause is the wait before the next campaign: about every
// (jittered by ±1/4) while campaigns succeed, doubling with each failure
// in a row up to ttl. The cap is low because a campaign also fails (times
// out) while it waits for the row lock of a cut-off leader's transaction,
// which the database ends within ttl (idle_in_transaction_session_timeout):
// a longer pause would delay the takeover itself.
func campaignPause(every, ttl time.Duration, failures int) time.Duration {
	d := every
	for i := 0; i < failures && d < ttl; i++ {
		d *= 2
	}
	d = min(d, ttl)
	return d*3/4 + rand.N(d/2+1)
}

// tenure leads one term, won by a campaign sent at sent: lead runs while
// the term is renewed in time.
func (e *Elector) tenure(ctx context.Context, t Term, sent time.Time, lead func(ctx context.Context, t Term)) {
	termCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	allowed := t.TTL - SkewAllowance(t.TTL)
	deadline := sent.Add(allowed)
	stepDown := time.AfterFunc(deadline.Sub(time.Now()), cancel) // whatever a renewal in flight does
	defer stepDown.Stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead(termCtx, t)
	}()
	every := t.TTL / 3
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-done:
			e.resign(t)
			return
		case <-termCtx.Done():
			if ctx.Err() == nil {
				e.Log.Warn("leader: stepping down: the lease was not renewed in time", "term", t.Number,
					"allowed", allowed)
			}
			<-done
			e.resign(t)
			return
		case <-ticker.C:
		}
		rsent := time.Now()
		rctx, rcancel := context.WithDeadline(termCtx, minTime(rsent.Add(every), deadline))
		ok, err := t.Renew(rctx, e.DB)
		rcancel()
		switch {
		case ok:
			deadline = rsent.Add(allowed)
			stepDown.Reset(deadline.Sub(time.Now()))
			continue
		case err == nil:
			e.Log.Warn("leader: deposed", "term", t.Number)
		case time.Now().Before(deadline):
			e.Log.Warn("leader: renewal failed, retrying", "term", t.Number, "err", err)
			continue
		default:
			e.Log.Warn("leader: stepping down: the lease cannot be renewed in time", "term", t.Number, "err", err)
		}
		cancel()
		<-done
		return
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// resign gives the term up at once, bounded.
func (e *Elector) resign(t Term) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := t.Resign(ctx, e.DB); err != nil {
		e.Log.Warn("leader: resign failed; the lease runs out by itself", "term", t.Number, "err", err)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
