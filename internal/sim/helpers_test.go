package sim

import (
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

// scenarioDir is the repository's scenarios folder, seen from this package.
const scenarioDir = "../../scenarios"

func loadFile(t testing.TB, name string) *Scenario {
	t.Helper()
	f, err := os.Open(filepath.Join(scenarioDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Load(f)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return s
}

func loadString(t testing.TB, doc string) *Scenario {
	t.Helper()
	s, err := Load(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("load: %v\n%s", err, doc)
	}
	return s
}

// run runs s recording every event and checks the invariants every run
// must keep.
func run(t testing.TB, s *Scenario) Result {
	t.Helper()
	res, err := Run(s, Options{Record: true})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkInvariants(t, s, res)
	return res
}

func sec(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// byID indexes the events of one kind by job ID.
func byID(evs []Event, k Kind) map[string]Event {
	out := map[string]Event{}
	for _, e := range evs {
		if e.Kind == k {
			out[e.ID] = e
		}
	}
	return out
}

func filter(evs []Event, keep func(Event) bool) []Event {
	var out []Event
	for _, e := range evs {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// interval is when a job held a slot: [start, end).
type interval struct {
	ev         Event // the admit event
	start, end time.Duration
}

// intervals pairs each admit with the done or cancel that ended it; jobs
// still running at the end run to infinity.
func intervals(evs []Event) []interval {
	open := map[string]int{}
	var out []interval
	for _, e := range evs {
		switch e.Kind {
		case Admit:
			open[e.ID] = len(out)
			out = append(out, interval{ev: e, start: e.At, end: 1<<63 - 1})
		case Done, Cancel, Snooze:
			if i, ok := open[e.ID]; ok {
				out[i].end = e.At
				delete(open, e.ID)
			}
		}
	}
	return out
}

func overlaps(a, b interval) bool { return a.start < b.end && b.start < a.end }

// checkInvariants replays the events against the scenario's configuration
// and fails on any broken rule: a job on a worker that does not support its
// type, a worker over its slots or resources, a type, tier or tenant over
// its cap, two jobs of one conflict group on one key at once, a job admitted
// before it arrived or in another lane than the simulator resolved at its
// arrival, a job running for another time than admission to done, and
// summary counts that disagree with the events.
func checkInvariants(t fataler, s *Scenario, res Result) {
	t.Helper()
	c, err := s.compile()
	if err != nil {
		t.Fatal(err)
	}
	rp := newReplay(c)
	for i, e := range res.Events {
		if msg := rp.apply(e); msg != "" {
			t.Fatalf("event %d (%s %s at %.3f): %s", i, e.Kind, e.ID, e.T(), msg)
		}
	}
	sum := res.Summary
	if sum.Jobs != rp.count[Arrive] || sum.Admitted != rp.count[Admit] || sum.Done != rp.count[Done] {
		t.Fatalf("summary jobs/admitted/done %d/%d/%d, events %d/%d/%d",
			sum.Jobs, sum.Admitted, sum.Done, rp.count[Arrive], rp.count[Admit], rp.count[Done])
	}
	if sum.Utilisation < 0 || sum.Utilisation > 1+1e-9 || sum.JainIndex < 0 || sum.JainIndex > 1+1e-9 {
		t.Fatalf("utilisation %v, jain %v out of [0,1]", sum.Utilisation, sum.JainIndex)
	}
}

// fataler is what checkInvariants needs of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// replay tracks what runs where while events are applied in order.
type replay struct {
	c        *compiled
	workers  map[string]policy.Worker
	slots    map[string]int
	used     map[string]policy.Resources
	types    map[string]int
	tiers    map[string]int
	tenants  map[string]int
	held     map[string]policy.Resources // per tenant, against its quota
	tat      map[[2]string]*big.Int      // per rate-limit bucket: GCRA's theoretical arrival time × rate
	now      time.Duration               // the last event's time
	holders  map[[2]string]string
	arrivals map[string]Event
	running  map[string]Event
	count    map[Kind]int
}

func newReplay(c *compiled) *replay {
	rp := &replay{
		c: c, workers: map[string]policy.Worker{}, slots: map[string]int{}, used: map[string]policy.Resources{},
		types: map[string]int{}, tiers: map[string]int{}, tenants: map[string]int{}, holders: map[[2]string]string{},
		held: map[string]policy.Resources{}, tat: map[[2]string]*big.Int{},
		arrivals: map[string]Event{}, running: map[string]Event{}, count: map[Kind]int{},
	}
	for _, w := range c.workers {
		rp.workers[w.ID] = w
	}
	return rp
}

func (rp *replay) apply(e Event) string {
	rp.count[e.Kind]++
	rp.now = e.At
	switch e.Kind {
	case Arrive:
		rp.arrivals[e.ID] = e
	case Admit:
		arr, ok := rp.arrivals[e.ID]
		switch {
		case !ok || arr.At > e.At:
			return "admitted before it arrived"
		case arr.Lane != e.Lane:
			return "arrived in lane " + arr.Lane + ", admitted by the engine in lane " + e.Lane
		}
		rp.running[e.ID] = e
		return rp.take(e, +1)
	case Done, Cancel, Preempt, Snooze:
		adm, ok := rp.running[e.ID]
		if !ok {
			return ""
		}
		delete(rp.running, e.ID)
		if e.Kind == Done && e.Ran != e.At-adm.At {
			return "ran for another time than admission to done"
		}
		return rp.take(adm, -1)
	}
	return ""
}

// take adds (d=+1) or removes (d=-1) a running job and checks every cap.
func (rp *replay) take(e Event, d int) string {
	w, ok := rp.workers[e.Worker]
	if !ok {
		return "unknown worker " + e.Worker
	}
	if d > 0 && len(w.Types) > 0 && !contains(w.Types, e.Type) {
		return "worker " + w.ID + " does not support type " + e.Type
	}
	rp.slots[w.ID] += d
	used := rp.used[w.ID]
	if d > 0 {
		used = used.Add(e.Resources)
	} else {
		used = used.Sub(e.Resources)
	}
	rp.used[w.ID] = used
	if rp.slots[w.ID] > w.Slots || !w.Resources.Covers(used) {
		return "worker " + w.ID + " over its slots or resources"
	}
	return rp.caps(e, d)
}

func (rp *replay) caps(e Event, d int) string {
	tc := rp.c.cfg.Types[e.Type]
	rp.types[e.Type] += d
	if tc.MaxConcurrency > 0 && rp.types[e.Type] > tc.MaxConcurrency {
		return "type " + e.Type + " over max_concurrency"
	}
	for _, tr := range rp.c.cfg.Tiers {
		if e.Priority >= tr.MinPriority && e.Priority <= tr.MaxPriority {
			rp.tiers[tr.Name] += d
			if tr.MaxRunning > 0 && rp.tiers[tr.Name] > tr.MaxRunning {
				return "tier " + tr.Name + " over max_running"
			}
		}
	}
	rp.tenants[e.Tenant] += d
	if m := rp.c.cfg.Tenants[e.Tenant].MaxRunning; m > 0 && rp.tenants[e.Tenant] > m {
		return "tenant " + e.Tenant + " over max_running"
	}
	if msg := rp.quota(e, d); msg != "" {
		return msg
	}
	if d > 0 {
		if msg := rp.rate(e); msg != "" {
			return msg
		}
	}
	return rp.conflict(e, tc.ConflictGroup, d)
}

// quota checks the tenant's running jobs against its quota.
func (rp *replay) quota(e Event, d int) string {
	h := rp.held[e.Tenant]
	if d > 0 {
		h = h.Add(e.Resources)
	} else {
		h = h.Sub(e.Resources)
	}
	rp.held[e.Tenant] = h
	q := rp.c.cfg.Tenants[e.Tenant].Quota
	for _, f := range []struct {
		lim  *int64
		used int64
	}{{q.MilliCPU, h.MilliCPU}, {q.MemoryMB, h.MemoryMB}, {q.GPU, h.GPU}} {
		if d > 0 && f.lim != nil && f.used > *f.lim {
			return "tenant " + e.Tenant + " over its quota"
		}
	}
	return ""
}

// rate checks a start against every rate limit it matches with the
// generic cell rate algorithm, an independent form of the token bucket: a
// start at t conforms iff TAT − t ≤ (burst − 1)·per/rate, then TAT =
// max(TAT, t) + per/rate; scaled by rate to stay in integers. Limits by
// label are not replayed (events carry no labels).
func (rp *replay) rate(e Event) string {
	return rp.gcra(e, e.At, true)
}

// conforms reports whether a start of e would conform to every rate limit
// now, without taking it.
func (rp *replay) conforms(e Event) bool { return rp.gcra(e, rp.now, false) == "" }

func (rp *replay) gcra(e Event, at time.Duration, take bool) string {
	for _, r := range rp.c.cfg.RateLimits {
		if (r.Type != "" && r.Type != e.Type) || (r.Lane != "" && r.Lane != e.Lane) {
			continue
		}
		var v string
		switch r.By {
		case "":
		case "type":
			v = e.Type
		case "lane":
			v = e.Lane
		case "tenant":
			v = e.Tenant
		case "key":
			v = e.Key
		default:
			continue
		}
		k := [2]string{r.Name, v}
		now := new(big.Int).Mul(big.NewInt(int64(at)), big.NewInt(r.Rate))
		tat := rp.tat[k]
		if tat == nil || tat.Cmp(now) < 0 {
			tat = new(big.Int).Set(now)
		}
		slack := new(big.Int).Mul(big.NewInt(r.Burst-1), big.NewInt(int64(r.Per)))
		if new(big.Int).Sub(tat, now).Cmp(slack) > 0 {
			return "rate limit " + r.Name + " exceeded for " + v
		}
		if take {
			rp.tat[k] = new(big.Int).Add(tat, big.NewInt(int64(r.Per)))
		}
	}
	return ""
}

func (rp *replay) conflict(e Event, group string, d int) string {
	if group == "" {
		return ""
	}
	k := [2]string{group, e.Key}
	if d < 0 {
		delete(rp.holders, k)
		return ""
	}
	if h, held := rp.holders[k]; held {
		return "conflicts with running " + h
	}
	rp.holders[k] = e.ID
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
