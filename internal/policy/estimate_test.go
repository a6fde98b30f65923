package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func (b jobB) timeout(d time.Duration) jobB { b.j.Timeout = d; return b }

// The case and its neighbours, in virtual time: two slots busy
// with jobs started at t0; the estimate of a job waiting behind them.
func TestEstimateStartCountsRunningAndQueuedJobs(t *testing.T) {
	type want struct {
		At    time.Time
		Basis Basis
	}
	tests := map[string]struct {
		learned map[string]float64 // type -> learned cost in seconds (key "")
		running []jobB             // admitted at t0 onto the two slots
		ahead   []jobB             // queued before the job, same priority
		job     jobB
		now     time.Time
		want    want
	}{
		"both slots busy with fresh 3 s jobs": {
			learned: map[string]float64{"short": 3},
			running: []jobB{job("r1").typ("short"), job("r2").typ("short")},
			job:     job("x").typ("short"),
			now:     at(0),
			want:    want{at(3), BasisLearnedCost},
		},
		"one second later": {
			learned: map[string]float64{"short": 3},
			running: []jobB{job("r1").typ("short"), job("r2").typ("short")},
			job:     job("x").typ("short"),
			now:     at(1),
			want:    want{at(3), BasisLearnedCost},
		},
		"three jobs ahead take the slots first": {
			learned: map[string]float64{"short": 3},
			running: []jobB{job("r1").typ("short"), job("r2").typ("short")},
			ahead:   []jobB{job("a1").typ("short"), job("a2").typ("short"), job("a3").typ("short")},
			job:     job("x").typ("short"),
			now:     at(0),
			// slots free at 3, 3; a1, a2 run 3-6; a3 runs 6-9; x starts at 6.
			want: want{at(6), BasisLearnedCost},
		},
		"nothing learned: the running jobs' timeouts bound them": {
			running: []jobB{job("r1").typ("long").timeout(60 * time.Second), job("r2").typ("long").timeout(90 * time.Second)},
			job:     job("x").typ("long"),
			now:     at(2),
			want:    want{at(60), BasisTimeout},
		},
		"nothing learned and no timeout: unknown, and no time": {
			running: []jobB{job("r1").typ("sleep"), job("r2").typ("sleep")},
			job:     job("x").typ("sleep"),
			now:     at(0),
			want:    want{time.Time{}, BasisUnknown},
		},
		"a running job past its expected end is expected to end a second from now": {
			learned: map[string]float64{"short": 3},
			running: []jobB{job("r1").typ("short"), job("r2").typ("short")},
			job:     job("x").typ("short"),
			now:     at(10),
			want:    want{at(11), BasisLearnedCost},
		},
		"an early estimate below the elapsed time does not say now": {
			// One 5 s run learned from the default of 1 s: 0.3·5 + 0.7·1.
			learned: map[string]float64{"short": 2.2},
			running: []jobB{job("r1").typ("short"), job("r2").typ("short")},
			job:     job("x").typ("short"),
			now:     at(3),
			want:    want{at(4), BasisLearnedCost}, // overdue: a second from now, never now
		},
		"a free slot: now": {
			learned: map[string]float64{"short": 3},
			running: []jobB{job("r1").typ("short")},
			job:     job("x").typ("short"),
			now:     at(0),
			want:    want{at(0), BasisLearnedCost},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newTestEngine(t, Config{Lanes: oneLane(lc().L())}, wrk("w").slots(2).W())
			for typ, c := range tc.learned {
				e.SetEstimate(typ, "", c, at(0))
			}
			submitAll(t, e, at(0), tc.running...)
			if got := admittedIDs(e, at(0)); len(got) != len(tc.running) {
				t.Fatalf("admitted %v, want the %d running jobs", got, len(tc.running))
			}
			submitAll(t, e, at(0), tc.ahead...)
			submitAll(t, e, at(0), tc.job.enq(at(1)))
			got, ok := e.EstimateStart("x", tc.now)
			if !ok {
				t.Fatal("no estimate")
			}
			if diff := cmp.Diff(want{tc.want.At, tc.want.Basis}, want{got.At, got.Basis}); diff != "" {
				t.Errorf("estimate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEstimateStartOnlyForQueuedJobs(t *testing.T) {
	e := newTestEngine(t, Config{Lanes: oneLane(lc().L())}, wrk("w").W())
	submitAll(t, e, at(0), job("run"), job("later").runAt(at(60)))
	admittedIDs(e, at(0))
	for _, id := range []string{"run", "later", "nope"} {
		if _, ok := e.EstimateStart(id, at(0)); ok {
			t.Errorf("%s: an estimate for a job that is not queued", id)
		}
	}
}

// Idle slots that cannot run the job are not free for it: two busy
// general slots and two idle pdf-only slots.
func TestEstimateStartIgnoresIdleIncompatibleSlots(t *testing.T) {
	e := newTestEngine(t, Config{Lanes: oneLane(lc().L())},
		wrk("general").slots(2).W(), wrk("pdf").types("pdf").slots(2).W())
	e.SetEstimate("report", "", 300, at(0))
	submitAll(t, e, at(0), job("r1").typ("report"), job("r2").typ("report"))
	if got := admittedIDs(e, at(0)); len(got) != 2 {
		t.Fatalf("admitted %v", got)
	}
	submitAll(t, e, at(1), job("x").typ("report"))
	got, ok := e.EstimateStart("x", at(30))
	if !ok || !got.At.Equal(at(300)) || got.Basis != BasisLearnedCost {
		t.Errorf("estimate = %+v, %v; want at(300) from the learned cost (the pdf slots cannot run it)", got, ok)
	}
}

// A queued job's estimate names the job whose run time is unknown.
func TestEstimateStartUnknownSaysWhy(t *testing.T) {
	e := newTestEngine(t, Config{Lanes: oneLane(lc().L())}, wrk("w").slots(1).W())
	submitAll(t, e, at(0), job("r1").typ("sleep"))
	admittedIDs(e, at(0))
	submitAll(t, e, at(1), job("x").typ("sleep"))
	got, ok := e.EstimateStart("x", at(2))
	if !ok || !got.At.IsZero() || got.Basis != BasisUnknown || !strings.Contains(got.Reason, "r1") {
		t.Errorf("estimate = %+v, %v; want unknown, no time, naming r1", got, ok)
	}
}
