package dispatch

import (
	"context"
	"testing"
	"time"
)

// gates is a store.Queueing and store.SyncGathering whose channels the
// test opens and closes.
type gates struct{ ready, unsynced chan struct{} }

func (g *gates) Ready() <-chan struct{}              { return g.ready }
func (g *gates) ReadyUnlessSyncing() <-chan struct{} { return g.unsynced }
func (g *gates) Resume()                             {}

// syncOnlyGates: the store would be ready but for its fsync.
func syncOnlyGates() *gates {
	g := &gates{ready: make(chan struct{}), unsynced: make(chan struct{})}
	close(g.unsynced)
	return g
}

// gathering is a dispatcher with a batch in flight, whose durability is
// never reported, and g for its store's readiness.
func gathering(t *testing.T, g *gates) *Dispatcher {
	t.Helper()
	d, _ := testDispatcher(t)
	d.step(context.Background(), []command{noopCommand()})
	if len(d.inflight) != 1 {
		t.Fatalf("%d batches in flight, want 1", len(d.inflight))
	}
	d.inflight[0].durable = make(chan error)
	d.queueing, d.syncGathering = g, g
	return d
}

func noopCommand() command { return command{apply: func(*txn) {}, reply: func(error) {}} }

// coalesceAsync runs d.coalesce on a batch of one command.
func coalesceAsync(d *Dispatcher) <-chan []command {
	out := make(chan []command, 1)
	go func() { out <- d.coalesce(context.Background(), []command{noopCommand()}) }()
	return out
}

// While the waits for the fsync have gathered nothing, the batch is
// handed over as soon as only the fsync holds the store.
func TestGatheringSkipsAnFsyncWaitThatGathersNothing(t *testing.T) {
	d := gathering(t, syncOnlyGates())
	d.syncWait.mean = 0
	select {
	case batch := <-coalesceAsync(d):
		if len(batch) != 1 {
			t.Errorf("batch of %d commands, want 1", len(batch))
		}
	case <-time.After(10 * time.Second): // bounded: it returns at once
		t.Fatal("the gathering waited for the fsync")
	}
}

// While commands arrive during the waits for the fsync, the gathering
// waits for it, keeps what arrives, and counts it.
func TestGatheringWaitsForAnFsyncThatGathers(t *testing.T) {
	g := syncOnlyGates()
	d := gathering(t, g)
	out := coalesceAsync(d) // the mean starts at 1: it waits
	d.cmds <- noopCommand()
	d.cmds <- noopCommand()
	select {
	case <-out:
		t.Fatal("the gathering ended before the fsync did")
	case <-time.After(50 * time.Millisecond):
	}
	close(g.ready)
	select {
	case batch := <-out:
		if len(batch) != 3 {
			t.Errorf("batch of %d commands, want 3", len(batch))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the gathering did not end with the fsync")
	}
	if want := 0.875*1 + 0.125*2; d.syncWait.mean != want {
		t.Errorf("mean %v after a wait that gathered 2, want %v", d.syncWait.mean, want)
	}
}

// A store ready at once is not an fsync wait: nothing is counted.
func TestGatheringCountsOnlyFsyncWaits(t *testing.T) {
	g := syncOnlyGates()
	close(g.ready)
	d := gathering(t, g)
	for range 20 {
		<-coalesceAsync(d)
	}
	if d.syncWait.mean != 1 {
		t.Errorf("mean %v after waits for nothing, want 1 (unchanged)", d.syncWait.mean)
	}
}

func TestSyncWaitSkipsWhileWaitsGatherNothing(t *testing.T) {
	s := newSyncWait()
	if s.skip() {
		t.Fatal("a new syncWait skips: it should wait until waits are seen to gather nothing")
	}
	for range 20 {
		s.observe(0)
	}
	skipped := 0
	for range 2 * syncWaitSample {
		if s.skip() {
			skipped++
		}
	}
	if want := 2 * (syncWaitSample - 1); skipped != want {
		t.Errorf("skipped %d of %d waits, want %d (one in %d sampled)", skipped, 2*syncWaitSample, want, syncWaitSample)
	}
	for range 20 {
		s.observe(3) // submits arriving during each fsync, as in bench steady
	}
	if s.skip() {
		t.Error("skips while waits gather three commands each")
	}
}
