package policy

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func quotaCfg(q Quota) Config {
	return Config{Lanes: oneLane(lc().L()), Tenants: map[string]TenantConfig{"a": {Quota: q}}}
}

func TestTenantQuotaAdmitFinishRelease(t *testing.T) {
	e := newTestEngine(t, quotaCfg(Quota{GPU: int64p(2)}), wrk("w").slots(10).gpu(8).cpu(8000).W())
	submitAll(t, e, at(0),
		job("a1").tenant("a").gpu(1).prio(900), job("a2").tenant("a").gpu(1).prio(900), job("a3").tenant("a").gpu(1).prio(900),
		job("a-cpu").tenant("a").cpu(1000).prio(900), // no GPU: the quota does not hold it
		job("b1").tenant("b").gpu(1), job("b2").tenant("b").gpu(1))
	got := admittedIDs(e, at(0))
	slices.Sort(got)
	if diff := cmp.Diff([]string{"a-cpu", "a1", "a2", "b1", "b2"}, got); diff != "" {
		t.Fatalf("admitted (-want +got):\n%s", diff)
	}
	x, _ := e.Explain("a3", at(1))
	if x.Code != CodeTenantQuota || x.Quota == nil || *x.Quota != (QuotaBlock{"a", "gpu", 2, 2, 1}) {
		t.Fatalf("Explain(a3) = %+v %+v", x, x.Quota)
	}
	if !strings.Contains(x.Message, "gpu 2 of 2") {
		t.Fatalf("message %q", x.Message)
	}
	if diff := cmp.Diff(TenantStats{Name: "a", Running: 3, Used: Resources{MilliCPU: 1000, GPU: 2}, Quota: Quota{GPU: int64p(2)}}, e.Tenants()[0]); diff != "" {
		t.Fatalf("Tenants()[0] (-want +got):\n%s", diff)
	}
	finishOK(t, e, "a1", at(2), Released) // a preemption's end, or a lost lease
	if diff := cmp.Diff([]string{"a3"}, admittedIDs(e, at(2))); diff != "" {
		t.Fatalf("after a release (-want +got):\n%s", diff)
	}
}

func TestTenantQuotaZeroAllowsNone(t *testing.T) {
	e := newTestEngine(t, quotaCfg(Quota{GPU: int64p(0), MemoryMB: int64p(1024)}), wrk("w").slots(10).gpu(8).mem(8192).W())
	submitAll(t, e, at(0), job("g").tenant("a").gpu(1), job("m1").tenant("a").mem(1024), job("m2").tenant("a").mem(1))
	if diff := cmp.Diff([]string{"m1"}, admittedIDs(e, at(0))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	for id, want := range map[string]string{"g": "gpu 0 of 0", "m2": "memory_mb 1024 of 1024"} {
		if x, _ := e.Explain(id, at(0)); x.Code != CodeTenantQuota || !strings.Contains(x.Message, want) {
			t.Fatalf("Explain(%s) = %s %q", id, x.Code, x.Message)
		}
	}
}

// A reload that tightens limits is a new engine built from the store:
// running jobs are restored (beyond the new limits if need be), queued
// jobs submitted again. Nothing is lost or stopped; new admissions wait.
func TestTightenedLimitsOnReloadKeepEverything(t *testing.T) {
	loose := Config{Lanes: oneLane(lc().L())}
	w := wrk("w").slots(10).gpu(8).W()
	old := newTestEngine(t, loose, w)
	jobs := []jobB{
		job("r1").tenant("a").typ("stripe").gpu(2), job("r2").tenant("a").typ("stripe").gpu(2),
		job("r3").tenant("a").typ("stripe").gpu(2),
	}
	submitAll(t, old, at(0), jobs...)
	running := old.Dispatch(at(0), 0)
	queued := []jobB{job("q1").tenant("a").typ("stripe").gpu(2), job("q2").tenant("b").typ("stripe"), job("q3").tenant("b").typ("other")}

	tight := loose
	tight.Tenants = map[string]TenantConfig{"a": {Quota: Quota{GPU: int64p(4)}}}
	tight.RateLimits = []RateLimit{{Name: "stripe", Type: "stripe", Rate: 1, Per: time.Minute, Burst: 1}}
	e := newTestEngine(t, tight, w)
	for i, a := range running {
		if err := e.Restore(jobs[i].J(), a.WorkerID, at(0), a.Cost); err != nil {
			t.Fatalf("Restore(%s): %v", a.JobID, err)
		}
	}
	submitAll(t, e, at(1), queued...)
	if total, run := e.Len(); total != 6 || run != 3 {
		t.Fatalf("Len = %d, %d running; want 6, 3", total, run)
	}
	if u := e.Tenants()[0].Used.GPU; u != 6 {
		t.Fatalf("tenant a holds %d GPUs, want the 6 restored (over its new quota of 4)", u)
	}
	got := admittedIDs(e, at(1))
	if diff := cmp.Diff([]string{"q2", "q3"}, got); diff != "" {
		t.Fatalf("admitted (-want +got):\n%s", diff)
	}
	if x, _ := e.Explain("q1", at(1)); x.Code != CodeTenantQuota || x.Quota.Used != 6 || x.Quota.Limit != 4 {
		t.Fatalf("Explain(q1) = %+v", x)
	}
	finishOK(t, e, "r1", at(2), Succeeded)
	if got := admittedIDs(e, at(2)); len(got) != 0 {
		t.Fatalf("at 4 of 4 GPUs: admitted %v", got)
	}
	finishOK(t, e, "r2", at(3), Succeeded)
	if x, _ := e.Explain("q1", at(3)); x.Code != CodeRateLimited {
		t.Fatalf("Explain(q1) = %s (q2 took the minute's token)", x.Code)
	}
	if diff := cmp.Diff([]string{"q1"}, admittedIDs(e, at(61))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestNoLimitsConfiguredCostsNothingObservable(t *testing.T) {
	e := newTestEngine(t, Config{Lanes: oneLane(lc().L())}, wrk("w").slots(2).W())
	submitAll(t, e, at(0), job("a"), job("b"), job("c"))
	admittedIDs(e, at(0))
	if _, ok := e.NextToken(); ok {
		t.Fatal("NextToken with no limits")
	}
	if st := e.RateLimits(at(0)); len(st) != 0 {
		t.Fatalf("RateLimits = %+v", st)
	}
	if x, _ := e.Explain("c", at(0)); x.Code != CodeReserved {
		t.Fatalf("Explain(c) = %s", x.Code)
	}
}
