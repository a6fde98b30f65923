package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/store"
)

type role int

const (
	roleOpen   role = iota // no keys configured: development mode
	roleTenant             // sees and changes only its tenant's jobs
	roleAdmin              // everything, for any tenant
	roleWorker             // the worker protocol only
)

// principal is who a request acts as: a role, a tenant for a tenant key,
// and the key (its id and name) for the audit trail.
type principal struct {
	role    role
	tenant  string
	keyID   string // the first 16 hex digits of the key's SHA-256
	keyName string // a stored key's name, or where the configuration holds it
}

// name is p as the actor of the audit trail: its role, then the key that
// acted, "admin key 1a2b3c4d5e6f7a8b (deploy-bot)". (GET /events?actor=
// takes the role, "admin" or "tenant:acme", or a key id.)
func (p principal) name() string {
	var who string
	switch p.role {
	case roleAdmin:
		who = "admin"
	case roleWorker:
		who = "worker"
	case roleTenant:
		who = "tenant:" + p.tenant
	default:
		return "open"
	}
	if p.keyID == "" {
		return who
	}
	who += " key " + p.keyID
	if p.keyName != "" {
		who += " (" + p.keyName + ")"
	}
	return who
}

// authenticator maps the SHA-256 of each configured key to its principal,
// so keys are compared by hash lookup, not by string comparison. A key not
// in the configuration is looked up by the same hash in the store (keys
// created through the admin API): at every request, so that a revoked or
// expired key is refused from its next request on, on every instance.
type authenticator struct {
	open   bool
	keys   map[[32]byte]principal
	stored func(ctx context.Context, keyHash string) (store.APIKey, error) // nil: none
	now    func() time.Time
}

func newAuthenticator(c config.Config) *authenticator {
	a := &authenticator{open: c.Open(), keys: map[[32]byte]principal{}, now: time.Now}
	add := func(k string, p principal, field string) {
		sum := sha256.Sum256([]byte(k))
		p.keyID, p.keyName = keyID(storedKeyHash(sum)), field
		a.keys[sum] = p
	}
	for i, k := range c.AdminKeys {
		add(k, principal{role: roleAdmin}, fmt.Sprintf("admin_keys[%d]", i))
	}
	for i, k := range c.Workers.APIKeys {
		add(k, principal{role: roleWorker}, fmt.Sprintf("workers.api_keys[%d]", i))
	}
	for name, t := range c.Tenants {
		for i, k := range t.APIKeys {
			add(k, principal{role: roleTenant, tenant: name}, fmt.Sprintf("tenants.%s.api_keys[%d]", name, i))
		}
	}
	return a
}

// storedKeyHash is how a key's secret is stored: its SHA-256. Keys are 32
// random bytes, so a fast hash is as safe as a slow one and costs nothing
// per request.
func storedKeyHash(sum [32]byte) string { return "sha256:" + hex.EncodeToString(sum[:]) }

// keyID is the public name of a stored key: the first 16 hex digits of
// its hash (the secret cannot be recovered from it).
func keyID(keyHash string) string {
	h := strings.TrimPrefix(keyHash, "sha256:")
	return h[:min(16, len(h))]
}

func (a *authenticator) identify(r *http.Request) (principal, *apiError) {
	if a.open {
		return principal{role: roleOpen}, nil
	}
	h := r.Header.Get("Authorization")
	key, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || key == "" {
		return principal{}, errf(http.StatusUnauthorized, api.CodeUnauthenticated, "missing API key: send Authorization: Bearer <key>")
	}
	sum := sha256.Sum256([]byte(key))
	if p, ok := a.keys[sum]; ok {
		return p, nil
	}
	if a.stored == nil {
		return principal{}, errf(http.StatusUnauthorized, api.CodeUnauthenticated, "unknown API key")
	}
	k, err := a.stored(r.Context(), storedKeyHash(sum))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return principal{}, errf(http.StatusUnauthorized, api.CodeUnauthenticated, "unknown API key (or revoked)")
	case err != nil:
		e := errf(http.StatusServiceUnavailable, api.CodeServerUnavailable, "the key store cannot be read; retry")
		e.retryAfter = 1
		return principal{}, e
	case k.Expired(a.now()):
		return principal{}, errf(http.StatusUnauthorized, api.CodeUnauthenticated, "API key %s expired at %s", keyID(k.KeyHash), k.ExpiresAt.UTC().Format(time.RFC3339))
	}
	id := keyID(k.KeyHash)
	switch k.Role {
	case store.RoleAdmin:
		return principal{role: roleAdmin, keyID: id, keyName: k.Name}, nil
	case store.RoleWorker:
		return principal{role: roleWorker, keyID: id, keyName: k.Name}, nil
	}
	return principal{role: roleTenant, tenant: k.Tenant, keyID: id, keyName: k.Name}, nil
}

// tenantFor is the tenant a job submitted by p belongs to.
func (p principal) tenantFor(requested string) (string, *apiError) {
	switch p.role {
	case roleTenant:
		if requested != "" && requested != p.tenant {
			return "", errf(http.StatusForbidden, api.CodePermissionDenied, "a key of tenant %s cannot submit for tenant %s", p.tenant, requested)
		}
		return p.tenant, nil
	case roleWorker:
		return "", errf(http.StatusForbidden, api.CodePermissionDenied, "worker keys cannot submit jobs")
	}
	if requested == "" {
		return "default", nil
	}
	return requested, nil
}

// sees reports whether p may see a job of tenant.
func (p principal) sees(tenant string) bool {
	return p.role == roleOpen || p.role == roleAdmin || (p.role == roleTenant && p.tenant == tenant)
}

// adminOnly refuses p, 403, unless it is an admin (or the server is open):
// "only admin keys may " + what.
func (p principal) adminOnly(what string) *apiError {
	if p.role != roleAdmin && p.role != roleOpen {
		return errf(http.StatusForbidden, api.CodePermissionDenied, "only admin keys may %s", what)
	}
	return nil
}

func (p principal) mayWork() bool {
	return p.role == roleOpen || p.role == roleAdmin || p.role == roleWorker
}
