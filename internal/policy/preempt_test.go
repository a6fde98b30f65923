package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func preemptLane(after time.Duration) LaneConfig {
	l := lc().L()
	l.Preemption.After = after
	return l
}

func (b jobB) notPreemptible() jobB { b.j.NotPreemptible = true; return b }

// Off by default: a high job waiting on low running jobs takes nothing.
func TestPreemptionIsOffByDefault(t *testing.T) {
	e := newTestEngine(t, Config{Lanes: oneLane(lc().L())}, wrk("w").slots(2).W())
	submitAll(t, e, at(0), job("low1").prio(100), job("low2").prio(100))
	admittedIDs(e, at(0))
	submitAll(t, e, at(1), job("high").prio(900))
	admittedIDs(e, at(1))
	if ps := e.Preemptions(at(3600)); len(ps) != 0 {
		t.Fatalf("preemptions with preemption off: %+v", ps)
	}
}

// After preempt_after, the least progressed lower job is stopped; once it
// has stopped (Unadmit) the high job starts and the victim waits again
// with its age.
func TestPreemptionStopsTheLeastProgressAfterTheWait(t *testing.T) {
	e := newTestEngine(t, Config{Lanes: oneLane(preemptLane(30 * time.Second))}, wrk("w").slots(2).W())
	submitAll(t, e, at(0), job("old").prio(100))
	admittedIDs(e, at(0))
	submitAll(t, e, at(5), job("new").prio(100).enq(at(5)))
	admittedIDs(e, at(5))
	submitAll(t, e, at(10), job("high").prio(900).enq(at(10)))
	if got := admittedIDs(e, at(10)); len(got) != 0 {
		t.Fatalf("admitted %v with no free slot", got)
	}
	if ps := e.Preemptions(at(39)); len(ps) != 0 {
		t.Fatalf("preempted before preempt_after: %+v", ps)
	}
	want := []Preemption{{JobID: "high", WorkerID: "w", Victims: []string{"new"}, GraceEnds: at(40).Add(DefaultPreemptGrace)}}
	if d := cmp.Diff(want, e.Preemptions(at(40))); d != "" {
		t.Fatalf("preemptions (-want +got):\n%s", d)
	}
	if ps := e.Preemptions(at(41)); len(ps) != 0 {
		t.Errorf("preempted again while the victim stops: %+v", ps)
	}
	x, err := e.Explain("high", at(41))
	if err != nil || x.Code != CodePreempting || x.Reservation == nil || x.Reservation.WorkerID != "w" ||
		x.Message != "preempting: 1 job(s) on worker w, grace ends at "+at(50).UTC().Format(time.RFC3339) {
		t.Errorf("explain while the victim stops = %+v, %v; want preempting on w", x, err)
	}
	if err := e.Unadmit("new", at(45)); err != nil {
		t.Fatal(err)
	}
	if got := admittedIDs(e, at(45)); !cmp.Equal(got, []string{"high"}) {
		t.Fatalf("after the victim stopped admitted %v, want [high]", got)
	}
	if x, _ := e.Explain("new", at(45)); x.Code != CodeReserved && x.Code != CodeNoFreeSlot {
		t.Errorf("victim after its stop: %+v, want it queued again", x)
	}
}

// The fewest victims: one 2-GPU job rather than two 1-GPU jobs, even
// though the 1-GPU jobs have run less.
func TestPreemptionTakesTheFewestVictims(t *testing.T) {
	e := newTestEngine(t, Config{Lanes: oneLane(preemptLane(time.Second))}, wrk("w").slots(4).gpu(4).W())
	submitAll(t, e, at(0), job("pair").prio(100).gpu(2))
	admittedIDs(e, at(0))
	submitAll(t, e, at(5), job("a").prio(100).gpu(1).enq(at(5)), job("b").prio(100).gpu(1).enq(at(5)))
	admittedIDs(e, at(5))
	submitAll(t, e, at(6), job("wide").prio(900).gpu(2).enq(at(6)))
	admittedIDs(e, at(6))
	ps := e.Preemptions(at(10))
	if len(ps) != 1 || !cmp.Equal(ps[0].Victims, []string{"pair"}) {
		t.Fatalf("preemptions = %+v, want the one 2-GPU job", ps)
	}
}

// Never a job marked not preemptible, never one of the same or higher
// priority.
func TestPreemptionSparesProtectedAndEqualJobs(t *testing.T) {
	e := newTestEngine(t, Config{Lanes: oneLane(preemptLane(time.Second))}, wrk("w").slots(2).W())
	submitAll(t, e, at(0), job("kept").prio(100).notPreemptible(), job("peer").prio(900))
	admittedIDs(e, at(0))
	submitAll(t, e, at(1), job("high").prio(900).enq(at(1)))
	admittedIDs(e, at(1))
	if ps := e.Preemptions(at(60)); len(ps) != 0 {
		t.Fatalf("preemptions = %+v, want none", ps)
	}
}

// Across lanes only from a lane above its fair share (Kueue's reclaim).
func TestPreemptionAcrossLanesOnlyFromALaneOverItsShare(t *testing.T) {
	lanes := map[string]LaneConfig{"prod": preemptLane(time.Second), "batch": lc().L()}
	// batch holds both slots: share 1 against a fair share of 1/2.
	e := newTestEngine(t, Config{Lanes: lanes}, wrk("w").slots(2).W())
	submitAll(t, e, at(0), job("b1").lane("batch").prio(100), job("b2").lane("batch").prio(100))
	admittedIDs(e, at(0))
	submitAll(t, e, at(1), job("p").lane("prod").prio(900).enq(at(1)))
	admittedIDs(e, at(1))
	if ps := e.Preemptions(at(5)); len(ps) != 1 || len(ps[0].Victims) != 1 {
		t.Fatalf("preemptions = %+v, want one batch job", ps)
	}

	// batch holds one slot of two, prod the other: batch is at its fair
	// share, and a second prod job may not take its slot.
	e = newTestEngine(t, Config{Lanes: lanes}, wrk("w").slots(2).W())
	submitAll(t, e, at(0), job("b1").lane("batch").prio(100), job("p0").lane("prod").prio(500))
	admittedIDs(e, at(0))
	submitAll(t, e, at(1), job("p").lane("prod").prio(900).enq(at(1)))
	admittedIDs(e, at(1))
	ps := e.Preemptions(at(5))
	for _, p := range ps {
		for _, v := range p.Victims {
			if v == "b1" {
				t.Fatalf("preempted b1 of a lane at its fair share: %+v", ps)
			}
		}
	}
	if len(ps) != 1 || !cmp.Equal(ps[0].Victims, []string{"p0"}) {
		t.Errorf("preemptions = %+v, want p0 (same lane, lower priority)", ps)
	}
}

// A tier's preempt_after applies whatever its lane says.
func TestPreemptionByTier(t *testing.T) {
	cfg := Config{Lanes: oneLane(lc().L()), Tiers: []TierConfig{{Name: "top", MinPriority: 900, MaxPriority: 1000, PreemptAfter: 10 * time.Second}}}
	e := newTestEngine(t, cfg, wrk("w").slots(1).W())
	submitAll(t, e, at(0), job("low").prio(100))
	admittedIDs(e, at(0))
	submitAll(t, e, at(1), job("mid").prio(500).enq(at(1)), job("top").prio(950).enq(at(1)))
	admittedIDs(e, at(1))
	ps := e.Preemptions(at(11))
	if len(ps) != 1 || ps[0].JobID != "top" || !cmp.Equal(ps[0].Victims, []string{"low"}) {
		t.Fatalf("preemptions = %+v, want top preempting low", ps)
	}
}
