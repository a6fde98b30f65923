package dispatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/fairwayhq/fairway/internal/store"
)

// API keys kept in the store (the admin API's): their writes go through
// the dispatcher, the store's one writer, so that they are fenced like
// every other change and leave key_created / key_revoked events. Only a
// key's hash reaches the store, and no event holds it.

// CreateAPIKey stores k; store.ErrExists if its hash is stored already.
func (d *Dispatcher) CreateAPIKey(ctx context.Context, k store.APIKey, id, actor string) error {
	return d.adminWrite(ctx, "store api key", func(tx *txn) error {
		k.CreatedAt, k.CreatedBy = tx.now, actor
		return tx.w.APIKeyInsert(tx.ctx, k)
	}, func(tx *txn) {
		tx.event("", 0, k.Tenant, store.EventKeyCreated, actor, keyDetail(k, id))
	}, store.ErrExists, store.ErrInvalid)
}

// RevokeAPIKey deletes the stored key k (found by the caller); requests
// that present it fail from the next one on, on every instance, since
// stored keys are looked up in the store at each request.
func (d *Dispatcher) RevokeAPIKey(ctx context.Context, k store.APIKey, id, actor string) error {
	return d.adminWrite(ctx, "delete api key", func(tx *txn) error {
		return tx.w.APIKeyDelete(tx.ctx, k.KeyHash)
	}, func(tx *txn) {
		tx.event("", 0, k.Tenant, store.EventKeyRevoked, actor, keyDetail(k, id))
	}, store.ErrNotFound)
}

func keyDetail(k store.APIKey, id string) map[string]any {
	d := map[string]any{"id": id, "name": k.Name, "role": string(k.Role), "tenant": k.Tenant}
	if !k.ExpiresAt.IsZero() {
		d["expires_at"] = k.ExpiresAt.UTC()
	}
	return d
}

// adminWrite runs one write of the admin API in a batch. An error of write
// that is one of outcomes is the caller's answer (the batch goes on
// without it); any other aborts the batch. Once write succeeds, audit
// records its event.
func (d *Dispatcher) adminWrite(ctx context.Context, what string, write func(tx *txn) error, audit func(tx *txn), outcomes ...error) error {
	var opErr error
	err := d.submit(ctx, func(tx *txn) {
		if err := write(tx); err != nil {
			for _, o := range outcomes {
				if errors.Is(err, o) {
					opErr = err
					return
				}
			}
			tx.fatal(fmt.Errorf("%s: %w", what, err))
			return
		}
		audit(tx)
	})
	if err != nil {
		return err
	}
	return opErr
}
