package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/wire"
)

// Alert webhooks registered through the admin API (package alerts): kept
// in the store, loaded by the server that leads, next to the
// configuration file's.

func (s *Server) handleWebhookCreate(w http.ResponseWriter, r *http.Request, p principal) error {
	if err := p.adminOnly("manage webhooks"); err != nil {
		return err
	}
	var req api.WebhookRequest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	hook := config.Webhook{Name: req.Name, URL: req.URL, Secret: req.Secret, Kinds: req.Kinds, Tenants: req.Tenants}
	if err := hook.Validate(""); err != nil {
		field, msg := configField(err)
		return badField(field, "%s", msg)
	}
	if s.configuredWebhook(req.Name) {
		return errf(http.StatusConflict, api.CodeConflict, "webhook %s is in the configuration file", req.Name)
	}
	err := s.d.CreateWebhook(r.Context(), store.Webhook{Name: req.Name, URL: req.URL, Secret: req.Secret,
		Kinds: req.Kinds, Tenants: req.Tenants}, p.name())
	if errors.Is(err, store.ErrExists) {
		return errf(http.StatusConflict, api.CodeConflict, "a webhook named %s exists", req.Name)
	}
	if err != nil {
		return err
	}
	if err := s.loadWebhooks(r.Context()); err != nil {
		return err
	}
	list, err := s.webhookViews(r.Context())
	if err != nil {
		return err
	}
	for _, h := range list.Webhooks {
		if h.Name == req.Name && h.Source == "api" {
			writeJSON(w, http.StatusCreated, map[string]api.Webhook{"webhook": h})
			return nil
		}
	}
	return errf(http.StatusInternalServerError, api.CodeInternal, "webhook %s was stored but cannot be read back", req.Name)
}

func (s *Server) handleWebhookList(w http.ResponseWriter, r *http.Request, p principal) error {
	if err := p.adminOnly("manage webhooks"); err != nil {
		return err
	}
	list, err := s.webhookViews(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

func (s *Server) handleWebhookDelete(w http.ResponseWriter, r *http.Request, p principal) error {
	if err := p.adminOnly("manage webhooks"); err != nil {
		return err
	}
	name := r.PathValue("name")
	if s.configuredWebhook(name) {
		return errf(http.StatusConflict, api.CodeConflict, "webhook %s is in the configuration file: remove it there", name)
	}
	err := s.d.DeleteWebhook(r.Context(), name, p.name())
	if errors.Is(err, store.ErrNotFound) {
		return notFound("webhook", name)
	}
	if err != nil {
		return err
	}
	if err := s.loadWebhooks(r.Context()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"deleted": name})
	return nil
}

// configuredWebhook reports whether the configuration file names a
// webhook name (the admin API neither shadows nor deletes those).
func (s *Server) configuredWebhook(name string) bool {
	return slices.ContainsFunc(s.cfg.Alerts.Webhooks, func(h config.Webhook) bool { return h.Name == name })
}

// loadWebhooks gives the alerter the stored webhooks (at start, and after
// each change).
func (s *Server) loadWebhooks(ctx context.Context) error {
	stored, err := s.st.WebhookList(ctx)
	if err != nil {
		return err
	}
	hooks := make([]config.Webhook, 0, len(stored))
	for _, h := range stored {
		hooks = append(hooks, config.Webhook{Name: h.Name, URL: h.URL, Secret: h.Secret, Kinds: h.Kinds, Tenants: h.Tenants})
	}
	s.alerts.SetStored(hooks)
	return nil
}

// webhookViews lists every webhook without its secret.
func (s *Server) webhookViews(ctx context.Context) (api.WebhookList, error) {
	out := api.WebhookList{Webhooks: []api.Webhook{}}
	for _, h := range s.cfg.Alerts.Webhooks {
		out.Webhooks = append(out.Webhooks, api.Webhook{Name: h.Name, URL: h.URL, Kinds: h.Kinds, Tenants: h.Tenants, Source: "config"})
	}
	stored, err := s.st.WebhookList(ctx)
	if err != nil {
		return out, err
	}
	for _, h := range stored {
		out.Webhooks = append(out.Webhooks, api.Webhook{Name: h.Name, URL: h.URL, Kinds: h.Kinds, Tenants: h.Tenants,
			Source: "api", CreatedAt: wire.TimePtr(h.CreatedAt), CreatedBy: h.CreatedBy})
	}
	return out, nil
}

// configField splits a configuration error ("invalid config: url: must
// be ...") into the field and what is wrong with it.
func configField(err error) (string, string) {
	msg := strings.TrimPrefix(err.Error(), config.ErrInvalid.Error()+": ")
	field, rest, _ := strings.Cut(msg, ": ")
	return field, rest
}
