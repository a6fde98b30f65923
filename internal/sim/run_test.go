package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// timeline renders events compactly: "t kind id[@worker]".
func timeline(evs []Event) []string {
	var out []string
	for _, e := range evs {
		s := fmt.Sprintf("%g %s %s", e.T(), e.Kind, e.ID)
		if e.Kind == Admit || e.Kind == Done || (e.Kind == Cancel && e.Worker != "") {
			s += "@" + e.Worker
		}
		out = append(out, s)
	}
	return out
}

func TestLoopMechanics(t *testing.T) {
	tests := map[string]struct {
		doc  string
		want []string
	}{
		"count, every and ids in arrival order": {
			doc: `
pool: {slots: 4}
types: {t: {}}
jobs:
  - {at: 1, type: t, key: "k{i}", count: 3, every: 2, duration: 1}
  - {at: 2, type: t, id: "x{i%2}-{i}", count: 2, every: 1.5, duration: 0.5}
`,
			want: []string{
				"1 arrive t-k0-0.0", "1 admit t-k0-0.0@pool",
				"2 done t-k0-0.0@pool", "2 arrive x0-0", "2 admit x0-0@pool",
				"2.5 done x0-0@pool",
				"3 arrive t-k1-0.1", "3 admit t-k1-0.1@pool",
				"3.5 arrive x1-1", "3.5 admit x1-1@pool",
				"4 done t-k1-0.1@pool", "4 done x1-1@pool",
				"5 arrive t-k2-0.2", "5 admit t-k2-0.2@pool", "6 done t-k2-0.2@pool",
			},
		},
		"completions before arrivals free the slot at the same instant": {
			doc: `
pool: {slots: 1}
types: {t: {}}
jobs:
  - {id: a, type: t, duration: 2}
  - {id: b, at: 2, type: t, duration: 1}
`,
			want: []string{"0 arrive a", "0 admit a@pool", "2 done a@pool", "2 arrive b", "2 admit b@pool", "3 done b@pool"},
		},
		"zero duration reuses the slot within the instant": {
			doc: `
pool: {slots: 1}
types: {t: {}}
jobs:
  - {id: "z{i}", type: t, count: 2, duration: 0}
`,
			want: []string{"0 arrive z0", "0 arrive z1", "0 admit z0@pool", "0 done z0@pool", "0 admit z1@pool", "0 done z1@pool"},
		},
		"run_at delays admission": {
			doc: `
pool: {slots: 1}
types: {t: {}}
jobs:
  - {id: later, type: t, run_at: 5, duration: 1}
`,
			want: []string{"0 arrive later", "5 admit later@pool", "6 done later@pool"},
		},
		"cancel pending and running": {
			doc: `
pool: {slots: 1}
types: {t: {}}
jobs:
  - {id: long, type: t, duration: 10, cancel_at: 3}
  - {id: queued, type: t, duration: 1, cancel_at: 1}
  - {id: next, type: t, duration: 1}
`,
			want: []string{
				"0 arrive long", "0 arrive queued", "0 arrive next", "0 admit long@pool",
				"1 cancel queued", "3 cancel long@pool", "3 admit next@pool", "4 done next@pool",
			},
		},
		"reprioritize moves a pending job ahead": {
			doc: `
pool: {slots: 1}
lanes: {default: {aging: {step: 0}}}
types: {t: {}}
jobs:
  - {id: first, type: t, duration: 5}
  - {id: low, type: t, priority: 100, duration: 1}
  - {id: mid, type: t, priority: 500, duration: 1}
  - {id: high, at: 1, type: t, priority: 100, duration: 1, reprioritize: {at: 2, priority: 900}}
`,
			want: []string{
				"0 arrive first", "0 arrive low", "0 arrive mid", "0 admit first@pool",
				"1 arrive high", "2 reprioritize high",
				"5 done first@pool", "5 admit high@pool", "6 done high@pool", "6 admit mid@pool",
				"7 done mid@pool", "7 admit low@pool", "8 done low@pool",
			},
		},
		"dependencies wait, and fail with their dependency": {
			doc: `
pool: {slots: 2}
types: {t: {}}
jobs:
  - {id: build, type: t, duration: 3}
  - {id: doomed, type: t, duration: 3, run_at: 1, cancel_at: 0.5}
  - {id: test, type: t, duration: 1, depends_on: [build]}
  - {id: never, type: t, duration: 1, depends_on: [doomed]}
  - {id: late, at: 4, type: t, duration: 1, depends_on: [build]}
  - {id: orphan, at: 4, type: t, duration: 1, depends_on: [doomed]}
`,
			want: []string{
				"0 arrive build", "0 arrive doomed", "0 arrive test", "0 arrive never", "0 admit build@pool",
				"0.5 cancel doomed", "0.5 drop never",
				"3 done build@pool", "3 admit test@pool", "4 done test@pool",
				"4 arrive late", "4 arrive orphan", "4 drop orphan", "4 admit late@pool", "5 done late@pool",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res := run(t, loadString(t, tc.doc))
			if diff := cmp.Diff(tc.want, timeline(res.Events)); diff != "" {
				t.Errorf("timeline (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDependencyNotYetArrivedIsAScenarioError(t *testing.T) {
	s := loadString(t, `
pool: {slots: 1}
types: {t: {}}
jobs:
  - {id: a, type: t, duration: 1, depends_on: [b]}
  - {id: b, at: 1, type: t, duration: 1}
`)
	_, err := Run(s, Options{})
	if !errors.Is(err, ErrScenario) || !strings.Contains(err.Error(), `jobs[0].depends_on[0]: job "b" has not arrived`) {
		t.Fatalf("err = %v", err)
	}
}

func TestDuplicateIDIsAScenarioError(t *testing.T) {
	s := loadString(t, `
pool: {slots: 1}
types: {t: {}}
jobs:
  - {id: a, type: t, duration: 5}
  - {id: a, at: 1, type: t, duration: 1}
`)
	_, err := Run(s, Options{})
	if !errors.Is(err, ErrScenario) || !strings.Contains(err.Error(), `jobs[1] copy 0 (id "a")`) {
		t.Fatalf("err = %v", err)
	}
}

func TestCostEstimates(t *testing.T) {
	s := loadString(t, `
pool: {slots: 1}
types: {t: {default_cost: 4}}
cost: {alpha: 0.5}
jobs:
  - {id: first, type: t, key: repo, duration: 10}
  - {id: learned, at: 20, type: t, key: repo, duration: 1}
  - {id: told, at: 30, type: t, key: repo, cost: 99, duration: 1}
`)
	res := run(t, s)
	adm := byID(res.Events, Admit)
	// default, then 0.5·10 + 0.5·4 learned from the first run, then the
	// scenario's cost set at arrival.
	want := map[string]float64{"first": 4, "learned": 7, "told": 99}
	for id, c := range want {
		if adm[id].Cost != c {
			t.Errorf("%s charged %v, want %v", id, adm[id].Cost, c)
		}
	}
}

func TestSummaryStatistics(t *testing.T) {
	s := loadString(t, `
pool: {slots: 1}
lanes: {default: {aging: {step: 0}}}
types: {t: {default_cost: 1}}
jobs:
  - {id: a1, type: t, fairness_key: A, duration: 1}
  - {id: a2, type: t, fairness_key: A, duration: 1}
  - {id: b1, type: t, fairness_key: B, duration: 1}
`)
	res := run(t, s)
	sum := res.Summary
	// a1 at 0, then B (cost 0 < 1) at 1, then a2 at 2.
	wantA := GroupStats{Jobs: 2, Admitted: 2, MeanWait: 1, P50Wait: 0, P99Wait: 2, MaxWait: 2,
		BusySlotSeconds: 2, CapacityShare: 2.0 / 3, BacklogSeconds: 2, ServiceRate: 0.5}
	wantB := GroupStats{Jobs: 1, Admitted: 1, MeanWait: 1, P50Wait: 1, P99Wait: 1, MaxWait: 1,
		BusySlotSeconds: 1, CapacityShare: 1.0 / 3, BacklogSeconds: 1, ServiceRate: 0}
	approx := cmp.Comparer(func(x, y float64) bool { return math.Abs(x-y) < 1e-9 })
	if diff := cmp.Diff(map[string]GroupStats{"A": wantA, "B": wantB}, sum.FairnessKeys, approx); diff != "" {
		t.Errorf("fairness keys (-want +got):\n%s", diff)
	}
	// x_A = 0.5, x_B = 0: J = 0.5² / (2 · 0.25) = 0.5.
	if math.Abs(sum.JainIndex-0.5) > 1e-9 || sum.Makespan != 3 || sum.Utilisation != 1 || sum.Decisions != 3 {
		t.Errorf("jain %v makespan %v utilisation %v decisions %d", sum.JainIndex, sum.Makespan, sum.Utilisation, sum.Decisions)
	}
	if l := sum.Lanes["default"]; l.Jobs != 3 || l.CapacityShare != 1 {
		t.Errorf("lane stats %+v", l)
	}
}

// A cancelled job's end and an ended job's timers are not instants: the
// makespan ends with the last real event.
func TestStaleInstantsDoNotStretchTheRun(t *testing.T) {
	s := loadString(t, `
pool: {slots: 1}
types: {t: {}}
jobs:
  - {id: long, type: t, duration: 10, cancel_at: 3}
  - {id: short, type: t, duration: 1, cancel_at: 50, reprioritize: {at: 60, priority: 1}}
`)
	res := run(t, s)
	if got := res.Summary.Makespan; got != 4 {
		t.Errorf("makespan %v, want 4 (short ends at 4)", got)
	}
	if got := res.Summary.Utilisation; got != 1 {
		t.Errorf("utilisation %v, want 1", got)
	}
}

func TestStopClock(t *testing.T) {
	s := loadString(t, `
pool: {slots: 1}
types: {t: {}}
jobs:
  - {id: "j{i}", type: t, duration: 4, count: 5, every: 1}
`)
	res, err := Run(s, Options{Stop: sec(6), Record: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Events {
		if e.At > sec(6) {
			t.Fatalf("event after the stop: %s %s at %v", e.Kind, e.ID, e.At)
		}
	}
	sum := res.Summary
	// j0 ran 0-4 and j1 from 4; j2..j4 arrived and wait.
	want := Summary{Jobs: 5, Admitted: 2, Done: 1, Pending: 3, Running: 1, Makespan: 6, BusySlotSeconds: 6}
	got := Summary{Jobs: sum.Jobs, Admitted: sum.Admitted, Done: sum.Done, Pending: sum.Pending,
		Running: sum.Running, Makespan: sum.Makespan, BusySlotSeconds: sum.BusySlotSeconds}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summary at the stop (-want +got):\n%s", diff)
	}
}

func TestSinkAndDeterminism(t *testing.T) {
	s := loadFile(t, "seed001-2-two-clients.yaml")
	var sunk []Event
	res, err := Run(s, Options{Sink: func(e Event) error { sunk = append(sunk, e); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != nil {
		t.Errorf("events kept without Record")
	}
	again := run(t, s)
	if diff := cmp.Diff(again.Events, sunk); diff != "" {
		t.Errorf("two runs differ (-recorded +sunk):\n%s", diff)
	}
	boom := errors.New("disk full")
	if _, err := Run(s, Options{Sink: func(Event) error { return boom }}); !errors.Is(err, boom) {
		t.Errorf("sink error not returned: %v", err)
	}
}

func TestRunContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := RunContext(ctx, loadFile(t, "seed001-1-bg-saturated.yaml"), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestEveryScenarioKeepsInvariants(t *testing.T) {
	names := []string{
		"seed001-1-bg-saturated.yaml", "seed001-2-two-clients.yaml", "seed001-3-cost-fairness.yaml",
		"seed001-4-conflict.yaml", "seed001-5-many-bg-types.yaml", "seed004-rare-type.yaml",
		"seed004-versatile-worker.yaml", "seed004-on-demand-flood.yaml", "seed000-drf.yaml", "seed000-aging.yaml",
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			res := run(t, loadFile(t, name))
			if sum := res.Summary; sum.Pending != 0 || sum.Running != 0 || sum.Done != sum.Jobs {
				t.Errorf("not every job ran: %+v", sum)
			}
		})
	}
}

func TestEpochIsFixed(t *testing.T) {
	if !Epoch.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("epoch %v", Epoch)
	}
}
