package policy

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// benchWorld is a loaded engine: pending jobs over 1k fairness keys and 10
// lanes, with tier, type and tenant caps and a conflict group active, and a
// pool of workers kept full. Each decision cycle finishes the oldest running
// job, submits one new job (so the pending count stays put) and makes one
// dispatch decision.
type benchWorld struct {
	e       *Engine
	spread  bool // every key in every lane and type (adversarial)
	rng     *rand.Rand
	now     time.Time
	seq     int
	running []string
}

const (
	benchLanes   = 10
	benchKeys    = 1000
	benchTypes   = 4
	benchWorkers = 16
	benchSlots   = 4
)

func benchConfig() Config {
	p := func(v int) *int { return &v }
	lanes := map[string]LaneConfig{}
	for i := range benchLanes {
		lc := DefaultLaneConfig()
		lc.Weight = float64(1 + i%3)
		lc.RarityBonus = 48
		lanes["lane"+strconv.Itoa(i)] = lc
	}
	return Config{
		Lanes: lanes,
		Tiers: []TierConfig{
			{Name: "high", MinPriority: 700, MaxPriority: 1000, MaxRunning: 40},
			{Name: "low", MinPriority: 0, MaxPriority: 299, MaxRunning: 24},
		},
		Types: map[string]TypeConfig{
			"t0": {DefaultCost: 10, ConflictGroup: "git", Priority: p(500), Resources: Resources{MilliCPU: 1000, MemoryMB: 512}},
			"t1": {DefaultCost: 20, MaxConcurrency: 20, ConflictGroup: "git", Resources: Resources{MilliCPU: 500, MemoryMB: 256}},
			"t2": {DefaultCost: 5, MaxConcurrency: 30, Resources: Resources{MilliCPU: 250, MemoryMB: 128}},
			"t3": {DefaultCost: 30, Resources: Resources{MilliCPU: 2000, MemoryMB: 1024, GPU: 1}},
		},
		Tenants: map[string]TenantConfig{"tenant0": {MaxRunning: 4}, "tenant1": {MaxRunning: 2}},
	}
}

func newBenchWorld(tb testing.TB, pending int, spread bool) *benchWorld {
	e, err := New(benchConfig())
	if err != nil {
		tb.Fatal(err)
	}
	for i := range benchWorkers {
		w := Worker{ID: fmt.Sprintf("w%02d", i), Slots: benchSlots, Resources: Resources{MilliCPU: 8000, MemoryMB: 8192, GPU: int64(i % 2)}}
		if i%4 == 0 {
			w.Types = []string{"t0", "t1"}
		}
		if err := e.AddWorker(w); err != nil {
			tb.Fatal(err)
		}
	}
	w := &benchWorld{e: e, spread: spread, rng: rand.New(rand.NewPCG(1, 2)), now: time.Unix(1_800_000_000, 0)}
	for range pending {
		w.submit(tb)
	}
	w.fill()
	return w
}

func (w *benchWorld) submit(tb testing.TB) {
	w.seq++
	r := w.rng
	fk := r.IntN(benchKeys)
	// A key's home lane and its two usual types; 10% of its jobs go
	// elsewhere. spread puts every key's jobs in every lane and type.
	lane, typ := fk%benchLanes, (fk+r.IntN(2))%benchTypes
	if w.spread || r.IntN(10) == 0 {
		lane, typ = r.IntN(benchLanes), r.IntN(benchTypes)
	}
	j := Job{
		ID:          strconv.Itoa(w.seq),
		Type:        "t" + strconv.Itoa(typ),
		Key:         "repo" + strconv.Itoa(r.IntN(100_000)),
		Tenant:      "tenant" + strconv.Itoa(fk%50),
		FairnessKey: "fk" + strconv.Itoa(fk),
		Lane:        "lane" + strconv.Itoa(lane),
		Priority:    r.IntN(11) * 100,
		OnDemand:    r.IntN(20) == 0,
	}
	if err := w.e.Submit(j, w.now); err != nil {
		tb.Fatal(err)
	}
}

// fill dispatches until the pool is full (or nothing is admissible).
func (w *benchWorld) fill() {
	for {
		a, ok := w.e.Next(w.now)
		if !ok {
			return
		}
		w.running = append(w.running, a.JobID)
	}
}

// cycle finishes the oldest running job, submits one, decides once.
func (w *benchWorld) cycle(tb testing.TB) {
	w.now = w.now.Add(10 * time.Millisecond)
	if len(w.running) > 0 {
		id := w.running[0]
		w.running = w.running[1:]
		if _, err := w.e.Finish(id, w.now, Succeeded); err != nil {
			tb.Fatal(err)
		}
	}
	w.submit(tb)
	if a, ok := w.e.Next(w.now); ok {
		w.running = append(w.running, a.JobID)
	}
}

// BenchmarkDecision measures one dispatch cycle (finish + submit + decide)
// at several pending-set sizes, with fairness keys that each keep to a home
// lane and two types, as tenants do. The B/pending metric is the live heap
// the pending set costs per job. Worlds are built once per size and reused
// across b.N rounds (their state simply continues).
func BenchmarkDecision(b *testing.B) { benchDecision(b, false) }

// BenchmarkDecisionSpread is the adversarial layout: every key has jobs in
// every lane and type, so each admission makes that key's classes stale in
// all 240 groups (see group.refreshCost).
func BenchmarkDecisionSpread(b *testing.B) { benchDecision(b, true) }

func benchDecision(b *testing.B, spread bool) {
	benchPending(b, []int{1_000, 100_000, 1_000_000}, func(tb testing.TB, n int) *benchWorld {
		return newBenchWorld(tb, n, spread)
	})
}

// benchPending times cycles of worlds built once per pending-set size and
// reused across b.N rounds (their state simply continues), and reports
// the live heap the pending set costs per job as B/pending.
func benchPending[W interface{ cycle(testing.TB) }](b *testing.B, sizes []int, build func(testing.TB, int) W) {
	for _, n := range sizes {
		var w W
		built := false
		var perJob float64
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			if !built {
				before := heapInUse()
				w, built = build(b, n), true
				perJob = float64(heapInUse()-before) / float64(n)
			}
			b.ResetTimer()
			for range b.N {
				w.cycle(b)
			}
			b.StopTimer()
			b.ReportMetric(perJob, "B/pending")
		})
	}
}

// BenchmarkNext times the decision alone: one slot is freed and one job
// submitted outside the timer, then one Next call is timed.
func BenchmarkNext(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		var w *benchWorld
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			b.StopTimer()
			if w == nil {
				w = newBenchWorld(b, n, false)
			}
			for range b.N {
				w.now = w.now.Add(10 * time.Millisecond)
				if len(w.running) > 0 {
					id := w.running[0]
					w.running = w.running[1:]
					if _, err := w.e.Finish(id, w.now, Succeeded); err != nil {
						b.Fatal(err)
					}
				}
				w.submit(b)
				b.StartTimer()
				a, ok := w.e.Next(w.now)
				b.StopTimer()
				if ok {
					w.running = append(w.running, a.JobID)
				}
			}
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestBenchWorldKeepsPoolBusy guards the benchmark itself: cycles must
// keep admitting work, or the benchmark would time an idle engine.
func TestBenchWorldKeepsPoolBusy(t *testing.T) {
	w := newBenchWorld(t, 5_000, false)
	if len(w.running) < benchWorkers*benchSlots/2 {
		t.Fatalf("only %d running after fill", len(w.running))
	}
	admitted := 0
	for range 2_000 {
		before := len(w.running)
		w.cycle(t)
		if len(w.running) >= before {
			admitted++
		}
	}
	if admitted < 1_900 {
		t.Fatalf("only %d of 2000 cycles admitted a job", admitted)
	}
}
