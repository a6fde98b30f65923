package policy

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// Tenant resource quotas (docs/scheduling.md, "Tenant quotas").
//
// A tenant's quota caps the resources its running jobs hold together. It
// is checked where the tenant cap is, on a class (one tenant's jobs of one
// shape): a class whose head would take the tenant past its quota is
// parked with the tenant and comes back when one of the tenant's jobs
// ends. Restore charges the quota as it charges the caps, beyond it if the
// jobs already ran beyond it: a tighter quota stops new admissions and
// ends nothing.

// Quota is what a tenant's running jobs may hold together. A nil field is
// no limit; 0 allows none of that resource.
type Quota struct {
	MilliCPU *int64
	MemoryMB *int64
	GPU      *int64
}

// IsZero reports whether the quota limits nothing.
func (q Quota) IsZero() bool { return q.MilliCPU == nil && q.MemoryMB == nil && q.GPU == nil }

func (q Quota) validate() error {
	for _, f := range []struct {
		name string
		v    *int64
	}{{"cpu", q.MilliCPU}, {"memory_mb", q.MemoryMB}, {"gpu", q.GPU}} {
		if f.v != nil && *f.v < 0 {
			return fmt.Errorf("quota.%s: must be >= 0, got %d (omit it for no limit)", f.name, *f.v)
		}
	}
	return nil
}

// limits is the quota as a vector, math.MaxInt64 where unlimited.
func (q Quota) limits() Resources {
	get := func(p *int64) int64 {
		if p == nil {
			return math.MaxInt64
		}
		return *p
	}
	return Resources{get(q.MilliCPU), get(q.MemoryMB), get(q.GPU)}
}

// quotaFits reports whether the tenant's running jobs and one more of
// demand d stay within its quota.
func (t *tenant) quotaFits(d Resources) bool {
	if !t.hasQuota {
		return true
	}
	u := t.used.Add(d)
	return t.quota.Covers(u)
}

// QuotaBlock is what Explain says of a quota a job would exceed: the
// first resource, what the tenant's running jobs hold of it, its limit
// and what the job asks.
type QuotaBlock struct {
	Tenant   string
	Resource string // cpu (in millicores), memory_mb or gpu
	Used     int64
	Limit    int64
	Need     int64
}

// quotaBlock names the first resource of d the tenant's quota lacks.
func (t *tenant) quotaBlock(d Resources) QuotaBlock {
	u, q := t.used, t.quota
	switch {
	case u.GPU+d.GPU > q.GPU:
		return QuotaBlock{t.name, "gpu", u.GPU, q.GPU, d.GPU}
	case u.MemoryMB+d.MemoryMB > q.MemoryMB:
		return QuotaBlock{t.name, "memory_mb", u.MemoryMB, q.MemoryMB, d.MemoryMB}
	}
	return QuotaBlock{t.name, "cpu", u.MilliCPU, q.MilliCPU, d.MilliCPU}
}

func quotaMessage(b QuotaBlock) string {
	if b.Resource == "cpu" {
		return fmt.Sprintf("tenant %s quota: cpu %gm of %gm in use, the job needs %gm", b.Tenant, float64(b.Used), float64(b.Limit), float64(b.Need))
	}
	return fmt.Sprintf("tenant %s quota: %s %d of %d in use, the job needs %d", b.Tenant, b.Resource, b.Used, b.Limit, b.Need)
}

// TenantStats is a tenant's running jobs and what they hold against its
// limits.
type TenantStats struct {
	Name       string
	Running    int
	MaxRunning int // 0: no cap
	Used       Resources
	Quota      Quota // nil fields: no limit
}

// Tenants returns every tenant the engine knows (configured or seen),
// sorted by name.
func (e *Engine) Tenants() []TenantStats {
	names := map[string]bool{}
	for n := range e.cfg.Tenants {
		names[n] = true
	}
	for n := range e.tenants {
		names[n] = true
	}
	out := make([]TenantStats, 0, len(names))
	for _, n := range slices.Sorted(maps.Keys(names)) {
		s := TenantStats{Name: n, MaxRunning: e.cfg.Tenants[n].MaxRunning, Quota: e.cfg.Tenants[n].Quota}
		if t := e.tenants[n]; t != nil {
			s.Running, s.Used = t.running, t.used
		}
		out = append(out, s)
	}
	return out
}
