package policy

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestPropertyRateLimitsAreExactAndBlockNoOneElse drives an engine with
// rate limits (one bucket, per key or per tenant, on one type or all) and
// slots enough for every job through random submits, finishes and clock
// steps, and checks every decision against a reference bucket written
// independently (GCRA: a start at t conforms iff TAT − t ≤ (burst − 1)·T,
// T = per/rate, scaled by rate to stay in integers):
//
//   - every admission conforms to each limit the job matches;
//   - after each Dispatch, no pending job conforms to all of its limits
//     (capacity never lacks): a job with a token starts at once, whatever
//     waits in front of it.
func TestPropertyRateLimitsAreExactAndBlockNoOneElse(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var limits []RateLimit
		for i := range rapid.IntRange(1, 2).Draw(rt, "limits") {
			r := RateLimit{
				Name: fmt.Sprintf("r%d", i), Rate: int64(rapid.IntRange(1, 4).Draw(rt, "rate")),
				Per:   time.Duration(rapid.IntRange(1, 8).Draw(rt, "per")) * 250 * time.Millisecond,
				Burst: int64(rapid.IntRange(1, 3).Draw(rt, "burst")),
				By:    rapid.SampledFrom([]string{"", "key", "tenant", "type"}).Draw(rt, "by"),
			}
			if rapid.Bool().Draw(rt, "typed") {
				r.Type = "a"
			}
			limits = append(limits, r)
		}
		e, err := New(Config{Lanes: oneLane(lc().L()), RateLimits: limits})
		if err != nil {
			rt.Fatal(err)
		}
		if err := e.AddWorker(Worker{ID: "w", Slots: 1000}); err != nil {
			rt.Fatal(err)
		}
		ref := newRefBuckets(limits)
		pending := map[string]Job{}
		var running []string
		now := testT0
		for step := range rapid.IntRange(1, 60).Draw(rt, "steps") {
			now = now.Add(time.Duration(rapid.IntRange(0, 8).Draw(rt, "dt")) * 125 * time.Millisecond)
			for i := range rapid.IntRange(0, 3).Draw(rt, "submits") {
				j := Job{ID: fmt.Sprintf("j%d-%d", step, i), Type: rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "type"),
					Key: rapid.SampledFrom([]string{"k1", "k2", "k3"}).Draw(rt, "key"), Tenant: rapid.SampledFrom([]string{"t1", "t2"}).Draw(rt, "tenant"),
					Priority: rapid.SampledFrom([]int{100, 500}).Draw(rt, "prio"), EnqueuedAt: now}
				if err := e.Submit(j, now); err != nil {
					rt.Fatal(err)
				}
				pending[j.ID] = j
			}
			if len(running) > 0 && rapid.Bool().Draw(rt, "finish") {
				i := rapid.IntRange(0, len(running)-1).Draw(rt, "which")
				if _, err := e.Finish(running[i], now, Succeeded); err != nil {
					rt.Fatal(err)
				}
				running = append(running[:i], running[i+1:]...)
			}
			for _, a := range e.Dispatch(now, 0) {
				j := pending[a.JobID]
				if !ref.conforms(j, now) {
					rt.Fatalf("at +%v: %s (type %s key %s tenant %s) admitted without a token", now.Sub(testT0), j.ID, j.Type, j.Key, j.Tenant)
				}
				ref.take(j, now)
				delete(pending, a.JobID)
				running = append(running, a.JobID)
			}
			for _, j := range pending {
				if ref.conforms(j, now) {
					x, _ := e.Explain(j.ID, now)
					rt.Fatalf("at +%v: %s (type %s key %s tenant %s) has its tokens but waits: %s %s", now.Sub(testT0), j.ID, j.Type, j.Key, j.Tenant, x.Code, x.Message)
				}
			}
		}
	})
}

// refBuckets is the reference: per limit and value, the theoretical
// arrival time × rate, in ns since testT0.
type refBuckets struct {
	limits []RateLimit
	tat    map[[2]string]int64
}

func newRefBuckets(limits []RateLimit) *refBuckets {
	return &refBuckets{limits: limits, tat: map[[2]string]int64{}}
}

func (r *refBuckets) each(j Job, f func(l RateLimit, k [2]string)) {
	for _, l := range r.limits {
		if l.Type != "" && l.Type != j.Type {
			continue
		}
		v := map[string]string{"": "", "key": j.Key, "tenant": j.Tenant, "type": j.Type}[l.By]
		f(l, [2]string{l.Name, v})
	}
}

func (r *refBuckets) conforms(j Job, now time.Time) bool {
	ok := true
	r.each(j, func(l RateLimit, k [2]string) {
		t := int64(now.Sub(testT0)) * l.Rate
		tat := max(r.tat[k], t)
		if tat-t > (l.Burst-1)*int64(l.Per) {
			ok = false
		}
	})
	return ok
}

func (r *refBuckets) take(j Job, now time.Time) {
	r.each(j, func(l RateLimit, k [2]string) {
		t := int64(now.Sub(testT0)) * l.Rate
		r.tat[k] = max(r.tat[k], t) + int64(l.Per)
	})
}
