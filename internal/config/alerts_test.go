package config

import (
	"errors"
	"strings"
	"testing"
)

func TestAlertsAreChecked(t *testing.T) {
	ok := Webhook{Name: "ops", URL: "https://hooks.example.com/x", Secret: "0123456789abcdef"}
	cases := map[string]struct {
		a    Alerts
		want string
	}{
		"no name":      {Alerts{Webhooks: []Webhook{{URL: ok.URL, Secret: ok.Secret}}}, "alerts.webhooks[0].name"},
		"twice":        {Alerts{Webhooks: []Webhook{ok, ok}}, "used twice"},
		"short secret": {Alerts{Webhooks: []Webhook{{Name: "a", URL: ok.URL, Secret: "short"}}}, "alerts.webhooks[0].secret"},
		"bad url":      {Alerts{Webhooks: []Webhook{{Name: "a", URL: "ftp://x", Secret: ok.Secret}}}, "alerts.webhooks[0].url"},
		"bad kind":     {Alerts{Webhooks: []Webhook{{Name: "a", URL: ok.URL, Secret: ok.Secret, Kinds: []string{"sunrise"}}}}, "unknown kind"},
		"negative":     {Alerts{MaxTries: -1}, "alerts"},
	}
	for name, tc := range cases {
		err := tc.a.validate()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, tc.want)
		}
	}
	if err := (Alerts{Webhooks: []Webhook{ok}}).validate(); err != nil {
		t.Errorf("a good webhook: %v", err)
	}
}
