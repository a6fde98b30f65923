package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/config"
)

// The reservation bound (docs/scheduling.md, "Reservations and backfill"):
// a job that reserves a worker starts no later than the longest remaining
// time of the jobs running there when it reserved, while the predictions
// hold. These tests measure it on the scenario files.

// firstOf returns the first event of kind k for a job of type typ.
func firstOf(t *testing.T, evs []Event, k Kind, typ string) Event {
	t.Helper()
	for _, e := range evs {
		if e.Kind == k && e.Type == typ {
			return e
		}
	}
	t.Fatalf("no %v event for a %s job", k, typ)
	return Event{}
}

// drainBound is the latest end of the jobs running on worker w at time at
// (their admission plus their duration, from the events).
func drainBound(evs []Event, w string, at time.Duration) time.Duration {
	admitted := map[string]Event{}
	bound := at
	for _, e := range evs {
		if e.At > at {
			break
		}
		switch e.Kind {
		case Admit:
			admitted[e.ID] = e
		case Done, Cancel:
			delete(admitted, e.ID)
		}
	}
	ends := map[string]time.Duration{}
	for _, e := range evs {
		if e.Kind == Done {
			ends[e.ID] = e.At
		}
	}
	for id, a := range admitted {
		if a.Worker == w && ends[id] > bound {
			bound = ends[id]
		}
	}
	return bound
}

// withBackfillOff turns reservations off in every lane of the scenario.
func withBackfillOff(s *Scenario) *Scenario {
	off := true
	if len(s.Lanes) == 0 {
		s.Lanes = map[string]LaneSpec{"default": {}}
	}
	for name, l := range s.Lanes {
		l.Backfill = &config.Backfill{Off: &off}
		s.Lanes[name] = l
	}
	return s
}

func TestWideJobBehindStreamStartsWithinDrainBound(t *testing.T) {
	tests := map[string]func(s *Scenario){
		"as filed":                      func(*Scenario) {},
		"4,000 small jobs":              func(s *Scenario) { n := 4000; s.Jobs[0].Count = &n },
		"stream at priority 1000":       func(s *Scenario) { p := 1000; s.Jobs[0].Priority = &p },
		"small jobs' cost known (10 s)": func(s *Scenario) { c := 10.0; s.Jobs[0].Cost = &c },
		"small jobs' cost guessed low": func(s *Scenario) {
			c := 1.0 // a wrong estimate: backfilled jobs would overrun once
			s.Jobs[0].Cost = &c
		},
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			s := loadFile(t, "backfill-wide-gpu.yaml")
			change(s)
			res := run(t, s)
			arrive, admit := firstOf(t, res.Events, Arrive, "wide"), firstOf(t, res.Events, Admit, "wide")
			bound := drainBound(res.Events, admit.Worker, arrive.At)
			if name == "small jobs' cost guessed low" {
				bound += sec(10) // one backfilled job's overrun (the 25 s)
			}
			if admit.At > bound {
				t.Errorf("wide job started at %v, after the drain bound %v", admit.At, bound)
			}
			if admit.At > sec(25) {
				t.Errorf("wide job started at %v, want by 25 s", admit.At)
			}
			if res.Summary.Reservations == 0 || res.Summary.HeldIdleSlotSeconds <= 0 {
				t.Errorf("summary: %d reservations, %.1f slot-s held idle; want both > 0", res.Summary.Reservations, res.Summary.HeldIdleSlotSeconds)
			}
		})
	}
}

// Without reservations the no-head-of-line-blocking rule hands every freed
// GPU to the next small job: the wide job waits for the stream to end.
func TestWideJobStarvesWithBackfillOff(t *testing.T) {
	s := withBackfillOff(loadFile(t, "backfill-wide-gpu.yaml"))
	res := run(t, s)
	admit := firstOf(t, res.Events, Admit, "wide")
	last := lastArrival(res.Events, func(e Event) bool { return e.Type == "small" })
	if admit.At < last {
		t.Errorf("with backfill off the wide job started at %v, before the stream ended (%v): the scenario no longer shows starvation", admit.At, last)
	}
	if res.Summary.Reservations != 0 || res.Summary.Backfilled != 0 {
		t.Errorf("backfill off: %d reservations, %d backfilled; want none", res.Summary.Reservations, res.Summary.Backfilled)
	}
}

func TestBackfillRunsShortKnownJobsInTheGaps(t *testing.T) {
	res := run(t, loadFile(t, "backfill-known-cost.yaml"))
	arrive, admit := firstOf(t, res.Events, Arrive, "wide"), firstOf(t, res.Events, Admit, "wide")
	if bound := drainBound(res.Events, admit.Worker, arrive.At); admit.At > bound {
		t.Errorf("wide job started at %v, after the drain bound %v", admit.At, bound)
	}
	gaps := filter(res.Events, func(e Event) bool {
		return e.Kind == Admit && e.Type == "quick" && e.At > arrive.At && e.At < admit.At
	})
	if len(gaps) == 0 || res.Summary.Backfilled == 0 {
		t.Fatalf("no quick job ran while the node drained (backfilled %d): backfill is not used", res.Summary.Backfilled)
	}
	for _, e := range gaps {
		if e.At+sec(1) > admit.At {
			t.Errorf("backfilled %s at %v ends after the wide job's start %v", e.ID, e.At, admit.At)
		}
	}
	small := filter(res.Events, func(e Event) bool {
		return e.Kind == Admit && e.Type == "small" && e.At > arrive.At && e.At < admit.At
	})
	if len(small) > 0 {
		t.Errorf("%d small (10 s) jobs took reserved GPUs during the drain, first %s at %v", len(small), small[0].ID, small[0].At)
	}
}

// The pairs overrun their 10 s estimate by 30 s: the reservation moves
// with them, and the 30 s jobs never take the GPUs that were held.
func TestReservationWaitsForOverrunningJobs(t *testing.T) {
	res := run(t, loadFile(t, "backfill-overrun.yaml"))
	arrive, admit := firstOf(t, res.Events, Arrive, "wide"), firstOf(t, res.Events, Admit, "wide")
	if admit.At != sec(40) {
		t.Errorf("wide job started at %v, want 40s (when the overrunning pairs end)", admit.At)
	}
	during := filter(res.Events, func(e Event) bool {
		return e.Kind == Admit && e.Type == "small" && e.At > arrive.At && e.At < admit.At
	})
	if len(during) > 0 {
		t.Errorf("%d small jobs took held GPUs before the wide job, first at %v", len(during), during[0].At)
	}
}

func TestWideJobOnCPUAndMemoryAcrossWorkerSizes(t *testing.T) {
	on := run(t, loadFile(t, "backfill-cpu-memory.yaml"))
	arrive, admit := firstOf(t, on.Events, Arrive, "wide"), firstOf(t, on.Events, Admit, "wide")
	if admit.Worker != "big-node" {
		t.Errorf("wide job on %s, want big-node (the only one it fits)", admit.Worker)
	}
	if bound := drainBound(on.Events, admit.Worker, arrive.At); admit.At > bound {
		t.Errorf("wide job started at %v, after the drain bound %v", admit.At, bound)
	}
	off := run(t, withBackfillOff(loadFile(t, "backfill-cpu-memory.yaml")))
	if offAdmit := firstOf(t, off.Events, Admit, "wide"); offAdmit.At < 10*admit.At {
		t.Errorf("with backfill off the wide job started at %v, against %v with it: the scenario does not show the difference", offAdmit.At, admit.At)
	}
}

// Backfill keeps the machine busy: on every bundled scenario but the two
// million-job benchmarks (their scaled copies run in TestBench10k and
// TestDeepBacklog10k) and the preemption ones, utilisation with reservations is within two
// percentage points of utilisation without them, or above it (a wide job
// that no longer waits for the end shortens the makespan).
func TestBackfillKeepsUtilisation(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasPrefix(name, "bench-") || strings.HasPrefix(name, "preempt-") {
			continue // preemption throws work away by design
		}
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(f); err != nil {
				t.Fatal(err)
			}
			on := run(t, loadFile(t, name)).Summary
			off := run(t, withBackfillOff(loadFile(t, name))).Summary
			if d := on.Utilisation - off.Utilisation; d < -0.02 {
				t.Errorf("utilisation %.4f with reservations, %.4f without: %+.2f points", on.Utilisation, off.Utilisation, 100*d)
			}
		})
	}
}

// Preemption by tier: the urgent job starts at its arrival plus the
// tier's preempt_after plus the grace; the job marked not preemptible is
// never stopped; the stopped job runs again later, from the start.
func TestPreemptionByTierStartsWithinAfterPlusGrace(t *testing.T) {
	s := loadFile(t, "preempt-tier.yaml")
	res := run(t, s)
	arrive, admit := firstOf(t, res.Events, Arrive, "urgent"), firstOf(t, res.Events, Admit, "urgent")
	bound := arrive.At + sec(30) + sec(10)
	if admit.At > bound {
		t.Errorf("urgent job started at %v, after arrival + preempt_after + grace = %v", admit.At, bound)
	}
	stops := filter(res.Events, func(e Event) bool { return e.Kind == Preempt })
	if len(stops) != 1 || stops[0].For != admit.ID || stops[0].Key == "keep" {
		t.Fatalf("preempt events %+v, want one batch job other than keep, for %s", stops, admit.ID)
	}
	again := filter(res.Events, func(e Event) bool { return e.Kind == Done && e.ID == stops[0].ID })
	if len(again) != 1 || again[0].Ran != sec(600) {
		t.Errorf("the preempted job's runs to completion: %+v, want one full 600 s run", again)
	}
	if res.Summary.Preemptions != 1 || res.Summary.Pending != 0 || res.Summary.Running != 0 || res.Summary.Done != res.Summary.Jobs {
		t.Errorf("summary: %+v", res.Summary)
	}
}

// Across lanes: prod reclaims batch's slots until batch is back at its
// fair share, and no further; with preemption off nothing is preempted.
func TestPreemptionAcrossLanesReclaimsToTheFairShare(t *testing.T) {
	res := run(t, loadFile(t, "preempt-lanes.yaml"))
	stops := filter(res.Events, func(e Event) bool { return e.Kind == Preempt })
	if len(stops) != 2 {
		t.Fatalf("%d preemptions, want 2 (batch from 4 of 4 slots to its fair share, 2)", len(stops))
	}
	for _, e := range stops {
		if e.Lane != "batch" {
			t.Errorf("preempted %s of lane %s", e.ID, e.Lane)
		}
	}
	first := firstOf(t, res.Events, Admit, "serve")
	if first.At > sec(100+20+5) {
		t.Errorf("first prod job started at %v, want by 125 s (arrival + after + grace)", first.At)
	}

	s := loadFile(t, "preempt-lanes.yaml")
	l := s.Lanes["prod"]
	l.Preemption = nil
	s.Lanes["prod"] = l
	off := run(t, s)
	if n := len(filter(off.Events, func(e Event) bool { return e.Kind == Preempt })); n != 0 || off.Summary.Preemptions != 0 {
		t.Errorf("preemption off: %d preempt events, summary %d", n, off.Summary.Preemptions)
	}
	if a := firstOf(t, off.Events, Admit, "serve"); a.At < sec(300) {
		t.Errorf("preemption off: first prod job started at %v, before any batch job ended", a.At)
	}
}
