package sim

import (
	"maps"
	"math"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

// drfState replays lane usage to compute DRF's weighted dominant shares.
type drfState struct {
	capacity policy.Resources
	slots    int
	weights  map[string]float64
	usage    map[string]policy.Resources
	running  map[string]int
	queued   map[string]int
}

func newDRFState(t *testing.T, s *Scenario) *drfState {
	t.Helper()
	c, err := s.compile()
	if err != nil {
		t.Fatal(err)
	}
	d := &drfState{weights: map[string]float64{}, usage: map[string]policy.Resources{},
		running: map[string]int{}, queued: map[string]int{}}
	for _, w := range c.workers {
		d.capacity = d.capacity.Add(w.Resources)
		d.slots += w.Slots
	}
	for name, lc := range c.cfg.Lanes {
		d.weights[name] = lc.Weight
	}
	return d
}

// share is DESIGN §3's weighted dominant share of a lane holding u and n slots.
func (d *drfState) share(lane string, u policy.Resources, n int) float64 {
	frac := func(a, b int64) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	s := max(frac(u.MilliCPU, d.capacity.MilliCPU), frac(u.MemoryMB, d.capacity.MemoryMB),
		frac(u.GPU, d.capacity.GPU), frac(int64(n), int64(d.slots)))
	return s / d.weights[lane]
}

func (d *drfState) apply(e Event) {
	switch e.Kind {
	case Arrive:
		d.queued[e.Lane]++
	case Admit:
		d.queued[e.Lane]--
		d.usage[e.Lane] = d.usage[e.Lane].Add(e.Resources)
		d.running[e.Lane]++
	case Done:
		d.usage[e.Lane] = d.usage[e.Lane].Sub(e.Resources)
		d.running[e.Lane]--
	}
}

func (d *drfState) allBacklogged() bool {
	for lane := range d.weights {
		if d.queued[lane] == 0 {
			return false
		}
	}
	return true
}

// spread is the largest difference between two lanes' weighted shares.
func (d *drfState) spread() float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for lane := range d.weights {
		s := d.share(lane, d.usage[lane], d.running[lane])
		lo, hi = min(lo, s), max(hi, s)
	}
	return hi - lo
}

// drfCheck replays a run and checks that, after each instant's dispatch
// while every lane has queued jobs, the lanes' weighted dominant shares are
// within one job of each other (the largest share a single job adds). It
// returns the number of instants checked and the running jobs per lane
// after the first instant.
func drfCheck(t *testing.T, s *Scenario) (int, map[string]int) {
	t.Helper()
	res := run(t, s)
	d := newDRFState(t, s)
	var oneJob float64
	for _, e := range filter(res.Events, func(e Event) bool { return e.Kind == Arrive }) {
		oneJob = max(oneJob, d.share(e.Lane, e.Resources, 1))
	}
	checked := 0
	var first map[string]int
	evs := res.Events
	for i := 0; i < len(evs); {
		at := evs[i].At
		for ; i < len(evs) && evs[i].At == at; i++ {
			d.apply(evs[i])
		}
		if first == nil {
			first = maps.Clone(d.running)
		}
		if !d.allBacklogged() {
			continue
		}
		checked++
		if sp := d.spread(); sp > oneJob+1e-9 {
			t.Errorf("t=%.0f: weighted dominant shares spread %.4f, more than one job (%.4f)", at.Seconds(), sp, oneJob)
		}
	}
	return checked, first
}

func TestSeed000DRFSharesWithinOneJob(t *testing.T) {
	s := loadFile(t, "seed000-drf.yaml")
	checked, weighted := drfCheck(t, s)
	if checked < 20 {
		t.Fatalf("only %d instants with every lane backlogged: the scenario does not test DRF", checked)
	}
	// The weight matters: at weight 1 training gets the same dominant share
	// as the others, so fewer GPUs than at weight 2.
	one := 1.0
	lane := s.Lanes["training"]
	lane.Weight = &one
	s.Lanes["training"] = lane
	checked, equal := drfCheck(t, s)
	if checked == 0 {
		t.Fatal("weight-1 variant: no instant with every lane backlogged")
	}
	if weighted["training"] <= equal["training"] {
		t.Errorf("training runs %d jobs at weight 2, %d at weight 1: want more at weight 2",
			weighted["training"], equal["training"])
	}
}

// agingWindow is when a job of priority p enqueued at enq first scores as
// much as a fresh job of priority top with stepwise aging: it must cross
// ceil((top-p)/step) boundaries of the interval grid.
func agingWindow(enq time.Duration, p, top int, a policy.Aging) time.Duration {
	steps := int64(math.Ceil(float64(top-p) / float64(a.Step)))
	epoch := Epoch.UnixNano()
	bucket := (epoch + int64(enq)) / int64(a.Interval)
	return time.Duration((bucket+steps)*int64(a.Interval) - epoch)
}

func TestSeed000AgingReachesP0WithinBound(t *testing.T) {
	s := loadFile(t, "seed000-aging.yaml")
	lc := laneConfig(t, s, "batch")
	res := run(t, s)
	arr := byID(res.Events, Arrive)
	stream := func(e Event) bool { return e.FairnessKey == "stream" }
	const top, slots, streamDur = 1000, 2, 10 * time.Second
	late := filter(res.Events, func(e Event) bool { return e.Kind == Admit && !stream(e) })
	if len(late) != 3 {
		t.Fatalf("late jobs admitted: %d, want 3", len(late))
	}
	for d, e := range late {
		reach := agingWindow(arr[e.ID].At, e.Priority, top, lc.Aging)
		// Once level with fresh P0 arrivals it wins on its key's lower
		// accumulated cost; only the d stream jobs displaced by the late
		// jobs admitted before it are older and go first, then a slot
		// frees every stream duration.
		bound := reach + streamDur*time.Duration(int(math.Ceil(float64(d+1)/slots)))
		if e.At < reach || e.At > bound {
			t.Errorf("%s (priority %d) admitted at %v, want in [%v, %v]", e.ID, e.Priority, e.At, reach, bound)
		}
		if e.At >= lastArrival(res.Events, stream) {
			t.Errorf("%s admitted after the P0 stream ended: nothing was tested", e.ID)
		}
	}
	// Seed 000's table as upper bounds: P1 within 5 min, P5 within 1 h,
	// P9 within 24 h of arriving.
	limits := map[string]time.Duration{"p1": 5 * time.Minute, "p5": time.Hour, "p9": 24 * time.Hour}
	adm := byID(res.Events, Admit)
	for id, limit := range limits {
		if reach := agingWindow(arr[id].At, adm[id].Priority, top, lc.Aging) - arr[id].At; reach > limit {
			t.Errorf("%s reaches P0 after %v, seed 000 wants %v", id, reach, limit)
		}
	}
}

func TestSeed000LowPriorityStarvesWithoutAging(t *testing.T) {
	s := loadFile(t, "seed000-aging.yaml")
	lane := s.Lanes["batch"]
	zero := int64(0)
	lane.Aging = &AgingSpec{Step: &zero}
	s.Lanes["batch"] = lane
	res := run(t, s)
	last := lastArrival(res.Events, func(e Event) bool { return e.FairnessKey == "stream" })
	for _, e := range filter(res.Events, func(e Event) bool { return e.Kind == Admit && e.FairnessKey == "late" }) {
		if e.At < last {
			t.Errorf("%s admitted at %v before the stream ended (%v) with aging off", e.ID, e.At, last)
		}
	}
}
