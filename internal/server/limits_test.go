package server

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/postgres"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

// limitStores opens, on each call, a new connection to one database: a
// SQLite file or a private PostgreSQL schema (skipped without
// FAIRWAY_TEST_POSTGRES_URL).
func limitStores() map[string]func(t *testing.T) func() store.Store {
	return map[string]func(t *testing.T) func() store.Store{
		"sqlite": func(t *testing.T) func() store.Store {
			path := filepath.Join(t.TempDir(), "fairway.db")
			return func() store.Store {
				st, err := sqlite.Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
		},
		"postgres": func(t *testing.T) func() store.Store {
			url := pgtest.URL(t)
			return func() store.Store {
				st, err := postgres.Open(context.Background(), url)
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
		},
	}
}

// startOn starts a server on st behind a loopback HTTP server.
func startOn(t *testing.T, cfg config.Config, st store.Store, clock *fakeClock) *harness {
	t.Helper()
	srv, err := New(Options{Store: st, Config: cfg, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: clock, srv: srv, http: httptest.NewServer(srv.Handler())}
	t.Cleanup(func() { h.stop(); st.Close() })
	return h
}

func limitsConfig(quotaGPU int64) config.Config {
	cfg := defaultConfig()
	cfg.Server.AllowUnknownTypes = false
	cfg.Types = map[string]config.Type{
		"call-stripe": {Timeout: config.Duration(time.Minute)},
		"train":       {Resources: config.Resources{GPU: 2}, Timeout: config.Duration(time.Hour)},
	}
	cfg.Tenants = map[string]config.Tenant{"acme": {Quota: &config.Quota{GPU: &quotaGPU}}}
	cfg.RateLimits = []config.RateLimit{{Name: "stripe", Match: config.RateMatch{Type: "call-stripe"}, Rate: 1, Per: config.Duration(time.Minute)}}
	return cfg
}

// Explain names the rate limit and the quota with their fields; the
// views show them; a restart with a tighter quota loses and stops
// nothing, and admits nothing more of the tenant until it is under it.
func TestRateLimitAndQuotaOverHTTPOnBothStores(t *testing.T) {
	for name, open := range limitStores() {
		t.Run(name, func(t *testing.T) {
			connect := open(t)
			clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
			t0 := clock.Now()
			h := startOn(t, limitsConfig(4), connect(), clock)
			w := h.register(api.RegisterRequest{Name: "w", Slots: 8, GPU: 8})
			s1, s2 := h.submit(api.JobSpec{Type: "call-stripe", Tenant: "shop"}), h.submit(api.JobSpec{Type: "call-stripe", Tenant: "shop"})
			var trains []api.Job
			for range 3 {
				trains = append(trains, h.submit(api.JobSpec{Type: "train", Tenant: "acme"}))
			}
			leased := map[string]bool{}
			for _, l := range h.lease(w, 8) {
				leased[l.Job.ID] = true
				h.start(w, l.Job.ID, l.Attempt)
			}
			if len(leased) != 3 || !leased[s1.ID] || !leased[trains[0].ID] || !leased[trains[1].ID] {
				t.Fatalf("leased %v, want %s, %s and %s", leased, s1.ID, trains[0].ID, trains[1].ID)
			}

			var x api.Explanation
			h.do("GET", "/jobs/"+s2.ID+"/explain", nil, &x)
			if x.Code != "rate_limited" || x.RateLimit == nil || x.RateLimit.Limit != "stripe" || x.RateLimit.Per != "1m0s" ||
				!x.RateLimit.NextToken.Equal(t0.Add(time.Minute)) {
				t.Fatalf("explain %s = %+v %+v", s2.ID, x, x.RateLimit)
			}
			h.do("GET", "/jobs/"+trains[2].ID+"/explain", nil, &x)
			if x.Code != "tenant_quota" || x.Quota == nil || *x.Quota != (api.QuotaBlock{Tenant: "acme", Resource: "gpu", Used: 4, Limit: 4, Need: 2}) {
				t.Fatalf("explain %s = %+v %+v", trains[2].ID, x, x.Quota)
			}
			var jobs api.JobList
			h.do("GET", "/jobs?state=pending", nil, &jobs)
			for _, j := range jobs.Jobs {
				if want := map[string]string{s2.ID: "rate_limited", trains[2].ID: "tenant_quota"}[j.ID]; j.Reason != want {
					t.Errorf("list: %s reason %q, want %q", j.ID, j.Reason, want)
				}
			}
			var tenants api.TenantList
			h.do("GET", "/tenants", nil, &tenants)
			if tn := tenants.Tenants[0]; tn.Name != "acme" || tn.Quota == nil || *tn.Quota.GPU != 4 || tn.Held.GPU != 4 {
				t.Fatalf("tenants %+v", tenants.Tenants)
			}
			var lanes api.LaneList
			h.do("GET", "/lanes", nil, &lanes)
			if len(lanes.RateLimits) != 1 || len(lanes.RateLimits[0].Buckets) != 1 || lanes.RateLimits[0].Buckets[0].Tokens != 0 {
				t.Fatalf("lanes rate limits %+v", lanes.RateLimits)
			}

			// Restart with the quota cut to 2: both running jobs stay, the
			// third train stays queued.
			h.stop()
			h = startOn(t, limitsConfig(2), connect(), clock)
			for _, j := range trains[:2] {
				if got := h.get(j.ID); got.State != api.StateRunning {
					t.Fatalf("after the restart %s is %s, want running", j.ID, got.State)
				}
			}
			if got := h.get(trains[2].ID); got.State != api.StatePending {
				t.Fatalf("after the restart %s is %s, want pending", trains[2].ID, got.State)
			}
			// The new engine's buckets start full and restored workers take
			// leases from the first batch on (they have one lease TTL to call
			// in): a batch leases s2 to w, and nothing of acme's. Without the
			// tick, whether s2 is still pending here depends on whether a
			// housekeeping batch ran before the read.
			h.tick()
			if got := h.get(s2.ID); got.State != api.StateRunning || got.WorkerID != w || got.Attempt != 1 {
				t.Fatalf("after the restart and a batch %s is %s on %q (attempt %d), want running on %s", s2.ID, got.State, got.WorkerID, got.Attempt, w)
			}
			if got := h.get(trains[2].ID); got.State != api.StatePending {
				t.Fatalf("after a batch %s is %s, want pending", trains[2].ID, got.State)
			}
			if ls := h.lease(w, 8); len(ls) != 1 || ls[0].Job.ID != s2.ID {
				t.Fatalf("leased after the restart: %+v, want %s", ls, s2.ID)
			}
			h.do("GET", "/jobs/"+trains[2].ID+"/explain", nil, &x)
			if x.Code != "tenant_quota" || x.Quota.Used != 4 || x.Quota.Limit != 2 {
				t.Fatalf("explain after the restart = %+v %+v", x, x.Quota)
			}
			h.complete(w, api.Completion{JobID: trains[0].ID, Attempt: 1, Outcome: api.OutcomeSucceeded})
			if ls := h.lease(w, 8); len(ls) != 0 {
				t.Fatalf("at 2 of 2 GPUs: leased %+v", ls)
			}
			h.complete(w, api.Completion{JobID: trains[1].ID, Attempt: 1, Outcome: api.OutcomeSucceeded})
			if ls := h.lease(w, 8); len(ls) != 1 || ls[0].Job.ID != trains[2].ID {
				t.Fatalf("at 0 of 2 GPUs: leased %+v, want %s", ls, trains[2].ID)
			}
		})
	}
}
