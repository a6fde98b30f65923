package policy

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// deepWorld is the shape of scenarios/bench-deep-backlog.yaml held at a
// fixed depth: 1,000 resource keys, each with its jobs of one type and
// lane under its own fairness key; 20 types capped at 400 running, t0-t4
// in the conflict group "git" (so a key of the group runs one job at a
// time and parks the rest); 10 lanes with weights 1-3 and stepwise aging;
// 50 workers x 20 slots, kept full. Each cycle finishes the oldest running
// job, submits one more job of that job's key (so every key keeps its
// depth) and makes one decision.
type deepWorld struct {
	e       *Engine
	now     time.Time
	seq     int
	running []deepRun
	later   map[int]int // the keys of the jobs cycle submitted, by number
}

type deepRun struct {
	id  string
	key int
}

const (
	deepKeys    = 1000
	deepTypes   = 20
	deepLanes   = 10
	deepWorkers = 50
	deepSlots   = 20
)

func deepConfig() Config {
	lanes := map[string]LaneConfig{}
	for l := range deepLanes {
		lc := DefaultLaneConfig()
		lc.Weight = float64(1 + l%3)
		lc.Aging = Aging{Step: 10, Interval: 600 * time.Second}
		lanes["l"+strconv.Itoa(l)] = lc
	}
	types := map[string]TypeConfig{}
	for t := range deepTypes {
		tc := TypeConfig{MaxConcurrency: 400}
		if t < 5 {
			tc.ConflictGroup = "git"
		}
		types["t"+strconv.Itoa(t)] = tc
	}
	return Config{Lanes: lanes, Types: types}
}

func newDeepWorld(tb testing.TB, pending int) *deepWorld {
	e, err := New(deepConfig())
	if err != nil {
		tb.Fatal(err)
	}
	for i := range deepWorkers {
		if err := e.AddWorker(Worker{ID: fmt.Sprintf("w%02d", i), Slots: deepSlots}); err != nil {
			tb.Fatal(err)
		}
	}
	w := &deepWorld{e: e, now: time.Unix(1_800_000_000, 0), later: map[int]int{}}
	for i := range pending {
		w.submit(tb, i%deepKeys)
	}
	w.fill(tb)
	return w
}

func (w *deepWorld) submit(tb testing.TB, key int) {
	w.seq++
	j := Job{
		ID:          strconv.Itoa(w.seq),
		Type:        "t" + strconv.Itoa(key%deepTypes),
		Lane:        "l" + strconv.Itoa(key%deepLanes),
		Key:         "repo" + strconv.Itoa(key),
		FairnessKey: "user" + strconv.Itoa(key),
		Tenant:      "default",
	}
	if err := w.e.Submit(j, w.now); err != nil {
		tb.Fatal(err)
	}
}

// fill dispatches until the pool is full (or nothing is admissible).
func (w *deepWorld) fill(tb testing.TB) {
	for {
		a, ok := w.e.Next(w.now)
		if !ok {
			return
		}
		w.started(tb, a.JobID)
	}
}

func (w *deepWorld) started(tb testing.TB, id string) {
	n, err := strconv.Atoi(id)
	if err != nil {
		tb.Fatal(err)
	}
	w.running = append(w.running, deepRun{id: id, key: w.keyOf(n)})
}

// keyOf is the key of the n-th job submitted (1-based): the build
// submits keys round-robin, and cycle records the key of each job it
// submits in later.
func (w *deepWorld) keyOf(n int) int {
	if k, ok := w.later[n]; ok {
		return k
	}
	return (n - 1) % deepKeys
}

// cycle finishes the oldest running job, submits one job of its key,
// decides once.
func (w *deepWorld) cycle(tb testing.TB) {
	w.now = w.now.Add(10 * time.Millisecond)
	key := 0
	if len(w.running) > 0 {
		r := w.running[0]
		w.running = w.running[1:]
		if _, err := w.e.Finish(r.id, w.now, Succeeded); err != nil {
			tb.Fatal(err)
		}
		key = r.key
	}
	w.submit(tb, key)
	w.later[w.seq] = key
	if a, ok := w.e.Next(w.now); ok {
		w.started(tb, a.JobID)
	}
}

// BenchmarkDecisionDeepBacklog is BenchmarkDecision on the deep backlog
// with conflict chains (issue 13): one cycle (finish + submit + decide)
// at 100k and 1M pending jobs. B/pending is the live heap the pending set
// costs per job.
func BenchmarkDecisionDeepBacklog(b *testing.B) {
	benchPending(b, []int{100_000, 1_000_000}, newDeepWorld)
}

// TestDeepWorldKeepsPoolBusy guards the benchmark: the pool fills, the
// conflict group holds one running job per key, and cycles keep
// admitting.
func TestDeepWorldKeepsPoolBusy(t *testing.T) {
	w := newDeepWorld(t, 20_000)
	if len(w.running) != deepWorkers*deepSlots {
		t.Fatalf("%d running after fill, want the pool's %d slots", len(w.running), deepWorkers*deepSlots)
	}
	for range 5_000 {
		w.cycle(t)
	}
	if len(w.running) != deepWorkers*deepSlots {
		t.Fatalf("%d running after 5,000 cycles, want %d", len(w.running), deepWorkers*deepSlots)
	}
	perKey := map[int]int{}
	for _, r := range w.running {
		if r.key%deepTypes < 5 {
			perKey[r.key]++
		}
	}
	for k, n := range perKey {
		if n > 1 {
			t.Fatalf("key %d of the conflict group runs %d jobs at once", k, n)
		}
	}
}
