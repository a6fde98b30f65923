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
	// The secret alone on stdout, so that k=$(fairway keys create ...)
	// holds just the key; the confirmation on stderr.
	code, out, errOut := runCmd(t, "keys", "create", "--role", "tenant", "--tenant", "acme", "--expires-in", "24h", "--server", f.URL)
	if code != 0 || out != "fwk_secret\n" || !strings.HasPrefix(errOut, "key 0123456789abcdef (tenant of acme) created") || strings.Contains(errOut, "not enforced") {
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

// TestCLIKeysCreateOpen: on a server without keys (fairway dev), a created
// key is stored but not enforced, and create says so on stderr.
func TestCLIKeysCreateOpen(t *testing.T) {
	url, _ := realServer(t)
	code, out, errOut := runCmd(t, "keys", "create", "--role", "admin", "--server", url)
	if code != 0 || !strings.HasPrefix(out, "fwk_") || strings.Count(out, "\n") != 1 {
		t.Fatalf("create: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "created") || !strings.Contains(errOut, "open mode") || !strings.Contains(errOut, "not enforced") {
		t.Errorf("create on an open server: stderr %q, want the confirmation and an open-mode warning", errOut)
	}
	// The secret as captured by $(...) works as --api-key.
	key := strings.TrimSuffix(out, "\n")
	if code, _, errOut := runCmd(t, "keys", "list", "--server", url, "--api-key", key); code != 0 {
		t.Errorf("list with the new key: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut = runCmd(t, "keys", "create", "--role", "worker", "--json", "--server", url)
	if code != 0 || decodeJSON[api.KeyCreated](t, out).Secret == "" || !strings.Contains(errOut, "not enforced") {
		t.Errorf("create --json on an open server: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestCLIAPIKeyControlChars: a key that cannot go in an HTTP header (a
// newline, as when $(...) captured two lines) is a local usage error, not
// "cannot reach the server".
func TestCLIAPIKeyControlChars(t *testing.T) {
	t.Setenv(envRetryDeadline, "1s") // before the fix: a client error, retried
	f := newAPIFake(t, nil)
	for _, key := range []string{"fwk_secret\nkey 0123 created", "fwk_\rx", "fwk_\x00x", "fwk_\x7fx"} {
		code, _, errOut := runCmd(t, "keys", "list", "--server", f.URL, "--api-key", key)
		if code != exitUsage || !strings.Contains(errOut, "--api-key") || !strings.Contains(errOut, "control character") {
			t.Errorf("--api-key %q: exit %d, stderr %q, want a usage error naming --api-key", key, code, errOut)
		}
	}
	t.Setenv(envAPIKey, "fwk_secret\nkey 0123 created")
	code, _, errOut := runCmd(t, "keys", "list", "--server", f.URL)
	if code != exitUsage || !strings.Contains(errOut, "$"+envAPIKey) {
		t.Errorf("$%s with a newline: exit %d, stderr %q, want a usage error naming it", envAPIKey, code, errOut)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d request(s) sent with a bad key, want none", n)
	}
}
