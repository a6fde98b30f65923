package policy

// Fluent builders for tests of the engine:
//
//	job("a").typ("x").prio(5).key("r1").fk("k").lane("batch").J()
//	wrk("w1").types("pdf").slots(2).cpu(2000).W()
//
// Builders are values (each method returns a modified copy), so a partly
// built job can be reused as a template. The property tests print failing
// cases as Go code written with these builders, so the vocabulary is kept
// whole even where no test calls a method directly.

import (
	"testing"
	"time"
)

// testT0 is the origin of test time; at(s) is s seconds after it.
var testT0 = time.Unix(1_700_000_000, 0)

func at(sec int) time.Time { return testT0.Add(time.Duration(sec) * time.Second) }

func atMS(ms int) time.Time { return testT0.Add(time.Duration(ms) * time.Millisecond) }

type jobB struct{ j Job }

// job starts a job of type "t", priority 500, tenant "t1" in the default lane.
func job(id string) jobB {
	return jobB{Job{ID: id, Type: "t", Tenant: "t1", Priority: DefaultPriority}}
}

func (b jobB) typ(t string) jobB       { b.j.Type = t; return b }
func (b jobB) prio(p int) jobB         { b.j.Priority = p; b.j.PriorityDefault = false; return b }
func (b jobB) defaultPrio() jobB       { b.j.PriorityDefault = true; return b }
func (b jobB) key(k string) jobB       { b.j.Key = k; return b }
func (b jobB) fk(k string) jobB        { b.j.FairnessKey = k; return b }
func (b jobB) tenant(t string) jobB    { b.j.Tenant = t; return b }
func (b jobB) lane(l string) jobB      { b.j.Lane = l; return b }
func (b jobB) od() jobB                { b.j.OnDemand = true; return b }
func (b jobB) enq(t time.Time) jobB    { b.j.EnqueuedAt = t; return b }
func (b jobB) runAt(t time.Time) jobB  { b.j.RunAt = t; return b }
func (b jobB) res(r Resources) jobB    { b.j.Resources = r; return b }
func (b jobB) cpu(m int64) jobB        { b.j.Resources.MilliCPU = m; return b }
func (b jobB) mem(mb int64) jobB       { b.j.Resources.MemoryMB = mb; return b }
func (b jobB) gpu(n int64) jobB        { b.j.Resources.GPU = n; return b }
func (b jobB) labels(l ...string) jobB { b.j.Labels = append([]string(nil), l...); return b }

func (b jobB) dep(id string, c Condition) jobB {
	b.j.DependsOn = append(append([]Dependency(nil), b.j.DependsOn...), Dependency{JobID: id, Condition: c})
	return b
}
func (b jobB) after(id string) jobB        { return b.dep(id, AfterSuccess) }
func (b jobB) afterFailure(id string) jobB { return b.dep(id, AfterFailure) }
func (b jobB) afterAny(id string) jobB     { return b.dep(id, AfterAny) }

// J returns the built job.
func (b jobB) J() Job { return b.j }

type workerB struct{ w Worker }

// wrk starts a worker with one slot that runs every type and has no
// resources (so only jobs asking for none fit; add some with cpu/mem/gpu).
func wrk(id string) workerB { return workerB{Worker{ID: id, Slots: 1}} }

func (b workerB) types(t ...string) workerB  { b.w.Types = append([]string(nil), t...); return b }
func (b workerB) labels(l ...string) workerB { b.w.Labels = append([]string(nil), l...); return b }
func (b workerB) slots(n int) workerB        { b.w.Slots = n; return b }
func (b workerB) cpu(m int64) workerB        { b.w.Resources.MilliCPU = m; return b }
func (b workerB) mem(mb int64) workerB       { b.w.Resources.MemoryMB = mb; return b }
func (b workerB) gpu(n int64) workerB        { b.w.Resources.GPU = n; return b }

// W returns the built worker.
func (b workerB) W() Worker { return b.w }

// laneB builds a LaneConfig; lc() starts with weight 1 and aging off.
type laneB struct{ l LaneConfig }

func lc() laneB                          { return laneB{LaneConfig{Weight: 1}} }
func (b laneB) weight(w float64) laneB   { b.l.Weight = w; return b }
func (b laneB) rarity(bonus int64) laneB { b.l.RarityBonus = bonus; return b }
func (b laneB) aging(step int64, every time.Duration) laneB {
	b.l.Aging = Aging{Step: step, Interval: every}
	return b
}
func (b laneB) onDemand(bonus, step int64, every time.Duration, maxAging int64) laneB {
	b.l.OnDemand = OnDemandPolicy{Bonus: bonus, Step: step, Interval: every, MaxAging: maxAging}
	return b
}

// L returns the built lane config.
func (b laneB) L() LaneConfig { return b.l }

// newTestEngine builds an engine and registers workers, failing the test
// on any error.
func newTestEngine(t testing.TB, cfg Config, workers ...Worker) *Engine {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, w := range workers {
		if err := e.AddWorker(w); err != nil {
			t.Fatalf("AddWorker(%s): %v", w.ID, err)
		}
	}
	return e
}

// submitAll submits jobs at now, failing the test on any error.
func submitAll(t testing.TB, e *Engine, now time.Time, jobs ...jobB) {
	t.Helper()
	for _, b := range jobs {
		if err := e.Submit(b.J(), now); err != nil {
			t.Fatalf("Submit(%s): %v", b.j.ID, err)
		}
	}
}

// admittedIDs runs Dispatch(now, 0) and returns the admitted job IDs in order.
func admittedIDs(e *Engine, now time.Time) []string {
	ids := []string{}
	for _, a := range e.Dispatch(now, 0) {
		ids = append(ids, a.JobID)
	}
	return ids
}

// finishOK ends a running job, failing the test on error.
func finishOK(t testing.TB, e *Engine, id string, now time.Time, out Outcome) []Dropped {
	t.Helper()
	d, err := e.Finish(id, now, out)
	if err != nil {
		t.Fatalf("Finish(%s): %v", id, err)
	}
	return d
}
