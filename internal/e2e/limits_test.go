package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Issue 30's rate limits and tenant quotas, live: a real server and real
// worker processes running command jobs.

// leaseTimes returns when each job's first attempt was leased, in order.
func leaseTimes(t *testing.T, cl *cluster, ids []string) []time.Time {
	t.Helper()
	var out []time.Time
	for _, id := range ids {
		ex, err := cl.c.Executions(context.Background(), id)
		if err != nil || len(ex) == 0 || ex[0].LeasedAt == nil {
			t.Fatalf("executions of %s: %+v, %v", id, ex, err)
		}
		out = append(out, *ex[0].LeasedAt)
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// Eight jobs of a type limited to 4 starts a second (burst 1) on a worker
// of 8 slots start a quarter of a second apart, not at once; a job of
// another type submitted meanwhile starts without waiting for them; and
// explain names the limit while they wait.
func TestRateLimitHoldsStartsToTheRate(t *testing.T) {
	cl := newCluster(t, `
server:
  lease_ttl: 10s
  heartbeat_interval: 1s
types:
  call-api: {}
  other: {}
rate_limits:
  - {name: api, match: {type: call-api}, rate: 4, per: 1s, burst: 1}
`)
	cl.worker("w-rate", "--slots", "8")
	ctx := context.Background()
	var ids []string
	for range 8 {
		ids = append(ids, cl.submit(api.JobSpec{Type: "call-api", Command: []string{"true"}}).ID)
	}
	eventually(t, 20*time.Second, "explain to say rate_limited for the last job", func() bool {
		x, err := cl.c.Explain(ctx, ids[7])
		return err == nil && x.Code == "rate_limited" && x.RateLimit != nil && x.RateLimit.Limit == "api"
	})
	other := cl.submit(api.JobSpec{Type: "other", Command: []string{"true"}})
	for _, id := range ids {
		cl.wait(id, 30*time.Second)
	}
	cl.wait(other.ID, 30*time.Second)
	at := leaseTimes(t, cl, ids)
	// One token per 250 ms: lease k at least k·250 ms after the first
	// (the times are the engine's decisions, stored to the microsecond).
	for k := 1; k < len(at); k++ {
		if gap := at[k].Sub(at[0]); gap < time.Duration(k)*250*time.Millisecond-time.Millisecond {
			t.Errorf("lease %d came %v after the first, before %v: over the rate", k, gap, time.Duration(k)*250*time.Millisecond)
		}
	}
	oat := leaseTimes(t, cl, []string{other.ID})[0]
	if oat.After(at[len(at)-1]) {
		t.Errorf("the other type's job was leased at %v, after the last rate-limited one (%v): it waited behind them", oat, at[len(at)-1])
	}
}

// Tenant acme, with a quota of 2 GPUs, submits six 1-GPU jobs to a worker
// of 6 GPUs: at most two of them ever run at once; beta's 1-GPU job,
// submitted after, starts while acme's still wait.
func TestTenantQuotaHoldsGPUUse(t *testing.T) {
	cl := newCluster(t, `
server:
  lease_ttl: 10s
  heartbeat_interval: 1s
types:
  train: {resources: {gpu: 1}}
tenants:
  acme: {quota: {gpu: 2}}
`)
	cl.worker("w-gpu", "--slots", "6", "--gpu", "6")
	ctx := context.Background()
	var acme []string
	for range 6 {
		acme = append(acme, cl.submit(api.JobSpec{Type: "train", Tenant: "acme", Command: []string{"sleep", "0.5"}}).ID)
	}
	eventually(t, 20*time.Second, "two of acme's jobs to run", func() bool {
		r, err := cl.c.Get(ctx, acme[1])
		return err == nil && r.Job.State == api.StateRunning
	})
	x, err := cl.c.Explain(ctx, acme[5])
	if err != nil || x.Code != "tenant_quota" || x.Quota == nil || x.Quota.Resource != "gpu" || x.Quota.Limit != 2 {
		t.Errorf("explain of a waiting acme job: %+v, %v", x, err)
	}
	beta := cl.submit(api.JobSpec{Type: "train", Tenant: "beta", Command: []string{"true"}})
	for _, id := range acme {
		cl.wait(id, 60*time.Second)
	}
	cl.wait(beta.ID, 30*time.Second)

	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	for _, id := range acme {
		ex, err := cl.c.Executions(ctx, id)
		if err != nil || len(ex) == 0 || ex[0].StartedAt == nil || ex[0].FinishedAt == nil {
			t.Fatalf("executions of %s: %+v, %v", id, ex, err)
		}
		// Held from the lease (the engine's admission) to the finish.
		edges = append(edges, edge{*ex[0].LeasedAt, +1}, edge{*ex[0].FinishedAt, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.d - b.d // an end before a start at the same instant
	})
	held, peak := 0, 0
	for _, e := range edges {
		held += e.d
		peak = max(peak, held)
	}
	if peak != 2 {
		t.Errorf("acme held up to %d GPUs at once, want 2 (its quota)", peak)
	}
	last := leaseTimes(t, cl, acme[5:])[0]
	if b := leaseTimes(t, cl, []string{beta.ID})[0]; !b.Before(last) {
		t.Errorf("beta's job was leased at %v, after acme's last (%v): it waited behind acme's quota", b, last)
	}
}
