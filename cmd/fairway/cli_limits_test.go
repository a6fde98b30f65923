package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
)

func TestCLILanesShowsRateLimits(t *testing.T) {
	next := time.Date(2026, 11, 21, 12, 1, 0, 0, time.UTC)
	list := api.LaneList{
		Lanes:    []api.LaneInfo{{Name: "default", Weight: 1}},
		Capacity: api.Capacity{Slots: 4},
		RateLimits: []api.RateLimitInfo{
			{Name: "stripe", Type: "call-stripe", Rate: 100, Per: "1m0s", Burst: 100, Buckets: []api.RateBucket{}},
			{Name: "per-customer", By: "key", Rate: 5, Per: "1s", Burst: 1, BucketsNotFull: 3,
				Buckets: []api.RateBucket{{Value: "cus_1", Tokens: 0.25, NextToken: next}, {Value: "cus_2", Tokens: 0.5, NextToken: next}}},
		},
	}
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/lanes": replyWith(200, list)})
	code, out, errOut := runCLI(t, f.URL, "lanes")
	for _, line := range []string{"RATE LIMIT", "stripe", "type call-stripe", "100/1m0s", "full", "cus_1", "0.25", "2026-11-21T12:01:00Z", "(1 more not full)", "every job"} {
		if !strings.Contains(out, line) {
			t.Errorf("lanes output lacks %q:\n%s", line, out)
		}
	}
	if code != 0 || errOut != "" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestCLITenants(t *testing.T) {
	gpu, cpu := int64(8), 4.5
	list := api.TenantList{Tenants: []api.TenantUsage{
		{Name: "acme", Pending: 3, Running: 4, MaxRunning: 10, Quota: &api.Quota{CPU: &cpu, GPU: &gpu}, Held: api.Resources{CPU: 2, GPU: 8}},
		{Name: "beta", Running: 1, Held: api.Resources{MemoryMB: 512}},
	}}
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/tenants": replyWith(200, list)})
	code, out, errOut := runCLI(t, f.URL, "tenants")
	want := `TENANT  PENDING  RUNNING  MAX_RUNNING  MAX_QUEUED  CPU       MEM_MB    GPU
acme    3        4        10           0           2 of 4.5  0 of -    8 of 8
beta    0        1        0            0           0 of -    512 of -  0 of -
`
	if code != 0 || out != want || errOut != "" {
		t.Errorf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, want)
	}
	code, out, _ = runCLI(t, f.URL, "tenants", "--json")
	if diff := cmp.Diff(list, decodeJSON[api.TenantList](t, out)); code != 0 || diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestCLIExplainRateLimitAndQuota(t *testing.T) {
	next := time.Date(2026, 11, 21, 12, 1, 0, 0, time.UTC)
	for _, tc := range []struct {
		x    api.Explanation
		want string
	}{
		{api.Explanation{JobID: "j1", Code: "rate_limited", RateLimit: &api.RateLimitBlock{Limit: "per-customer", By: "key", Value: "cus_1", Rate: 5, Per: "1s", Burst: 1, NextToken: next}},
			"rate limit:  per-customer: 5 per 1s, burst 1, bucket key cus_1; next token at 2026-11-21T12:01:00Z"},
		{api.Explanation{JobID: "j1", Code: "tenant_quota", Quota: &api.QuotaBlock{Tenant: "acme", Resource: "gpu", Used: 8, Limit: 8, Need: 2}},
			"tenant quota:  gpu 8 of 8 in use, the job needs 2"},
	} {
		f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/jobs/{id}/explain": replyWith(200, tc.x)})
		code, out, _ := runCLI(t, f.URL, "explain", "j1")
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("exit %d, stdout\n%s\nwant a line %q", code, out, tc.want)
		}
	}
}
