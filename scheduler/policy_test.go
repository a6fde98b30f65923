package scheduler

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	typeClone  JobType       = "sync-clone"
	typeRepack JobType       = "repack"
	typePull   JobType       = "pull"
	typeSnap   JobType       = "snapshot"
	groupGit   ConflictGroup = "git"
)

// Seed 001, scenario 1: background saturates its tier, foreground arrives
// and starts at once because the background tier is capped below the pool.
func TestForegroundAdmittedWhileBackgroundSaturated(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 12}, map[JobType]JobTypeConfig{
		typeRepack: {DefaultCost: 20, MaxConcurrency: 20, ConflictGroup: groupGit, Priority: PriorityBackground},
		typeClone:  {DefaultCost: 10, MaxConcurrency: 50, ConflictGroup: groupGit, Priority: PriorityForeground},
	})
	started := make(chan struct{}, 20)
	release := make(chan struct{})
	for i := range 20 {
		if err := s.SubmitErr(typeRepack, fmt.Sprintf("repo%d", i), blocker(started, release)); err != nil {
			t.Fatal(err)
		}
	}
	waitStats(t, s, 10, 10) // tier cap 10 binds; 2 slots stay free
	for range 10 {
		recv(t, started, "background start")
	}

	ran := false
	err := s.RunSync(guardCtx(t), typeClone, "github.com/torvalds/linux", "10.0.0.1", func(context.Context) error {
		ran = true
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("foreground RunSync = %v, ran %v; want it to run while background is saturated", err, ran)
	}
	select {
	case <-started:
		t.Fatal("an 11th background job started: tier cap exceeded")
	default:
	}
	if st := s.Stats(); st.Running != 10 || st.Pending != 10 {
		t.Fatalf("after foreground: stats %+v, want 10 running and 10 pending background jobs", st)
	}
	close(release)
	if err := s.Shutdown(guardCtx(t)); err != nil {
		t.Fatal(err)
	}
}

// capProbe instruments fns with gauges for the global, per-type and
// per-tier concurrency levels.
type capProbe struct {
	global gauge
	types  map[JobType]*gauge
	tiers  map[Priority]*gauge
	cfg    map[JobType]JobTypeConfig
}

func newCapProbe(cfg map[JobType]JobTypeConfig) *capProbe {
	p := &capProbe{types: map[JobType]*gauge{}, tiers: map[Priority]*gauge{}, cfg: cfg}
	for name, c := range cfg {
		p.types[name] = &gauge{}
		if p.tiers[c.Priority] == nil {
			p.tiers[c.Priority] = &gauge{}
		}
	}
	return p
}

func (p *capProbe) fn(typ JobType, spins int) func(context.Context) error {
	return func(context.Context) error {
		gs := []*gauge{&p.global, p.types[typ], p.tiers[p.cfg[typ].Priority]}
		for _, g := range gs {
			g.inc()
		}
		for range spins {
			runtime.Gosched()
		}
		for _, g := range gs {
			g.dec()
		}
		return nil
	}
}

func (p *capProbe) check(t *testing.T, global int) {
	t.Helper()
	if m := p.global.max.Load(); m > int64(global) || m < 1 {
		t.Errorf("global max running %d, want 1..%d", m, global)
	}
	for name, g := range p.types {
		if c := p.cfg[name].MaxConcurrency; c > 0 && g.max.Load() > int64(c) {
			t.Errorf("type %s max running %d, cap %d", name, g.max.Load(), c)
		}
	}
	for prio, g := range p.tiers {
		if g.max.Load() > int64(prio) {
			t.Errorf("tier %d max running %d", prio, g.max.Load())
		}
	}
}

func capTypes() map[JobType]JobTypeConfig {
	return map[JobType]JobTypeConfig{
		"a": {MaxConcurrency: 3, Priority: 4},
		"b": {Priority: 4},
		"c": {MaxConcurrency: 1, Priority: 2},
		"d": {Priority: 2},
	}
}

// Global, type and tier caps hold under a churn of short jobs.
func TestCapsNeverExceeded(t *testing.T) {
	cfg := capTypes()
	s := newTest(t, Options{MaxConcurrency: 5}, cfg)
	p := newCapProbe(cfg)
	names := []JobType{"a", "b", "c", "d"}
	for i := range 400 {
		typ := names[(i*7)%len(names)]
		if err := s.SubmitErr(typ, fmt.Sprintf("k%d", i%13), p.fn(typ, i%5)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Shutdown(guardCtx(t)); err != nil {
		t.Fatal(err)
	}
	p.check(t, 5)
}

// With every job blocking, the caps are filled exactly: tier 4 (cap 4, of
// which type a at most 3), then the last global slot to tier 2. Tier 4 jobs
// are submitted first, so whenever a tier 2 job is pending, every tier 4 job
// is too and goes first, however submissions and dispatch passes interleave.
func TestCapsFilledExactly(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 5}, capTypes())
	started := make(chan struct{}, 40)
	release := make(chan struct{})
	for _, typ := range []JobType{"a", "b", "c", "d"} {
		for i := range 10 {
			if err := s.SubmitErr(typ, fmt.Sprint(i), blocker(started, release)); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitStats(t, s, 35, 5)
	st := s.Stats()
	a, b, c, d := st.ByType["a"].Running, st.ByType["b"].Running, st.ByType["c"].Running, st.ByType["d"].Running
	if a+b != 4 || a > 3 || c+d != 1 {
		t.Fatalf("running a=%d b=%d c=%d d=%d; want a+b=4 (a<=3), c+d=1", a, b, c, d)
	}
	close(release)
	if err := s.Shutdown(guardCtx(t)); err != nil {
		t.Fatal(err)
	}
}

func conflictTypes() map[JobType]JobTypeConfig {
	return map[JobType]JobTypeConfig{
		typeRepack: {DefaultCost: 20, MaxConcurrency: 5, ConflictGroup: groupGit, Priority: PriorityBackground},
		typePull:   {DefaultCost: 10, MaxConcurrency: 5, ConflictGroup: groupGit, Priority: PriorityBackground},
		typeSnap:   {DefaultCost: 5, MaxConcurrency: 5, Priority: PriorityBackground},
	}
}

// A job of the git group waits while another git job holds its repository;
// other repositories, and types outside the group, run alongside.
func TestConflictGroup(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 8}, conflictTypes())
	repackStarted, releaseRepack := make(chan struct{}, 1), make(chan struct{})
	if err := s.SubmitErr(typeRepack, "r1", blocker(repackStarted, releaseRepack)); err != nil {
		t.Fatal(err)
	}
	recv(t, repackStarted, "repack r1 start")

	var pullR1Ran atomic.Bool
	pullR1 := runSyncAsync(guardCtx(t), s, typePull, "r1", "", func(context.Context) error {
		pullR1Ran.Store(true)
		return nil
	})
	waitStats(t, s, 1, 1)
	// Submitted after pull r1, these only run on a dispatch pass that has
	// seen pull r1: if they run while it waits, the conflict held it.
	for _, j := range []struct {
		typ JobType
		key string
	}{{typePull, "r2"}, {typeSnap, "r1"}} {
		if err := s.RunSync(guardCtx(t), j.typ, j.key, "", func(context.Context) error { return nil }); err != nil {
			t.Fatalf("%s %s: %v", j.typ, j.key, err)
		}
	}
	if pullR1Ran.Load() {
		t.Fatal("pull r1 ran while repack r1 held the repository")
	}
	if st := s.Stats(); st.ByType[typePull].Pending != 1 {
		t.Fatalf("stats %+v, want pull r1 pending", st)
	}
	close(releaseRepack)
	if err := recv(t, pullR1, "pull r1"); err != nil || !pullR1Ran.Load() {
		t.Fatalf("pull r1 = %v, ran %v", err, pullR1Ran.Load())
	}
}

// Jobs of one conflict group never overlap on a key, under churn.
func TestConflictNeverOverlaps(t *testing.T) {
	s := newTest(t, Options{MaxConcurrency: 8}, conflictTypes())
	var mu sync.Mutex
	active := map[string]int{}
	overlaps := 0
	fn := func(key string, spins int) func(context.Context) error {
		return func(context.Context) error {
			mu.Lock()
			if active[key] > 0 {
				overlaps++
			}
			active[key]++
			mu.Unlock()
			for range spins {
				runtime.Gosched()
			}
			mu.Lock()
			active[key]--
			mu.Unlock()
			return nil
		}
	}
	for i := range 300 {
		typ, key := typeRepack, fmt.Sprintf("r%d", i%3)
		if i%2 == 1 {
			typ = typePull
		}
		if err := s.SubmitErr(typ, key, fn(key, i%4)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Shutdown(guardCtx(t)); err != nil {
		t.Fatal(err)
	}
	if overlaps != 0 {
		t.Fatalf("%d overlapping runs on one key", overlaps)
	}
}

// Seed 001's fair queuing: client A queues 5 jobs, then client B one; B's
// job runs second, as B has the lowest accumulated cost after A's first.
func TestFairQueuing(t *testing.T) {
	clk := newFakeClock()
	s := newTest(t, Options{MaxConcurrency: 1, Clock: clk}, map[JobType]JobTypeConfig{
		typeClone:  {DefaultCost: 10, Priority: PriorityForeground},
		typeRepack: {DefaultCost: 20, Priority: PriorityBackground},
	})
	started, release := make(chan struct{}, 1), make(chan struct{})
	if err := s.SubmitErr(typeClone, "blocker", blocker(started, release)); err != nil {
		t.Fatal(err)
	}
	recv(t, started, "blocker start")

	var mu sync.Mutex
	var order []string
	record := func(name string) func(context.Context) error {
		return func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, name)
			return nil
		}
	}
	var results []<-chan error
	submit := func(client, name string) {
		results = append(results, runSyncAsync(guardCtx(t), s, typeClone, name, client, record(name)))
		waitStats(t, s, len(results), 1) // queued before the next one arrives
	}
	for i := 1; i <= 5; i++ {
		submit("A", fmt.Sprintf("A%d", i))
	}
	submit("B", "B1")
	close(release)
	for i, ch := range results {
		if err := recv(t, ch, fmt.Sprintf("job %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"A1", "B1", "A2", "A3", "A4", "A5"}, order); diff != "" {
		t.Fatalf("run order (-want +got):\n%s", diff)
	}
	if a, b := s.AccumulatedCost("A"), s.AccumulatedCost("B"); a != 50 || b != 10 {
		t.Fatalf("accumulated cost A=%v B=%v, want 50 and 10", a, b)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The cost of (type, job ID) is an EMA of observed wall time starting from
// the type's DefaultCost; admissions charge it to the fairness key.
func TestCostLearning(t *testing.T) {
	for _, alpha := range []float64{0, 0.5} {
		t.Run(fmt.Sprintf("alpha=%v", alpha), func(t *testing.T) {
			clk := newFakeClock()
			s := newTest(t, Options{MaxConcurrency: 2, Alpha: alpha, Clock: clk}, map[JobType]JobTypeConfig{
				typeClone: {DefaultCost: 20, Priority: PriorityForeground},
			})
			a := alpha
			if a == 0 {
				a = 0.3 // the documented default
			}
			const repo = "github.com/torvalds/linux"
			want, learned := 20.0, false
			charged := 0.0
			for _, took := range []time.Duration{10 * time.Second, 4 * time.Second, 30 * time.Second} {
				if got, ok := s.EstimatedCost(typeClone, repo); !near(got, want) || ok != learned {
					t.Fatalf("estimate before run = %v, %v; want %v, %v", got, ok, want, learned)
				}
				charged += want
				err := s.RunSync(guardCtx(t), typeClone, repo, "client", func(context.Context) error {
					clk.Advance(took)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				want, learned = a*took.Seconds()+(1-a)*want, true
			}
			if got, ok := s.EstimatedCost(typeClone, repo); !near(got, want) || !ok {
				t.Fatalf("estimate = %v, %v; want %v, true", got, ok, want)
			}
			if got := s.AccumulatedCost("client"); !near(got, charged) {
				t.Fatalf("accumulated cost = %v, want %v", got, charged)
			}
		})
	}
}

// An idle fairness key is forgotten after KeyTTL: it starts from zero.
func TestKeyTTL(t *testing.T) {
	clk := newFakeClock()
	s := newTest(t, Options{MaxConcurrency: 1, KeyTTL: time.Minute, Clock: clk}, map[JobType]JobTypeConfig{
		typeClone: {DefaultCost: 10, Priority: PriorityForeground},
	})
	noop := func(context.Context) error { return nil }
	if err := s.RunSync(guardCtx(t), typeClone, "repo", "client", noop); err != nil {
		t.Fatal(err)
	}
	if got := s.AccumulatedCost("client"); got != 10 {
		t.Fatalf("accumulated cost = %v, want 10", got)
	}
	clk.Advance(2 * time.Minute)
	// Eviction happens at the next dispatch decision.
	if err := s.RunSync(guardCtx(t), typeClone, "repo", "other", noop); err != nil {
		t.Fatal(err)
	}
	if got := s.AccumulatedCost("client"); got != 0 {
		t.Fatalf("accumulated cost after TTL = %v, want 0", got)
	}
}
