package queued

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// fakeDB is a Stage whose transactions the test lets through one step at
// a time: each stage call (numbered from 0 in call order) blocks on its
// stage gate, and its Commit on its commit gate, and every step is
// logged in the order it happened.
type fakeDB struct {
	mu        sync.Mutex
	log       []string
	calls     int
	stageGate map[int]chan struct{}
	commitErr map[int]error
	commitGo  map[int]chan struct{}
	began     chan int // a stage call began (its number)
}

func newFakeDB() *fakeDB {
	return &fakeDB{stageGate: map[int]chan struct{}{}, commitErr: map[int]error{},
		commitGo: map[int]chan struct{}{}, began: make(chan int, 16)}
}

// gate returns the channel of step n in m, creating it.
func (f *fakeDB) gate(m map[int]chan struct{}, n int) chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m[n] == nil {
		m[n] = make(chan struct{})
	}
	return m[n]
}

func (f *fakeDB) logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, fmt.Sprintf(format, args...))
}

func (f *fakeDB) stage(slot int, run func(w store.Writer) error, hasOps, commitNow bool) (Staged, error) {
	f.mu.Lock()
	n := f.calls
	f.calls++
	f.mu.Unlock()
	w := &fakeWriter{}
	if err := run(w); err != nil {
		return nil, err
	}
	f.logf("stage %d began: %v", n, w.ops)
	f.began <- n
	<-f.gate(f.stageGate, n)
	return &fakeTx{db: f, n: n}, nil
}

type fakeTx struct {
	db *fakeDB
	n  int
}

func (t *fakeTx) Commit() error {
	<-t.db.gate(t.db.commitGo, t.n)
	t.db.mu.Lock()
	err := t.db.commitErr[t.n]
	t.db.mu.Unlock()
	t.db.logf("commit %d: %v", t.n, err)
	return err
}

func (t *fakeTx) Rollback() { t.db.logf("rollback %d", t.n) }

// fakeWriter records the operations replayed on it.
type fakeWriter struct {
	store.Writer
	ops []string
}

func (w *fakeWriter) JobInsertBatched(_ context.Context, j store.Job) error {
	w.ops = append(w.ops, "insert "+j.ID)
	return nil
}

func (w *fakeWriter) JobTransitionBatched(_ context.Context, p store.JobTransitionParams) error {
	w.ops = append(w.ops, "transition "+p.ID)
	return nil
}

func noDirect() (Direct, error) { return nil, errors.New("unexpected direct write") }

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// insert queues a Write that inserts job id.
func insert(t *testing.T, a *Applier, id string) <-chan error {
	t.Helper()
	ch, err := a.Write(context.Background(), func(w store.Writer) error {
		return w.JobInsertBatched(context.Background(),
			store.Job{ID: id, Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: t0})
	}, noDirect)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// lease queues a Write that transitions job id.
func lease(t *testing.T, a *Applier, id string) <-chan error {
	t.Helper()
	ch, err := a.Write(context.Background(), func(w store.Writer) error {
		leased := store.StateLeased
		return w.JobTransitionBatched(context.Background(), store.JobTransitionParams{ID: id,
			FromStates: []store.State{store.StatePending}, At: t0, Set: store.JobSet{State: &leased}})
	}, noDirect)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// let lets stage call n run its statements and commit.
func (f *fakeDB) let(n int) {
	close(f.gate(f.stageGate, n))
	close(f.gate(f.commitGo, n))
}

// expectLog checks the steps logged so far.
func (f *fakeDB) expectLog(t *testing.T, want ...string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Equal(f.log, want) {
		t.Errorf("log %q, want %q", f.log, want)
	}
}

// expectBegan waits for the next stage call to begin and checks its number.
func (f *fakeDB) expectBegan(t *testing.T, n int) {
	t.Helper()
	if got := <-f.began; got != n {
		t.Fatalf("stage %d began, want %d", got, n)
	}
}

// concurrentOn starts a concurrent Applier on a new fakeDB, closed with
// the test.
func concurrentOn(t *testing.T) (*fakeDB, *Applier) {
	db := newFakeDB()
	a := StartConcurrent(db.stage, NewReadiness())
	t.Cleanup(a.Close)
	return db, a
}

// durableOK waits for a Write's channel and fails on its error.
func durableOK(t *testing.T, ch <-chan error) {
	t.Helper()
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
}

// Two independent batches run their statements at once, and the second
// commits only after the first, even when its statements finish first.
func TestConcurrentBatchesCommitInOrder(t *testing.T) {
	db, a := concurrentOn(t)

	first := insert(t, a, "a")
	db.expectBegan(t, 0)
	second := insert(t, a, "b")
	db.expectBegan(t, 1) // while stage 0 is still held
	db.let(1)            // the second may commit, but must wait for the first
	select {
	case err := <-second:
		t.Fatalf("the second write reported (%v) while the first had not committed", err)
	case <-time.After(100 * time.Millisecond): // bounded: a wrong order shows at once
	}
	db.let(0)
	durableOK(t, first)
	durableOK(t, second)
	db.expectLog(t, "stage 0 began: [insert a]", "stage 1 began: [insert b]", "commit 0: <nil>", "commit 1: <nil>")
}

// A batch that changes a job the batch in flight inserts begins only
// once that batch has committed: before, the row is invisible to it.
func TestABatchWaitsForTheCommitOfWhatItChanges(t *testing.T) {
	db, a := concurrentOn(t)

	inserted := insert(t, a, "a")
	db.expectBegan(t, 0)
	leased := lease(t, a, "a")
	db.let(0)
	durableOK(t, inserted)
	db.expectBegan(t, 1)
	db.let(1)
	durableOK(t, leased)
	db.expectLog(t, "stage 0 began: [insert a]", "commit 0: <nil>", "stage 1 began: [transition a]", "commit 1: <nil>")
}

// A commit that fails fails its batch, rolls back the one in flight
// behind it, fails what is queued and refuses writes until Resume.
func TestAFailedCommitFailsEverythingAfterIt(t *testing.T) {
	db, a := concurrentOn(t)
	broken := errors.New("connection lost")
	db.commitErr[0] = broken

	first := insert(t, a, "a")
	db.expectBegan(t, 0)
	second := insert(t, a, "b")
	db.expectBegan(t, 1)
	third := insert(t, a, "c") // queued: both slots are taken
	close(db.gate(db.stageGate, 1))
	db.let(0)
	for name, ch := range map[string]<-chan error{"first": first, "second": second, "third": third} {
		if err := <-ch; !errors.Is(err, broken) || !errors.Is(err, ErrApplyFailed) {
			t.Errorf("%s write: %v, want the commit's error", name, err)
		}
	}
	a.Drain()
	if err := a.Failed(); !errors.Is(err, broken) {
		t.Errorf("Failed() = %v", err)
	}
	if _, err := a.Write(context.Background(), func(w store.Writer) error { return nil }, noDirect); err == nil {
		t.Error("a write was taken after the failure")
	}
	db.expectLog(t, "stage 0 began: [insert a]", "stage 1 began: [insert b]", "commit 0: connection lost", "rollback 1")
	a.Resume()
	db.let(2)
	durableOK(t, insert(t, a, "d"))
}

// The store is ready for the next batch (store.Queueing) only while a
// transaction slot is free: with both taken, a batch formed now would
// wait in the queue for a slot, and the commands that arrive meanwhile
// would wait a round more in the batch after it.
func TestReadyOnlyWhileASlotIsFree(t *testing.T) {
	db := newFakeDB()
	ready := NewReadiness()
	a := StartConcurrent(db.stage, ready)
	t.Cleanup(a.Close)
	isReady := func() bool { return isClosed(ready.Channel()) }

	first := insert(t, a, "a")
	db.expectBegan(t, 0)
	if !isReady() {
		t.Fatal("not ready with one slot free")
	}
	second := insert(t, a, "b")
	db.expectBegan(t, 1)
	if isReady() {
		t.Error("ready while both slots are taken")
	}
	db.let(0)
	durableOK(t, first)
	select {
	case <-ready.Channel():
	case <-time.After(10 * time.Second): // bounded: the slot frees at once
		t.Error("not ready after the first batch committed")
	}
	db.let(1)
	durableOK(t, second)
}

// ChannelUnlessSyncing is Channel without the fsync: closed while the
// store would be ready but for the fsync, and open whenever a recorded
// Write waits or every slot is taken, syncing or not.
func TestReadyUnlessSyncingIgnoresOnlyTheFsync(t *testing.T) {
	r := NewReadiness()
	check := func(what string, ready, unsynced bool) {
		t.Helper()
		if got := isClosed(r.Channel()); got != ready {
			t.Errorf("%s: ready %v, want %v", what, got, ready)
		}
		if got := isClosed(r.ChannelUnlessSyncing()); got != unsynced {
			t.Errorf("%s: ready unless syncing %v, want %v", what, got, unsynced)
		}
	}
	check("new", true, true)
	r.SetSyncing(true)
	check("syncing", false, true)
	r.setWaiting(1)
	check("syncing, a Write waiting", false, false)
	r.setWaiting(0)
	r.setFull(true)
	check("syncing, every slot taken", false, false)
	r.setFull(false)
	check("syncing again", false, true)
	r.SetSyncing(false)
	check("idle", true, true)
	r.setWaiting(1)
	check("a Write waiting", false, false)
}
