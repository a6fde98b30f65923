package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
)

// testUsage checks the usage report: requested resources × wall time per
// tenant and per lane, measured CPU and memory where reported, the window
// by finished_at, a tenant's scope, and bad parameters.
func testUsage(t *testing.T, s store.Store) {
	a, b, c := newJob("a", "acme", T0), newJob("b", "acme", T0), newJob("c", "globex", T0)
	a.Resources = policy.Resources{MilliCPU: 2000, MemoryMB: 2048, GPU: 1}
	b.Resources = policy.Resources{MilliCPU: 500, MemoryMB: 512}
	c.Resources = policy.Resources{MilliCPU: 1000}
	c.Lane = "batch"
	insert(t, s, a, b, c)
	done := func(id string, attempt int, finished time.Time, wall time.Duration, u store.Usage) store.Execution {
		return store.Execution{JobID: id, Attempt: attempt, StartedAt: finished.Add(-wall), FinishedAt: finished,
			Outcome: store.OutcomeSucceeded, Duration: wall, Usage: u}
	}
	upsertExecutions(t, s,
		// a: two attempts of 10 s, one measured (3 s CPU, 1 GiB peak).
		done("a", 1, T0.Add(time.Minute), 10*time.Second, store.Usage{CPUUser: 2 * time.Second, CPUSystem: time.Second, PeakRSSBytes: 1 << 30, Source: "rusage"}),
		done("a", 2, T0.Add(2*time.Minute), 10*time.Second, store.Usage{}),
		// b: one attempt of 4 s.
		done("b", 1, T0.Add(3*time.Minute), 4*time.Second, store.Usage{CPUUser: time.Second, Source: "cgroup"}),
		// c: one attempt of 1 s inside the window, one after it.
		done("c", 1, T0.Add(time.Minute), time.Second, store.Usage{}),
		done("c", 2, T0.Add(2*time.Hour), time.Hour, store.Usage{}),
		// A running attempt counts nowhere.
		store.Execution{JobID: "c", Attempt: 3, StartedAt: T0})
	window := store.UsageParams{FinishedAfter: T0, FinishedBefore: T0.Add(time.Hour)}

	byTenant := window
	byTenant.By = store.UsageByTenant
	got, err := s.ExecutionUsage(ctx, byTenant)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "usage by tenant", []store.UsageRow{
		{Key: "acme", Jobs: 2, Attempts: 3, Wall: 24 * time.Second,
			CoreSeconds: 2*20 + 0.5*4, GPUSeconds: 20, MemoryGBSeconds: 2*20 + 0.5*4,
			Measured: 2, CPUSeconds: 4, PeakMemGBSeconds: 10},
		{Key: "globex", Jobs: 1, Attempts: 1, Wall: time.Second, CoreSeconds: 1},
	}, got)

	byLane := window
	byLane.By, byLane.Tenant = store.UsageByLane, "globex"
	got, err = s.ExecutionUsage(ctx, byLane)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "globex's usage by lane", []store.UsageRow{{Key: "batch", Jobs: 1, Attempts: 1, Wall: time.Second, CoreSeconds: 1}}, got)

	for name, p := range map[string]store.UsageParams{
		"unknown grouping": {By: "type", FinishedAfter: T0, FinishedBefore: T0.Add(time.Hour)},
		"empty window":     {By: store.UsageByTenant, FinishedAfter: T0, FinishedBefore: T0},
		"no window":        {By: store.UsageByLane},
	} {
		if _, err := s.ExecutionUsage(ctx, p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}
