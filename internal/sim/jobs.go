package sim

import (
	"fmt"
	"math"
	"strconv"

	"github.com/fairwayhq/fairway/internal/policy"
)

// maxCount bounds one entry's copies.
const maxCount = 1 << 30

// jobGen produces the copies of one jobs[] entry, lazily: copy i arrives at
// at + i·every. Times are nanoseconds from the start of the simulation.
type jobGen struct {
	index    int
	typ      string
	id       template // zero: the default ID
	key      template
	fk       template
	tenant   template
	deps     []template
	lane     string
	prio     int
	prioDef  bool
	onDemand bool
	keep     bool // not preemptible
	res      policy.Resources
	labels   []string
	cost     float64
	hasCost  bool

	at, every, dur int64
	count          int

	runAt, cancelAt, reprioAt int64 // absolute for copy 0
	hasRunAt, hasCancel       bool
	hasReprio                 bool
	reprioPrio                int

	snoozes     int   // runs that end snoozed
	snoozeDelay int64 // how long each snooze blocks the job
}

// laneSet is the lanes a job may name: the scenario's, else the default.
func (c *compiled) laneSet() map[string]bool {
	lanes := map[string]bool{}
	for name := range c.cfg.Lanes {
		lanes[name] = true
	}
	if len(lanes) == 0 {
		lanes[policy.DefaultLane] = true
	}
	return lanes
}

func (c *compiled) compileJobs(s *Scenario) error {
	lanes := c.laneSet()
	for i, js := range s.Jobs {
		g, err := compileJob(fmt.Sprintf("jobs[%d]", i), i, js, s.Types, lanes)
		if err != nil {
			return err
		}
		c.hasDeps = c.hasDeps || len(g.deps) > 0
		c.gens = append(c.gens, g)
	}
	return nil
}

func compileJob(field string, index int, js JobSpec, types map[string]TypeSpec, lanes map[string]bool) (*jobGen, error) {
	g := &jobGen{index: index, typ: js.Type, lane: js.Lane, onDemand: js.OnDemand, labels: js.Labels,
		keep: js.Preemptible != nil && !*js.Preemptible}
	if js.Type == "" {
		return nil, fieldErr(field+".type", "required")
	}
	if _, ok := types[js.Type]; !ok {
		return nil, fieldErr(field+".type", "unknown type %q (declare it under types)", js.Type)
	}
	if err := checkJobLane(field, js, types, lanes); err != nil {
		return nil, err
	}
	steps := []func(string, JobSpec, *jobGen) error{
		compileTimes, compileCount, compileTemplates, compilePriority, compileJobCost, compileLifecycle,
	}
	for _, step := range steps {
		if err := step(field, js, g); err != nil {
			return nil, err
		}
	}
	var err error
	g.res, err = compileResources(field+".resources", js.Resources)
	return g, err
}

// checkJobLane rejects a job whose lane (its own, else its type's, else
// the default lane) does not exist.
func checkJobLane(field string, js JobSpec, types map[string]TypeSpec, lanes map[string]bool) error {
	switch {
	case js.Lane != "" && !lanes[js.Lane]:
		return fieldErr(field+".lane", "unknown lane %q", js.Lane)
	case js.Lane == "" && types[js.Type].Lane == "" && !lanes[policy.DefaultLane]:
		return fieldErr(field+".lane", "required: neither the job nor type %q names a lane, and there is no lane %q",
			js.Type, policy.DefaultLane)
	}
	return nil
}

func compileTimes(field string, js JobSpec, g *jobGen) error {
	var err error
	if g.at, err = nanos(field+".at", js.At); err != nil {
		return err
	}
	if g.dur, err = nanos(field+".duration", js.Duration); err != nil {
		return err
	}
	g.every, err = nanos(field+".every", js.Every)
	return err
}

func compileCount(field string, js JobSpec, g *jobGen) error {
	g.count = 1
	if js.Count != nil {
		g.count = *js.Count
	}
	if g.count < 1 || g.count > maxCount {
		return fieldErr(field+".count", "must be in [1, %d]", maxCount)
	}
	if last := float64(g.at) + float64(g.count-1)*float64(g.every); last > maxSeconds*1e9 {
		return fieldErr(field+".every", "last copy would arrive after %g s", float64(maxSeconds))
	}
	return nil
}

func compileTemplates(field string, js JobSpec, g *jobGen) error {
	parse := func(name, s string, dst *template) error {
		t, err := parseTemplate(s)
		if err != nil {
			return fieldErr(field+"."+name, "%v", err)
		}
		*dst = t
		return nil
	}
	id := js.ID
	if id != "" && g.count > 1 && !containsPlaceholder(id) {
		id += ".{i}"
	}
	if err := parse("id", id, &g.id); err != nil {
		return err
	}
	if err := parse("key", js.Key, &g.key); err != nil {
		return err
	}
	if err := parse("fairness_key", js.FairnessKey, &g.fk); err != nil {
		return err
	}
	if err := parse("tenant", js.Tenant, &g.tenant); err != nil {
		return err
	}
	return compileDeps(field, js.DependsOn, g)
}

func compileDeps(field string, deps []string, g *jobGen) error {
	for k, d := range deps {
		f := fmt.Sprintf("%s.depends_on[%d]", field, k)
		if d == "" {
			return fieldErr(f, "empty job id")
		}
		t, err := parseTemplate(d)
		if err != nil {
			return fieldErr(f, "%v", err)
		}
		g.deps = append(g.deps, t)
	}
	return nil
}

func compilePriority(field string, js JobSpec, g *jobGen) error {
	if js.Priority == nil {
		g.prioDef = true
		return nil
	}
	if err := checkPriority(*js.Priority); err != nil {
		return fieldErr(field+".priority", "%v", err)
	}
	g.prio = *js.Priority
	return nil
}

func compileJobCost(field string, js JobSpec, g *jobGen) error {
	if js.Cost == nil {
		return nil
	}
	if c := *js.Cost; math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
		return fieldErr(field+".cost", "must be a finite number >= 0")
	}
	g.cost, g.hasCost = *js.Cost, true
	return nil
}

// compileLifecycle reads run_at, cancel_at and reprioritize.
func compileLifecycle(field string, js JobSpec, g *jobGen) error {
	var err error
	if js.RunAt != nil {
		if g.runAt, err = nanos(field+".run_at", *js.RunAt); err != nil {
			return err
		}
		g.hasRunAt = true
	}
	if js.CancelAt != nil {
		if g.cancelAt, err = nanos(field+".cancel_at", *js.CancelAt); err != nil {
			return err
		}
		if g.cancelAt < g.at {
			return fieldErr(field+".cancel_at", "must be >= at")
		}
		g.hasCancel = true
	}
	if r := js.Reprioritize; r != nil {
		if g.reprioAt, err = nanos(field+".reprioritize.at", r.At); err != nil {
			return err
		}
		if g.reprioAt < g.at {
			return fieldErr(field+".reprioritize.at", "must be >= at")
		}
		if err := checkPriority(r.Priority); err != nil {
			return fieldErr(field+".reprioritize.priority", "%v", err)
		}
		g.hasReprio, g.reprioPrio = true, r.Priority
	}
	if sn := js.Snooze; sn != nil {
		if sn.Times < 1 || sn.Times > 10000 {
			return fieldErr(field+".snooze.times", "must be between 1 and 10000, got %d", sn.Times)
		}
		if g.snoozeDelay, err = nanos(field+".snooze.delay", sn.Delay); err != nil {
			return err
		}
		if g.snoozeDelay <= 0 || sn.Delay > 30*24*3600 {
			return fieldErr(field+".snooze.delay", "must be > 0 and at most 30 days (2592000 s), got %v", sn.Delay)
		}
		g.snoozes = sn.Times
	}
	return nil
}

// arrival is copy i's arrival time.
func (g *jobGen) arrival(i int) int64 { return g.at + int64(i)*g.every }

// jobID is copy i's ID: the id template, or <type>-<key>-<entry>[.<i>].
func (g *jobGen) jobID(i int, key string) string {
	if len(g.id.parts) > 0 {
		return g.id.render(i)
	}
	buf := make([]byte, 0, len(g.typ)+len(key)+16)
	buf = append(buf, g.typ...)
	buf = append(buf, '-')
	if key != "" {
		buf = append(buf, key...)
		buf = append(buf, '-')
	}
	buf = strconv.AppendInt(buf, int64(g.index), 10)
	if g.count > 1 {
		buf = append(buf, '.')
		buf = strconv.AppendInt(buf, int64(i), 10)
	}
	return string(buf)
}
