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

func (f *fakeDB) logged() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

// Two independent batches run their statements at once, and the second
// commits only after the first, even when its statements finish first.
func TestConcurrentBatchesCommitInOrder(t *testing.T) {
	db := newFakeDB()
	a := StartConcurrent(db.stage, NewReadiness())
	defer a.Close()

	first := insert(t, a, "a")
	if n := <-db.began; n != 0 {
		t.Fatalf("stage %d began first", n)
	}
	second := insert(t, a, "b")
	if n := <-db.began; n != 1 { // while stage 0 is still held
		t.Fatalf("stage %d began second", n)
	}
	close(db.gate(db.stageGate, 1))
	close(db.gate(db.commitGo, 1)) // the second may commit, but must wait for the first
	close(db.gate(db.stageGate, 0))
	close(db.gate(db.commitGo, 0))
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	want := []string{"stage 0 began: [insert a]", "stage 1 began: [insert b]", "commit 0: <nil>", "commit 1: <nil>"}
	if got := db.logged(); !slices.Equal(got, want) {
		t.Errorf("log %q, want %q", got, want)
	}
}

// A batch that changes a job the batch in flight inserts begins only
// once that batch has committed: before, the row is invisible to it.
func TestABatchWaitsForTheCommitOfWhatItChanges(t *testing.T) {
	db := newFakeDB()
	a := StartConcurrent(db.stage, NewReadiness())
	defer a.Close()

	inserted := insert(t, a, "a")
	<-db.began
	leased := lease(t, a, "a")
	close(db.gate(db.stageGate, 0))
	close(db.gate(db.commitGo, 0))
	if err := <-inserted; err != nil {
		t.Fatal(err)
	}
	if n := <-db.began; n != 1 {
		t.Fatalf("stage %d began", n)
	}
	close(db.gate(db.stageGate, 1))
	close(db.gate(db.commitGo, 1))
	if err := <-leased; err != nil {
		t.Fatal(err)
	}
	want := []string{"stage 0 began: [insert a]", "commit 0: <nil>", "stage 1 began: [transition a]", "commit 1: <nil>"}
	if got := db.logged(); !slices.Equal(got, want) {
		t.Errorf("log %q, want %q", got, want)
	}
}

// A commit that fails fails its batch, rolls back the one in flight
// behind it, fails what is queued and refuses writes until Resume.
func TestAFailedCommitFailsEverythingAfterIt(t *testing.T) {
	db := newFakeDB()
	a := StartConcurrent(db.stage, NewReadiness())
	defer a.Close()
	broken := errors.New("connection lost")
	db.commitErr[0] = broken

	first := insert(t, a, "a")
	<-db.began
	second := insert(t, a, "b")
	<-db.began
	third := insert(t, a, "c") // queued: both slots are taken
	close(db.gate(db.stageGate, 1))
	close(db.gate(db.stageGate, 0))
	close(db.gate(db.commitGo, 0))
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
	want := []string{"stage 0 began: [insert a]", "stage 1 began: [insert b]", "commit 0: connection lost", "rollback 1"}
	if got := db.logged(); !slices.Equal(got, want) {
		t.Errorf("log %q, want %q", got, want)
	}
	a.Resume()
	close(db.gate(db.stageGate, 2))
	close(db.gate(db.commitGo, 2))
	if err := <-insert(t, a, "d"); err != nil {
		t.Errorf("after Resume: %v", err)
	}
}
