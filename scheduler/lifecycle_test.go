package scheduler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func oneType() map[JobType]JobTypeConfig {
	return map[JobType]JobTypeConfig{typeClone: {DefaultCost: 1, Priority: PriorityForeground}}
}

func noop(context.Context) error { return nil }

// startBlocker fills a 1-slot scheduler; close the returned channel to free it.
func startBlocker(t *testing.T, s *Scheduler) chan struct{} {
	t.Helper()
	started, release := make(chan struct{}, 1), make(chan struct{})
	if err := s.SubmitErr(typeClone, "blocker", blocker(started, release)); err != nil {
		t.Fatal(err)
	}
	recv(t, started, "blocker start")
	return release
}

func TestRunSyncCancelWhilePending(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 1}, oneType())
	release := startBlocker(t, s)
	var ran atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	res := runSyncAsync(ctx, s, typeClone, "repo", "client", func(context.Context) error {
		ran.Store(true)
		return nil
	})
	waitStats(t, s, 1, 1)
	cancel()
	if err := recv(t, res, "RunSync return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunSync = %v, want context.Canceled", err)
	}
	// Returned while the blocker still holds the only slot, and withdrawn.
	if st := s.Stats(); st.Pending != 0 || st.Running != 1 {
		t.Fatalf("stats after cancel %+v, want 0 pending, 1 running", st)
	}
	close(release)
	if err := s.Shutdown(guardCtx(t)); err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Fatal("fn of a cancelled pending job ran")
	}
}

func TestRunSyncCancelledBeforeSubmit(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 1}, oneType())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.RunSync(ctx, typeClone, "repo", "", noop); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunSync = %v, want context.Canceled", err)
	}
	if st := s.Stats(); st.Pending+st.Running != 0 {
		t.Fatalf("stats %+v, want nothing submitted", st)
	}
}

func TestRunSyncCancelWhileRunning(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 1}, oneType())
	errAborted := errors.New("aborted")
	for _, tc := range []struct {
		name string
		ret  func(ctx context.Context) error
		want error
	}{
		{"returns ctx.Err", func(ctx context.Context) error { return ctx.Err() }, context.Canceled},
		{"returns own error", func(context.Context) error { return errAborted }, errAborted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			res := runSyncAsync(ctx, s, typeClone, "repo", "client", func(ctx context.Context) error {
				close(started)
				<-ctx.Done() // the scheduler passes the cancellation on
				return tc.ret(ctx)
			})
			recv(t, started, "fn start")
			cancel()
			if err := recv(t, res, "RunSync return"); !errors.Is(err, tc.want) {
				t.Fatalf("RunSync = %v, want %v", err, tc.want)
			}
			if st := s.Stats(); st.Pending+st.Running != 0 {
				t.Fatalf("stats %+v, want idle", st)
			}
		})
	}
}

// The ctx given to fn carries the caller's values.
func TestRunSyncCtxValues(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 1}, oneType())
	type key struct{}
	ctx := context.WithValue(guardCtx(t), key{}, "request-42")
	err := s.RunSync(ctx, typeClone, "repo", "", func(ctx context.Context) error {
		if v := ctx.Value(key{}); v != "request-42" {
			return fmt.Errorf("ctx value = %v", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func assertClosed(t *testing.T, s *Scheduler) {
	t.Helper()
	if err := s.SubmitErr(typeClone, "late", noop); !errors.Is(err, ErrClosed) {
		t.Errorf("SubmitErr after close = %v, want ErrClosed", err)
	}
	if err := s.RunSync(guardCtx(t), typeClone, "late", "", noop); !errors.Is(err, ErrClosed) {
		t.Errorf("RunSync after close = %v, want ErrClosed", err)
	}
	if err := s.RegisterType("late", JobTypeConfig{Priority: 1}); !errors.Is(err, ErrClosed) {
		t.Errorf("RegisterType after close = %v, want ErrClosed", err)
	}
}

func TestShutdownDrains(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 2}, oneType())
	started, release := make(chan struct{}, 5), make(chan struct{})
	var done atomic.Int32
	for i := range 5 {
		fn := blocker(started, release)
		err := s.SubmitErr(typeClone, fmt.Sprint(i), func(ctx context.Context) error {
			defer done.Add(1)
			return fn(ctx)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	waitStats(t, s, 3, 2)
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(guardCtx(t)) }()
	waitFor(t, s, "shutdown started", s.isClosed)
	assertClosed(t, s)
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v before the jobs finished", err)
	default:
	}
	close(release)
	if err := recv(t, shut, "Shutdown"); err != nil {
		t.Fatalf("Shutdown = %v, want nil", err)
	}
	if n := done.Load(); n != 5 {
		t.Fatalf("%d jobs ran to completion, want 5", n)
	}
}

// pendingAndRunning sets up one running job that waits for its ctx, one
// pending background job and one pending RunSync.
type pendingAndRunning struct {
	cancelled  chan struct{} // closed when the running job saw its ctx end
	pendingRan atomic.Bool
	sync       <-chan error
}

func setupPendingAndRunning(t *testing.T, s *Scheduler) *pendingAndRunning {
	t.Helper()
	p := &pendingAndRunning{cancelled: make(chan struct{})}
	started := make(chan struct{})
	err := s.SubmitErr(typeClone, "running", func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		close(p.cancelled)
		return ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	recv(t, started, "running job start")
	mark := func(context.Context) error { p.pendingRan.Store(true); return nil }
	if err := s.SubmitErr(typeClone, "pending", mark); err != nil {
		t.Fatal(err)
	}
	p.sync = runSyncAsync(context.Background(), s, typeClone, "pending-sync", "client", mark)
	waitStats(t, s, 2, 1)
	return p
}

func (p *pendingAndRunning) check(t *testing.T) {
	t.Helper()
	select {
	case <-p.cancelled:
	default:
		t.Error("the running job's ctx was not cancelled")
	}
	if p.pendingRan.Load() {
		t.Error("a pending job ran")
	}
	if err := recv(t, p.sync, "pending RunSync"); !errors.Is(err, ErrClosed) {
		t.Errorf("pending RunSync = %v, want ErrClosed", err)
	}
}

func TestShutdownExpiredCancels(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 1}, oneType())
	p := setupPendingAndRunning(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown = %v, want context.Canceled", err)
	}
	p.check(t)
	assertClosed(t, s)
	if st := s.Stats(); st.Pending+st.Running != 0 {
		t.Fatalf("stats %+v after shutdown, want idle", st)
	}
}

func TestClose(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 1}, oneType())
	p := setupPendingAndRunning(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	p.check(t)
	assertClosed(t, s)
	if err := s.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if err := s.Shutdown(guardCtx(t)); err != nil {
		t.Fatalf("Shutdown after Close = %v", err)
	}
}

func TestPanicRecovered(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 1}, oneType())
	if err := s.SubmitErr(typeClone, "bg", func(context.Context) error { panic("background boom") }); err != nil {
		t.Fatal(err)
	}
	err := s.RunSync(guardCtx(t), typeClone, "fg", "", func(context.Context) error { panic("boom") })
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "boom" || !bytes.Contains(pe.Stack, []byte("TestPanicRecovered")) {
		t.Fatalf("RunSync = %v, want *PanicError with value boom and a stack", err)
	}
	if err := s.RunSync(guardCtx(t), typeClone, "fg", "", noop); err != nil {
		t.Fatalf("RunSync after panics = %v", err)
	}
	waitStats(t, s, 0, 0)
}

func TestGoexitCompletesJob(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 1}, oneType())
	err := s.RunSync(guardCtx(t), typeClone, "repo", "", func(context.Context) error {
		runtime.Goexit()
		return nil
	})
	if !errors.Is(err, errGoexit) {
		t.Fatalf("RunSync = %v, want errGoexit", err)
	}
	if err := s.RunSync(guardCtx(t), typeClone, "repo", "", noop); err != nil {
		t.Fatalf("RunSync after Goexit = %v", err)
	}
}

// recordHandler is a slog.Handler that sends each record's message and
// attributes to a channel.
type recordHandler struct{ ch chan string }

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h recordHandler) WithGroup(string) slog.Handler            { return h }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.ch <- b.String()
	return nil
}

// nextLog returns the next record whose message starts with prefix.
func nextLog(t *testing.T, ch <-chan string, prefix string) string {
	t.Helper()
	for {
		if m := recv(t, ch, "log "+prefix); strings.HasPrefix(m, prefix) {
			return m
		}
	}
}

func TestSubmitLogsErrors(t *testing.T) {
	logs := make(chan string, 100)
	s := newTest(t, Options{MaxConcurrency: 1, Logger: slog.New(recordHandler{logs})}, oneType())
	s.Submit("nope", "repo", noop)
	if m := nextLog(t, logs, "scheduler: submit dropped"); !strings.Contains(m, "unknown job type") {
		t.Fatalf("log %q, want unknown job type", m)
	}
	s.Submit(typeClone, "repo", func(context.Context) error { return errors.New("disk full") })
	if m := nextLog(t, logs, "scheduler: background job failed"); !strings.Contains(m, "disk full") {
		t.Fatalf("log %q, want the job's error", m)
	}
}

func TestUnknownTypeAndNilFn(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 1}, oneType())
	if err := s.SubmitErr("nope", "repo", noop); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("SubmitErr = %v, want ErrUnknownType", err)
	}
	if err := s.RunSync(guardCtx(t), "nope", "repo", "", noop); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("RunSync = %v, want ErrUnknownType", err)
	}
	if err := s.SubmitErr(typeClone, "repo", nil); !errors.Is(err, ErrInvalidJob) {
		t.Fatalf("SubmitErr(nil fn) = %v, want ErrInvalidJob", err)
	}
	if _, ok := s.EstimatedCost("nope", "repo"); ok {
		t.Fatal("EstimatedCost of an unknown type reported learned")
	}
}

func TestRegisterType(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 1}, nil)
	for _, tc := range []struct {
		name JobType
		cfg  JobTypeConfig
		want error
	}{
		{"", JobTypeConfig{Priority: 1}, ErrInvalidType},
		{"zero-priority", JobTypeConfig{}, ErrInvalidType},
		{"negative-cap", JobTypeConfig{Priority: 1, MaxConcurrency: -1}, ErrInvalidType},
		{"negative-cost", JobTypeConfig{Priority: 1, DefaultCost: -1}, ErrInvalidType},
		{"ok", JobTypeConfig{Priority: 1}, nil},
		{"ok", JobTypeConfig{Priority: 2}, ErrTypeRegistered},
		{"same-tier", JobTypeConfig{Priority: 1, MaxConcurrency: 3, ConflictGroup: "g"}, nil},
	} {
		if err := s.RegisterType(tc.name, tc.cfg); !errors.Is(err, tc.want) {
			t.Errorf("RegisterType(%q, %+v) = %v, want %v", tc.name, tc.cfg, err, tc.want)
		}
	}
	if c, ok := s.EstimatedCost("ok", "x"); c != 1 || ok {
		t.Errorf("EstimatedCost with DefaultCost 0 = %v, %v; want 1, false", c, ok)
	}
	if err := s.RunSync(guardCtx(t), "ok", "x", "", noop); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterType("after", JobTypeConfig{Priority: 3, MaxConcurrency: 1}); err != nil {
		t.Fatalf("RegisterType after a submission: %v", err)
	}
	if err := s.RunSync(guardCtx(t), "after", "x", "", noop); err != nil {
		t.Fatalf("a type registered after a submission does not run: %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	for _, opts := range []Options{
		{},
		{MaxConcurrency: -1},
		{MaxConcurrency: 1, Alpha: 1.5},
		{MaxConcurrency: 1, KeyTTL: -time.Second},
	} {
		if s, err := New(opts); !errors.Is(err, ErrInvalidOptions) {
			if s != nil {
				_ = s.Close()
			}
			t.Errorf("New(%+v) = %v, want ErrInvalidOptions", opts, err)
		}
	}
}

// Many concurrent RunSync callers, some cancelling, all get an answer and
// the scheduler ends idle.
func TestConcurrentRunSync(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 3}, conflictTypes())
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(guardCtx(t))
			defer cancel()
			switch i % 4 {
			case 0:
				cancel() // before submission
			case 1:
				go cancel() // racing with submission, admission or the run
			}
			typ := []JobType{typeRepack, typePull, typeSnap}[i%3]
			err := s.RunSync(ctx, typ, fmt.Sprintf("r%d", i%5), fmt.Sprintf("c%d", i%7), func(ctx context.Context) error {
				runtime.Gosched()
				return nil
			})
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("RunSync %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	waitStats(t, s, 0, 0)
}
