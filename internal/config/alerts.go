package config

import (
	"fmt"
	"net/url"
	"slices"
	"time"
)

// Alerts are the webhooks that hear about what needs a person: SLA
// warnings and violations, jobs failed after their last attempt, schedule
// slots missed or schedules paused on failure, lost workers, tenants over
// quota (package alerts).
type Alerts struct {
	Webhooks []Webhook `yaml:"webhooks"`
	// Timeout bounds one delivery (default 10s).
	Timeout Duration `yaml:"timeout"`
	// MaxTries bounds the deliveries of one alert to one webhook (default 8).
	MaxTries int `yaml:"max_tries"`
	// RetryBase is the first back-off after a failed delivery, doubled after
	// each (default 1s, at most 5 minutes).
	RetryBase Duration `yaml:"retry_base"`
}

// Webhook is one endpoint: where, the HMAC secret deliveries are signed
// with, and which alert kinds (all when empty) of which tenants (all when
// empty) it hears.
type Webhook struct {
	Name    string   `yaml:"name"`
	URL     string   `yaml:"url"`
	Secret  string   `yaml:"secret"`
	Kinds   []string `yaml:"kinds"`
	Tenants []string `yaml:"tenants"`
}

// AlertKinds are the kinds of alert a webhook may ask for.
var AlertKinds = []string{"sla_warning", "sla_violation", "job_failed", "schedule_missed", "schedule_paused", "schedule_failed",
	"worker_lost", "tenant_over_quota", "job_preempted"}

// Defaults of Alerts.
const (
	DefaultAlertTimeout   = 10 * time.Second
	DefaultAlertMaxTries  = 8
	DefaultAlertRetryBase = time.Second
)

// TimeoutOrDefault, MaxTriesOrDefault and RetryBaseOrDefault apply the
// defaults.
func (a Alerts) TimeoutOrDefault() time.Duration {
	if a.Timeout.D() > 0 {
		return a.Timeout.D()
	}
	return DefaultAlertTimeout
}

func (a Alerts) MaxTriesOrDefault() int {
	if a.MaxTries > 0 {
		return a.MaxTries
	}
	return DefaultAlertMaxTries
}

func (a Alerts) RetryBaseOrDefault() time.Duration {
	if a.RetryBase.D() > 0 {
		return a.RetryBase.D()
	}
	return DefaultAlertRetryBase
}

func (a Alerts) validate() error {
	if a.Timeout.D() < 0 || a.MaxTries < 0 || a.RetryBase.D() < 0 {
		return invalid("alerts", "timeout, max_tries and retry_base must be >= 0")
	}
	names := map[string]bool{}
	for i, w := range a.Webhooks {
		field := fmt.Sprintf("alerts.webhooks[%d]", i)
		if names[w.Name] {
			return invalid(field+".name", fmt.Sprintf("%q is used twice", w.Name))
		}
		if err := w.Validate(field + "."); err != nil {
			return err
		}
		names[w.Name] = true
	}
	return nil
}

// Validate checks a webhook; prefix starts each field's name in the error
// ("alerts.webhooks[0]." in the configuration, "" in the admin API).
func (w Webhook) Validate(prefix string) error {
	switch {
	case w.Name == "":
		return invalid(prefix+"name", "is required")
	case len(w.Name) > 100:
		return invalid(prefix+"name", "must be at most 100 bytes")
	case len(w.Secret) < 16:
		return invalid(prefix+"secret", "must be at least 16 characters: deliveries are signed with it (HMAC-SHA256)")
	}
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid(prefix+"url", fmt.Sprintf("must be an http:// or https:// URL, got %q", w.URL))
	}
	for _, k := range w.Kinds {
		if !slices.Contains(AlertKinds, k) {
			return invalid(prefix+"kinds", fmt.Sprintf("unknown kind %q; the kinds are %v", k, AlertKinds))
		}
	}
	return nil
}
