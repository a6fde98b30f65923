package postgres

import (
	"fmt"
	"testing"

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// Writes queued back to back run two at a time, on the two writer
// connections (doc.go, "Concurrent transactions"). A Write that changes a
// job the Write before it inserted still finds it (it waits for that
// commit), and event ids increase in the order of the Writes, as a
// reader paging by id needs.
func TestQueuedWritesRunConcurrentlyAndInOrder(t *testing.T) {
	s := openTemp(t)
	const jobs = 150
	leased, attempt := store.StateLeased, 1
	var durable []<-chan error
	var appended [][]store.Event // each Write's events, in Write order
	queue := func(fn func(w store.Writer) error) {
		t.Helper()
		ch, err := s.WriteDeferred(ctx, fn)
		if err != nil {
			t.Fatal(err)
		}
		durable = append(durable, ch)
	}
	for i := range jobs {
		id := fmt.Sprintf("job-%03d", i)
		submitted := []store.Event{{JobID: id, Tenant: "t", Type: store.EventSubmitted, At: storetest.T0}}
		queue(func(w store.Writer) error {
			j := store.Job{ID: id, Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0}
			if err := w.JobInsertBatched(ctx, j); err != nil {
				return err
			}
			return w.EventAppend(ctx, submitted)
		})
		leasedEv := []store.Event{{JobID: id, Attempt: 1, Tenant: "t", Type: store.EventLeased, At: storetest.T0}}
		queue(func(w store.Writer) error {
			p := store.JobTransitionParams{ID: id, FromStates: []store.State{store.StatePending}, ExpectAttempt: 0,
				At: storetest.T0, Set: store.JobSet{State: &leased, Attempt: &attempt}}
			if err := w.JobTransitionBatched(ctx, p); err != nil {
				return err
			}
			return w.EventAppend(ctx, leasedEv)
		})
		appended = append(appended, submitted, leasedEv)
	}
	for i, ch := range durable {
		if err := <-ch; err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	var last int64
	for i, evs := range appended {
		if evs[0].ID <= last {
			t.Fatalf("write %d's event has id %d, after an earlier write's %d", i, evs[0].ID, last)
		}
		last = evs[0].ID
	}
	for i := range jobs {
		j, err := s.JobGet(ctx, fmt.Sprintf("job-%03d", i))
		if err != nil || j.State != store.StateLeased || j.Attempt != 1 {
			t.Fatalf("job %d: %v %v", i, j.State, err)
		}
	}
}
