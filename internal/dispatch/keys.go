package dispatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/fairwayhq/fairway/internal/alerts"
	"github.com/fairwayhq/fairway/internal/store"
)

// API keys kept in the store (the admin API's): their writes go through
// the dispatcher, the store's one writer, so that they are fenced like
// every other change and leave key_created / key_revoked events. Only a
// key's hash reaches the store, and no event holds it.

// CreateAPIKey stores k; store.ErrExists if its hash is stored already.
func (d *Dispatcher) CreateAPIKey(ctx context.Context, k store.APIKey, id, actor string) error {
	var opErr error
	err := d.submit(ctx, func(tx *txn) {
		k.CreatedAt, k.CreatedBy = tx.now, actor
		if err := tx.w.APIKeyInsert(tx.ctx, k); err != nil {
			if errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrInvalid) {
				opErr = err
				return
			}
			tx.fatal(fmt.Errorf("store api key: %w", err))
			return
		}
		tx.event("", 0, k.Tenant, store.EventKeyCreated, actor, keyDetail(k, id))
	})
	if err != nil {
		return err
	}
	return opErr
}

// RevokeAPIKey deletes the stored key k (found by the caller); requests
// that present it fail from the next one on, on every instance, since
// stored keys are looked up in the store at each request.
func (d *Dispatcher) RevokeAPIKey(ctx context.Context, k store.APIKey, id, actor string) error {
	var opErr error
	err := d.submit(ctx, func(tx *txn) {
		if err := tx.w.APIKeyDelete(tx.ctx, k.KeyHash); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				opErr = err
				return
			}
			tx.fatal(fmt.Errorf("delete api key: %w", err))
			return
		}
		tx.event("", 0, k.Tenant, store.EventKeyRevoked, actor, keyDetail(k, id))
	})
	if err != nil {
		return err
	}
	return opErr
}

func keyDetail(k store.APIKey, id string) map[string]any {
	d := map[string]any{"id": id, "name": k.Name, "role": string(k.Role), "tenant": k.Tenant}
	if !k.ExpiresAt.IsZero() {
		d["expires_at"] = k.ExpiresAt.UTC()
	}
	return d
}

// RecordAlert writes an alert's delivery outcome to the audit trail:
// alert_delivered or alert_failed, with the webhook, the kind, the tries
// and the last status or error.
func (d *Dispatcher) RecordAlert(ctx context.Context, o alerts.Outcome) error {
	typ := store.EventAlertFailed
	if o.Delivered {
		typ = store.EventAlertDelivered
	}
	detail := map[string]any{"webhook": o.Alert.Webhook, "kind": o.Alert.Kind, "alert_id": o.Alert.ID, "tries": o.Tries}
	if o.Status != 0 {
		detail["status"] = o.Status
	}
	if o.Err != "" {
		detail["error"] = o.Err
	}
	return d.submit(ctx, func(tx *txn) {
		tx.event(o.Alert.JobID, 0, o.Alert.Tenant, typ, "system", detail)
		tx.events[len(tx.events)-1].ScheduleID = o.Alert.ScheduleID
	})
}

// CreateWebhook stores an alert webhook registered through the admin API
// (store.ErrExists for a taken name), with a webhook_created event that
// leaves the secret out.
func (d *Dispatcher) CreateWebhook(ctx context.Context, h store.Webhook, actor string) error {
	var opErr error
	err := d.submit(ctx, func(tx *txn) {
		h.CreatedAt, h.CreatedBy = tx.now, actor
		if err := tx.w.WebhookInsert(tx.ctx, h); err != nil {
			if errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrInvalid) {
				opErr = err
				return
			}
			tx.fatal(fmt.Errorf("store webhook: %w", err))
			return
		}
		tx.event("", 0, "", store.EventWebhookCreated, actor, map[string]any{"name": h.Name, "url": h.URL, "kinds": h.Kinds, "tenants": h.Tenants})
	})
	if err != nil {
		return err
	}
	return opErr
}

// DeleteWebhook removes a stored webhook (store.ErrNotFound if unknown).
func (d *Dispatcher) DeleteWebhook(ctx context.Context, name, actor string) error {
	var opErr error
	err := d.submit(ctx, func(tx *txn) {
		if err := tx.w.WebhookDelete(tx.ctx, name); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				opErr = err
				return
			}
			tx.fatal(fmt.Errorf("delete webhook: %w", err))
			return
		}
		tx.event("", 0, "", store.EventWebhookDeleted, actor, map[string]any{"name": name})
	})
	if err != nil {
		return err
	}
	return opErr
}
