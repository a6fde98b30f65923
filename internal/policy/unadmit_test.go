package policy

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUnadmitGivesTheSlotToTheHigherJob: a slot admitted to a low job whose
// lease never left goes to a high job that arrived after; the low job keeps
// its place (and age) ahead of lows submitted after it. Its fairness key
// stays charged (costs only grow).
func TestUnadmitGivesTheSlotToTheHigherJob(t *testing.T) {
	cfg := Config{Lanes: oneLane(lc().L()), Types: map[string]TypeConfig{"t": {DefaultCost: 5}}}
	e := newTestEngine(t, cfg, wrk("w").W())
	submitAll(t, e, at(0), job("low").typ("t").prio(1).fk("k"))
	if d := cmp.Diff([]string{"low"}, admittedIDs(e, at(0))); d != "" {
		t.Fatalf("first admission (-want +got):\n%s", d)
	}
	charged := e.AccumulatedCostAt("k", at(0))
	submitAll(t, e, at(1), job("high").typ("t").prio(9).fk("h"), job("low2").typ("t").prio(1).fk("k"))
	if got := admittedIDs(e, at(1)); len(got) != 0 {
		t.Fatalf("admitted %v with the only slot taken", got)
	}
	if !e.WaitsForSlot("high") || e.WaitsForSlot("low") {
		t.Errorf("WaitsForSlot: high %v (want true), low %v (want false: running)", e.WaitsForSlot("high"), e.WaitsForSlot("low"))
	}
	must(t, e.Unadmit("low", at(1)))
	if got := e.AccumulatedCostAt("k", at(1)); got != charged {
		t.Errorf("fairness cost of k after Unadmit = %v, want %v (still charged)", got, charged)
	}
	if d := cmp.Diff([]string{"high"}, admittedIDs(e, at(1))); d != "" {
		t.Fatalf("after Unadmit (-want +got):\n%s", d)
	}
	finishOK(t, e, "high", at(2), Succeeded)
	if d := cmp.Diff([]string{"low"}, admittedIDs(e, at(2))); d != "" {
		t.Errorf("after high ended, the unadmitted job goes before the later low (-want +got):\n%s", d)
	}
}

func TestUnadmitErrors(t *testing.T) {
	e := newTestEngine(t, Config{Lanes: oneLane(lc().L())}, wrk("w").W())
	submitAll(t, e, at(0), job("a"), job("b"))
	admittedIDs(e, at(0))
	if err := e.Unadmit("b", at(0)); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Unadmit of a queued job: %v, want ErrNotRunning", err)
	}
	if err := e.Unadmit("nope", at(0)); !errors.Is(err, ErrNotFound) {
		t.Errorf("Unadmit of an unknown job: %v, want ErrNotFound", err)
	}
}

func TestCouldRun(t *testing.T) {
	e := newTestEngine(t, Config{Lanes: oneLane(lc().L())},
		wrk("pdf").types("pdf").cpu(1000).mem(1024).W(), wrk("gpu").labels("gpu").cpu(8000).mem(8192).gpu(1).W())
	submitAll(t, e, at(0),
		job("p").typ("pdf").cpu(500).mem(100),
		job("big").typ("pdf").cpu(2000).mem(100),
		job("g").typ("x").labels("gpu").gpu(1).cpu(100).mem(100))
	for _, c := range []struct {
		job, worker string
		want        bool
	}{
		{"p", "pdf", true}, {"big", "pdf", false}, {"g", "pdf", false},
		{"g", "gpu", true}, {"p", "gpu", true}, {"p", "nope", false}, {"nope", "pdf", false},
	} {
		if got := e.CouldRun(c.job, c.worker); got != c.want {
			t.Errorf("CouldRun(%s, %s) = %v, want %v", c.job, c.worker, got, c.want)
		}
	}
}

// TestWaitsForSlotOnlyForCapacity: a job held back by a cap does not wait
// for a slot: freeing one would not let it in.
func TestWaitsForSlotOnlyForCapacity(t *testing.T) {
	cfg := Config{Lanes: oneLane(lc().L()), Types: map[string]TypeConfig{"capped": {MaxConcurrency: 1}}}
	e := newTestEngine(t, cfg, wrk("w").slots(2).W())
	submitAll(t, e, at(0), job("a").typ("capped"), job("b").typ("capped"), job("c").typ("free"), job("d").typ("free"))
	admittedIDs(e, at(0))
	if e.WaitsForSlot("b") {
		t.Error("b is held by its type cap, not by capacity")
	}
	if !e.WaitsForSlot("d") {
		t.Error("d waits for a slot only")
	}
}
