// Package alerts delivers alerts to the webhooks of the configuration
// (alerts.webhooks): SLA warnings and violations, jobs failed after their
// last attempt, schedule slots missed, schedules paused on failure, lost
// workers, tenants over quota.
//
// Where alerts come from: the dispatcher hands over the audit events of
// each batch once it is durable (FromEvents), and the alerts that are not
// events (a submit refused by a tenant's quota) as they happen (Notify).
// Neither call blocks: an alert goes into a bounded queue, and a full
// queue drops it (logged, and recorded as failed), so a slow or hung
// receiver never holds up the dispatcher.
//
// Delivery: a POST of the alert as JSON to each webhook that asks for its
// kind and tenant, signed: X-Fairway-Signature: t=UNIX,v1=HEX, where HEX is
// the HMAC-SHA256, keyed with the webhook's secret, of "UNIX.BODY". A
// receiver recomputes it and refuses an old t (replays). A 2xx answer
// delivers it; anything else (or no answer within the timeout) is retried
// after a back-off that starts at retry_base and doubles up to 5 minutes,
// up to max_tries tries. Each alert's outcome per webhook — delivered,
// with the tries and status, or failed, with the last error — is recorded
// in the audit trail (alert_delivered, alert_failed) through the record
// function. Alerts waiting for delivery are kept in memory: a server that
// stops drops them (its successor raises the alerts of what happens next).
//
// A tenant over its quota raises at most one alert a minute.
package alerts
