package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

func insertQueued(ctx context.Context, ids ...string) func(w store.Writer) error {
	now := time.Now()
	return func(w store.Writer) error {
		for _, id := range ids {
			if err := w.JobInsertBatched(ctx, benchJob(id, now)); err != nil {
				return err
			}
		}
		return nil
	}
}

func leaseQueued(ctx context.Context, id string, expect int) func(w store.Writer) error {
	return func(w store.Writer) error {
		return w.JobTransitionBatched(ctx, store.JobTransitionParams{
			ID: id, ExpectAttempt: expect, FromStates: []store.State{store.StatePending}, At: time.Now(),
			Set: store.JobSet{State: store.Ptr(store.StateLeased), Attempt: store.Ptr(expect + 1), WorkerID: store.Ptr("w1")},
		})
	}
}

// TestQueuedWriteIsReadAndReportedDurable: a Write of operations that may
// run later returns before its transaction ran, yet a read made after it
// returned sees it (the read waits for the applier), and its channel
// reports only after the fsync.
func TestQueuedWriteIsReadAndReportedDurable(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	release := make(chan struct{})
	holdFsync(s, release, nil)

	id := store.NewID(time.Now())
	ch, err := s.WriteDeferred(ctx, insertQueued(ctx, id))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.JobGet(ctx, id); err != nil {
		t.Fatalf("a queued Write is not visible to a read made after it returned: %v", err)
	}
	select {
	case err := <-ch:
		t.Fatalf("reported durable (%v) while the fsync was held", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
}

// The driver-agnostic tests of queued writes (order with direct Writes, a
// guard that misses, Resume) are in package storetest (queueing.go).

// TestReadyWhileTheApplierRuns: at most one recorded Write waits for the
// applier; Ready is closed when none waits (and no fsync runs).
func TestReadyWhileTheApplierRuns(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	s.conn.Lock() // the applier blocks on the connection
	first, err := s.WriteDeferred(ctx, insertQueued(ctx, store.NewID(time.Now())))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return isClosed(s.Ready()) })
	second, err := s.WriteDeferred(ctx, insertQueued(ctx, store.NewID(time.Now())))
	if err != nil {
		t.Fatal(err)
	}
	if isClosed(s.Ready()) {
		t.Fatal("Ready while a recorded Write waits for the applier")
	}
	s.conn.Unlock()
	for _, ch := range []<-chan error{first, second} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return isClosed(s.Ready()) }) // once the fsync ended
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitFor polls cond (goroutines of the store move on their own).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
