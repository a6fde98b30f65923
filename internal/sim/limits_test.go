package sim

import (
	"strings"
	"testing"
	"time"
)

// The stripe jobs start at the rate (checked by the replay's GCRA on
// every run, and here by their start times), per customer at most 2 a
// second, and the reports behind them start on arrival.
func TestRateLimitScenarioHoldsStartsToTheRate(t *testing.T) {
	res := run(t, loadFile(t, "ratelimit-stripe.yaml"))
	var starts []time.Duration
	for _, e := range res.Events {
		if e.Kind == Admit && e.Type == "call-stripe" {
			starts = append(starts, e.At)
		}
	}
	if len(starts) != 60 {
		t.Fatalf("%d stripe jobs started, want 60", len(starts))
	}
	// Burst 3 at T=0, then one per 6 s: the k-th (k >= 3) at (k-2)·6 s.
	for k, at := range starts {
		want := time.Duration(0)
		if k >= 3 {
			want = time.Duration(k-2) * 6 * time.Second
		}
		if at != want {
			t.Fatalf("stripe start %d at %v, want %v", k, at, want)
		}
	}
	arrived := byID(res.Events, Arrive)
	for _, e := range res.Events {
		if e.Kind == Admit && e.Type == "report" && e.At != arrived[e.ID].At {
			t.Fatalf("report %s waited %v behind rate-limited jobs", e.ID, e.At-arrived[e.ID].At)
		}
	}
}

// Without the limits the same jobs all start at once: the scenario shows
// the limit, not the pool.
func TestRateLimitScenarioWithoutLimits(t *testing.T) {
	s := loadFile(t, "ratelimit-stripe.yaml")
	s.RateLimits = nil
	res := run(t, s)
	n := 0
	for _, e := range res.Events {
		if e.Kind == Admit && e.Type == "call-stripe" && e.At == 0 {
			n++
		}
	}
	if n != 16 {
		t.Fatalf("%d stripe jobs at T=0 without limits, want 16 (every slot)", n)
	}
}

// acme never holds more than its 8 GPUs (the replay checks the quota at
// every admission), and beta's jobs start on arrival; without the quota
// they wait for acme's backlog.
func TestTenantQuotaScenarioLeavesRoomForOthers(t *testing.T) {
	res := run(t, loadFile(t, "tenant-quota-gpu.yaml"))
	arrived := byID(res.Events, Arrive)
	for _, e := range res.Events {
		if e.Kind == Admit && e.Tenant == "beta" && e.At != arrived[e.ID].At {
			t.Fatalf("beta's %s waited %v with acme at its quota", e.ID, e.At-arrived[e.ID].At)
		}
	}

	s := loadFile(t, "tenant-quota-gpu.yaml")
	s.Tenants = nil
	res = run(t, s)
	for _, e := range res.Events {
		if e.Kind == Admit && e.Tenant == "beta" && e.At < sec(300) {
			t.Fatalf("without the quota beta's %s started at %v: the scenario no longer shows the quota", e.ID, e.At)
		}
	}
}

func TestScenarioLimitsErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"rate_limits: [{name: r, rate: 0, per: 1s}]\njobs: [{type: t}]\n":             "rate_limits.r.rate: must be >= 1",
		"rate_limits: [{name: r, rate: 1, per: 1s, burst: 0}]\njobs: [{type: t}]\n":   "rate_limits[0].burst: must be >= 1",
		"rate_limits: [{name: r, rate: 1, per: 1s, by: colour}]\njobs: [{type: t}]\n": "unknown field \"colour\"",
		"tenants: {a: {quota: {gpu: -2}}}\njobs: [{type: t}]\n":                       "tenants.a.quota.gpu: must be >= 0",
		"tenants: {a: {quota: {tpu: 2}}}\njobs: [{type: t}]\n":                        "tpu",
	} {
		_, err := Load(strings.NewReader(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}
