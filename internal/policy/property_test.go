package policy

// Property-based tests of the engine (pgregory.net/rapid).
//
// A random configuration, random workers and a random workload (submits,
// cancels, reprioritizes, finishes with every outcome, worker churn, time
// advances, dispatches, explains) drive the engine in virtual time. After
// every step the engine is compared with refModel (refmodel_test.go), a
// brute-force reference written from DESIGN §3 and the package docs, and
// with invariants that need no model at all:
//
//  1. caps: per type, per tier and per tenant running counts stay within
//     their caps;
//  2. conflicts: no two running jobs of one non-empty conflict group hold
//     one resource key;
//  3. capacity: per worker, running jobs ≤ slots and their resources ≤ the
//     worker's; the worker supports each job's type and labels;
//  4. validity: every admitted job was submitted, is held, is not running
//     already, is not cancelled, has its dependencies met and its RunAt
//     reached;
//  5. work conservation: when Dispatch(now, 0) returns, no pending job is
//     admissible (brute force over every job and worker);
//  6. ordering: each admission is the reference's pick: the DRF lane, the
//     best job in it by (score, fairness-key cost, enqueue, submit order),
//     on the placement rule's worker, with the same score and cost;
//  7. starvation bound (TestPropertyStarvationBound);
//  8. DRF balance (TestPropertyDRFBalance);
//  9. Explain: its code is the first failed check in the documented order
//     (or queued / lane_over_share for an admissible job), its position is
//     the job's exact rank among the lane's queued jobs, and the job Next
//     admits is the queued-coded job of smallest position.
//
// Runs are deterministic: unless -rapid.seed (or RAPID_SEED) is given, the
// seed below is used. Pass -rapid.seed=0 for a random one.

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

const propDefaultSeed = "20251121"

func init() {
	if f := flag.Lookup("rapid.seed"); f != nil && f.Value.String() == "0" {
		_ = f.Value.Set(propDefaultSeed)
	}
}

// scenario restricts the random world for one property.
type scenario int

const (
	scenFull       scenario = iota // everything
	scenSingleLane                 // one lane, workers that run every type (property 6 in isolation)
	scenStarvation                 // one lane, aging on, no caps, every job fits every worker
	scenDRF                        // 2-3 backlogged lanes, unit jobs, homogeneous workers, no caps
)

type propHarness struct {
	t   *rapid.T
	sc  scenario
	cfg Config
	e   *Engine
	m   *refModel

	sec         int // now, in seconds after testT0
	lastAdvance time.Time
	script      []string

	nextJob, nextWorker int

	types, lanes, tenants, fks, keys, labels []string
	workerRes                                []Resources // capacities seen, for job resource generation

	// scenDRF
	unitJob  Resources
	drfSlots int
	// scenStarvation
	odExtra int64
}

func (h *propHarness) now() time.Time { return at(h.sec) }

func (h *propHarness) logf(format string, args ...any) {
	h.script = append(h.script, fmt.Sprintf(format, args...))
}

func (h *propHarness) fatalf(format string, args ...any) {
	h.t.Helper()
	msg := fmt.Sprintf(format, args...)
	h.t.Fatalf("%s\n--- reproduction (t = at(%d)) ---\n%s", msg, h.sec, strings.Join(h.script, "\n"))
}

// ---------- generation ----------

func newPropHarness(t *rapid.T, sc scenario) *propHarness {
	h := &propHarness{t: t, sc: sc}
	h.tenants = []string{"A", "B", "C"}
	h.fks = []string{"", "k1", "k2"}
	h.keys = []string{"r1", "r2", "r3"}
	h.labels = []string{"ssd", "fast"}
	h.cfg = h.genConfig()
	e, err := New(h.cfg)
	if err != nil {
		t.Fatalf("New(%#v): %v", h.cfg, err)
	}
	h.e = e
	h.m = newRefModel(e.Config())
	h.logf("cfg := %s", strings.ReplaceAll(fmt.Sprintf("%#v", h.cfg), "policy.", ""))
	h.logf("e := newTestEngine(t, cfg)")
	h.genWorkers()
	return h
}

func durSec(s int) time.Duration { return time.Duration(s) * time.Second }

func (h *propHarness) genConfig() Config {
	t := h.t
	cfg := Config{Lanes: map[string]LaneConfig{}, Types: map[string]TypeConfig{}, Tenants: map[string]TenantConfig{}}
	nl := 1
	switch h.sc {
	case scenFull:
		nl = rapid.IntRange(1, 3).Draw(t, "lanes")
	case scenDRF:
		nl = rapid.IntRange(2, 3).Draw(t, "lanes")
	}
	h.lanes = []string{"default", "batch", "web"}[:nl]
	intervals := []int{1, 2, 5, 10, 30}
	for _, name := range h.lanes {
		l := LaneConfig{Weight: float64(rapid.IntRange(1, 3).Draw(t, "weight"))}
		agingOn := h.sc == scenStarvation || rapid.Bool().Draw(t, "aging")
		if agingOn {
			l.Aging = Aging{
				Step:     rapid.SampledFrom([]int64{1, 7, 50, 100, 200}).Draw(t, "agingStep"),
				Interval: durSec(rapid.SampledFrom(intervals).Draw(t, "agingInterval")),
			}
		}
		if h.sc != scenDRF && rapid.Bool().Draw(t, "onDemand") {
			l.OnDemand.Bonus = rapid.SampledFrom([]int64{0, 100, 250, 400}).Draw(t, "odBonus")
			if s := rapid.SampledFrom([]int64{0, 50, 100, 300}).Draw(t, "odStep"); s > 0 {
				l.OnDemand.Step = s
				l.OnDemand.Interval = durSec(rapid.SampledFrom(intervals).Draw(t, "odInterval"))
				l.OnDemand.MaxAging = rapid.SampledFrom([]int64{100, 200, 500, 1000}).Draw(t, "odMaxAging")
			}
		}
		if rapid.Bool().Draw(t, "rarityOn") {
			l.RarityBonus = int64(rapid.IntRange(1, 400).Draw(t, "rarity"))
		}
		switch rapid.IntRange(0, 4).Draw(t, "backfill") {
		case 0:
			l.Backfill.Off = true
		case 1:
			l.Backfill.Reservations = 2
		}
		cfg.Lanes[name] = l
	}
	if h.sc == scenStarvation {
		if rapid.IntRange(0, 3).Draw(t, "laneDefaults") == 0 {
			cfg.Lanes["default"] = DefaultLaneConfig()
		}
		l := cfg.Lanes["default"]
		h.odExtra = 0
		if l.OnDemand != (OnDemandPolicy{}) {
			h.odExtra = l.OnDemand.Bonus
			if l.OnDemand.Step > 0 {
				h.odExtra += l.OnDemand.MaxAging
			}
		}
	}
	nTypes := rapid.IntRange(1, 4).Draw(t, "types")
	groups := []string{"", "", "g1", "g2"}
	for i := range nTypes {
		name := fmt.Sprintf("t%d", i)
		h.types = append(h.types, name)
		tc := TypeConfig{DefaultCost: rapid.SampledFrom([]float64{0, 1, 2.5, 5}).Draw(t, "defaultCost")}
		if h.sc == scenFull || h.sc == scenSingleLane {
			tc.MaxConcurrency = rapid.IntRange(0, 3).Draw(t, "maxConcurrency")
			tc.ConflictGroup = rapid.SampledFrom(groups).Draw(t, "conflictGroup")
			if rapid.IntRange(0, 4).Draw(t, "typeResOn") == 0 {
				tc.Resources = Resources{MilliCPU: 500}
			}
			if rapid.IntRange(0, 3).Draw(t, "typeLaneOn") == 0 {
				tc.Lane = rapid.SampledFrom(h.lanes).Draw(t, "typeLane")
			}
			if rapid.IntRange(0, 3).Draw(t, "typePrioOn") == 0 {
				p := h.genPriority()
				tc.Priority = &p
			}
		}
		cfg.Types[name] = tc
	}
	if h.sc == scenFull || h.sc == scenSingleLane {
		switch rapid.IntRange(0, 2).Draw(t, "tiers") {
		case 2:
			cfg.Tiers = append(cfg.Tiers, TierConfig{Name: "lo", MinPriority: 0, MaxPriority: rapid.IntRange(0, 500).Draw(t, "loMax"), MaxRunning: rapid.IntRange(0, 3).Draw(t, "loCap")})
			fallthrough
		case 1:
			cfg.Tiers = append(cfg.Tiers, TierConfig{Name: "hi", MinPriority: rapid.IntRange(501, 1000).Draw(t, "hiMin"), MaxPriority: MaxPriority, MaxRunning: rapid.IntRange(0, 3).Draw(t, "hiCap")})
		}
		for _, tn := range h.tenants {
			if mr := rapid.IntRange(0, 2).Draw(t, "tenantMax"); mr > 0 {
				cfg.Tenants[tn] = TenantConfig{MaxRunning: mr}
			}
		}
	}
	cfg.Cost = CostConfig{
		Alpha:          rapid.SampledFrom([]float64{0, 0.5, 1}).Draw(t, "alpha"),
		KeyTTL:         durSec(rapid.SampledFrom([]int{0, 20, 120}).Draw(t, "keyTTL")),
		AdvanceNewKeys: rapid.Bool().Draw(t, "advanceNewKeys"),
		EstimateTTL:    durSec(rapid.SampledFrom([]int{0, 30, 90}).Draw(t, "estimateTTL")),
	}
	return cfg
}

func (h *propHarness) genWorkers() {
	t := h.t
	switch h.sc {
	case scenDRF:
		n := rapid.IntRange(1, 3).Draw(t, "workers")
		slots := rapid.IntRange(1, 3).Draw(t, "slots")
		h.unitJob = Resources{MilliCPU: 1000, MemoryMB: 1024}
		for range n {
			h.addWorker(Worker{ID: h.workerID(), Slots: slots, Resources: Resources{MilliCPU: 1000 * int64(slots), MemoryMB: 1024 * int64(slots)}})
		}
		h.drfSlots = n * slots
	default:
		n := rapid.IntRange(1, 4).Draw(t, "workers")
		for range n {
			h.addWorker(h.genWorker())
		}
	}
}

func (h *propHarness) workerID() string {
	id := fmt.Sprintf("w%d", h.nextWorker)
	h.nextWorker++
	return id
}

func (h *propHarness) genWorker() Worker {
	t := h.t
	w := Worker{ID: h.workerID(), Slots: rapid.IntRange(1, 3).Draw(t, "slots")}
	if h.sc == scenFull && rapid.IntRange(0, 9).Draw(t, "noSlots") == 0 {
		w.Slots = 0
	}
	if h.sc == scenFull && rapid.Bool().Draw(t, "typed") {
		for _, ty := range h.types {
			if rapid.Bool().Draw(t, "supports") {
				w.Types = append(w.Types, ty)
			}
		}
		if len(w.Types) == 0 {
			w.Types = []string{h.types[0]}
		}
	}
	if h.sc == scenFull {
		for _, l := range h.labels {
			if rapid.IntRange(0, 2).Draw(t, "hasLabel") == 0 {
				w.Labels = append(w.Labels, l)
			}
		}
	}
	if h.sc != scenStarvation {
		w.Resources = Resources{
			MilliCPU: rapid.SampledFrom([]int64{0, 1000, 2000, 4000}).Draw(t, "cpu"),
			MemoryMB: rapid.SampledFrom([]int64{0, 1024, 4096}).Draw(t, "mem"),
			GPU:      rapid.SampledFrom([]int64{0, 0, 1, 2}).Draw(t, "gpu"),
		}
	}
	return w
}

func (h *propHarness) addWorker(w Worker) {
	if err := h.e.AddWorker(w); err != nil {
		h.fatalf("AddWorker(%+v): %v", w, err)
	}
	h.m.addWorker(w)
	h.workerRes = append(h.workerRes, w.Resources)
	h.logf("must(t, e.AddWorker(%s))", strings.ReplaceAll(fmt.Sprintf("%#v", w), "policy.", ""))
}

// genResources mostly asks for a fraction of some worker's capacity (so the
// job fits that worker when it is idle), sometimes for nothing, sometimes
// for anything.
func (h *propHarness) genResources() Resources {
	t := h.t
	switch h.sc {
	case scenStarvation:
		return Resources{}
	case scenDRF:
		return h.unitJob
	}
	switch rapid.IntRange(0, 9).Draw(t, "resMode") {
	case 0, 1, 2, 3:
		return Resources{}
	case 9:
		return Resources{
			MilliCPU: rapid.SampledFrom([]int64{0, 500, 3000, 8000}).Draw(t, "anyCPU"),
			MemoryMB: rapid.SampledFrom([]int64{0, 512, 8192}).Draw(t, "anyMem"),
			GPU:      rapid.SampledFrom([]int64{0, 1, 3}).Draw(t, "anyGPU"),
		}
	}
	c := h.workerRes[rapid.IntRange(0, len(h.workerRes)-1).Draw(t, "fitWorker")]
	frac := func(v int64, label string) int64 {
		return v * int64(rapid.IntRange(0, 4).Draw(t, label)) / 4
	}
	return Resources{MilliCPU: frac(c.MilliCPU, "cpuFrac"), MemoryMB: frac(c.MemoryMB, "memFrac"), GPU: frac(c.GPU, "gpuFrac")}
}

func (h *propHarness) genPriority() int {
	if rapid.Bool().Draw(h.t, "prioUniform") {
		return rapid.IntRange(MinPriority, MaxPriority).Draw(h.t, "prio")
	}
	return rapid.SampledFrom([]int{0, 100, 500, 900, 1000}).Draw(h.t, "prioPick")
}

func (h *propHarness) genJob() Job {
	t := h.t
	j := Job{
		ID:        fmt.Sprintf("j%d", h.nextJob),
		Type:      rapid.SampledFrom(h.types).Draw(t, "type"),
		Key:       rapid.SampledFrom(h.keys).Draw(t, "key"),
		Tenant:    rapid.SampledFrom(h.tenants).Draw(t, "tenant"),
		Lane:      rapid.SampledFrom(h.lanes).Draw(t, "lane"),
		Priority:  h.genPriority(),
		Resources: h.genResources(),
	}
	h.nextJob++
	j.FairnessKey = rapid.SampledFrom(h.fks).Draw(t, "fk")
	if rapid.IntRange(0, 3).Draw(t, "timeoutOn") == 0 {
		j.Timeout = durSec(rapid.SampledFrom([]int{1, 5, 30, 120}).Draw(t, "timeout"))
	}
	if h.sc != scenDRF {
		j.OnDemand = rapid.IntRange(0, 3).Draw(t, "onDemandJob") == 0
	}
	if h.sc == scenFull && rapid.IntRange(0, 4).Draw(t, "labelled") == 0 {
		j.Labels = []string{rapid.SampledFrom(h.labels).Draw(t, "label")}
		if rapid.IntRange(0, 3).Draw(t, "moreLabels") == 0 {
			j.Labels = append(j.Labels, rapid.SampledFrom(h.labels).Draw(t, "label2"))
		}
	}
	if h.sc == scenFull || h.sc == scenSingleLane {
		if rapid.IntRange(0, 5).Draw(t, "typeDefaults") == 0 {
			j.Lane, j.PriorityDefault = "", true
		}
	}
	if h.sc == scenFull || h.sc == scenSingleLane {
		if rapid.IntRange(0, 4).Draw(t, "backdated") == 0 {
			j.EnqueuedAt = h.now().Add(-durSec(rapid.IntRange(-30, 300).Draw(t, "age")))
		}
		if rapid.IntRange(0, 4).Draw(t, "delayed") == 0 {
			j.RunAt = h.now().Add(durSec(rapid.IntRange(1, 120).Draw(t, "runAfter")))
		}
		held := h.heldIDs()
		if len(held) > 0 && rapid.IntRange(0, 3).Draw(t, "hasDeps") == 0 {
			n := rapid.IntRange(1, 2).Draw(t, "nDeps")
			seen := map[string]bool{}
			for range n {
				d := rapid.SampledFrom(held).Draw(t, "dep")
				if seen[d] {
					continue
				}
				seen[d] = true
				j.DependsOn = append(j.DependsOn, Dependency{JobID: d, Condition: rapid.SampledFrom([]Condition{AfterSuccess, AfterFailure, AfterAny}).Draw(t, "cond")})
			}
		}
	}
	return j
}

// heldIDs lists the jobs the engine should hold, in submit order.
func (h *propHarness) heldIDs() []string {
	js := make([]*refJob, 0, len(h.m.jobs))
	for _, j := range h.m.jobs {
		js = append(js, j)
	}
	sort.Slice(js, func(a, b int) bool { return js[a].seq < js[b].seq })
	ids := make([]string, len(js))
	for i, j := range js {
		ids[i] = j.ID
	}
	return ids
}

func (h *propHarness) runningIDs() []string {
	var ids []string
	for _, j := range h.m.running() {
		ids = append(ids, j.ID)
	}
	return ids
}

func jobExpr(j Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job(%q)", j.ID)
	if j.Type != "t" {
		fmt.Fprintf(&b, ".typ(%q)", j.Type)
	}
	if j.PriorityDefault {
		b.WriteString(".defaultPrio()")
	} else if j.Priority != DefaultPriority {
		fmt.Fprintf(&b, ".prio(%d)", j.Priority)
	}
	if j.Key != "" {
		fmt.Fprintf(&b, ".key(%q)", j.Key)
	}
	if j.Tenant != "t1" {
		fmt.Fprintf(&b, ".tenant(%q)", j.Tenant)
	}
	if j.FairnessKey != "" {
		fmt.Fprintf(&b, ".fk(%q)", j.FairnessKey)
	}
	if j.Lane != "" {
		fmt.Fprintf(&b, ".lane(%q)", j.Lane)
	}
	if j.OnDemand {
		b.WriteString(".od()")
	}
	if r := j.Resources; r.MilliCPU != 0 {
		fmt.Fprintf(&b, ".cpu(%d)", r.MilliCPU)
	}
	if r := j.Resources; r.MemoryMB != 0 {
		fmt.Fprintf(&b, ".mem(%d)", r.MemoryMB)
	}
	if r := j.Resources; r.GPU != 0 {
		fmt.Fprintf(&b, ".gpu(%d)", r.GPU)
	}
	if len(j.Labels) > 0 {
		fmt.Fprintf(&b, ".labels(%q)", strings.Join(j.Labels, `", "`))
	}
	if !j.EnqueuedAt.IsZero() {
		fmt.Fprintf(&b, ".enq(at(%d))", int(j.EnqueuedAt.Sub(testT0)/time.Second))
	}
	if !j.RunAt.IsZero() {
		fmt.Fprintf(&b, ".runAt(at(%d))", int(j.RunAt.Sub(testT0)/time.Second))
	}
	for _, d := range j.DependsOn {
		fmt.Fprintf(&b, ".%s(%q)", map[Condition]string{AfterSuccess: "after", AfterFailure: "afterFailure", AfterAny: "afterAny"}[d.Condition], d.JobID)
	}
	return b.String() + ".J()"
}

// ---------- actions ----------

func (h *propHarness) actSubmit() {
	j := h.genJob()
	h.logf("must(t, e.Submit(%s, at(%d)))", jobExpr(j), h.sec)
	if err := h.e.Submit(j, h.now()); err != nil {
		h.fatalf("Submit(%s): %v", j.ID, err)
	}
	h.m.submit(j, h.now())
}

// actBurst submits many jobs alike for every group-level check (type,
// labels, shape, lane, on-demand) but of many priorities, fairness keys and
// tenants, so that one group holds many classes and its heaps get deep.
func (h *propHarness) actBurst() {
	t := h.t
	tmpl := h.genJob()
	tmpl.DependsOn = nil
	for n := rapid.IntRange(5, 40).Draw(t, "burst"); n > 0; n-- {
		j := tmpl
		j.ID = fmt.Sprintf("j%d", h.nextJob)
		h.nextJob++
		j.Priority = rapid.IntRange(0, 40).Draw(t, "burstPrio") * 25
		j.Tenant = rapid.SampledFrom(h.tenants).Draw(t, "burstTenant")
		j.FairnessKey = rapid.SampledFrom(h.fks).Draw(t, "burstFK")
		h.logf("must(t, e.Submit(%s, at(%d)))", jobExpr(j), h.sec)
		if err := h.e.Submit(j, h.now()); err != nil {
			h.fatalf("Submit(%s): %v", j.ID, err)
		}
		h.m.submit(j, h.now())
	}
}

func (h *propHarness) actSubmitInvalid() {
	t := h.t
	held := h.heldIDs()
	var j Job
	var want error
	switch rapid.IntRange(0, 2).Draw(t, "invalidKind") {
	case 0:
		if len(held) == 0 {
			return
		}
		j, want = Job{ID: rapid.SampledFrom(held).Draw(t, "dupID"), Type: h.types[0], Lane: h.lanes[0]}, ErrDuplicateJob
	case 1:
		j, want = Job{ID: "bad-dep", Type: h.types[0], Lane: h.lanes[0], DependsOn: []Dependency{{JobID: "nope"}}}, ErrUnknownDependency
	default:
		j, want = Job{ID: "bad-lane", Type: h.types[0], Lane: "nope"}, ErrUnknownLane
	}
	h.logf("_ = e.Submit(%s, at(%d)) // want %v", jobExpr(j), h.sec, want)
	if err := h.e.Submit(j, h.now()); !errors.Is(err, want) {
		h.fatalf("Submit(%s) = %v, want %v", j.ID, err, want)
	}
}

func (h *propHarness) actAdvance() {
	t := h.t
	want, wantOK := h.expectedNextDue()
	got, ok := h.e.NextDue()
	if ok != wantOK || !got.Equal(want) {
		h.fatalf("NextDue() = %v, %v; want %v, %v", got.Sub(testT0), ok, want.Sub(testT0), wantOK)
	}
	if ok && rapid.Bool().Draw(t, "jumpToDue") {
		// NextDue may lie in the past (due jobs wait for the next decision
		// to be promoted); time never goes back.
		h.sec = max(h.sec, int(math.Ceil(float64(got.Sub(testT0))/float64(time.Second))))
	} else {
		h.sec += rapid.IntRange(0, 60).Draw(t, "advance")
	}
	h.logf("// now = at(%d)", h.sec)
}

// expectedNextDue is the earliest RunAt of the jobs the engine should hold
// as delayed: dependencies met, RunAt after both the time they became
// runnable and the last time the engine promoted due jobs.
func (h *propHarness) expectedNextDue() (time.Time, bool) {
	var best time.Time
	found := false
	for _, j := range h.m.jobs {
		if j.running || j.waiting > 0 || !j.RunAt.After(j.readyAt) || !j.RunAt.After(h.lastAdvance) {
			continue
		}
		if !found || j.RunAt.Before(best) {
			best, found = j.RunAt, true
		}
	}
	return best, found
}

func sortDropped(d []Dropped) []Dropped {
	out := append([]Dropped{}, d...)
	sort.Slice(out, func(a, b int) bool { return out[a].JobID < out[b].JobID })
	return out
}

func (h *propHarness) actFinish() {
	t := h.t
	run := h.runningIDs()
	if len(run) == 0 {
		return
	}
	id := rapid.SampledFrom(run).Draw(t, "finish")
	out := rapid.SampledFrom([]Outcome{Succeeded, Failed, Cancelled, Released}).Draw(t, "outcome")
	h.logf("e.Finish(%q, at(%d), %s)", id, h.sec, outcomeName(out))
	got, err := h.e.Finish(id, h.now(), out)
	if err != nil {
		h.fatalf("Finish(%s): %v", id, err)
	}
	want := h.m.finish(id, h.now(), out)
	if d := cmp.Diff(sortDropped(want), sortDropped(got)); d != "" {
		h.fatalf("Finish(%s, %s) dropped (-want +got):\n%s", id, outcomeName(out), d)
	}
}

// actUnadmit takes back a running job's admission, as the server does for
// a lease that never left it.
func (h *propHarness) actUnadmit() {
	run := h.runningIDs()
	if len(run) == 0 {
		return
	}
	id := rapid.SampledFrom(run).Draw(h.t, "unadmit")
	h.logf("must(t, e.Unadmit(%q, at(%d)))", id, h.sec)
	if err := h.e.Unadmit(id, h.now()); err != nil {
		h.fatalf("Unadmit(%s): %v", id, err)
	}
	h.m.unadmit(id)
}

func outcomeName(o Outcome) string {
	return [...]string{"Succeeded", "Failed", "Cancelled", "Released"}[o]
}

func (h *propHarness) actCancel() {
	t := h.t
	held := h.heldIDs()
	if len(held) == 0 || rapid.IntRange(0, 9).Draw(t, "cancelUnknown") == 0 {
		h.logf("_, _ = e.Cancel(\"nope\", at(%d))", h.sec)
		if _, err := h.e.Cancel("nope", h.now()); !errors.Is(err, ErrNotFound) {
			h.fatalf("Cancel(unknown) = %v, want ErrNotFound", err)
		}
		return
	}
	id := rapid.SampledFrom(held).Draw(t, "cancel")
	h.logf("e.Cancel(%q, at(%d))", id, h.sec)
	total, _ := h.e.Len()
	got, err := h.e.Cancel(id, h.now())
	if h.m.jobs[id].running {
		if !errors.Is(err, ErrNotPending) {
			h.fatalf("Cancel(running %s) = %v, want ErrNotPending", id, err)
		}
		return
	}
	if err != nil {
		h.fatalf("Cancel(%s): %v", id, err)
	}
	want := h.m.cancel(id, h.now())
	if d := cmp.Diff(sortDropped(want), sortDropped(got)); d != "" {
		h.fatalf("Cancel(%s) dropped (-want +got):\n%s", id, d)
	}
	if after, _ := h.e.Len(); after != total-1-len(got) {
		h.fatalf("Len after Cancel(%s) = %d, want %d (O(1) tombstone: Len drops at once)", id, after, total-1-len(got))
	}
	if _, ok := h.e.Job(id); ok {
		h.fatalf("Job(%s) still known after Cancel", id)
	}
}

func (h *propHarness) actReprioritize() {
	t := h.t
	held := h.heldIDs()
	if len(held) == 0 {
		return
	}
	id := rapid.SampledFrom(held).Draw(t, "reprio")
	p := h.genPriority()
	h.logf("e.Reprioritize(%q, %d, at(%d))", id, p, h.sec)
	err := h.e.Reprioritize(id, p, h.now())
	j := h.m.jobs[id]
	if j.running {
		if !errors.Is(err, ErrNotPending) {
			h.fatalf("Reprioritize(running %s) = %v, want ErrNotPending", id, err)
		}
		return
	}
	if err != nil {
		h.fatalf("Reprioritize(%s): %v", id, err)
	}
	j.Priority = p
}

func (h *propHarness) actAddWorker() {
	if h.nextWorker >= 8 {
		return
	}
	h.addWorker(h.genWorker())
}

func (h *propHarness) actRemoveWorker() {
	ws := h.m.sortedWorkers()
	if len(ws) <= 1 {
		return
	}
	id := rapid.SampledFrom(ws).Draw(h.t, "remove").ID
	h.logf("e.RemoveWorker(%q)", id)
	got, err := h.e.RemoveWorker(id)
	if err != nil {
		h.fatalf("RemoveWorker(%s): %v", id, err)
	}
	want := h.m.removeWorker(id)
	if d := cmp.Diff(want, got); d != "" {
		h.fatalf("RemoveWorker(%s) running jobs (-want +got):\n%s", id, d)
	}
}

func (h *propHarness) actSetEstimate() {
	t := h.t
	ty := rapid.SampledFrom(h.types).Draw(t, "estType")
	k := rapid.SampledFrom(h.keys).Draw(t, "estKey")
	v := rapid.SampledFrom([]float64{0.5, 3, 10}).Draw(t, "estValue")
	h.logf("e.SetEstimate(%q, %q, %v, at(%d))", ty, k, v, h.sec)
	h.e.SetEstimate(ty, k, v, h.now())
	h.m.setEstimate(ty, k, v, h.now())
}

// actRestore puts a new job straight into the running state, as a server
// does at rebuild, on a worker where it fits without breaking a cap or a
// conflict (restoring beyond limits is allowed, but would void the
// invariants; regress_test.go has such a case).
func (h *propHarness) actRestore() {
	t := h.t
	j := h.genJob()
	j.DependsOn, j.RunAt = nil, time.Time{}
	probe := &refJob{Job: h.m.normalize(j, h.now())}
	if len(h.m.blocks(probe)) > 0 {
		return
	}
	var fits []*refWorker
	for _, w := range h.m.sortedWorkers() {
		if w.supports(probe.Type, probe.Labels) && w.freeSlots > 0 && w.free.Covers(probe.Resources) {
			fits = append(fits, w)
		}
	}
	w := rapid.SampledFrom(fits).Draw(t, "restoreOn")
	admittedAt := h.sec - rapid.IntRange(0, 60).Draw(t, "restoreAge")
	cost := rapid.SampledFrom([]float64{0.5, 2, 7}).Draw(t, "restoreCost")
	h.logf("must(t, e.Restore(%s, %q, at(%d), %v))", jobExpr(j), w.ID, admittedAt, cost)
	if err := h.e.Restore(j, w.ID, at(admittedAt), cost); err != nil {
		h.fatalf("Restore(%s): %v", j.ID, err)
	}
	h.m.restore(j, w, at(admittedAt), cost)
}

func (h *propHarness) actSetType() {
	t := h.t
	name := rapid.SampledFrom(h.types).Draw(t, "setType")
	tc := TypeConfig{
		DefaultCost:    rapid.SampledFrom([]float64{0, 1, 2.5, 5}).Draw(t, "newDefaultCost"),
		MaxConcurrency: rapid.IntRange(0, 3).Draw(t, "newMaxConcurrency"),
		ConflictGroup:  rapid.SampledFrom([]string{"", "g1", "g2"}).Draw(t, "newConflictGroup"),
	}
	h.logf("_ = e.SetType(%q, %s)", name, strings.ReplaceAll(fmt.Sprintf("%#v", tc), "policy.", ""))
	err := h.e.SetType(name, tc)
	if ok := h.m.setType(name, tc); ok != (err == nil) {
		h.fatalf("SetType(%s) = %v; the reference says accepted = %v", name, err, ok)
	}
}

func (h *propHarness) actAddTier() {
	t := h.t
	lo := rapid.IntRange(0, 1000).Draw(t, "tierMin")
	tr := TierConfig{
		Name:        fmt.Sprintf("x%d", lo),
		MinPriority: lo,
		MaxPriority: min(1000, lo+rapid.IntRange(0, 200).Draw(t, "tierWidth")),
		MaxRunning:  rapid.IntRange(0, 2).Draw(t, "tierCap"),
	}
	h.logf("_ = e.AddTier(%#v)", tr)
	err := h.e.AddTier(tr)
	if ok := h.m.addTier(tr); ok != (err == nil) {
		h.fatalf("AddTier(%+v) = %v; the reference says accepted = %v", tr, err, ok)
	}
}

// actDispatch calls Dispatch(now, max) and checks each admission against
// the reference, then (max <= 0) that nothing admissible is left.
func (h *propHarness) actDispatch(max int) {
	now := h.now()
	h.m.advance(now)
	if h.m.evictableEstimates(now) {
		// Let the engine evict before deciding, so that the model knows
		// which estimates the admissions will be charged.
		if held := h.heldIDs(); len(held) > 0 {
			h.logf("_, _ = e.Explain(%q, at(%d))", held[0], h.sec)
			if _, err := h.e.Explain(held[0], now); err != nil {
				h.fatalf("Explain(%s): %v", held[0], err)
			}
			h.syncEstimates(now)
		}
	}
	h.lastAdvance = now
	as := h.e.Dispatch(now, max)
	defer h.syncEstimates(now)
	var got []string
	for _, a := range as {
		got = append(got, a.JobID+"@"+a.WorkerID)
	}
	h.logf("e.Dispatch(at(%d), %d) // -> %v", h.sec, max, got)
	if max > 0 && len(as) > max {
		h.fatalf("Dispatch(max=%d) made %d assignments", max, len(as))
	}
	for _, a := range as {
		h.checkAdmission(a, now)
	}
	if max <= 0 || len(as) < max {
		if p, ok := h.m.pick(now); ok {
			h.fatalf("work conservation: Dispatch(at(%d)) returned but %s (lane %s, score %d) is admissible on %s\n%s",
				h.sec, p.job.ID, p.lane, p.score, p.worker.ID, h.describeLanes(now))
		}
	}
	if h.sc == scenDRF {
		h.checkDRFBalance()
	}
}

// checkAdmission verifies one assignment and applies it to the model.
func (h *propHarness) checkAdmission(a Assignment, now time.Time) {
	j, ok := h.m.jobs[a.JobID]
	// Property 4: validity, independent of any ordering.
	switch {
	case !ok:
		h.fatalf("admitted %s, which is not pending (never submitted, cancelled, dropped or finished)", a.JobID)
	case j.running:
		h.fatalf("admitted %s twice: it already runs on %s", a.JobID, j.worker.ID)
	case j.waiting > 0:
		h.fatalf("admitted %s with %d unmet dependencies", a.JobID, j.waiting)
	case j.RunAt.After(now):
		h.fatalf("admitted %s at %v before its RunAt %v", a.JobID, now.Sub(testT0), j.RunAt.Sub(testT0))
	}
	// Properties 1-3: admitting j must not break a cap, a conflict or capacity.
	if bs := h.m.blocks(j); len(bs) > 0 {
		h.fatalf("admitted %s on %s although it is blocked by %v\n%s", a.JobID, a.WorkerID, bs, h.describeLanes(now))
	}
	w, ok := h.m.workers[a.WorkerID]
	switch {
	case !ok:
		h.fatalf("admitted %s on unknown or removed worker %s", a.JobID, a.WorkerID)
	case !w.supports(j.Type, j.Labels):
		h.fatalf("admitted %s (type %s labels %v) on %s, which does not support it", a.JobID, j.Type, j.Labels, a.WorkerID)
	case w.freeSlots == 0 || !w.free.Covers(j.Resources):
		h.fatalf("admitted %s (%+v) on %s with %d free slots and %+v free", a.JobID, j.Resources, a.WorkerID, w.freeSlots, w.free)
	}
	if h.sc == scenStarvation && !a.Backfill {
		h.checkStarvation(j, now)
	}
	// Property 6: exactly the reference's decision.
	p, _ := h.m.pick(now)
	if p.job != j {
		h.fatalf("ordering: admitted %s (lane %s) but the reference picks %s (lane %s)\n  admitted: %s\n  expected: %s\n%s",
			a.JobID, j.Lane, p.job.ID, p.lane, h.describeJob(j, now), h.describeJob(p.job, now), h.describeLanes(now))
	}
	if a.Lane != p.lane || a.Tenant != j.Tenant || a.FairnessKey != j.FairnessKey || a.Resources != j.Resources {
		h.fatalf("Assignment %+v: want lane %q tenant %q fairness key %q resources %+v", a, p.lane, j.Tenant, j.FairnessKey, j.Resources)
	}
	if a.Backfill != p.fill {
		h.fatalf("Assignment.Backfill of %s = %v, want %v\n%s%s", a.JobID, a.Backfill, p.fill, h.describeWorkers(), h.describePlan(now))
	}
	if a.WorkerID != p.worker.ID {
		h.fatalf("placement: %s placed on %s, want %s\n%s", a.JobID, a.WorkerID, p.worker.ID, h.describeWorkers())
	}
	if a.Score != p.score {
		h.fatalf("Assignment.Score of %s = %d, want %d (%s)", a.JobID, a.Score, p.score, h.describeJob(j, now))
	}
	cost := h.m.admit(j, w, now)
	if a.Cost != cost {
		h.fatalf("Assignment.Cost of %s = %v, want %v", a.JobID, a.Cost, cost)
	}
}

func (h *propHarness) describeJob(j *refJob, now time.Time) string {
	return fmt.Sprintf("%s{lane %s type %s prio %d od %v score %d rarity %d fk %s cost %v enq %v seq %d blocks %v}",
		j.ID, j.Lane, j.Type, j.Priority, j.OnDemand, h.m.score(j, now), h.m.rarity(j), j.FairnessKey,
		h.m.keys[j.FairnessKey].cost, time.Duration(h.m.ageFrom(j)-testT0.UnixNano()), j.seq, h.m.blocks(j))
}

func (h *propHarness) describeLanes(now time.Time) string {
	var b strings.Builder
	for _, l := range h.m.laneOrder() {
		fmt.Fprintf(&b, "  lane %s share %.4f:", l, h.m.share(l))
		for _, j := range h.m.admissible(l, now) {
			fmt.Fprintf(&b, " %s(%d)", j.ID, h.m.fullScore(j, now))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (h *propHarness) describePlan(now time.Time) string {
	var b strings.Builder
	for _, r := range h.m.plan(now) {
		fmt.Fprintf(&b, "  reference reserves %s on %s from %v\n", r.job.ID, r.w.ID, r.at.Sub(testT0))
	}
	return b.String()
}

func (h *propHarness) describeWorkers() string {
	var b strings.Builder
	for _, w := range h.m.sortedWorkers() {
		fmt.Fprintf(&b, "  %s types %v slots %d/%d free %+v of %+v\n", w.ID, w.Types, w.freeSlots, w.Slots, w.free, w.Resources)
	}
	return b.String()
}

// checkStarvation is property 7: a queued job that has waited
// I·⌈(maxPriority + extra + 1 − p)/s⌉ + I is never overtaken by a job that
// arrived after that point (extra: on-demand bonus and aging cap).
func (h *propHarness) checkStarvation(admitted *refJob, now time.Time) {
	lc := h.m.cfg.Lanes["default"]
	s, iv := lc.Aging.Step, int64(lc.Aging.Interval)
	for _, q := range h.m.jobs {
		if q == admitted || q.OnDemand || !h.m.runnable(q, now) {
			continue
		}
		need := int64(MaxPriority) + h.odExtra + 1 - int64(q.Priority)
		k := (need + s - 1) / s
		threshold := h.m.ageFrom(q) + iv*k + iv
		// docs/scheduling.md: after W* the job outranks "the score any
		// on-demand job can ever reach" — true when on-demand aging is
		// capped (on-demand step > 0), whatever the on-demand job's arrival.
		odCapped := lc.OnDemand.Step > 0
		if h.m.ageFrom(admitted) >= threshold || (odCapped && admitted.OnDemand && now.UnixNano() >= threshold) {
			h.fatalf("starvation bound: %s (prio %d, enqueued at %v) waited past %v, yet %s (enqueued at %v) was admitted first at %v\n  waiting:  %s\n  admitted: %s",
				q.ID, q.Priority, time.Duration(h.m.ageFrom(q)-testT0.UnixNano()), time.Duration(threshold-testT0.UnixNano()),
				admitted.ID, time.Duration(h.m.ageFrom(admitted)-testT0.UnixNano()), now.Sub(testT0), h.describeJob(q, now), h.describeJob(admitted, now))
		}
	}
}

// checkDRFBalance is property 8: after a dispatch that filled the pool
// while every lane was backlogged with unit jobs, the lanes' weighted
// dominant shares are within one job's share of each other.
func (h *propHarness) checkDRFBalance() {
	capRes, capSlots := h.e.Capacity()
	d := 1 / float64(capSlots)
	d = math.Max(d, float64(h.unitJob.MilliCPU)/float64(capRes.MilliCPU))
	d = math.Max(d, float64(h.unitJob.MemoryMB)/float64(capRes.MemoryMB))
	minW := math.Inf(1)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, ls := range h.e.Lanes() {
		if ls.Queued == 0 {
			return // a lane ran dry: the property is about backlogged lanes
		}
		minW = math.Min(minW, ls.Weight)
		lo, hi = math.Min(lo, ls.DominantShare), math.Max(hi, ls.DominantShare)
	}
	if h.e.FreeSlots() != 0 {
		h.fatalf("DRF: %d free slots after Dispatch with every lane backlogged", h.e.FreeSlots())
	}
	if hi-lo > d/minW+1e-9 {
		h.fatalf("DRF: weighted dominant shares %v spread %.4f > one job's share %.4f / min weight %.0f\n%s",
			h.e.Lanes(), hi-lo, d, minW, h.describeLanes(h.now()))
	}
}

// syncEstimates follows the engine's eviction of cost estimates, which
// the engine documents as possibly late ("only delays an eviction, never
// hastens it"): an estimate may go once unused for EstimateTTL, and must be
// gone once unused for twice that.
func (h *propHarness) syncEstimates(now time.Time) {
	ttl := h.m.cfg.Cost.EstimateTTL
	for id, est := range h.m.est {
		_, ok := h.e.Estimate(id.typ, id.key)
		idle := now.Sub(est.lastUsed)
		switch {
		case !ok && idle < ttl:
			h.fatalf("estimate (%s, %s) evicted after %v unused, before EstimateTTL %v", id.typ, id.key, idle, ttl)
		case !ok:
			delete(h.m.est, id)
		case idle >= 2*ttl:
			h.fatalf("estimate (%s, %s) still kept after %v unused (EstimateTTL %v)", id.typ, id.key, idle, ttl)
		}
	}
}

// ---------- Explain ----------

// checkExplainAll is property 9, for every job the engine holds.
func (h *propHarness) checkExplainAll() {
	now := h.now()
	ids := h.heldIDs()
	h.logf("// Explain every job at(%d)", h.sec)
	if len(ids) == 0 {
		return
	}
	h.m.advance(now)
	h.lastAdvance = now
	// Explain advances time like a decision; do it once so that the state
	// snapshots below see the promoted jobs.
	if _, err := h.e.Explain(ids[0], now); err != nil {
		h.fatalf("Explain(%s): %v", ids[0], err)
	}
	h.syncEstimates(now)
	firstLane := ""
	for _, l := range h.m.laneOrder() {
		if len(h.m.admissible(l, now)) > 0 {
			firstLane = l
			break
		}
	}
	pick, pickOK := h.m.pick(now)
	res := h.m.plan(now)
	reserved := map[*refJob]bool{}
	for _, r := range res {
		reserved[r.job] = true
	}
	bestQueuedPos, bestQueued := 0, ""
	// Nothing changes in the model while explaining; in the engine, only an
	// Explain that reaches the lane check (queued or lane_over_share) looks
	// at other lanes and may park their conflicting heads.
	score, blocks := map[*refJob]int64{}, map[*refJob][]refBlock{}
	byLane := map[string][]*refJob{}
	counts := h.m.counts()
	for _, id := range ids {
		j := h.m.jobs[id]
		score[j], blocks[j] = h.m.fullScore(j, now), h.m.blocksWith(j, counts)
		byLane[j.Lane] = append(byLane[j.Lane], j)
	}
	states := map[string]string{}
	snapshot := func() {
		for _, x := range h.m.jobs {
			st, ok := h.e.Job(x.ID)
			if !ok {
				h.fatalf("Job(%s) unknown", x.ID)
			}
			states[x.ID] = st.State
		}
	}
	snapshot()
	ahead := func(a, b *refJob) bool {
		if score[a] != score[b] {
			return score[a] > score[b]
		}
		return h.m.ahead(a, b, now)
	}
	dirty := false
	for _, id := range ids {
		j := h.m.jobs[id]
		if dirty {
			snapshot()
			dirty = false
		}
		x, err := h.e.Explain(id, now)
		if err != nil {
			h.fatalf("Explain(%s): %v", id, err)
		}
		dirty = x.Code == CodeQueued || x.Code == CodeLaneOverShare
		bad := func(format string, args ...any) {
			h.fatalf("Explain(%s) = %+v: %s\n  job: %s\n%s%s", id, x, fmt.Sprintf(format, args...), h.describeJob(j, now), h.describeLanes(now), h.describePlan(now))
		}
		if r, err := h.e.Reason(id, now); err != nil || r != x.Code {
			bad("Reason = %s, %v; want Explain's code", r, err)
		}
		if x.Lane != j.Lane {
			bad("lane %q, want %q", x.Lane, j.Lane)
		}
		switch {
		case j.running:
			if x.Code != CodeRunning {
				bad("want code running")
			}
			continue
		case j.waiting > 0:
			want := ""
			for _, d := range j.DependsOn {
				if !contains(j.resolved, d.JobID) {
					want = d.JobID
					break
				}
			}
			if x.Code != CodeWaitingDependency || x.Blocker != want {
				bad("want waiting_dependency on %s", want)
			}
			continue
		case j.RunAt.After(now):
			if x.Code != CodeNotYetDue || !x.RunAt.Equal(j.RunAt) {
				bad("want not_yet_due until %v", j.RunAt.Sub(testT0))
			}
			continue
		}
		bs := blocks[j]
		switch states[id] {
		case "conflict":
			var holder string
			for _, b := range bs {
				if b.code == CodeConflict {
					holder = b.holder
				}
			}
			if holder == "" {
				bad("engine parks the job on a conflict the reference does not see (blocks %v)", bs)
			}
			if x.Code != CodeConflict || x.Blocker != holder || x.Position != 0 {
				bad("want conflict with holder %s, position 0", holder)
			}
			continue
		case "queued":
		default:
			bad("engine state %q for a runnable job", states[id])
		}
		switch {
		case len(bs) > 0 && bs[0].code == CodeNoFreeSlot && reserved[j]:
			if x.Code != CodeReserved || x.Reservation == nil || x.Reservation.JobID != id {
				bad("want reserved (no free hole fits it, and the reference reserves for it)")
			}
		case len(bs) > 0:
			if x.Code != bs[0].code {
				bad("want %s (first failed check of %v)", bs[0].code, bs)
			}
			if bs[0].code == CodeConflict && x.Blocker != bs[0].holder {
				bad("conflict blocker %q, want %q", x.Blocker, bs[0].holder)
			}
		case !h.placeable(j, now, res):
			if x.Code != CodeBehindReservation || x.Reservation == nil {
				bad("want behind_reservation: every free hole it fits is reserved")
			}
		case j.Lane == firstLane:
			if x.Code != CodeQueued {
				bad("admissible in the DRF-first lane: want queued")
			}
		default:
			if x.Code != CodeLaneOverShare {
				bad("admissible, but lane %s goes first: want lane_over_share", firstLane)
			}
		}
		if x.Score != score[j] {
			bad("score %d, want %d", x.Score, score[j])
		}
		n := 0
		for _, o := range byLane[j.Lane] {
			if o != j && states[o.ID] == "queued" && !conflictBlocked(blocks[o]) && ahead(o, j) {
				n++
			}
		}
		if x.Position != n+1 {
			bad("position %d, want %d", x.Position, n+1)
		}
		if x.Queued != h.lanesQueued(j.Lane, states) {
			bad("queued %d, want %d", x.Queued, h.lanesQueued(j.Lane, states))
		}
		if x.Code == CodeQueued && (bestQueued == "" || x.Position < bestQueuedPos) {
			bestQueuedPos, bestQueued = x.Position, id
		}
	}
	if bestQueued != "" && h.kindSkipped(h.m.jobs[bestQueued], now, res) {
		return // a better job of its kind is behind a reservation: the kind waits this decision
	}
	switch {
	case pickOK && bestQueued != pick.job.ID:
		h.fatalf("Explain: the job Next would admit is %s, but the best-placed job explained as queued is %q", pick.job.ID, bestQueued)
	case !pickOK && bestQueued != "":
		h.fatalf("Explain: %s is explained as queued but nothing is admissible", bestQueued)
	}
}

// placeable reports whether the reference places j under reservations.
func (h *propHarness) placeable(j *refJob, now time.Time, res []refReservation) bool {
	w, _ := h.m.placeAround(j, now, res)
	return w != nil
}

// kindSkipped reports whether an admissible job of j's lane and kind that
// ranks above it cannot be placed under the reservations: a decision then
// passes over the whole kind (docs/scheduling.md).
func (h *propHarness) kindSkipped(j *refJob, now time.Time, res []refReservation) bool {
	for _, o := range h.m.admissible(j.Lane, now) {
		if o == j {
			return false
		}
		if h.m.kind(o) == h.m.kind(j) && !h.placeable(o, now, res) {
			return true
		}
	}
	return false
}

// conflictBlocked reports whether the reference blocks a job on a held
// conflict key (Explain does not count such a job as ahead of another).
func conflictBlocked(bs []refBlock) bool {
	for _, b := range bs {
		if b.code == CodeConflict {
			return true
		}
	}
	return false
}

func (h *propHarness) lanesQueued(lane string, states map[string]string) int {
	n := 0
	for _, x := range h.m.jobs {
		if x.Lane == lane && states[x.ID] == "queued" {
			n++
		}
	}
	return n
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// ---------- invariants after every step ----------

func (h *propHarness) checkInvariants() {
	now := h.now()
	total, running := h.e.Len()
	run := h.m.running()
	if total != len(h.m.jobs) || running != len(run) {
		h.fatalf("Len() = %d, %d; want %d, %d", total, running, len(h.m.jobs), len(run))
	}
	if got, want := h.e.FreeSlots(), h.m.freeSlots(); got != want {
		h.fatalf("FreeSlots() = %d, want %d", got, want)
	}
	// The engine's own view of what runs where, checked against the caps.
	perType, perTier, perTenant := map[string]int{}, map[string]int{}, map[string]int{}
	perWorker := map[string][]*refJob{}
	queuedIn := map[string]int{}
	conflict := map[[2]string]string{}
	for _, id := range h.heldIDs() {
		j := h.m.jobs[id]
		st, ok := h.e.Job(id)
		if !ok {
			h.fatalf("Job(%s) unknown to the engine", id)
		}
		if st.Priority != j.Priority || st.Lane != j.Lane {
			h.fatalf("Job(%s) = %+v, want priority %d lane %s", id, st, j.Priority, j.Lane)
		}
		switch {
		case j.running:
			if st.State != "running" || st.Worker != j.worker.ID || !st.AdmittedAt.Equal(j.admittedAt) || st.Cost != j.cost {
				h.fatalf("Job(%s) = %+v, want running on %s", id, st, j.worker.ID)
			}
		case j.waiting > 0:
			if st.State != "waiting" {
				h.fatalf("Job(%s).State = %s, want waiting (%d dependencies left)", id, st.State, j.waiting)
			}
		case j.RunAt.After(now):
			if st.State != "delayed" {
				h.fatalf("Job(%s).State = %s, want delayed until %v", id, st.State, j.RunAt.Sub(testT0))
			}
		case j.RunAt.After(j.readyAt) && j.RunAt.After(h.lastAdvance):
			// Due, but no decision has promoted it yet.
			if st.State != "delayed" {
				h.fatalf("Job(%s).State = %s, want delayed (RunAt %v, not promoted since %v)", id, st.State, j.RunAt.Sub(testT0), h.lastAdvance.Sub(testT0))
			}
		default:
			if st.State != "queued" && st.State != "conflict" {
				h.fatalf("Job(%s).State = %s for a runnable job (RunAt %v, last decision %v)", id, st.State, j.RunAt.Sub(testT0), h.lastAdvance.Sub(testT0))
			}
		}
		if st.State == "queued" {
			queuedIn[j.Lane]++
		}
		if st.State != "running" {
			continue
		}
		perType[j.Type]++
		if tr, ok := h.m.tierOf(j.Priority); ok {
			perTier[tr.Name]++
		}
		perTenant[j.Tenant]++
		perWorker[st.Worker] = append(perWorker[st.Worker], j)
		if g := h.m.cfg.Types[j.Type].ConflictGroup; g != "" {
			k := [2]string{g, j.Key}
			if other, ok := conflict[k]; ok {
				h.fatalf("conflict: %s and %s both run on %s/%s", other, id, g, j.Key)
			}
			conflict[k] = id
		}
	}
	for ty, n := range perType {
		if mc := h.m.cfg.Types[ty].MaxConcurrency; mc > 0 && n > mc {
			h.fatalf("type cap: %d %s jobs run, max %d", n, ty, mc)
		}
	}
	for _, tr := range h.m.cfg.Tiers {
		if tr.MaxRunning > 0 && perTier[tr.Name] > tr.MaxRunning {
			h.fatalf("tier cap: %d jobs of tier %s run, max %d", perTier[tr.Name], tr.Name, tr.MaxRunning)
		}
	}
	for tn, n := range perTenant {
		if mr := h.m.cfg.Tenants[tn].MaxRunning; mr > 0 && n > mr {
			h.fatalf("tenant cap: %d jobs of tenant %s run, max %d", n, tn, mr)
		}
	}
	for wid, js := range perWorker {
		w, ok := h.m.workers[wid]
		if !ok {
			continue // removed: its jobs keep running until finished
		}
		var use Resources
		for _, j := range js {
			use = use.Add(j.Resources)
			if !w.supports(j.Type, j.Labels) {
				h.fatalf("capacity: %s runs on %s, which does not support type %s labels %v", j.ID, wid, j.Type, j.Labels)
			}
		}
		if len(js) > w.Slots || !w.Resources.Covers(use) {
			h.fatalf("capacity: worker %s runs %d jobs using %+v, has %d slots and %+v", wid, len(js), use, w.Slots, w.Resources)
		}
	}
	// Lane statistics.
	for _, ls := range h.e.Lanes() {
		var use Resources
		run, pend := 0, 0
		for _, j := range h.m.jobs {
			if j.Lane != ls.Name {
				continue
			}
			if j.running {
				run++
				use = use.Add(j.Resources)
			} else {
				pend++
			}
		}
		if ls.Running != run || ls.Pending != pend || ls.Usage != use || ls.Queued != queuedIn[ls.Name] {
			h.fatalf("Lanes()[%s] = %+v; want running %d pending %d usage %+v queued %d", ls.Name, ls, run, pend, use, queuedIn[ls.Name])
		}
		if want := h.m.share(ls.Name); math.Abs(ls.DominantShare-want) > 1e-12 {
			h.fatalf("Lanes()[%s].DominantShare = %v, want %v", ls.Name, ls.DominantShare, want)
		}
	}
	// Cost accounting.
	for _, fk := range append(append([]string{}, h.tenants...), h.fks[1:]...) {
		want := 0.0
		if k, ok := h.m.keys[fk]; ok {
			want = k.cost
		}
		if got := h.e.AccumulatedCost(fk); math.Abs(got-want) > 1e-9 {
			h.fatalf("AccumulatedCost(%s) = %v, want %v", fk, got, want)
		}
		// AccumulatedCostAt answers as if idle keys had been evicted at now.
		if k, ok := h.m.keys[fk]; ok && k.held == 0 && now.Sub(k.idleSince) >= h.m.cfg.Cost.KeyTTL {
			want = 0
		}
		if got := h.e.AccumulatedCostAt(fk, now); math.Abs(got-want) > 1e-9 {
			h.fatalf("AccumulatedCostAt(%s, at(%d)) = %v, want %v", fk, h.sec, got, want)
		}
	}
	for _, ty := range h.types {
		for _, k := range h.keys {
			want, wantOK := 0.0, false
			if est, ok := h.m.est[refEstID{ty, k}]; ok {
				want, wantOK = est.value, true
			}
			got, ok := h.e.Estimate(ty, k)
			if ok != wantOK || math.Abs(got-want) > 1e-9 {
				h.fatalf("Estimate(%s, %s) = %v, %v; want %v, %v", ty, k, got, ok, want, wantOK)
			}
		}
	}
}

// ---------- drivers ----------

// runWorkload draws and runs a sequence of actions, checking invariants
// after each.
func (h *propHarness) runWorkload(steps int) {
	t := h.t
	for range steps {
		switch a := rapid.IntRange(0, 20).Draw(t, "action"); {
		case a <= 5:
			h.actSubmit()
		case a == 20:
			if h.sc != scenDRF && len(h.m.jobs) < 150 {
				h.actBurst()
			}
		case a <= 8:
			h.actDispatch(0)
		case a == 9:
			h.actDispatch(rapid.IntRange(1, 2).Draw(t, "max"))
		case a <= 12:
			h.actFinish()
		case a <= 14:
			h.actAdvance()
		case a == 15:
			h.actCancel()
		case a == 16:
			if rapid.Bool().Draw(t, "unadmit") {
				h.actUnadmit()
			} else {
				h.actReprioritize()
			}
		case a == 17:
			h.checkExplainAll()
		case a == 18:
			if h.sc == scenFull {
				switch rapid.IntRange(0, 6).Draw(t, "rare") {
				case 6:
					h.actRestore()
				case 0:
					h.actAddWorker()
				case 1:
					h.actRemoveWorker()
				case 2:
					h.actSetEstimate()
				case 3:
					h.actSetType()
				case 4:
					h.actAddTier()
				default:
					h.actSubmitInvalid()
				}
			} else {
				h.actSetEstimate()
			}
		default:
			h.actAdvance()
			h.actDispatch(0)
			h.checkExplainAll()
		}
		h.checkInvariants()
	}
	// A final full dispatch and explain of what is left.
	h.actDispatch(0)
	h.checkExplainAll()
	h.checkInvariants()
}

func TestPropertyRandomWorkload(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newPropHarness(t, scenFull)
		h.runWorkload(rapid.IntRange(1, 300).Draw(t, "steps"))
	})
}

func TestPropertySingleLaneOrdering(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newPropHarness(t, scenSingleLane)
		h.runWorkload(rapid.IntRange(1, 300).Draw(t, "steps"))
	})
}

func TestPropertyStarvationBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newPropHarness(t, scenStarvation)
		h.runWorkload(rapid.IntRange(1, 300).Draw(t, "steps"))
	})
}

func TestPropertyDRFBalance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newPropHarness(t, scenDRF)
		backlog := h.drfSlots + 1
		topUp := func() {
			for _, l := range h.lanes {
				for h.lanePending(l) < backlog {
					j := h.genJob()
					j.Lane = l
					h.logf("must(t, e.Submit(%s, at(%d)))", jobExpr(j), h.sec)
					if err := h.e.Submit(j, h.now()); err != nil {
						h.fatalf("Submit: %v", err)
					}
					h.m.submit(j, h.now())
				}
			}
		}
		topUp()
		h.actDispatch(0)
		h.checkInvariants()
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for range steps {
			for n := rapid.IntRange(1, h.drfSlots).Draw(t, "finishes"); n > 0; n-- {
				h.actFinish()
			}
			if rapid.Bool().Draw(t, "advance") {
				h.sec += rapid.IntRange(1, 30).Draw(t, "dt")
			}
			topUp()
			h.actDispatch(0)
			h.checkInvariants()
		}
	})
}

func (h *propHarness) lanePending(lane string) int {
	n := 0
	for _, j := range h.m.jobs {
		if j.Lane == lane && !j.running {
			n++
		}
	}
	return n
}
