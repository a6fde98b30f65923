package store

import (
	"fmt"
	"time"
)

// Webhook is an alert webhook registered through the admin API (the
// configuration file's are not stored). Secret signs its deliveries: it is
// kept as given, since signing needs it.
type Webhook struct {
	Name      string
	URL       string
	Secret    string
	Kinds     []string
	Tenants   []string
	CreatedAt time.Time
	CreatedBy string
}

// Validate checks the name, URL, secret and time (the server checks the
// URL's form and the kinds).
func (w *Webhook) Validate() error {
	switch {
	case w.Name == "":
		return fmt.Errorf("%w: webhook: empty name", ErrInvalid)
	case w.URL == "":
		return fmt.Errorf("%w: webhook %s: empty url", ErrInvalid, w.Name)
	case w.Secret == "":
		return fmt.Errorf("%w: webhook %s: empty secret", ErrInvalid, w.Name)
	case w.CreatedAt.IsZero():
		return fmt.Errorf("%w: webhook %s: zero created_at", ErrInvalid, w.Name)
	}
	return nil
}
