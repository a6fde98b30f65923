package worker

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

func leasesWithPriorities(ps ...int) []api.Lease {
	ls := make([]api.Lease, len(ps))
	for i, p := range ps {
		ls[i] = api.Lease{Job: api.Job{ID: string(rune('a' + i)), Priority: p}, Attempt: 1}
	}
	return ls
}

func TestStartGatesUniformBatchIsFree(t *testing.T) {
	if g := startGates(leasesWithPriorities(5, 5, 5)); g != nil {
		t.Errorf("one priority: gates %v, want nil", g)
	}
	if g := startGates(nil); g != nil {
		t.Errorf("no leases: gates %v, want nil", g)
	}
}

// TestStartGatesOrder starts the attempts of a mixed batch in reverse order
// (as the Go scheduler may) and checks that each priority level starts only
// after the levels before it.
func TestStartGatesOrder(t *testing.T) {
	ls := leasesWithPriorities(900, 900, 500, 100, 100, 100)
	gates := startGates(ls)
	if len(gates) != len(ls) {
		t.Fatalf("%d gates for %d leases", len(gates), len(ls))
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := len(ls) - 1; i >= 0; i-- {
		tk := newTask(context.Background(), session{}, ls[i])
		wg.Go(func() {
			gates[i].await(tk)
			mu.Lock()
			order = append(order, ls[i].Job.Priority)
			mu.Unlock()
			gates[i].started()
		})
		time.Sleep(time.Millisecond) // let the later ones reach their gate first
	}
	wg.Wait()
	for i := 1; i < len(order); i++ {
		if order[i] > order[i-1] {
			t.Fatalf("start order %v: priority %d started after %d", order, order[i], order[i-1])
		}
	}
}

// TestStartGatesCancelled: an attempt whose context ends before its turn
// passes its gate anyway, so that nothing waits forever.
func TestStartGatesCancelled(t *testing.T) {
	ls := leasesWithPriorities(900, 100)
	gates := startGates(ls)
	ctx, cancel := context.WithCancel(context.Background())
	low := newTask(ctx, session{}, ls[1])
	done := make(chan struct{})
	go func() { gates[1].await(low); gates[1].started(); close(done) }()
	select {
	case <-done:
		t.Fatal("the low attempt passed before the high one started")
	case <-time.After(10 * time.Millisecond):
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled attempt stayed at its gate")
	}
}

// TestWorkerStartsOneAnswerHighestPriorityFirst: the jobs of one lease
// answer, listed highest priority first as the server lists them, begin
// their handlers in that order, whatever order their goroutines run in.
func TestWorkerStartsOneAnswerHighestPriorityFirst(t *testing.T) {
	f := newFakeServer(t)
	prios := []int{900, 900, 500, 100, 100, 100}
	ids := make([]string, len(prios))
	for i, p := range prios {
		ids[i] = f.addJob(api.Job{Type: "report", Priority: p})
	}
	var mu sync.Mutex
	var order []int
	h := HandlerFunc(func(_ context.Context, j Job) (json.RawMessage, error) {
		mu.Lock()
		order = append(order, j.Priority)
		mu.Unlock()
		return nil, nil
	})
	opts := testOptions(t, f, map[string]Handler{"*": h})
	opts.Slots = len(prios) // one answer leases them all
	startWorker(t, opts)
	f.waitFor("all completions", func() bool {
		for _, id := range ids {
			if len(f.completions(id)) != 1 {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	if !slices.IsSortedFunc(order, func(a, b int) int { return b - a }) {
		t.Fatalf("handlers began in priority order %v, want highest first", order)
	}
}
