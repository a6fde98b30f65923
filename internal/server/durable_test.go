package server

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

// heldStore reports commits durable only while its gate is open: it stands
// for a disk whose fsync has not returned yet.
type heldStore struct {
	store.Store
	mu         sync.Mutex
	open       chan struct{} // closed while durability flows
	insertTxns int           // transactions that inserted jobs
	finishTxns int           // transactions that made a job terminal
	gates      []func()      // openers of the gates made by gate
}

// insertCounter is a Writer that notes whether jobs were inserted, and
// whether a job was made terminal (a worker's report), so that a test can
// wait for the transaction it caused, whatever background transaction
// (a sweep under a slow clock, say) commits beside it.
type insertCounter struct {
	store.Writer
	inserted bool
	finished bool
}

func (w *insertCounter) JobTransition(ctx context.Context, p store.JobTransitionParams) error {
	w.noteFinish(p)
	return w.Writer.JobTransition(ctx, p)
}

func (w *insertCounter) JobTransitionBatched(ctx context.Context, p store.JobTransitionParams) error {
	w.noteFinish(p)
	return w.Writer.JobTransitionBatched(ctx, p)
}

func (w *insertCounter) noteFinish(p store.JobTransitionParams) {
	if p.Set.State != nil && p.Set.State.Terminal() {
		w.finished = true
	}
}

func (w *insertCounter) JobInsert(ctx context.Context, j store.Job) error {
	w.inserted = true
	return w.Writer.JobInsert(ctx, j)
}

func (w *insertCounter) JobInsertBatched(ctx context.Context, j store.Job) error {
	w.inserted = true
	return w.Writer.JobInsertBatched(ctx, j)
}

func (w *insertCounter) JobInsertFreeKey(ctx context.Context, j store.Job) error {
	w.inserted = true
	return w.Writer.JobInsertFreeKey(ctx, j)
}

func (s *heldStore) insertTransactions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.insertTxns
}

func (s *heldStore) finishTransactions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finishTxns
}

func (s *heldStore) hold() {
	s.mu.Lock()
	s.open = make(chan struct{})
	s.mu.Unlock()
}

// gate holds the commits made from now on behind a gate of their own and
// returns what opens it; the commits made before keep their gate.
func (s *heldStore) gate() (open func()) {
	g := make(chan struct{})
	var once sync.Once
	open = func() { once.Do(func() { close(g) }) }
	s.mu.Lock()
	s.open = g
	s.gates = append(s.gates, open)
	s.mu.Unlock()
	return open
}

// release lets durability flow again, also through the gates made by
// gate; releasing twice is harmless.
func (s *heldStore) release() {
	s.mu.Lock()
	for _, open := range s.gates {
		open()
	}
	select {
	case <-s.open:
	default:
		close(s.open)
	}
	s.mu.Unlock()
}

func (s *heldStore) WriteDeferred(ctx context.Context, fn func(w store.Writer) error) (<-chan error, error) {
	inserted, finished := false, false
	inner, err := s.Store.WriteDeferred(ctx, func(w store.Writer) error {
		cw := &insertCounter{Writer: w}
		err := fn(cw)
		inserted, finished = cw.inserted, cw.finished
		return err
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	gate := s.open
	if inserted {
		s.insertTxns++
	}
	if finished {
		s.finishTxns++
	}
	s.mu.Unlock()
	out := make(chan error, 1)
	go func() {
		err := <-inner
		<-gate
		out <- err
	}()
	return out, nil
}

func startHeld(t *testing.T) (*harness, *heldStore, store.Store) {
	t.Helper()
	var st *heldStore
	h, sq := startWrapped(t, func(sq *sqlite.Store) store.Store {
		st = &heldStore{Store: sq, open: make(chan struct{})}
		close(st.open)
		return st
	})
	t.Cleanup(st.release) // before the server stops (cleanups run last first)
	return h, st, sq
}

// TestCommandsCoalesceWhileACommitIsNotDurable: the commands that arrive
// while a commit waits for the disk are applied together, in one
// transaction, once it is durable.
func TestCommandsCoalesceWhileACommitIsNotDurable(t *testing.T) {
	h, st, _ := startHeld(t)
	st.hold()
	var wg sync.WaitGroup
	wg.Go(func() { h.submit(api.JobSpec{Type: "t"}) })
	waitCond(t, "the first submit committed", func() bool { return st.insertTransactions() == 1 })
	const later = 3
	for range later {
		wg.Go(func() { h.submit(api.JobSpec{Type: "t"}) })
	}
	waitCond(t, "the later submits queued", func() bool { return h.srv.d.Queued() >= 1+later })
	st.release()
	wg.Wait()
	if n := st.insertTransactions(); n != 2 {
		t.Errorf("%d transactions inserted 1 + %d jobs, want 2 (the later ones coalesced)", n, later)
	}
}

// waitCond polls cond, bounded, for state no channel announces.
func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestNothingLeavesBeforeDurable: while a commit is not durable the server
// neither answers the submit it holds nor hands its lease to the waiting
// worker, though the job is already committed; both go out once it is.
func TestNothingLeavesBeforeDurable(t *testing.T) {
	ctx := context.Background()
	h, st, sq := startHeld(t)

	wk := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	leased := make(chan []api.Lease, 1)
	go func() {
		var r api.LeaseResponse
		h.do("POST", "/workers/"+wk+"/lease", api.LeaseRequest{Max: 1, WaitMS: 10000}, &r)
		leased <- r.Leases
	}()
	// The poll is open once a batch after it has been answered (the
	// dispatcher applies commands in order).
	waitCond(t, "the poll queued", func() bool { return h.srv.d.Queued() >= 2 })
	h.tick()

	st.hold()
	submitted := make(chan api.SubmitResponse, 1)
	go func() {
		var r api.SubmitResponse
		if code := h.do("POST", "/jobs", api.JobSpec{Type: "noop", Command: []string{"true"}}, &r); code != http.StatusCreated {
			t.Errorf("submit: HTTP %d", code)
		}
		submitted <- r
	}()
	var page store.JobPage
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for len(page.Jobs) == 0 && time.Now().Before(deadline) {
		page, err = sq.JobList(ctx, store.JobListParams{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(page.Jobs) != 1 {
		t.Fatal("the submit never committed")
	}
	select {
	case r := <-submitted:
		t.Fatalf("submit answered (%s) before its commit was durable", r.Job.ID)
	case ls := <-leased:
		t.Fatalf("lease %v delivered before its commit was durable", ls)
	case <-time.After(50 * time.Millisecond):
	}

	st.release()
	r := <-submitted
	ls := <-leased
	if len(ls) != 1 || ls[0].Job.ID != r.Job.ID || r.Job.ID != page.Jobs[0].ID {
		t.Fatalf("after durability: submit %s, leases %v", r.Job.ID, ls)
	}
}
