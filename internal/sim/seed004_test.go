package sim

import (
	"math"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

// laneConfig is the compiled configuration of a scenario's lane.
func laneConfig(t *testing.T, s *Scenario, lane string) policy.LaneConfig {
	t.Helper()
	c, err := s.compile()
	if err != nil {
		t.Fatal(err)
	}
	lc, ok := c.cfg.Lanes[lane]
	if !ok {
		t.Fatalf("no lane %q", lane)
	}
	return lc
}

// overtakeBound is the documented bound on a waiting job's start while
// fresh competitors keep arriving: it needs gap+1 points of aging to score
// strictly above a fresh competitor, gaining step points per interval on a
// fixed grid (so the first step may come up to one interval late), and then
// a slot must free, which takes at most one competitor's duration.
func overtakeBound(gap int64, a policy.Aging, maxDuration time.Duration) time.Duration {
	steps := int64(math.Ceil(float64(gap+1) / float64(a.Step)))
	return time.Duration(steps+1)*a.Interval + maxDuration
}

func lastArrival(evs []Event, keep func(Event) bool) time.Duration {
	var last time.Duration
	for _, e := range filter(evs, func(e Event) bool { return e.Kind == Arrive && keep(e) }) {
		last = max(last, e.At)
	}
	return last
}

func TestSeed004RareTypeStartsWithinBound(t *testing.T) {
	s := loadFile(t, "seed004-rare-type.yaml")
	lc := laneConfig(t, s, policy.DefaultLane)
	res := run(t, s)
	rare, arr := byID(res.Events, Admit)["rare"], byID(res.Events, Arrive)["rare"]
	popular := func(e Event) bool { return e.Type == "convert" }
	// The popular job's best rarity bonus is R/1 (one free slot), the rare
	// job's is R/1 (its one worker): the gap is the priority difference.
	pop := filter(res.Events, func(e Event) bool { return e.Kind == Arrive && popular(e) })[0]
	gap := int64(pop.Priority) + lc.RarityBonus - int64(arr.Priority) - lc.RarityBonus
	bound := overtakeBound(gap, lc.Aging, sec(1))
	if wait := rare.At - arr.At; wait > bound {
		t.Errorf("rare job waited %v, bound %v", wait, bound)
	}
	if last := lastArrival(res.Events, popular); rare.At >= last {
		t.Errorf("rare job started at %v, after the popular stream ended (%v): nothing was tested", rare.At, last)
	}
	if rare.Worker != "indexer" {
		t.Errorf("rare job on %s", rare.Worker)
	}
}

// Without aging the rare job starves for as long as the stream lasts:
// this is the pathology the bound above rules out.
func TestSeed004RareTypeStarvesWithoutAging(t *testing.T) {
	s := loadFile(t, "seed004-rare-type.yaml")
	lane := s.Lanes[policy.DefaultLane]
	zero := int64(0)
	lane.Aging = &AgingSpec{Step: &zero}
	s.Lanes[policy.DefaultLane] = lane
	res := run(t, s)
	last := lastArrival(res.Events, func(e Event) bool { return e.Type == "convert" })
	if rare := byID(res.Events, Admit)["rare"]; rare.At < last {
		t.Errorf("rare job started at %v before the stream ended at %v without aging", rare.At, last)
	}
}

// freeWorkers replays admissions and completions and calls check before
// each admission with the set of workers free at that moment.
func freeWorkers(t *testing.T, s *Scenario, evs []Event, check func(e Event, free map[string]bool)) {
	t.Helper()
	c, err := s.compile()
	if err != nil {
		t.Fatal(err)
	}
	free := map[string]bool{}
	for _, w := range c.workers {
		free[w.ID] = true
	}
	for _, e := range evs {
		switch e.Kind {
		case Admit:
			check(e, free)
			free[e.Worker] = false
		case Done:
			free[e.Worker] = true
		}
	}
}

func TestSeed004VersatileWorkerKeptFree(t *testing.T) {
	s := loadFile(t, "seed004-versatile-worker.yaml")
	res := run(t, s)
	specialists := []string{"pdf-1", "pdf-2"}
	overflow := 0
	freeWorkers(t, s, res.Events, func(e Event, free map[string]bool) {
		if e.Type != "pdf" {
			return
		}
		specialistFree := free["pdf-1"] || free["pdf-2"]
		switch {
		case specialistFree && !contains(specialists, e.Worker):
			t.Errorf("%s at %.1f went to %s while a pdf specialist was free", e.ID, e.T(), e.Worker)
		case !specialistFree:
			overflow++
		}
	})
	if overflow == 0 {
		t.Errorf("no pdf job overflowed onto the versatile worker: the scenario lost its busy phase")
	}
	arr := byID(res.Events, Arrive)
	for _, e := range filter(res.Events, func(e Event) bool { return e.Kind == Admit && e.Type != "pdf" }) {
		wait := e.At - arr[e.ID].At
		if e.Key == "forecast" {
			// Arrives while a pdf overflow holds the versatile worker.
			if wait == 0 {
				t.Errorf("forecast did not wait for the overflow pdf job")
			}
			continue
		}
		if wait != 0 {
			t.Errorf("%s waited %v for the versatile worker", e.ID, wait)
		}
	}
}

func TestSeed004OnDemandFloodQueuedJobsStart(t *testing.T) {
	s := loadFile(t, "seed004-on-demand-flood.yaml")
	lc := laneConfig(t, s, policy.DefaultLane)
	res := run(t, s)
	onDemand := func(e Event) bool { return e.OnDemand }
	od := filter(res.Events, func(e Event) bool { return e.Kind == Arrive && onDemand(e) })[0]
	arr := byID(res.Events, Arrive)
	reports := filter(res.Events, func(e Event) bool { return e.Kind == Admit && e.Type == "report" })
	if len(reports) != 5 {
		t.Fatalf("reports admitted: %d, want 5", len(reports))
	}
	last := lastArrival(res.Events, onDemand)
	for _, e := range reports {
		// The best an on-demand job can score is priority + bonus +
		// max_aging (rarity is the same for both: same workers).
		gap := int64(od.Priority) + lc.OnDemand.Bonus + lc.OnDemand.MaxAging - int64(e.Priority)
		bound := overtakeBound(gap, lc.Aging, sec(1))
		if wait := e.At - arr[e.ID].At; wait > bound {
			t.Errorf("%s waited %v, bound %v", e.ID, wait, bound)
		}
		if e.At >= last {
			t.Errorf("%s started at %v, after the flood ended (%v): nothing was tested", e.ID, e.At, last)
		}
	}
	// The flood is served first while it is fresh: on-demand requests
	// arriving after a report jump ahead of it.
	first := byID(res.Events, Admit)[reports[0].ID]
	jumped := 0
	for _, e := range filter(res.Events, func(e Event) bool { return e.Kind == Admit && onDemand(e) }) {
		if e.At < first.At && arr[e.ID].At > arr[first.ID].At {
			jumped++
		}
	}
	if jumped == 0 {
		t.Errorf("no on-demand request overtook the queued report")
	}
}

// With the on-demand aging cap lifted, the flood outgrows the queued jobs
// for as long as it has a backlog: they only start after it ends.
func TestSeed004OnDemandFloodStarvesWithoutCap(t *testing.T) {
	s := loadFile(t, "seed004-on-demand-flood.yaml")
	lane := s.Lanes[policy.DefaultLane]
	huge := int64(1) << 40
	od := *lane.OnDemand
	od.MaxAging = &huge
	lane.OnDemand = &od
	s.Lanes[policy.DefaultLane] = lane
	res := run(t, s)
	last := lastArrival(res.Events, func(e Event) bool { return e.OnDemand })
	for _, e := range filter(res.Events, func(e Event) bool { return e.Kind == Admit && e.Type == "report" }) {
		if e.At < last {
			t.Errorf("%s started at %v, before the uncapped flood ended (%v)", e.ID, e.At, last)
		}
	}
}
