package server

import (
	"crypto/sha256"
	"net/http"
	"strings"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

type role int

const (
	roleOpen   role = iota // no keys configured: development mode
	roleTenant             // sees and changes only its tenant's jobs
	roleAdmin              // everything, for any tenant
	roleWorker             // the worker protocol only
)

// principal is who a request acts as.
type principal struct {
	role   role
	tenant string
}

func (p principal) name() string {
	switch p.role {
	case roleAdmin:
		return "admin"
	case roleWorker:
		return "worker"
	case roleTenant:
		return "tenant:" + p.tenant
	}
	return "open"
}

// authenticator maps the SHA-256 of each configured key to its principal,
// so keys are compared by hash lookup, not by string comparison.
type authenticator struct {
	open bool
	keys map[[32]byte]principal
}

func newAuthenticator(c config.Config) *authenticator {
	a := &authenticator{open: c.Open(), keys: map[[32]byte]principal{}}
	for _, k := range c.AdminKeys {
		a.keys[sha256.Sum256([]byte(k))] = principal{role: roleAdmin}
	}
	for _, k := range c.Workers.APIKeys {
		a.keys[sha256.Sum256([]byte(k))] = principal{role: roleWorker}
	}
	for name, t := range c.Tenants {
		for _, k := range t.APIKeys {
			a.keys[sha256.Sum256([]byte(k))] = principal{role: roleTenant, tenant: name}
		}
	}
	return a
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
	p, ok := a.keys[sha256.Sum256([]byte(key))]
	if !ok {
		return principal{}, errf(http.StatusUnauthorized, api.CodeUnauthenticated, "unknown API key")
	}
	return p, nil
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

func (p principal) mayWork() bool {
	return p.role == roleOpen || p.role == roleAdmin || p.role == roleWorker
}
