package leader

import (
	"context"
	"log/slog"
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

// Run campaigns until ctx ends. Each won term runs lead with a context
// that ends when the term does: ctx ends, or a renewal fails or cannot be
// made before the lease would run out. lead must return once its context
// ends; Run waits for it, resigns the term if it still holds it, and
// campaigns again (unless ctx has ended).
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context, t Term)) {
	if e.Lease.TTL <= 0 {
		e.Lease.TTL = DefaultTTL
	}
	if e.Log == nil {
		e.Log = slog.New(slog.DiscardHandler)
	}
	every := e.Lease.TTL / 3
	for ctx.Err() == nil {
		t, ok, err := e.Lease.Campaign(ctx, e.DB)
		switch {
		case err != nil && ctx.Err() == nil:
			e.Log.Warn("leader: campaign failed", "err", err)
		case ok:
			e.Log.Info("leader: elected", "term", t.Number, "holder", t.Holder)
			e.tenure(ctx, t, lead)
			continue
		}
		sleep(ctx, every)
	}
}

// tenure leads one term: lead runs while the term is renewed.
func (e *Elector) tenure(ctx context.Context, t Term, lead func(ctx context.Context, t Term)) {
	termCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead(termCtx, t)
	}()
	every := t.TTL / 3
	renewed := time.Now()
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-done:
			e.resign(t)
			return
		case <-ctx.Done():
			cancel()
			<-done
			e.resign(t)
			return
		case <-ticker.C:
		}
		rctx, rcancel := context.WithTimeout(ctx, every)
		ok, err := t.Renew(rctx, e.DB)
		rcancel()
		switch {
		case ok:
			renewed = time.Now()
			continue
		case err == nil:
			e.Log.Warn("leader: deposed", "term", t.Number)
		case time.Since(renewed) < t.TTL-every:
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
