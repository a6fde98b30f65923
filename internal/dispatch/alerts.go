package dispatch

import (
	"context"

	"github.com/fairwayhq/fairway/internal/alerts"
	"github.com/fairwayhq/fairway/internal/store"
)

// Alerts (package alerts): the outcome of each delivery goes to the audit
// trail, and webhooks registered through the admin API are kept in the
// store.

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
	return d.adminWrite(ctx, "store webhook", func(tx *txn) error {
		h.CreatedAt, h.CreatedBy = tx.now, actor
		return tx.w.WebhookInsert(tx.ctx, h)
	}, func(tx *txn) {
		tx.event("", 0, "", store.EventWebhookCreated, actor, map[string]any{"name": h.Name, "url": h.URL, "kinds": h.Kinds, "tenants": h.Tenants})
	}, store.ErrExists, store.ErrInvalid)
}

// DeleteWebhook removes a stored webhook (store.ErrNotFound if unknown).
func (d *Dispatcher) DeleteWebhook(ctx context.Context, name, actor string) error {
	return d.adminWrite(ctx, "delete webhook", func(tx *txn) error {
		return tx.w.WebhookDelete(tx.ctx, name)
	}, func(tx *txn) {
		tx.event("", 0, "", store.EventWebhookDeleted, actor, map[string]any{"name": name})
	}, store.ErrNotFound)
}
