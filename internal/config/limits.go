package config

import (
	"fmt"
	"math"

	"github.com/fairwayhq/fairway/internal/policy"
)

// RateLimit bounds the starts of the jobs it matches (docs/scheduling.md,
// "Rate limits"): rate starts per per, in bursts of up to burst (default:
// rate), in one token bucket or one per value of by: type, lane, tenant,
// key or label:NAME.
type RateLimit struct {
	Name  string    `yaml:"name"`
	Match RateMatch `yaml:"match"`
	Rate  int64     `yaml:"rate"`
	Per   Duration  `yaml:"per"`
	Burst *int64    `yaml:"burst"`
	By    string    `yaml:"by"`
}

// RateMatch picks the jobs a rate limit applies to; an empty field
// matches any.
type RateMatch struct {
	Type string `yaml:"type"`
	Lane string `yaml:"lane"`
}

// Quota caps what a tenant's running jobs hold together; an omitted
// resource is not limited, 0 allows none of it. CPU is in cores.
type Quota struct {
	CPU      *float64 `yaml:"cpu"`
	MemoryMB *int64   `yaml:"memory_mb"`
	GPU      *int64   `yaml:"gpu"`
}

// validate checks the fields the engine's validation cannot see in YAML
// terms: an explicit burst below 1, a type that is not configured.
func (r RateLimit) validate(i int, c *Config) error {
	field := fmt.Sprintf("rate_limits[%d]", i)
	if r.Name != "" {
		field = "rate_limits." + r.Name
	}
	if r.Burst != nil && *r.Burst < 1 {
		return invalid(field+".burst", fmt.Sprintf("must be >= 1, got %d (omit it for a burst of rate)", *r.Burst))
	}
	if r.Match.Type != "" && !c.Server.AllowUnknownTypes && !hasKey(c.Types, r.Match.Type) {
		return invalid(field+".match.type", fmt.Sprintf("unknown type %q (configure it under types)", r.Match.Type))
	}
	return nil
}

// Policy is the engine's rate limit.
func (r RateLimit) Policy() policy.RateLimit {
	out := policy.RateLimit{Name: r.Name, Type: r.Match.Type, Lane: r.Match.Lane, Rate: r.Rate, Per: r.Per.D(), By: r.By}
	if r.Burst != nil {
		out.Burst = *r.Burst
	}
	return out
}

func (q *Quota) validate(tenant string) error {
	if q == nil {
		return nil
	}
	if v := q.CPU; v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 || *v > maxCores) {
		return invalid("tenants."+tenant+".quota.cpu", "must be a number of cores >= 0 (omit it for no limit)")
	}
	return nil // memory_mb and gpu below 0: the engine's validation names them
}

// Policy is the engine's quota.
func (q *Quota) Policy() policy.Quota {
	if q == nil {
		return policy.Quota{}
	}
	out := policy.Quota{MemoryMB: q.MemoryMB, GPU: q.GPU}
	if q.CPU != nil {
		m := int64(math.Round(*q.CPU * 1000))
		out.MilliCPU = &m
	}
	return out
}
