package queued

import (
	"context"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

func (w *fakeWriter) JobInsertFreeKey(_ context.Context, j store.Job) error {
	w.ops = append(w.ops, "keyed "+j.ID+" "+j.IdempotencyKey)
	return nil
}

// insertKeyed queues a Write that inserts job id with key through
// JobInsertFreeKey; noDirect fails it if it goes direct.
func insertKeyed(t *testing.T, a *Applier, id, key string) <-chan error {
	t.Helper()
	ch, err := a.Write(context.Background(), func(w store.Writer) error {
		return w.JobInsertFreeKey(context.Background(),
			store.Job{ID: id, Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: t0, IdempotencyKey: key})
	}, noDirect)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// A keyed insert whose key the caller found free is deferred: its Write
// neither drains the Applier nor begins a transaction of its own
// (noDirect), and it is applied in the Applier's next transaction with
// the Writes queued beside it.
func TestAKeyedInsertIsDeferred(t *testing.T) {
	db := newFakeDB()
	a := Start(func(run func(w store.Writer) error, hasOps bool, durable []chan error) error {
		if _, err := db.stage(0, run, hasOps, false); err != nil {
			return err
		}
		for _, ch := range durable {
			ch <- nil
		}
		return nil
	}, NewReadiness())
	t.Cleanup(a.Close)

	first := insertKeyed(t, a, "a", "k0") // the Applier idle: a direct Write would fail at once
	db.expectBegan(t, 0)                  // and is held there
	queued := make(chan (<-chan error), 1)
	go func() {
		ch, err := a.Write(context.Background(), func(w store.Writer) error {
			ctx := context.Background()
			if err := w.JobInsertBatched(ctx, store.Job{ID: "b", Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: t0}); err != nil {
				return err
			}
			return w.JobInsertFreeKey(ctx, store.Job{ID: "c", Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: t0, IdempotencyKey: "k1"})
		}, noDirect)
		if err != nil {
			t.Error(err)
		}
		queued <- ch
	}()
	var second <-chan error
	select {
	case second = <-queued:
	case <-time.After(10 * time.Second): // a direct Write waits for the held transaction (Drain)
		t.Fatal("the keyed Write waited for the Applier's transaction: it went direct")
	}
	close(db.gate(db.stageGate, 0))
	close(db.gate(db.stageGate, 1))
	durableOK(t, first)
	durableOK(t, second)
	db.expectLog(t, "stage 0 began: [keyed a k0]", "stage 1 began: [insert b keyed c k1]")
}

// On the concurrent Applier a key is a row of its Write: a second claim
// of a key whose first claim is in flight waits for its commit (it then
// sees the claim), while another key runs at once.
func TestConcurrentClaimsOfOneKeyWait(t *testing.T) {
	db, a := concurrentOn(t)

	first := insertKeyed(t, a, "a", "k")
	db.expectBegan(t, 0)
	again := insertKeyed(t, a, "b", "k")
	db.let(0)
	durableOK(t, first)
	db.expectBegan(t, 1)
	db.let(1)
	durableOK(t, again)
	db.expectLog(t, "stage 0 began: [keyed a k]", "commit 0: <nil>", "stage 1 began: [keyed b k]", "commit 1: <nil>")

	other := insertKeyed(t, a, "c", "k2")
	db.expectBegan(t, 2)
	another := insertKeyed(t, a, "d", "k3")
	db.expectBegan(t, 3) // while stage 2 is held: different keys
	db.let(2)
	db.let(3)
	durableOK(t, other)
	durableOK(t, another)
}
