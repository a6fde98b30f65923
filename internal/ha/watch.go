package ha

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fairwayhq/fairway/internal/leader"
)

// leaderWatch keeps the leadership row as last read, so that a standby's
// /readyz and its forwarding cost no database round trip each. It reads
// every TTL/3; while reads fail (the database is out of reach) it waits
// longer between them (jittered, doubling, capped at TTL), so that an
// instance cut off from the database does not dial it in a loop. A
// request that finds no fresh view (none read within a TTL, or no live
// leader in it) asks for a read at once and waits a little for it; such
// reads come at most every TTL/10, and not at all while reads fail.
type leaderWatch struct {
	db   leader.DB
	ttl  time.Duration
	log  *slog.Logger
	seen atomic.Pointer[leaderSeen]
	kick chan struct{} // a read is wanted now
	mu   sync.Mutex
	next chan struct{} // closed after the next read attempt
}

// leaderSeen is the leadership row as it was read at a time.
type leaderSeen struct {
	cur   leader.Current
	at    time.Time // when the read was sent (local clock)
	until time.Time // the view is fresh until then: a live lease runs at most a TTL past the read
}

func newLeaderWatch(db leader.DB, ttl time.Duration, log *slog.Logger) *leaderWatch {
	return &leaderWatch{db: db, ttl: ttl, log: log, kick: make(chan struct{}, 1), next: make(chan struct{})}
}

// run reads the row until ctx ends.
func (w *leaderWatch) run(ctx context.Context) {
	every, minGap := w.ttl/3, w.ttl/10
	failures := 0
	for ctx.Err() == nil {
		started := time.Now()
		rctx, cancel := context.WithTimeout(ctx, every)
		cur, err := leader.Read(rctx, w.db)
		cancel()
		if err != nil {
			failures++
			if failures == 1 || failures%10 == 0 {
				w.log.Warn("ha: the leadership row cannot be read", "err", err, "failures", failures)
			}
		} else {
			failures = 0
			w.seen.Store(&leaderSeen{cur: cur, at: started, until: started.Add(w.ttl)})
		}
		w.mu.Lock()
		close(w.next)
		w.next = make(chan struct{})
		w.mu.Unlock()
		pause := every
		for i := 0; i < failures && pause < w.ttl; i++ {
			pause *= 2
		}
		pause = min(pause, w.ttl)
		t := time.NewTimer(pause*3/4 + rand.N(pause/2+1))
		kick := w.kick
		if failures > 0 {
			// Failing: requests do not hurry the next read. Each failed
			// read leaves a connection the database may hold half-open
			// for its keepalive time; they must stay few.
			kick = nil
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-kick:
			sleep(ctx, time.Until(started.Add(minGap)))
		}
		t.Stop()
	}
}

// current is the view held, if it is fresh and names a live leader.
func (w *leaderWatch) current() (*leaderSeen, bool) {
	s := w.seen.Load()
	return s, s != nil && s.cur.Live && time.Now().Before(s.until)
}

// fresh is current; without a fresh view it asks for a read at once and
// waits for it, up to wait (or ctx's end).
func (w *leaderWatch) fresh(ctx context.Context, wait time.Duration) *leaderSeen {
	if s, ok := w.current(); ok {
		return s
	}
	w.mu.Lock()
	next := w.next
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-next:
	case <-t.C:
	case <-ctx.Done():
	}
	s, _ := w.current()
	return s
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
