package policy

import (
	"fmt"
	"testing"
	"time"
)

func TestSmokeSeed001Scenario1(t *testing.T) {
	p8, p4 := 8, 4
	e, err := New(Config{
		Lanes: map[string]LaneConfig{"default": {}},
		Tiers: []TierConfig{{MinPriority: 8, MaxPriority: 8, MaxRunning: 8}, {MinPriority: 4, MaxPriority: 4, MaxRunning: 4}},
		Types: map[string]TypeConfig{
			"sync-clone": {MaxConcurrency: 8, ConflictGroup: "git", Priority: &p8},
			"repack":     {MaxConcurrency: 3, ConflictGroup: "git", Priority: &p4},
			"pull":       {MaxConcurrency: 3, ConflictGroup: "git", Priority: &p4},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddWorker(Worker{ID: "pool", Slots: 8}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	dur := map[string]int{}
	for i := 1; i <= 6; i++ {
		id := fmt.Sprintf("repack-r%d", i)
		e.SetEstimate("repack", fmt.Sprintf("r%d", i), 20, at(0))
		must(t, e.Submit(Job{ID: id, Type: "repack", Key: fmt.Sprintf("r%d", i), PriorityDefault: true}, at(0)))
		dur[id] = 8
	}
	for i := 7; i <= 10; i++ {
		id := fmt.Sprintf("pull-r%d", i)
		must(t, e.Submit(Job{ID: id, Type: "pull", Key: fmt.Sprintf("r%d", i), PriorityDefault: true}, at(0)))
		dur[id] = 6
	}
	ends := map[string]int{}
	for now := 0; now <= 25; now++ {
		if now == 3 {
			must(t, e.Submit(Job{ID: "clone", Type: "sync-clone", Key: "r99", FairnessKey: "dev1", PriorityDefault: true}, at(3)))
			dur["clone"] = 2
		}
		for id, end := range ends {
			if end == now {
				if _, err := e.Finish(id, at(now), Succeeded); err != nil {
					t.Fatal(err)
				}
				delete(ends, id)
			}
		}
		for _, a := range e.Dispatch(at(now), 0) {
			t.Logf("T=%d admit %s on %s score=%d cost=%v", now, a.JobID, a.WorkerID, a.Score, a.Cost)
			ends[a.JobID] = now + dur[a.JobID]
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestTakeReleasedListsJobsThatBecameRunnable(t *testing.T) {
	e, err := New(Config{})
	must(t, err)
	e.TrackReleased(true)
	t0 := time.Unix(1_700_000_000, 0)
	must(t, e.Submit(Job{ID: "now"}, t0))
	must(t, e.Submit(Job{ID: "later", RunAt: t0.Add(time.Minute)}, t0))
	must(t, e.Submit(Job{ID: "child", DependsOn: []Dependency{{JobID: "now", Condition: AfterAny}}}, t0))
	if got := e.TakeReleased(); len(got) != 0 {
		t.Fatalf("released at submit: %v", got)
	}
	must(t, e.AddWorker(Worker{ID: "w", Slots: 1}))
	if a, ok := e.Next(t0); !ok || a.JobID != "now" {
		t.Fatalf("first admission: %+v", a)
	}
	if _, err := e.Finish("now", t0.Add(time.Second), Succeeded); err != nil {
		t.Fatal(err)
	}
	if got := e.TakeReleased(); len(got) != 1 || got[0] != "child" {
		t.Fatalf("after the dependency ended: %v", got)
	}
	e.Next(t0.Add(time.Minute))
	if got := e.TakeReleased(); len(got) != 1 || got[0] != "later" {
		t.Fatalf("after run_at: %v", got)
	}
}
