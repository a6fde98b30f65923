package server

import "net/http"

// handleMetrics serves the Prometheus metrics (package metrics) to admin
// keys (Prometheus sends one as a bearer token: authorization.credentials
// in its scrape config), or to anyone in open mode.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request, p principal) error {
	if err := p.adminOnly("read /metrics"); err != nil {
		return err
	}
	s.metrics.Handler().ServeHTTP(w, r)
	return nil
}
