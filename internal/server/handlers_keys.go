package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/wire"
)

// API key management (admin keys): keys created here are stored hashed
// (auth.go) and work next to the configuration's.

// keySecretPrefix marks fairway's generated keys, so that a leaked one is
// easy to recognise (and to search for).
const keySecretPrefix = "fwk_"

const maxKeyName = 200

func (s *Server) handleKeyCreate(w http.ResponseWriter, r *http.Request, p principal) error {
	if err := p.adminOnly("manage API keys"); err != nil {
		return err
	}
	var req api.KeyRequest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	k := store.APIKey{Name: req.Name, Role: store.Role(req.Role), Tenant: req.Tenant}
	switch k.Role {
	case store.RoleTenant:
		if req.Tenant == "" {
			return badField("tenant", "is required for a tenant key")
		}
	case store.RoleAdmin, store.RoleWorker:
		if req.Tenant != "" {
			return badField("tenant", "applies to tenant keys only; role is %s", req.Role)
		}
	default:
		return badField("role", "must be tenant, worker or admin, got %q", req.Role)
	}
	if len(req.Name) > maxKeyName || !utf8.ValidString(req.Name) {
		return badField("name", "must be at most %d bytes of UTF-8", maxKeyName)
	}
	now := s.clock.Now()
	if req.ExpiresAt != nil {
		if !req.ExpiresAt.After(now) {
			return badField("expires_at", "must be in the future, got %s", req.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z"))
		}
		k.ExpiresAt = req.ExpiresAt.UTC()
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return err
	}
	secret := keySecretPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	k.KeyHash = storedKeyHash(sha256.Sum256([]byte(secret)))
	id := keyID(k.KeyHash)
	if err := s.d.CreateAPIKey(r.Context(), k, id, p.name()); err != nil {
		return err
	}
	stored, err := s.st.APIKeyGet(r.Context(), k.KeyHash)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, api.KeyCreated{Key: keyView(stored, now), Secret: secret})
	return nil
}

func (s *Server) handleKeyList(w http.ResponseWriter, r *http.Request, p principal) error {
	if err := p.adminOnly("manage API keys"); err != nil {
		return err
	}
	keys, err := s.st.APIKeyList(r.Context(), r.URL.Query().Get("tenant"))
	if err != nil {
		return err
	}
	now := s.clock.Now()
	out := api.KeyList{Keys: make([]api.Key, 0, len(keys))}
	for _, k := range keys {
		out.Keys = append(out.Keys, keyView(k, now))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleKeyRevoke(w http.ResponseWriter, r *http.Request, p principal) error {
	if err := p.adminOnly("manage API keys"); err != nil {
		return err
	}
	id := r.PathValue("id")
	keys, err := s.st.APIKeyList(r.Context(), "")
	if err != nil {
		return err
	}
	for _, k := range keys {
		if keyID(k.KeyHash) != id {
			continue
		}
		err := s.d.RevokeAPIKey(r.Context(), k, id, p.name())
		if errors.Is(err, store.ErrNotFound) {
			break // revoked meanwhile
		}
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]api.Key{"key": keyView(k, s.clock.Now())})
		return nil
	}
	return notFound("key", id+" (a key of the configuration file is revoked by removing it there)")
}

// keyView shows a stored key without its hash.
func keyView(k store.APIKey, now time.Time) api.Key {
	out := api.Key{ID: keyID(k.KeyHash), Name: k.Name, Role: string(k.Role), Tenant: k.Tenant,
		CreatedAt: k.CreatedAt.UTC(), CreatedBy: k.CreatedBy, Expired: k.Expired(now)}
	if !k.ExpiresAt.IsZero() {
		out.ExpiresAt = wire.TimePtr(k.ExpiresAt)
	}
	return out
}
