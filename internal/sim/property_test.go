package sim

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/policy"
)

// genScenario draws a small scenario that uses most of the engine: typed
// and labelled workers with resources, tiers, type and tenant caps, a
// conflict group, run_at, cancels and reprioritizations.
func genScenario(t *rapid.T) *Scenario {
	types := []string{"a", "b", "c"}
	s := &Scenario{
		Types:   map[string]TypeSpec{},
		Tenants: map[string]TenantSpec{"t0": {MaxRunning: rapid.IntRange(0, 3).Draw(t, "tenantCap")}},
		Tiers:   map[string]TierSpec{"600-1000": {MaxRunning: rapid.IntRange(0, 4).Draw(t, "tierCap")}},
	}
	for _, name := range types {
		s.Types[name] = TypeSpec{
			MaxConcurrency: rapid.IntRange(0, 3).Draw(t, "cap-"+name),
			ConflictGroup:  rapid.SampledFrom([]string{"", "git"}).Draw(t, "group-"+name),
		}
	}
	nw := rapid.IntRange(1, 4).Draw(t, "workers")
	for i := range nw {
		slots := rapid.IntRange(1, 3).Draw(t, "slots")
		w := WorkerSpec{Name: fmt.Sprintf("w%d", i), Slots: &slots, CPU: float64(rapid.IntRange(0, 4).Draw(t, "cpu"))}
		if rapid.Bool().Draw(t, "typed") {
			w.Types = rapid.SliceOfNDistinct(rapid.SampledFrom(types), 1, 3, rapid.ID[string]).Draw(t, "types")
		}
		if rapid.Bool().Draw(t, "labelled") {
			w.Labels = []string{"ssd"}
		}
		s.Workers = append(s.Workers, w)
	}
	nj := rapid.IntRange(1, 25).Draw(t, "jobs")
	for i := range nj {
		s.Jobs = append(s.Jobs, genJob(t, i, types))
	}
	if off := rapid.Bool().Draw(t, "backfillOff"); off {
		s.Lanes = map[string]LaneSpec{"default": {Backfill: &config.Backfill{Off: &off}}}
	}
	genLimits(t, s, types)
	return s
}

// genLimits draws, half the time, rate limits on starts and a CPU quota
// for tenant t0.
func genLimits(t *rapid.T, s *Scenario, types []string) {
	if !rapid.Bool().Draw(t, "limits") {
		return
	}
	for i := range rapid.IntRange(1, 2).Draw(t, "rateLimits") {
		burst := int64(rapid.IntRange(1, 2).Draw(t, "burst"))
		r := RateLimitSpec{
			Name: fmt.Sprintf("r%d", i), Rate: int64(rapid.IntRange(1, 2).Draw(t, "rate")),
			Per:   config.Duration(time.Duration(rapid.IntRange(2, 10).Draw(t, "per")) * time.Second),
			Burst: &burst, By: rapid.SampledFrom([]string{"", "type", "tenant", "key"}).Draw(t, "by"),
		}
		if rapid.Bool().Draw(t, "matchType") {
			r.Match.Type = rapid.SampledFrom(types).Draw(t, "limitType")
		}
		s.RateLimits = append(s.RateLimits, r)
	}
	if rapid.Bool().Draw(t, "quota") {
		cpu := float64(rapid.IntRange(0, 3).Draw(t, "quotaCPU"))
		t0 := s.Tenants["t0"]
		t0.Quota = &QuotaSpec{CPU: &cpu}
		s.Tenants["t0"] = t0
	}
}

// backfillOff reports whether the scenario's lanes reserve nothing.
func backfillOff(s *Scenario) bool {
	l, ok := s.Lanes["default"]
	return ok && l.Backfill != nil && l.Backfill.Off != nil && *l.Backfill.Off
}

func genJob(t *rapid.T, i int, types []string) JobSpec {
	at := float64(rapid.IntRange(0, 10).Draw(t, "at"))
	prio := rapid.SampledFrom([]int{100, 500, 900}).Draw(t, "prio")
	j := JobSpec{
		ID: fmt.Sprintf("j%d", i), At: at, Type: rapid.SampledFrom(types).Draw(t, "type"),
		Key:         rapid.SampledFrom([]string{"r1", "r2", "r3"}).Draw(t, "key"),
		FairnessKey: rapid.SampledFrom([]string{"", "u1", "u2"}).Draw(t, "fk"),
		Tenant:      rapid.SampledFrom([]string{"t0", "t1"}).Draw(t, "tenant"),
		Priority:    &prio, OnDemand: rapid.Bool().Draw(t, "od"),
		Duration: float64(rapid.IntRange(0, 6).Draw(t, "dur")),
	}
	if cpu := rapid.IntRange(0, 2).Draw(t, "jobcpu"); cpu > 0 {
		j.Resources = &ResourceSpec{CPU: float64(cpu)}
	}
	if rapid.IntRange(0, 4).Draw(t, "label") == 0 {
		j.Labels = []string{"ssd"}
	}
	if rapid.IntRange(0, 4).Draw(t, "runat") == 0 {
		r := at + float64(rapid.IntRange(1, 5).Draw(t, "delay"))
		j.RunAt = &r
	}
	if rapid.IntRange(0, 5).Draw(t, "cancel") == 0 {
		c := at + float64(rapid.IntRange(0, 8).Draw(t, "cancelAfter"))
		j.CancelAt = &c
	}
	if rapid.IntRange(0, 5).Draw(t, "reprio") == 0 {
		j.Reprioritize = &ReprioritizeSpec{At: at + 1, Priority: rapid.SampledFrom([]int{100, 900}).Draw(t, "newPrio")}
	}
	return j
}

// TestPropertyInvariantsAndWorkConserving checks, on random scenarios, the
// replayed rules of checkInvariants and, with reservations off, that the
// engine leaves no capacity idle that a ready pending job could use: after
// every instant, each such job is blocked by a cap, a conflict or the lack
// of a fitting free worker. With reservations on, capacity reserved for a
// job that fits no free hole stays idle by design (docs/scheduling.md);
// the policy package's reference model checks those decisions one by one.
func TestPropertyInvariantsAndWorkConserving(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := genScenario(rt)
		if _, err := s.compile(); err != nil {
			rt.Fatalf("generated scenario invalid: %v", err)
		}
		res, err := Run(s, Options{Record: true})
		if err != nil {
			rt.Fatalf("run: %v", err)
		}
		checkInvariants(rt, s, res)
		if backfillOff(s) {
			checkWorkConserving(rt, s, res.Events)
		}
	})
}

func checkWorkConserving(t *rapid.T, s *Scenario, evs []Event) {
	c, _ := s.compile()
	specs := map[string]JobSpec{}
	for _, j := range s.Jobs {
		specs[j.ID] = j
	}
	rp := newReplay(c)
	pending := map[string]Event{}
	for i := 0; i < len(evs); {
		at := evs[i].At
		for ; i < len(evs) && evs[i].At == at; i++ {
			e := evs[i]
			rp.apply(e)
			switch e.Kind {
			case Arrive, Reprioritize:
				pending[e.ID] = e
			case Admit, Cancel, Drop:
				delete(pending, e.ID)
			}
		}
		for id, e := range pending {
			if js := specs[id]; js.RunAt != nil && sec(*js.RunAt) > at {
				continue // not ready yet
			}
			if w := rp.admissible(e, specs[id].Labels); w != "" {
				t.Fatalf("t=%v: %s (type %s key %s prio %d tenant %s cpu %d) waits while it fits on %s",
					at, id, e.Type, e.Key, e.Priority, e.Tenant, e.Resources.MilliCPU, w)
			}
		}
	}
}

// admissible returns a free worker the job could start on now, or "" when
// a cap, a conflict or the lack of such a worker blocks it.
func (rp *replay) admissible(e Event, labels []string) string {
	tc := rp.c.cfg.Types[e.Type]
	if tc.MaxConcurrency > 0 && rp.types[e.Type] >= tc.MaxConcurrency {
		return ""
	}
	for _, tr := range rp.c.cfg.Tiers {
		if e.Priority >= tr.MinPriority && e.Priority <= tr.MaxPriority && tr.MaxRunning > 0 && rp.tiers[tr.Name] >= tr.MaxRunning {
			return ""
		}
	}
	if m := rp.c.cfg.Tenants[e.Tenant].MaxRunning; m > 0 && rp.tenants[e.Tenant] >= m {
		return ""
	}
	if _, held := rp.holders[[2]string{tc.ConflictGroup, e.Key}]; tc.ConflictGroup != "" && held {
		return ""
	}
	if q := rp.c.cfg.Tenants[e.Tenant].Quota; q.MilliCPU != nil && rp.held[e.Tenant].MilliCPU+e.Resources.MilliCPU > *q.MilliCPU {
		return ""
	}
	if !rp.conforms(e) {
		return ""
	}
	for _, w := range rp.c.workers {
		if rp.fits(w, e, labels) {
			return w.ID
		}
	}
	return ""
}

func (rp *replay) fits(w policy.Worker, e Event, labels []string) bool {
	if len(w.Types) > 0 && !contains(w.Types, e.Type) {
		return false
	}
	for _, l := range labels {
		if !contains(w.Labels, l) {
			return false
		}
	}
	free := w.Resources.Sub(rp.used[w.ID])
	return rp.slots[w.ID] < w.Slots && free.Covers(e.Resources)
}
