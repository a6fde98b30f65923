package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// gatedStore wraps a SQLite store (neither queueing nor claiming in
// place: the deferred path): it counts the reads of key holders, can fail
// them, and, while held, keeps each commit's durability from being
// reported until release.
type gatedStore struct {
	store.Store
	reads    atomic.Int64
	failRead atomic.Bool
	mu       sync.Mutex
	hold     bool
	gates    []chan error // durability held back, oldest first
}

func (s *gatedStore) IdempotencyHolders(ctx context.Context, claims []store.Claim, createdAfter time.Time) (map[store.Claim]string, error) {
	s.reads.Add(1)
	if s.failRead.Load() {
		return nil, errors.New("read refused by the test")
	}
	return s.Store.IdempotencyHolders(ctx, claims, createdAfter)
}

func (s *gatedStore) WriteDeferred(ctx context.Context, fn func(w store.Writer) error) (<-chan error, error) {
	durable, err := s.Store.WriteDeferred(ctx, fn)
	if err != nil {
		return durable, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.hold {
		return durable, nil
	}
	gate := make(chan error, 1)
	s.gates = append(s.gates, gate)
	go func() { gate <- <-durable }()
	return gate, nil
}

// testDispatcher is a rebuilt dispatcher on a gatedStore, whose batches
// the test steps itself (no Run).
func testDispatcher(t *testing.T) (*Dispatcher, *gatedStore) {
	t.Helper()
	ctx := context.Background()
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "fairway.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	st := &gatedStore{Store: sq}
	clock := &fixedClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	d, err := newDispatcher(st, config.Default(), slog.New(slog.NewTextHandler(io.Discard, nil)), clock, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	return d, st
}

// keyedSubmit is a submit command of one job with key, its pre-read
// given (nil: none); the outcome lands in *out once the batch settles.
func keyedSubmit(d *Dispatcher, key string, pre *preread, out *submitted, replied *error) command {
	jobs := []store.Job{{Tenant: "default", Type: "echo", Lane: "default", IdempotencyKey: key, Command: []string{"true"}}}
	return command{claims: claimsOf(jobs), oneJob: true, pre: pre, apply: func(tx *txn) {
		res := d.submitJobs(tx, jobs)
		*out = res[0]
	}, reply: func(err error) { *replied = err }}
}

// stepDurable steps one batch and settles it.
func stepDurable(t *testing.T, d *Dispatcher, batch ...command) {
	t.Helper()
	d.step(context.Background(), batch)
	d.settleAll()
	if d.outOfStep {
		t.Fatal("the batch failed")
	}
}

func (s *gatedStore) holdDurability(on bool) {
	s.mu.Lock()
	s.hold = on
	s.mu.Unlock()
}

// A key claimed by batch N is a duplicate for a submit whose pre-read
// began before N was durable (and so may not see it) and whose command
// runs after N is durable: the dispatcher keeps N's claim past its
// durability. That batch reads no holders itself.
func TestPrereadBeforeClaimDurableFindsTheClaim(t *testing.T) {
	d, st := testDispatcher(t)
	ctx := context.Background()
	claims := []store.Claim{{Tenant: "default", Key: "k"}}
	pre := d.prereadHolders(ctx, claims, true) // before batch N exists: sees nothing
	if pre == nil {
		t.Fatal("the pre-read failed")
	}

	st.holdDurability(true)
	var first submitted
	var firstErr error
	d.step(ctx, []command{keyedSubmit(d, "k", nil, &first, &firstErr)}) // batch N, not durable yet
	if len(d.inflight) != 1 {
		t.Fatalf("%d batches in flight, want batch N", len(d.inflight))
	}
	st.holdDurability(false)
	d.settleAll() // N is durable now
	if firstErr != nil || first.err != nil || first.deduplicated {
		t.Fatalf("first submit: %v %+v", firstErr, first)
	}

	secondIsADuplicate(t, d, st, pre, first, 0)
}

// A pre-read older than what the dispatcher retains (its claims of
// batches durable before readAt - claimRetention are forgotten) is not
// trusted: the batch reads the holders itself, and finds the claim.
func TestPrereadOlderThanRetentionFallsBackToARead(t *testing.T) {
	d, st := testDispatcher(t)
	ctx := context.Background()
	pre := d.prereadHolders(ctx, []store.Claim{{Tenant: "default", Key: "k"}}, true)
	var first submitted
	var firstErr error
	stepDurable(t, d, keyedSubmit(d, "k", nil, &first, &firstErr))
	for range claimRetention + 1 {
		stepDurable(t, d)
	}
	secondIsADuplicate(t, d, st, pre, first, 1)
}

// A pre-read that fails leaves the submit without one: its batch reads
// the holders as before.
func TestFailedPrereadFallsBackToARead(t *testing.T) {
	d, st := testDispatcher(t)
	ctx := context.Background()
	var first submitted
	var firstErr error
	stepDurable(t, d, keyedSubmit(d, "k", nil, &first, &firstErr))
	st.failRead.Store(true)
	pre := d.prereadHolders(ctx, []store.Claim{{Tenant: "default", Key: "k"}}, true)
	st.failRead.Store(false)
	if pre != nil {
		t.Fatalf("a failed pre-read gave %+v, want none", pre)
	}
	secondIsADuplicate(t, d, st, pre, first, 1)
}

// A rebuild forgets the claims it kept: a pre-read begun before it is
// not trusted, as the claims made between its read and the rebuild are
// no longer known.
func TestPrereadBeforeRebuildFallsBackToARead(t *testing.T) {
	d, st := testDispatcher(t)
	ctx := context.Background()
	pre := d.prereadHolders(ctx, []store.Claim{{Tenant: "default", Key: "k"}}, true)
	var first submitted
	var firstErr error
	stepDurable(t, d, keyedSubmit(d, "k", nil, &first, &firstErr))
	if err := d.rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	secondIsADuplicate(t, d, st, pre, first, 1)
}

// A retained claim counts only inside the idempotency window.
func TestRetainedClaimExpiresWithTheWindow(t *testing.T) {
	d, _ := testDispatcher(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	d.claiming[idemKey{"default", "k"}] = claimRec{jobID: "old", seq: d.seq, at: now.Add(-store.IdempotencyWindow)}
	j := store.Job{Tenant: "default", IdempotencyKey: "k"}
	if id, ok := d.heldKey(j, now, nil, nil); ok {
		t.Fatalf("a claim of a window ago holds the key (%s)", id)
	}
	d.claiming[idemKey{"default", "k"}] = claimRec{jobID: "new", seq: d.seq, at: now.Add(-time.Second)}
	if id, ok := d.heldKey(j, now, nil, nil); !ok || id != "new" {
		t.Fatalf("a claim of a second ago: %q %v", id, ok)
	}
}

// Concurrent submits of one key, through the running dispatcher, with
// their pre-reads on the submitters' goroutines: exactly one job.
func TestConcurrentPrereadSubmitsMakeOneJob(t *testing.T) {
	d, st := testDispatcher(t)
	ctx, cancel := context.WithCancel(context.Background())
	go d.Run(ctx)
	t.Cleanup(func() { cancel(); <-d.Done() })
	const keys, each = 5, 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := map[string][]string{}
	answered := map[string]map[string]bool{}
	for k := range keys {
		for range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := fmt.Sprintf("k%d", k)
				res, _, err := d.Submit(ctx, []store.Job{{Tenant: "default", Type: "echo", Lane: "default", IdempotencyKey: key, Command: []string{"true"}}}, false, "")
				if err != nil || res[0].Err != nil {
					t.Errorf("submit %s: %v %v", key, err, res[0].Err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if !res[0].Response.Deduplicated {
					created[key] = append(created[key], res[0].Response.Job.ID)
				}
				if answered[key] == nil {
					answered[key] = map[string]bool{}
				}
				answered[key][res[0].Response.Job.ID] = true
			}()
		}
	}
	wg.Wait()
	for k := range keys {
		key := fmt.Sprintf("k%d", k)
		if len(created[key]) != 1 || len(answered[key]) != 1 {
			t.Errorf("%s: created %v, answered %v; want one job", key, created[key], answered[key])
		}
	}
	if st.reads.Load() == 0 {
		t.Fatal("no holders were read")
	}
}

// secondIsADuplicate submits key "k" again with the pre-read pre, in a
// batch made durable, and fails unless the answer is a duplicate of
// first and the batch read the holders wantReads times.
func secondIsADuplicate(t *testing.T, d *Dispatcher, st *gatedStore, pre *preread, first submitted, wantReads int64) {
	t.Helper()
	readsBefore := st.reads.Load()
	var second submitted
	var secondErr error
	stepDurable(t, d, keyedSubmit(d, "k", pre, &second, &secondErr))
	if secondErr != nil || second.err != nil || !second.deduplicated || second.jobID() != first.jobID() {
		t.Fatalf("second submit: %v dedup=%v job %s, want a duplicate of %s", secondErr, second.deduplicated, second.jobID(), first.jobID())
	}
	if n := st.reads.Load() - readsBefore; n != wantReads {
		t.Fatalf("the batch read the holders %d times, want %d", n, wantReads)
	}
}
