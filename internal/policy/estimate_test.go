package policy

import (
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
		"nothing learned and no timeout: unknown, the default cost of a second": {
			running: []jobB{job("r1").typ("sleep"), job("r2").typ("sleep")},
			job:     job("x").typ("sleep"),
			now:     at(0),
			want:    want{at(1), BasisUnknown},
		},
		"a running job past its expected end may end any moment": {
			learned: map[string]float64{"short": 3},
			running: []jobB{job("r1").typ("short"), job("r2").typ("short")},
			job:     job("x").typ("short"),
			now:     at(10),
			want:    want{at(10), BasisLearnedCost},
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
