// Package config loads the server's YAML configuration: listen address and
// data directory, lease timing, lanes, tiers, job types, tenants (with
// their resource quotas), rate limits on starts and API keys. Load validates everything at start and names the offending field in
// every error (types.report.retry.kind: ...). PolicyConfig turns the result
// into the scheduling engine's configuration.
//
// Durations are Go duration strings ("30s", "10m") or plain numbers of
// seconds.
package config
