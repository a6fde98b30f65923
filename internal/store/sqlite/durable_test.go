package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

func insertJob(ctx context.Context, id string) func(w store.Writer) error {
	now := time.Now()
	return func(w store.Writer) error {
		return w.JobInsert(ctx, store.Job{ID: id, Tenant: "t", Type: "noop", Priority: 1, State: store.StatePending, CreatedAt: now, EnqueuedAt: now})
	}
}

// holdFsync makes each of the store's fsyncs wait until release is
// closed, then call after (if not nil) and sync.
func holdFsync(s *Store, release <-chan struct{}, after func()) {
	realSync := s.sync.fsync
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	s.sync.fsync = func() error {
		<-release
		if after != nil {
			after()
		}
		return realSync()
	}
}

// TestWriteDeferredWaitsForFsync: a deferred commit is visible to readers
// at once but reported durable only when an fsync begun after it returns;
// the commits made while one fsync runs share the next one, and are
// reported in order.
func TestWriteDeferredWaitsForFsync(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	release := make(chan struct{})
	var fsyncs atomic.Int64
	holdFsync(s, release, func() { fsyncs.Add(1) })

	first := store.NewID(time.Now())
	ch1, err := s.WriteDeferred(ctx, insertJob(ctx, first))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.JobGet(ctx, first); err != nil {
		t.Fatalf("a committed job is not visible before its fsync: %v", err)
	}
	var later []<-chan error
	for range 5 {
		ch, err := s.WriteDeferred(ctx, insertJob(ctx, store.NewID(time.Now())))
		if err != nil {
			t.Fatal(err)
		}
		later = append(later, ch)
	}
	select {
	case err := <-ch1:
		t.Fatalf("reported durable (%v) while the fsync was held", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	for i, ch := range append([]<-chan error{ch1}, later...) {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatalf("commit %d: %v", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("commit %d never reported durable", i)
		}
	}
	if n := fsyncs.Load(); n < 1 || n > 2 {
		t.Errorf("%d fsyncs for 6 commits, want 1 or 2 (group commit)", n)
	}
	// A transaction that writes nothing costs no fsync.
	before := fsyncs.Load()
	ch, err := s.WriteDeferred(ctx, func(store.Writer) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := <-ch; err != nil || fsyncs.Load() != before {
		t.Errorf("empty transaction: %v, %d fsyncs", err, fsyncs.Load()-before)
	}
}

// TestSyncFailureIsSticky: after a failed fsync the waiting commit gets the
// error and the store refuses every later write, since what the disk holds
// is no longer known.
func TestSyncFailureIsSticky(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	diskErr := errors.New("EIO")
	s.sync.mu.Lock()
	s.sync.fsync = func() error { return diskErr }
	s.sync.mu.Unlock()
	err = s.Write(ctx, insertJob(ctx, store.NewID(time.Now())))
	if !errors.Is(err, errSyncFailed) || !errors.Is(err, diskErr) {
		t.Fatalf("Write after a failed fsync: %v, want errSyncFailed wrapping EIO", err)
	}
	if _, err := s.WriteDeferred(ctx, insertJob(ctx, store.NewID(time.Now()))); !errors.Is(err, errSyncFailed) {
		t.Fatalf("the next WriteDeferred: %v, want errSyncFailed", err)
	}
	if err := s.Close(); !errors.Is(err, errSyncFailed) {
		t.Errorf("Close: %v, want it to report the failed fsync", err)
	}
}

// TestDurableAcrossReopen: what Write acknowledged is there after the store
// is closed and opened again.
func TestDurableAcrossReopen(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	id := store.NewID(time.Now())
	if err := s.Write(ctx, insertJob(ctx, id)); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.JobGet(ctx, id); err != nil {
		t.Fatalf("job after reopen: %v", err)
	}
}
