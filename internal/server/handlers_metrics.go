package server

import (
	"net/http"

	"github.com/fairwayhq/fairway/api"
)

// handleMetrics serves the Prometheus metrics (package metrics) to admin
// keys (Prometheus sends one as a bearer token: authorization.credentials
// in its scrape config), or to anyone in open mode.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request, p principal) error {
	if p.role != roleAdmin && p.role != roleOpen {
		return errf(http.StatusForbidden, api.CodePermissionDenied, "only admin keys may read /metrics")
	}
	s.metrics.Handler().ServeHTTP(w, r)
	return nil
}
