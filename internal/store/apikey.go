package store

import (
	"fmt"
	"time"
)

// Role is what an API key may do.
type Role string

// Roles.
const (
	RoleTenant Role = "tenant" // its tenant's jobs only
	RoleAdmin  Role = "admin"  // configuration and every tenant
	RoleWorker Role = "worker" // the worker protocol only
)

// APIKey is a stored API key. Only a hash of the secret is kept; the store
// never sees the secret.
type APIKey struct {
	KeyHash   string
	Tenant    string // a tenant key's tenant; "" for admin and worker keys
	Role      Role
	Name      string
	CreatedAt time.Time
	CreatedBy string    // the actor that created it
	ExpiresAt time.Time // zero: never
}

// Validate checks the hash, tenant and role.
func (k *APIKey) Validate() error {
	switch {
	case k.KeyHash == "":
		return fmt.Errorf("%w: api key: empty hash", ErrInvalid)
	case k.Role != RoleTenant && k.Role != RoleAdmin && k.Role != RoleWorker:
		return fmt.Errorf("%w: api key: unknown role %q", ErrInvalid, k.Role)
	case k.Role == RoleTenant && k.Tenant == "":
		return fmt.Errorf("%w: api key: a tenant key needs its tenant", ErrInvalid)
	case k.CreatedAt.IsZero():
		return fmt.Errorf("%w: api key: zero created_at", ErrInvalid)
	}
	return nil
}

// Expired reports whether the key has expired at now.
func (k *APIKey) Expired(now time.Time) bool {
	return !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt)
}
