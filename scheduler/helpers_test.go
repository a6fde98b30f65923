package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// guard bounds every wait so that a broken scheduler fails the test instead
// of hanging it. No test relies on it for synchronisation.
const guard = 10 * time.Second

// fakeClock is a Clock that moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newTest builds a scheduler with types registered, closed at test end.
func newTest(t *testing.T, opts Options, types map[JobType]JobTypeConfig) *Scheduler {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for name, cfg := range types {
		if err := s.RegisterType(name, cfg); err != nil {
			t.Fatalf("RegisterType(%q): %v", name, err)
		}
	}
	return s
}

// waitFor blocks until cond holds, re-checking at every state change of s.
func waitFor(t *testing.T, s *Scheduler, what string, cond func() bool) {
	t.Helper()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for {
		ch := s.changes() // before cond: a change after the check is not missed
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("timed out waiting for %s (stats %+v)", what, s.Stats())
		}
	}
}

func waitStats(t *testing.T, s *Scheduler, pending, running int) {
	t.Helper()
	waitFor(t, s, "pending/running counts", func() bool {
		st := s.Stats()
		return st.Pending == pending && st.Running == running
	})
}

// recv receives from ch or fails the test after guard.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

func guardCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

// blocker returns a fn that reports its start on started and returns when
// release is closed or its ctx ends.
func blocker(started chan<- struct{}, release <-chan struct{}) func(context.Context) error {
	return func(ctx context.Context) error {
		started <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// gauge tracks a concurrency level and its maximum.
type gauge struct{ cur, max atomic.Int64 }

func (g *gauge) inc() {
	n := g.cur.Add(1)
	for {
		m := g.max.Load()
		if n <= m || g.max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (g *gauge) dec() { g.cur.Add(-1) }

// runSyncAsync runs RunSync in a goroutine and returns its result channel.
func runSyncAsync(ctx context.Context, s *Scheduler, t JobType, id, fk string, fn func(context.Context) error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- s.RunSync(ctx, t, id, fk, fn) }()
	return ch
}

func (s *Scheduler) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
