package server

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// syncBuffer is a bytes.Buffer the server's log may write to while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Keys created through the admin API work as the configuration's do, a
// tenant key sees its own tenant only, a revoked key gets 401 on its next
// request, an expired one too, and no secret is in the database files or
// the log.
func TestStoredAPIKeys(t *testing.T) {
	cfg := defaultConfig()
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	cfg.Tenants = map[string]config.Tenant{"globex": {APIKeys: []string{"globex-key-0123456789"}}}
	logs := &syncBuffer{}
	path := filepath.Join(t.TempDir(), "fairway.db")
	h := startHarnessLogging(t, cfg, path, &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}, logs)

	create := func(req api.KeyRequest) api.KeyCreated {
		t.Helper()
		h.key = "admin-key-0123456789"
		var out api.KeyCreated
		if code := h.do("POST", "/keys", req, &out); code != http.StatusCreated || !strings.HasPrefix(out.Secret, "fwk_") {
			t.Fatalf("create %+v: HTTP %d %+v", req, code, out)
		}
		return out
	}
	acme := create(api.KeyRequest{Name: "acme ci", Role: "tenant", Tenant: "acme"})
	soon := h.clock.Now().Add(time.Hour)
	brief := create(api.KeyRequest{Role: "worker", ExpiresAt: &soon})
	if !strings.HasPrefix(acme.Key.CreatedBy, "admin key ") || !strings.HasSuffix(acme.Key.CreatedBy, " (admin_keys[0])") ||
		acme.Key.Tenant != "acme" || brief.Key.ExpiresAt == nil {
		t.Errorf("created keys: %+v %+v", acme.Key, brief.Key)
	}

	h.key = "globex-key-0123456789"
	theirs := h.submit(api.JobSpec{Type: "a"})
	h.key = acme.Secret
	ours := h.submit(api.JobSpec{Type: "a"})
	if ours.Tenant != "acme" {
		t.Fatalf("a job submitted with acme's stored key is of tenant %q", ours.Tenant)
	}
	var e api.ErrorResponse
	if code := h.do("GET", "/jobs/"+theirs.ID, nil, &e); code != http.StatusNotFound {
		t.Errorf("acme's stored key reading globex's job: HTTP %d, want 404", code)
	}
	if code := h.do("GET", "/keys", nil, &e); code != http.StatusForbidden {
		t.Errorf("a tenant key listing keys: HTTP %d, want 403", code)
	}
	h.key = brief.Secret
	if w := h.register(api.RegisterRequest{Name: "w", Slots: 1}); w == "" {
		t.Error("the stored worker key could not register a worker")
	}

	h.key = "admin-key-0123456789"
	resp, err := http.NewRequest("GET", h.http.URL+"/api/v1/keys", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Header.Set("Authorization", "Bearer "+h.key)
	r, err := http.DefaultClient.Do(resp)
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(r.Body)
	r.Body.Close()
	if strings.Contains(raw.String(), acme.Secret) || strings.Contains(raw.String(), "sha256:") ||
		!strings.Contains(raw.String(), acme.Key.ID) {
		t.Errorf("GET /keys shows a secret or a hash, or not the key's id: %s", raw.String())
	}
	if code := h.do("DELETE", "/keys/"+acme.Key.ID, nil, nil); code != http.StatusOK {
		t.Fatalf("revoke: HTTP %d", code)
	}
	h.key = acme.Secret
	if code := h.do("GET", "/jobs/"+ours.ID, nil, &e); code != http.StatusUnauthorized {
		t.Errorf("the revoked key's next request: HTTP %d, want 401", code)
	}
	h.clock.Advance(2 * time.Hour)
	h.key = brief.Secret
	if code := h.do("GET", "/workers", nil, &e); code != http.StatusUnauthorized || !strings.Contains(e.Error.Message, "expired") {
		t.Errorf("an expired key: HTTP %d %+v, want 401 expired", code, e)
	}
	h.key = "admin-key-0123456789"
	var evs api.EventList
	h.do("GET", "/events?type=key_created,key_revoked", nil, &evs)
	if len(evs.Events) != 3 {
		t.Errorf("key events: %+v, want 2 created and 1 revoked", evs.Events)
	}
	for _, bad := range []api.KeyRequest{{Role: "root"}, {Role: "tenant"}, {Role: "admin", Tenant: "acme"},
		{Role: "worker", ExpiresAt: &soon}} { // soon is in the past now
		if code := h.do("POST", "/keys", bad, &e); code != http.StatusBadRequest {
			t.Errorf("create %+v: HTTP %d, want 400", bad, code)
		}
	}
	if code := h.do("DELETE", "/keys/0123456789abcdef", nil, &e); code != http.StatusNotFound {
		t.Errorf("revoke an unknown key: HTTP %d, want 404", code)
	}

	h.stop()
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, secret := range []string{acme.Secret, brief.Secret} {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds a key's secret", filepath.Base(f))
			}
		}
	}
	if out := logs.String(); out == "" || strings.Contains(out, acme.Secret) || strings.Contains(out, brief.Secret) {
		t.Errorf("the log is empty or holds a key's secret (%d bytes)", len(out))
	}
}
