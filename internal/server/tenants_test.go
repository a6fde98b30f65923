package server

import (
	"net/http"
	"testing"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// GET /tenants: each tenant's running and unfinished jobs against its
// limits; a tenant key sees its own only.
func TestTenantUsageAgainstLimits(t *testing.T) {
	cfg := defaultConfig()
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	cfg.Tenants = map[string]config.Tenant{
		"acme":   {APIKeys: []string{"acme-key-0123456789"}, MaxRunning: 1, MaxQueued: 5},
		"globex": {APIKeys: []string{"globex-key-0123456789"}},
	}
	cfg.Workers.APIKeys = []string{"worker-key-0123456789"}
	h := newHarness(t, cfg)
	h.key = "acme-key-0123456789"
	for range 3 {
		h.submit(api.JobSpec{Type: "a"})
	}
	h.key = "worker-key-0123456789"
	w := h.register(api.RegisterRequest{Name: "w", Slots: 4})
	h.lease(w, 4)
	h.key = "admin-key-0123456789"
	var out api.TenantList
	if code := h.do("GET", "/tenants", nil, &out); code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	want := []api.TenantUsage{{Name: "acme", Pending: 2, Running: 1, MaxRunning: 1, MaxQueued: 5}, {Name: "globex"}}
	if len(out.Tenants) != 2 || out.Tenants[0] != want[0] || out.Tenants[1] != want[1] {
		t.Errorf("admin: %+v, want %+v", out.Tenants, want)
	}
	h.key = "globex-key-0123456789"
	h.do("GET", "/tenants", nil, &out)
	if len(out.Tenants) != 1 || out.Tenants[0].Name != "globex" {
		t.Errorf("globex's view: %+v", out.Tenants)
	}
	h.key = "worker-key-0123456789"
	if code := h.do("GET", "/tenants", nil, nil); code != http.StatusForbidden {
		t.Errorf("a worker key: HTTP %d, want 403", code)
	}
}
