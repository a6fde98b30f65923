package policy

// Table-driven tests of individual engine behaviours, one table per
// behaviour, each case diffed with go-cmp as (-want +got).

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func oneLane(l LaneConfig) map[string]LaneConfig { return map[string]LaneConfig{DefaultLane: l} }

// ---------- Cancel ----------

func TestCancelIsATombstone(t *testing.T) {
	cfg := Config{
		Lanes: oneLane(lc().L()),
		Types: map[string]TypeConfig{"sync": {ConflictGroup: "git"}},
	}
	type result struct {
		Err         string
		LenAfter    int  // Len() right after Cancel: the drop is immediate
		JobKnown    bool // Job(id) after Cancel
		Admitted    []string
		NextDueSecs int // -1: none
	}
	tests := map[string]struct {
		setup  func(t *testing.T, e *Engine)
		cancel string
		after  func(t *testing.T, e *Engine) // before the final dispatch
		want   result
	}{
		"queued head": {
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(0), job("a").prio(900), job("b").prio(500), job("c").prio(100))
			},
			cancel: "a",
			want:   result{LenAfter: 2, Admitted: []string{"b", "c"}, NextDueSecs: -1},
		},
		"queued middle": {
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(0), job("a").prio(900), job("b").prio(500), job("c").prio(100))
			},
			cancel: "b",
			want:   result{LenAfter: 2, Admitted: []string{"a", "c"}, NextDueSecs: -1},
		},
		"queued in the same class as others": {
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(0), job("a"), job("b"), job("c"))
			},
			cancel: "a",
			want:   result{LenAfter: 2, Admitted: []string{"b", "c"}, NextDueSecs: -1},
		},
		"delayed": {
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(0), job("a").runAt(at(10)), job("b").runAt(at(20)))
			},
			cancel: "a",
			want:   result{LenAfter: 1, Admitted: []string{}, NextDueSecs: 20},
		},
		"waiting on a dependency": {
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(0), job("a").runAt(at(30)), job("b").after("a"))
			},
			cancel: "b",
			want:   result{LenAfter: 1, Admitted: []string{}, NextDueSecs: 30},
		},
		"parked on a conflict": {
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(0), job("holder").typ("sync").key("r1").prio(900))
				if got := admittedIDs(e, at(0)); len(got) != 1 {
					t.Fatalf("holder not admitted: %v", got)
				}
				submitAll(t, e, at(0), job("a").typ("sync").key("r1"))
				if got := admittedIDs(e, at(0)); len(got) != 0 { // parks a behind holder
					t.Fatalf("admitted %v while holder runs", got)
				}
			},
			cancel: "a",
			// the holder ending must not bring the cancelled job back
			after: func(t *testing.T, e *Engine) { finishOK(t, e, "holder", at(2), Succeeded) },
			want:  result{LenAfter: 1, Admitted: []string{}, NextDueSecs: -1},
		},
		"running": {
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(0), job("a"))
				admittedIDs(e, at(0))
			},
			cancel: "a",
			want:   result{Err: ErrNotPending.Error(), LenAfter: 1, JobKnown: true, Admitted: []string{}, NextDueSecs: -1},
		},
		"unknown": {
			setup:  func(t *testing.T, e *Engine) {},
			cancel: "nope",
			want:   result{Err: ErrNotFound.Error(), Admitted: []string{}, NextDueSecs: -1},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newTestEngine(t, cfg, wrk("w").slots(3).W())
			tc.setup(t, e)
			var got result
			if _, err := e.Cancel(tc.cancel, at(1)); err != nil {
				for _, target := range []error{ErrNotFound, ErrNotPending} {
					if errors.Is(err, target) {
						got.Err = target.Error()
					}
				}
				if got.Err == "" {
					got.Err = err.Error()
				}
			}
			got.LenAfter, _ = e.Len()
			_, got.JobKnown = e.Job(tc.cancel)
			got.NextDueSecs = -1
			if d, ok := e.NextDue(); ok {
				got.NextDueSecs = int(d.Sub(testT0) / time.Second)
			}
			if tc.after != nil {
				tc.after(t, e)
			}
			got.Admitted = admittedIDs(e, at(2))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ---------- Reprioritize ----------

func TestReprioritizeKeepsAgeAndMovesTheJob(t *testing.T) {
	type result struct {
		Err      string
		Priority int
		Score    int64 // Explain score right after reprioritizing
		Code     Code
		Order    []string // admission order, one slot at a time
	}
	tiered := Config{
		Lanes: oneLane(lc().aging(10, 10*time.Second).L()),
		Tiers: []TierConfig{{Name: "hi", MinPriority: 800, MaxPriority: 1000, MaxRunning: 1}},
	}
	aging := Config{Lanes: oneLane(lc().aging(10, 10*time.Second).L())}
	tests := map[string]struct {
		cfg    Config
		setup  func(t *testing.T, e *Engine)
		id     string
		prio   int
		want   result
		finish []string // running jobs to finish before draining
	}{
		// a waited 100 s (10 intervals, +100): at 500 it scores 600 and beats
		// b (550, fresh); had the reinsert reset its age it would score 500.
		"raise keeps age": {
			cfg: aging,
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(0), job("a").prio(100))
				submitAll(t, e, at(100), job("b").prio(550))
			},
			id: "a", prio: 500,
			want: result{Priority: 500, Score: 600, Code: CodeQueued, Order: []string{"a", "b"}},
		},
		"lower moves behind": {
			cfg: aging,
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(100), job("a").prio(900), job("b").prio(500))
			},
			id: "a", prio: 100,
			want: result{Priority: 100, Score: 100, Code: CodeQueued, Order: []string{"b", "a"}},
		},
		"same priority keeps place among equals": {
			cfg: aging,
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(100), job("a"), job("b"), job("c"))
			},
			id: "a", prio: 500,
			want: result{Priority: 500, Score: 500, Code: CodeQueued, Order: []string{"a", "b", "c"}},
		},
		"delayed job takes its new priority when due": {
			cfg: aging,
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(0), job("c").prio(100).runAt(at(100)))
				submitAll(t, e, at(100), job("a").prio(100), job("b").prio(500))
			},
			// c ages from its run_at (docs/scheduling.md), not from its
			// submit time: no aging at 100 s.
			id: "c", prio: 900,
			want: result{Priority: 900, Score: 900, Code: CodeQueued, Order: []string{"c", "b", "a"}},
		},
		"into a capped tier": {
			cfg: tiered,
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(100), job("x").prio(900))
				admittedIDs(e, at(100)) // x holds the only slot of tier hi
				submitAll(t, e, at(100), job("a").prio(500))
			},
			id: "a", prio: 850,
			// a is blocked by the tier cap until x finishes.
			want:   result{Priority: 850, Score: 850, Code: CodeTierCap, Order: []string{"a"}},
			finish: []string{"x"},
		},
		"running is refused": {
			cfg: aging,
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(100), job("a"))
				admittedIDs(e, at(100))
			},
			id: "a", prio: 100,
			want: result{Err: ErrNotPending.Error(), Priority: 500, Code: CodeRunning, Order: []string{}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newTestEngine(t, tc.cfg, wrk("w").slots(2).W())
			tc.setup(t, e)
			var got result
			if err := e.Reprioritize(tc.id, tc.prio, at(100)); err != nil {
				got.Err = err.Error()
				if errors.Is(err, ErrNotPending) {
					got.Err = ErrNotPending.Error()
				}
			}
			st, _ := e.Job(tc.id)
			got.Priority = st.Priority
			x, err := e.Explain(tc.id, at(100))
			if err != nil {
				t.Fatal(err)
			}
			got.Score, got.Code = x.Score, x.Code
			// Drain one slot at a time so the order is the decision order.
			got.Order = []string{}
			for _, id := range tc.finish {
				finishOK(t, e, id, at(100), Succeeded)
			}
			for {
				a, ok := e.Next(at(100))
				if !ok {
					break
				}
				got.Order = append(got.Order, a.JobID)
				finishOK(t, e, a.JobID, at(100), Succeeded)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ---------- Dependencies ----------

func TestDependencies(t *testing.T) {
	// p is the parent; c waits on p with the case's condition; g waits on c
	// with AfterSuccess and h with AfterAny, so that a dropped c drops g
	// (transitively, as cancelled) but releases h.
	type result struct {
		Dropped  []Dropped
		Admitted []string
		Waiting  []string // still waiting on a dependency
	}
	type ending int
	const (
		succeed ending = iota
		fail
		finishCancelled
		cancelPending
		release
	)
	tests := map[string]struct {
		cond Condition
		end  ending
		want result
	}{
		"after success, succeeded": {AfterSuccess, succeed, result{Admitted: []string{"c"}, Waiting: []string{"g", "h"}}},
		"after success, failed": {AfterSuccess, fail, result{
			Dropped: []Dropped{{"c", "p"}, {"g", "c"}}, Admitted: []string{"h"}}},
		"after success, finished cancelled": {AfterSuccess, finishCancelled, result{
			Dropped: []Dropped{{"c", "p"}, {"g", "c"}}, Admitted: []string{"h"}}},
		"after success, cancelled while pending": {AfterSuccess, cancelPending, result{
			Dropped: []Dropped{{"c", "p"}, {"g", "c"}}, Admitted: []string{"h"}}},
		"after failure, succeeded": {AfterFailure, succeed, result{
			Dropped: []Dropped{{"c", "p"}, {"g", "c"}}, Admitted: []string{"h"}}},
		"after failure, failed":              {AfterFailure, fail, result{Admitted: []string{"c"}, Waiting: []string{"g", "h"}}},
		"after failure, finished cancelled":  {AfterFailure, finishCancelled, result{Dropped: []Dropped{{"c", "p"}, {"g", "c"}}, Admitted: []string{"h"}}},
		"after any, succeeded":               {AfterAny, succeed, result{Admitted: []string{"c"}, Waiting: []string{"g", "h"}}},
		"after any, failed":                  {AfterAny, fail, result{Admitted: []string{"c"}, Waiting: []string{"g", "h"}}},
		"after any, finished cancelled":      {AfterAny, finishCancelled, result{Admitted: []string{"c"}, Waiting: []string{"g", "h"}}},
		"after any, cancelled while pending": {AfterAny, cancelPending, result{Admitted: []string{"c"}, Waiting: []string{"g", "h"}}},
		"released keeps dependents waiting":  {AfterAny, release, result{Admitted: []string{}, Waiting: []string{"c", "g", "h"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newTestEngine(t, Config{Lanes: oneLane(lc().L())}, wrk("w").slots(4).W())
			submitAll(t, e, at(0),
				job("p").prio(900),
				job("c").dep("p", tc.cond),
				job("g").after("c"),
				job("h").afterAny("c"),
			)
			var dropped []Dropped
			var err error
			if tc.end == cancelPending {
				dropped, err = e.Cancel("p", at(1))
			} else {
				if got := admittedIDs(e, at(0)); !cmp.Equal(got, []string{"p"}) {
					t.Fatalf("admitted %v, want [p]", got)
				}
				out := map[ending]Outcome{succeed: Succeeded, fail: Failed, finishCancelled: Cancelled, release: Released}[tc.end]
				dropped, err = e.Finish("p", at(1), out)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := result{Dropped: dropped, Admitted: admittedIDs(e, at(1))}
			for _, id := range []string{"c", "g", "h"} {
				if st, ok := e.Job(id); ok && st.State == "waiting" {
					got.Waiting = append(got.Waiting, id)
					x, _ := e.Explain(id, at(1))
					if x.Code != CodeWaitingDependency || x.Blocker == "" {
						t.Errorf("Explain(%s) = %s blocker %q, want waiting_dependency with a blocker", id, x.Code, x.Blocker)
					}
				}
			}
			sortD := cmpopts.SortSlices(func(a, b Dropped) bool { return a.JobID < b.JobID })
			if d := cmp.Diff(tc.want, got, sortD, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ---------- RunAt ----------

func TestRunAtDelay(t *testing.T) {
	type check struct {
		Sec      int
		NextDue  int // seconds after the dispatch at Sec; -1: none
		Admitted []string
	}
	tests := map[string]struct {
		jobs   []jobB
		cancel string         // cancelled at t=0
		finish map[int]string // running job finished at that second, before dispatching
		want   []check
	}{
		"single delayed job": {
			jobs: []jobB{job("a").runAt(at(30))},
			want: []check{{0, 30, []string{}}, {29, 30, []string{}}, {30, -1, []string{"a"}}},
		},
		"earliest first": {
			jobs: []jobB{job("a").runAt(at(50)), job("b").runAt(at(20)), job("c")},
			want: []check{{0, 20, []string{"c"}}, {20, 50, []string{"b"}}, {60, -1, []string{"a"}}},
		},
		"cancelled delayed job leaves NextDue": {
			jobs:   []jobB{job("a").runAt(at(50)), job("b").runAt(at(20))},
			cancel: "b",
			want:   []check{{0, 50, []string{}}, {20, 50, []string{}}, {50, -1, []string{"a"}}},
		},
		"run_at in the past runs at once": {
			jobs: []jobB{job("a").runAt(at(-10))},
			want: []check{{0, -1, []string{"a"}}},
		},
		"dependency met before run_at still waits": {
			jobs:   []jobB{job("p").prio(900), job("c").after("p").runAt(at(40))},
			finish: map[int]string{10: "p"},
			want:   []check{{0, -1, []string{"p"}}, {10, 40, []string{}}, {40, -1, []string{"c"}}},
		},
		"dependency met after run_at runs at once": {
			jobs:   []jobB{job("p").prio(900), job("c").after("p").runAt(at(5))},
			finish: map[int]string{10: "p"},
			want:   []check{{0, -1, []string{"p"}}, {10, -1, []string{"c"}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newTestEngine(t, Config{Lanes: oneLane(lc().L())}, wrk("w").slots(3).W())
			submitAll(t, e, at(0), tc.jobs...)
			if tc.cancel != "" {
				if _, err := e.Cancel(tc.cancel, at(0)); err != nil {
					t.Fatal(err)
				}
			}
			var got []check
			for _, w := range tc.want {
				if id, ok := tc.finish[w.Sec]; ok {
					finishOK(t, e, id, at(w.Sec), Succeeded)
				}
				c := check{Sec: w.Sec, NextDue: -1}
				c.Admitted = admittedIDs(e, at(w.Sec))
				if d, ok := e.NextDue(); ok {
					c.NextDue = int(d.Sub(testT0) / time.Second)
				}
				got = append(got, c)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ---------- tenant cap ----------

func TestTenantCapParksAndUnparks(t *testing.T) {
	type result struct {
		First    []string
		Codes    map[string]Code
		AfterEnd []string // admitted after the first admitted job of A finishes
	}
	tests := map[string]struct {
		maxRunning int
		want       result
	}{
		"cap 1": {1, result{
			First:    []string{"a1", "b1", "b2"},
			Codes:    map[string]Code{"a2": CodeTenantCap, "a3": CodeTenantCap},
			AfterEnd: []string{"a2"},
		}},
		"cap 2": {2, result{
			First: []string{"a1", "a2", "b1"},
			// b2 is the lane's best job that is not capped, and no slot is
			// free: it holds the reservation.
			Codes:    map[string]Code{"a3": CodeTenantCap, "b2": CodeReserved},
			AfterEnd: []string{"a3"},
		}},
		"uncapped": {0, result{
			First:    []string{"a1", "a2", "a3"},
			Codes:    map[string]Code{"b1": CodeReserved, "b2": CodeNoFreeSlot}, // b1 ranks first: its reservation
			AfterEnd: []string{"b1"},
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Lanes: oneLane(lc().L()), Tenants: map[string]TenantConfig{"A": {MaxRunning: tc.maxRunning}}}
			e := newTestEngine(t, cfg, wrk("w").slots(3).W())
			submitAll(t, e, at(0),
				job("a1").tenant("A").prio(900), job("a2").tenant("A").prio(800), job("a3").tenant("A").prio(700),
				job("b1").tenant("B").prio(100), job("b2").tenant("B").prio(50))
			got := result{First: admittedIDs(e, at(0)), Codes: map[string]Code{}}
			for _, id := range []string{"a1", "a2", "a3", "b1", "b2"} {
				if x, err := e.Explain(id, at(0)); err == nil && x.Code != CodeRunning {
					got.Codes[id] = x.Code
				}
			}
			finishOK(t, e, "a1", at(1), Succeeded)
			got.AfterEnd = admittedIDs(e, at(1))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ---------- conflicts ----------

func TestConflictParksAndUnparks(t *testing.T) {
	types := map[string]TypeConfig{
		"clone":  {ConflictGroup: "git"},
		"repack": {ConflictGroup: "git"},
		"index":  {ConflictGroup: "search"},
		"free":   {},
	}
	type result struct {
		First    []string
		Explain  map[string]string // code/blocker of jobs not running
		AfterEnd []string          // after holder finishes
	}
	tests := map[string]struct {
		second jobB
		want   result
	}{
		"same type same key": {job("b").typ("clone").key("r1").prio(800), result{
			First: []string{"holder", "other"}, Explain: map[string]string{"b": "conflict/holder"}, AfterEnd: []string{"b"}}},
		"same group other type": {job("b").typ("repack").key("r1").prio(800), result{
			First: []string{"holder", "other"}, Explain: map[string]string{"b": "conflict/holder"}, AfterEnd: []string{"b"}}},
		"same group other key": {job("b").typ("repack").key("r2").prio(800), result{
			First: []string{"holder", "b", "other"}, Explain: map[string]string{}, AfterEnd: []string{}}},
		"other group same key": {job("b").typ("index").key("r1").prio(800), result{
			First: []string{"holder", "b", "other"}, Explain: map[string]string{}, AfterEnd: []string{}}},
		"no group same key": {job("b").typ("free").key("r1").prio(800), result{
			First: []string{"holder", "b", "other"}, Explain: map[string]string{}, AfterEnd: []string{}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newTestEngine(t, Config{Lanes: oneLane(lc().L()), Types: types}, wrk("w").slots(3).W())
			submitAll(t, e, at(0), job("holder").typ("clone").key("r1").prio(900), tc.second, job("other").typ("free").key("r9").prio(100))
			got := result{First: admittedIDs(e, at(0)), Explain: map[string]string{}}
			for _, id := range []string{"b", "other"} {
				if x, err := e.Explain(id, at(0)); err == nil && x.Code != CodeRunning {
					got.Explain[id] = string(x.Code) + "/" + x.Blocker
					if x.Code == CodeConflict && !strings.Contains(x.Message, "holder") {
						t.Errorf("Explain(%s).Message = %q, want it to name the holder", id, x.Message)
					}
				}
			}
			finishOK(t, e, "holder", at(1), Succeeded)
			got.AfterEnd = admittedIDs(e, at(1))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ---------- placement ----------

func TestPlacement(t *testing.T) {
	specialised := []Worker{
		wrk("a-general").slots(2).cpu(4000).mem(4096).W(),
		wrk("b-pdf-excel").types("pdf", "excel").slots(2).cpu(4000).mem(4096).W(),
		wrk("c-pdf").types("pdf").slots(2).cpu(4000).mem(4096).W(),
	}
	sized := []Worker{
		wrk("big").slots(2).cpu(8000).mem(8192).W(),
		wrk("small").slots(2).cpu(2000).mem(2048).W(),
		wrk("mid").slots(2).cpu(4000).mem(4096).W(),
	}
	twins := []Worker{wrk("w2").slots(1).cpu(1000).W(), wrk("w1").slots(1).cpu(1000).W()}
	tests := map[string]struct {
		workers []Worker
		job     jobB
		want    string
	}{
		"pdf goes to the pdf-only worker":          {specialised, job("j").typ("pdf").cpu(1000), "c-pdf"},
		"excel goes to the two-type worker":        {specialised, job("j").typ("excel").cpu(1000), "b-pdf-excel"},
		"other types go to the general worker":     {specialised, job("j").typ("csv").cpu(1000), "a-general"},
		"specialised wins over a tighter fit":      {[]Worker{wrk("gen").slots(1).cpu(1000).W(), wrk("pdf").types("pdf").slots(1).cpu(8000).W()}, job("j").typ("pdf").cpu(1000), "pdf"},
		"best fit among equally versatile workers": {sized, job("j").cpu(1500).mem(1024), "small"},
		"best fit skips workers that cannot fit":   {sized, job("j").cpu(3000).mem(1024), "mid"},
		"only the big one fits":                    {sized, job("j").cpu(6000), "big"},
		"ties go to the lowest id":                 {twins, job("j").cpu(1000), "w1"},
		"labels restrict the workers":              {[]Worker{wrk("plain").slots(1).W(), wrk("ssd").labels("ssd").slots(1).W()}, job("j").labels("ssd"), "ssd"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newTestEngine(t, Config{Lanes: oneLane(lc().L())}, tc.workers...)
			submitAll(t, e, at(0), tc.job)
			a, ok := e.Next(at(0))
			if !ok {
				t.Fatal("nothing admitted")
			}
			if d := cmp.Diff(tc.want, a.WorkerID); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ---------- rarity ----------

func TestRarityBonusChangesOrder(t *testing.T) {
	// "excel" runs only on gen (n = 1 free slot); "pdf" runs on gen and on
	// pdf (n = 2). With bonus 300, excel at 500 scores 800 and pdf at 600
	// scores 750: the rare job goes first although its priority is lower.
	workers := []Worker{wrk("gen").W(), wrk("pdf").types("pdf").W()}
	type result struct {
		First string
		Score int64
	}
	tests := map[string]struct {
		bonus int64
		want  result
	}{
		"rarity off":          {0, result{"p", 600}},
		"rarity 300":          {300, result{"x", 800}},
		"rarity 150 ties out": {150, result{"p", 675}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newTestEngine(t, Config{Lanes: oneLane(lc().rarity(tc.bonus).L())}, workers...)
			submitAll(t, e, at(0), job("x").typ("excel").prio(500), job("p").typ("pdf").prio(600))
			a, ok := e.Next(at(0))
			if !ok {
				t.Fatal("nothing admitted")
			}
			if d := cmp.Diff(tc.want, result{a.JobID, a.Score}); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ---------- fairness keys ----------

func TestFairnessKeyEvictionAndAdvance(t *testing.T) {
	// k1 runs one job of cost 5, finishing at t=10 (idle from then on);
	// k2 keeps a job running (cost 3). At `probe` a decision is made and
	// the keys' costs read; then a new job of k1 arrives.
	type result struct {
		K1, K2, K3 float64
	}
	tests := map[string]struct {
		ttl     time.Duration
		advance bool
		probe   int
		want    result
	}{
		"before ttl the idle key keeps its cost":   {60 * time.Second, false, 69, result{K1: 5, K2: 3, K3: 0}},
		"at ttl the idle key is evicted":           {60 * time.Second, false, 70, result{K1: 0, K2: 3, K3: 0}},
		"evicted key restarts at the active min":   {60 * time.Second, true, 70, result{K1: 3, K2: 3, K3: 3}},
		"new key starts at the active min":         {60 * time.Second, true, 30, result{K1: 5, K2: 3, K3: 3}},
		"without advance a new key starts at zero": {60 * time.Second, false, 30, result{K1: 5, K2: 3, K3: 0}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := Config{
				Lanes: oneLane(lc().L()),
				Types: map[string]TypeConfig{"five": {DefaultCost: 5}, "three": {DefaultCost: 3}},
				Cost:  CostConfig{KeyTTL: tc.ttl, AdvanceNewKeys: tc.advance},
			}
			e := newTestEngine(t, cfg, wrk("w").slots(4).W())
			submitAll(t, e, at(0), job("a").typ("five").fk("k1"), job("b").typ("three").fk("k2"))
			admittedIDs(e, at(0))
			finishOK(t, e, "a", at(10), Succeeded)
			admittedIDs(e, at(tc.probe)) // decisions apply the passage of time
			submitAll(t, e, at(tc.probe), job("c").typ("five").fk("k1"), job("d").typ("five").fk("k3"))
			got := result{K1: e.AccumulatedCost("k1"), K2: e.AccumulatedCost("k2"), K3: e.AccumulatedCost("k3")}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ---------- cost learning ----------

func TestEMAUpdate(t *testing.T) {
	// Two runs of (typ, "r1"), the first taking 20 s, the second 3 s.
	type result struct {
		Charged   []float64 // Assignment.Cost of each run
		Estimates []float64 // Estimate after each run
	}
	tests := map[string]struct {
		typeCost float64
		alpha    float64
		preset   float64 // SetEstimate before the first run (0: none)
		want     result
	}{
		"from the type's default cost": {10, 0, 0, result{
			Charged:   []float64{10, 0.3*20 + 0.7*10},
			Estimates: []float64{0.3*20 + 0.7*10, 0.3*3 + 0.7*(0.3*20+0.7*10)},
		}},
		"from the global default cost": {0, 0, 0, result{
			Charged:   []float64{1, 0.3*20 + 0.7*1},
			Estimates: []float64{0.3*20 + 0.7*1, 0.3*3 + 0.7*(0.3*20+0.7*1)},
		}},
		"alpha 1 keeps the last observation": {10, 1, 0, result{
			Charged:   []float64{10, 20},
			Estimates: []float64{20, 3},
		}},
		"a preset estimate is the prior": {10, 0.5, 40, result{
			Charged:   []float64{40, 30},
			Estimates: []float64{30, 16.5},
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Lanes: oneLane(lc().L()), Types: map[string]TypeConfig{"x": {DefaultCost: tc.typeCost}}, Cost: CostConfig{Alpha: tc.alpha}}
			e := newTestEngine(t, cfg, wrk("w").W())
			if tc.preset > 0 {
				e.SetEstimate("x", "r1", tc.preset, at(0))
			}
			var got result
			start := 0
			for i, dur := range []int{20, 3} {
				submitAll(t, e, at(start), job(string(rune('a'+i))).typ("x").key("r1"))
				a, ok := e.Next(at(start))
				if !ok {
					t.Fatal("nothing admitted")
				}
				got.Charged = append(got.Charged, a.Cost)
				finishOK(t, e, a.JobID, at(start+dur), Succeeded)
				est, _ := e.Estimate("x", "r1")
				got.Estimates = append(got.Estimates, est)
				start += dur
			}
			if d := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ---------- configuration ----------

func TestConfigValidationNamesTheField(t *testing.T) {
	lanes := func(l LaneConfig) map[string]LaneConfig { return map[string]LaneConfig{"web": l} }
	tests := map[string]struct {
		cfg  Config
		want string // substring of the error; "" = valid
	}{
		"empty config is valid":      {Config{}, ""},
		"empty lane name":            {Config{Lanes: map[string]LaneConfig{"": {}}}, "lanes: empty lane name"},
		"negative weight":            {Config{Lanes: lanes(LaneConfig{Weight: -1})}, "lanes.web.weight"},
		"NaN weight":                 {Config{Lanes: lanes(LaneConfig{Weight: nan()})}, "lanes.web.weight"},
		"negative aging step":        {Config{Lanes: lanes(LaneConfig{Aging: Aging{Step: -1}})}, "lanes.web.aging.step"},
		"aging without interval":     {Config{Lanes: lanes(LaneConfig{Aging: Aging{Step: 1}})}, "lanes.web.aging.interval"},
		"negative aging interval":    {Config{Lanes: lanes(LaneConfig{Aging: Aging{Interval: -time.Second}})}, "lanes.web.aging.interval"},
		"negative on-demand bonus":   {Config{Lanes: lanes(LaneConfig{OnDemand: OnDemandPolicy{Bonus: -1}})}, "lanes.web.on_demand"},
		"on-demand without interval": {Config{Lanes: lanes(LaneConfig{OnDemand: OnDemandPolicy{Step: 5}})}, "lanes.web.on_demand.interval"},
		"negative rarity":            {Config{Lanes: lanes(LaneConfig{RarityBonus: -1})}, "lanes.web.rarity_bonus"},
		"negative default cost":      {Config{Types: map[string]TypeConfig{"x": {DefaultCost: -1}}}, "types.x.default_cost"},
		"negative max concurrency":   {Config{Types: map[string]TypeConfig{"x": {MaxConcurrency: -1}}}, "types.x.max_concurrency"},
		"negative type resources":    {Config{Types: map[string]TypeConfig{"x": {Resources: Resources{GPU: -1}}}}, "types.x.resources"},
		"type in unknown lane":       {Config{Types: map[string]TypeConfig{"x": {Lane: "nope"}}}, `types.x.lane: unknown lane "nope"`},
		"negative tenant cap":        {Config{Tenants: map[string]TenantConfig{"acme": {MaxRunning: -1}}}, "tenants.acme.max_running"},
		"tier max below min":         {Config{Tiers: []TierConfig{{Name: "fg", MinPriority: 10, MaxPriority: 5}}}, "tiers.fg: max_priority 5 below min_priority 10"},
		"negative tier cap":          {Config{Tiers: []TierConfig{{Name: "fg", MinPriority: 1, MaxPriority: 5, MaxRunning: -1}}}, "tiers.fg.max_running"},
		"overlapping tiers": {Config{Tiers: []TierConfig{
			{Name: "fg", MinPriority: 40, MaxPriority: 100}, {Name: "bg", MinPriority: 0, MaxPriority: 40}}}, "tiers.bg overlaps tier fg"},
		"adjacent tiers are valid": {Config{Tiers: []TierConfig{
			{Name: "fg", MinPriority: 40, MaxPriority: 100}, {Name: "bg", MinPriority: 0, MaxPriority: 39}}}, ""},
		"alpha above one":        {Config{Cost: CostConfig{Alpha: 1.5}}, "cost.alpha"},
		"negative alpha":         {Config{Cost: CostConfig{Alpha: -0.1}}, "cost.alpha"},
		"negative default cost2": {Config{Cost: CostConfig{DefaultCost: -1}}, "cost.default_cost"},
		"negative key ttl":       {Config{Cost: CostConfig{KeyTTL: -time.Second}}, "cost: ttl"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.cfg)
			got := ""
			if err != nil {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Errorf("error %v does not wrap ErrInvalidConfig", err)
				}
				got = err.Error()
				if tc.want != "" && strings.Contains(got, tc.want) {
					got = tc.want
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func nan() float64 {
	var z float64
	return z / z
}

func TestConfigDefaults(t *testing.T) {
	tests := map[string]struct {
		cfg  Config
		want Config
	}{
		"no lanes gives the default lane": {
			Config{},
			Config{Lanes: map[string]LaneConfig{DefaultLane: DefaultLaneConfig()}},
		},
		"weight and on-demand cap are filled": {
			Config{Lanes: map[string]LaneConfig{"web": {OnDemand: OnDemandPolicy{Step: 5, Interval: time.Second}}}},
			Config{Lanes: map[string]LaneConfig{"web": {Weight: 1, OnDemand: OnDemandPolicy{Step: 5, Interval: time.Second, MaxAging: MaxPriority},
				Backfill:   BackfillConfig{Reservations: DefaultReservations, Depth: DefaultBackfillDepth},
				Preemption: PreemptionConfig{Grace: DefaultPreemptGrace}}}},
		},
		"tiers sorted by priority and named": {
			Config{Tiers: []TierConfig{{MinPriority: 0, MaxPriority: 9}, {Name: "fg", MinPriority: 40, MaxPriority: 40}}},
			Config{Lanes: map[string]LaneConfig{DefaultLane: DefaultLaneConfig()}, Tiers: []TierConfig{{Name: "fg", MinPriority: 40, MaxPriority: 40}, {Name: "0-9", MinPriority: 0, MaxPriority: 9}}},
		},
	}
	cost := CostConfig{Alpha: 0.3, DefaultCost: 1, KeyTTL: 10 * time.Minute, EstimateTTL: 24 * time.Hour}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Cost = cost
			if d := cmp.Diff(want, e.Config(), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ---------- cost observation by outcome ----------

func TestFinishObservesOnlyRunsThatEnded(t *testing.T) {
	// One 20 s run of a type with default cost 10 (α = 0.3): a run that
	// ended on its own is observed (0.3·20 + 0.7·10 = 13); a cancelled or
	// released run says nothing about the cost (Finish's documentation).
	type result struct {
		Known    bool
		Estimate float64
	}
	tests := map[string]struct {
		out  Outcome
		want result
	}{
		"succeeded": {Succeeded, result{true, 13}},
		"failed":    {Failed, result{true, 13}},
		"cancelled": {Cancelled, result{false, 0}},
		"released":  {Released, result{false, 0}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Lanes: oneLane(lc().L()), Types: map[string]TypeConfig{"x": {DefaultCost: 10}}}
			e := newTestEngine(t, cfg, wrk("w").W())
			submitAll(t, e, at(0), job("a").typ("x").key("r1"))
			admittedIDs(e, at(0))
			finishOK(t, e, "a", at(20), tc.out)
			var got result
			got.Estimate, got.Known = e.Estimate("x", "r1")
			if d := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ---------- documented default bound ----------

func TestDefaultLaneConfigStarvationBound(t *testing.T) {
	// DefaultLaneConfig documents: a job of priority 0 overtakes any fresh
	// job (priority 1000, on-demand) after at most 24 aging intervals
	// (12 minutes). "low" waits behind a running job; when the slot frees,
	// a fresh on-demand priority-1000 job arrives at the same instant.
	tests := map[string]struct {
		wait int // seconds low has waited
		want string
	}{
		"documented bound, 24 intervals": {720, "low"},
		"15 intervals already suffice":   {450, "low"},
		"13 intervals do not":            {390, "fresh"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newTestEngine(t, Config{}, wrk("w").W())
			submitAll(t, e, at(0), job("busy").prio(1000).fk("b"))
			admittedIDs(e, at(0))
			submitAll(t, e, at(0), job("low").prio(0).fk("l"))
			submitAll(t, e, at(tc.wait), job("fresh").prio(1000).od().fk("f"))
			finishOK(t, e, "busy", at(tc.wait), Succeeded)
			a, ok := e.Next(at(tc.wait))
			if !ok {
				t.Fatal("nothing admitted")
			}
			if d := cmp.Diff(tc.want, a.JobID); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
