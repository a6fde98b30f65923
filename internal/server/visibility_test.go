package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// A tenant key sees its own jobs' counts in GET /lanes and no worker
// details; admin keys see everything.
func TestTenantKeysSeeOnlyTheirOwnLoad(t *testing.T) {
	cfg := defaultConfig()
	cfg.Tenants = map[string]config.Tenant{
		"acme":   {APIKeys: []string{"acme-key-0123456789"}},
		"globex": {APIKeys: []string{"globex-key-0123456789"}},
	}
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	cfg.Workers.APIKeys = []string{"worker-key-0123456789"}
	h := newHarness(t, cfg)
	h.key = "globex-key-0123456789"
	for range 3 {
		h.submit(api.JobSpec{Type: "a"})
	}
	h.key = "acme-key-0123456789"
	h.submit(api.JobSpec{Type: "a"})

	lane := func() api.LaneInfo {
		var out api.LaneList
		if code := h.do("GET", "/lanes", nil, &out); code != http.StatusOK || len(out.Lanes) == 0 {
			t.Fatalf("lanes: HTTP %d %+v", code, out)
		}
		return out.Lanes[0]
	}
	if got := lane(); got.Pending != 1 || got.Queued != 1 || got.DominantShare != 0 {
		t.Errorf("acme's view of the lane: %+v, want its 1 job only", got)
	}
	var e api.ErrorResponse
	if code := h.do("GET", "/workers", nil, &e); code != http.StatusForbidden || e.Error.Code != api.CodePermissionDenied {
		t.Errorf("tenant GET /workers: HTTP %d %+v, want 403", code, e.Error)
	}
	h.key = "admin-key-0123456789"
	if got := lane(); got.Pending != 4 {
		t.Errorf("admin's view of the lane: %+v, want all 4 jobs", got)
	}
	for _, key := range []string{"admin-key-0123456789", "worker-key-0123456789"} {
		h.key = key
		if code := h.do("GET", "/workers", nil, nil); code != http.StatusOK {
			t.Errorf("GET /workers with %s: HTTP %d", key, code)
		}
	}
}

func TestUnauthenticatedAnswerCarriesWWWAuthenticate(t *testing.T) {
	cfg := defaultConfig()
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	h := newHarness(t, cfg)
	for _, key := range []string{"", "wrong-key-0123456789"} {
		req, _ := http.NewRequest("GET", h.http.URL+"/api/v1/jobs", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("key %q: HTTP %d WWW-Authenticate %q", key, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
}
