package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

func TestCLIKeys(t *testing.T) {
	at := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	created := api.KeyCreated{Key: api.Key{ID: "0123456789abcdef", Role: "tenant", Tenant: "acme", CreatedAt: at}, Secret: "fwk_secret"}
	list := api.KeyList{Keys: []api.Key{created.Key, {ID: "fedcba9876543210", Role: "worker", CreatedAt: at, ExpiresAt: &at, Expired: true}}}
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/keys":        replyWith(201, created),
		"GET /api/v1/keys":         replyWith(200, list),
		"DELETE /api/v1/keys/{id}": replyWith(200, map[string]api.Key{"key": created.Key}),
	})
	code, out, errOut := runCmd(t, "keys", "create", "--role", "tenant", "--tenant", "acme", "--expires-in", "24h", "--server", f.URL)
	if code != 0 || !strings.HasPrefix(out, "fwk_secret\nkey 0123456789abcdef (tenant of acme) created") || errOut != "" {
		t.Errorf("create: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var req api.KeyRequest
	if err := json.Unmarshal(f.requests()[0].Body, &req); err != nil || req.Role != "tenant" || req.Tenant != "acme" || req.ExpiresAt == nil {
		t.Errorf("create request %+v, %v", req, err)
	}
	code, out, _ = runCmd(t, "keys", "list", "--server", f.URL)
	if code != 0 || !strings.Contains(out, "0123456789abcdef  tenant") || !strings.Contains(out, "(expired)") {
		t.Errorf("list: exit %d, stdout\n%s", code, out)
	}
	code, out, _ = runCmd(t, "keys", "revoke", "0123456789abcdef", "--server", f.URL)
	if code != 0 || out != "key 0123456789abcdef revoked: it is refused from its next request on\n" {
		t.Errorf("revoke: exit %d, stdout %q", code, out)
	}
	for _, args := range [][]string{{"keys"}, {"keys", "rotate"}, {"keys", "create"}, {"keys", "revoke"}} {
		if code, _, _ := runCmd(t, append(args, "--server", f.URL)...); code != exitUsage {
			t.Errorf("%v: exit %d, want a usage error", args, code)
		}
	}
}
