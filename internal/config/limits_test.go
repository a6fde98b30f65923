package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

func TestRateLimitsAndQuotasLoad(t *testing.T) {
	c, err := Load(strings.NewReader(`
types: {call-stripe: {}}
tenants:
  acme: {quota: {cpu: 1.5, memory_mb: 4096, gpu: 8}}
rate_limits:
  - {name: stripe, match: {type: call-stripe}, rate: 100, per: 1m}
  - {name: per-customer, rate: 5, per: 1s, burst: 2, by: key}
`))
	if err != nil {
		t.Fatal(err)
	}
	pc := c.PolicyConfig()
	want := []policy.RateLimit{
		{Name: "stripe", Type: "call-stripe", Rate: 100, Per: time.Minute},
		{Name: "per-customer", Rate: 5, Per: time.Second, Burst: 2, By: "key"},
	}
	for i, r := range want {
		if pc.RateLimits[i] != r {
			t.Fatalf("rate_limits[%d] = %+v, want %+v", i, pc.RateLimits[i], r)
		}
	}
	q := pc.Tenants["acme"].Quota
	if *q.MilliCPU != 1500 || *q.MemoryMB != 4096 || *q.GPU != 8 {
		t.Fatalf("quota %v %v %v", *q.MilliCPU, *q.MemoryMB, *q.GPU)
	}
}

func TestRateLimitsAndQuotasErrorsSayWhatToFix(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"rate 0":           {"rate_limits: [{name: r, rate: 0, per: 1s}]\n", "rate_limits.r.rate: must be >= 1"},
		"rate negative":    {"rate_limits: [{name: r, rate: -5, per: 1s}]\n", "rate_limits.r.rate: must be >= 1"},
		"per 0":            {"rate_limits: [{name: r, rate: 1, per: 0}]\n", "rate_limits.r.per: must be a duration > 0"},
		"per negative":     {"rate_limits: [{name: r, rate: 1, per: -1m}]\n", "per: must be a non-negative duration"},
		"burst 0":          {"rate_limits: [{name: r, rate: 1, per: 1s, burst: 0}]\n", "rate_limits.r.burst: must be >= 1"},
		"unknown by":       {"rate_limits: [{name: r, rate: 1, per: 1s, by: customer}]\n", `rate_limits.r.by: unknown field "customer"`},
		"unknown match":    {"rate_limits: [{name: r, rate: 1, per: 1s, match: {colour: red}}]\n", "colour"},
		"unknown type":     {"server: {allow_unknown_types: false}\nrate_limits: [{name: r, rate: 1, per: 1s, match: {type: nope}}]\n", `rate_limits.r.match.type: unknown type "nope"`},
		"no name":          {"rate_limits: [{rate: 1, per: 1s}]\n", "rate_limits[0].name: required"},
		"quota gpu < 0":    {"tenants: {a: {quota: {gpu: -1}}}\n", "tenants.a.quota.gpu: must be >= 0"},
		"quota memory < 0": {"tenants: {a: {quota: {memory_mb: -1}}}\n", "tenants.a.quota.memory_mb: must be >= 0"},
		"quota cpu < 0":    {"tenants: {a: {quota: {cpu: -0.5}}}\n", "tenants.a.quota.cpu: must be a number of cores >= 0"},
		"quota unknown":    {"tenants: {a: {quota: {tpu: 4}}}\n", "tpu"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tc.yaml))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalid saying %q", err, tc.want)
			}
		})
	}
}
