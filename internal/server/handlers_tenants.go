package server

import (
	"net/http"
	"sort"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// handleTenants is each tenant's load against its limits: every tenant
// configured or with unfinished jobs for an admin key, its own for a
// tenant key.
func (s *Server) handleTenants(w http.ResponseWriter, r *http.Request, p principal) error {
	if p.role == roleWorker {
		return errf(http.StatusForbidden, api.CodePermissionDenied, "worker keys cannot read tenants' usage")
	}
	snap, ok := s.d.MetricsSnapshot(r.Context())
	if !ok {
		return errf(http.StatusServiceUnavailable, api.CodeServerUnavailable, "the dispatcher is not running")
	}
	held, err := s.d.TenantsHeld(r.Context())
	if err != nil {
		return err
	}
	usage := map[string]*api.TenantUsage{}
	get := func(name string) *api.TenantUsage {
		u := usage[name]
		if u == nil {
			t := s.cfg.Tenants[name]
			u = &api.TenantUsage{Name: name, MaxRunning: t.MaxRunning, MaxQueued: t.MaxQueued, Quota: apiQuota(t.Quota), Held: held[name]}
			usage[name] = u
		}
		return u
	}
	for name := range s.cfg.Tenants {
		get(name)
	}
	for _, c := range snap.Jobs {
		u := get(c.Tenant)
		u.Pending += c.Pending
		u.Running += c.Running
	}
	out := api.TenantList{Tenants: []api.TenantUsage{}}
	for name, u := range usage {
		if p.role == roleTenant && name != p.tenant {
			continue
		}
		out.Tenants = append(out.Tenants, *u)
	}
	if p.role == roleTenant && len(out.Tenants) == 0 {
		out.Tenants = append(out.Tenants, *get(p.tenant))
	}
	sort.Slice(out.Tenants, func(i, j int) bool { return out.Tenants[i].Name < out.Tenants[j].Name })
	writeJSON(w, http.StatusOK, out)
	return nil
}

// apiQuota is a configured quota as the API shows it (nil: none).
func apiQuota(q *config.Quota) *api.Quota {
	if q == nil || (q.CPU == nil && q.MemoryMB == nil && q.GPU == nil) {
		return nil
	}
	return &api.Quota{CPU: q.CPU, MemoryMB: q.MemoryMB, GPU: q.GPU}
}
