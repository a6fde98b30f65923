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
)

// APIKey is a stored API key. Only a hash of the secret is kept; the store
// never sees the secret.
type APIKey struct {
	KeyHash   string
	Tenant    string
	Role      Role
	Name      string
	CreatedAt time.Time
}

// Validate checks the hash, tenant and role.
func (k *APIKey) Validate() error {
	switch {
	case k.KeyHash == "":
		return fmt.Errorf("%w: api key: empty hash", ErrInvalid)
	case k.Tenant == "":
		return fmt.Errorf("%w: api key: empty tenant", ErrInvalid)
	case k.Role != RoleTenant && k.Role != RoleAdmin:
		return fmt.Errorf("%w: api key: unknown role %q", ErrInvalid, k.Role)
	case k.CreatedAt.IsZero():
		return fmt.Errorf("%w: api key: zero created_at", ErrInvalid)
	}
	return nil
}
