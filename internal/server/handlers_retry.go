package server

import (
	"context"
	"net/http"
	"slices"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

// Retry: a failed or cancelled job back to the queue with one more attempt
// (package dispatch, Retry).

const (
	defaultRetryLimit = 100
	maxRetryLimit     = 1000
)

func (s *Server) handleRetry(w http.ResponseWriter, r *http.Request, p principal) error {
	return s.jobAction(w, r, p, func(ctx context.Context, id string) (string, error) {
		results, err := s.d.Retry(ctx, []string{id}, p.name())
		if err != nil {
			return "", err
		}
		switch results[0] {
		case api.ResultNotRetriable:
			return "", errf(http.StatusConflict, api.CodeConflict, "job %s succeeded; only failed or cancelled jobs can be retried", id)
		case api.ResultNotFound:
			return "", notFound("job", id)
		}
		return results[0], nil
	})
}

func (s *Server) handleRetryMany(w http.ResponseWriter, r *http.Request, p principal) error {
	var req api.RetryRequest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	ids, err := s.retryTargets(r.Context(), p, req)
	if err != nil {
		return err
	}
	out := api.RetryResponse{Retried: []string{}, Skipped: []api.RetrySkipped{}}
	if len(ids) == 0 {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	results, err := s.d.Retry(r.Context(), ids, p.name())
	if err != nil {
		return err
	}
	for i, id := range ids {
		switch results[i] {
		case api.ResultRetried:
			out.Retried = append(out.Retried, id)
		case "":
			out.Skipped = append(out.Skipped, api.RetrySkipped{ID: id, Result: api.CodeConflict})
		default:
			out.Skipped = append(out.Skipped, api.RetrySkipped{ID: id, Result: results[i]})
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// retryTargets are the jobs a bulk retry names, each one p may see, or
// those its filters match.
func (s *Server) retryTargets(ctx context.Context, p principal, req api.RetryRequest) ([]string, error) {
	filtered := req.State != "" || req.Type != "" || req.FailureClass != "" || req.Tenant != "" || req.Lane != "" || req.Limit != 0
	if len(req.IDs) > 0 {
		if filtered {
			return nil, badField("ids", "name jobs or give filters, not both")
		}
		if len(req.IDs) > maxRetryLimit {
			return nil, badField("ids", "must hold at most %d ids, got %d", maxRetryLimit, len(req.IDs))
		}
		ids := slices.Compact(slices.Sorted(slices.Values(req.IDs)))
		jobs, err := s.st.JobGetMany(ctx, ids) // the ones that exist, in the order of ids
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			if i >= len(jobs) || jobs[i].ID != id || !p.sees(jobs[i].Tenant) {
				return nil, notFound("job", id)
			}
		}
		return ids, nil
	}
	params := store.JobListParams{Type: req.Type, Lane: req.Lane, FailureClass: store.FailureClass(req.FailureClass)}
	switch req.State {
	case "", string(store.StateFailed):
		params.States = []store.State{store.StateFailed}
	case string(store.StateCancelled):
		if req.FailureClass != "" {
			return nil, badField("failure_class", "applies to failed jobs; state is cancelled")
		}
		params.States = []store.State{store.StateCancelled}
	default:
		return nil, badField("state", "must be failed or cancelled, got %q", req.State)
	}
	if req.FailureClass != "" && !store.FailureClass(req.FailureClass).Valid() {
		return nil, badField("failure_class", "unknown failure class %q", req.FailureClass)
	}
	switch {
	case req.Limit == 0:
		params.Limit = defaultRetryLimit
	case req.Limit < 0 || req.Limit > maxRetryLimit:
		return nil, badField("limit", "must be between 1 and %d, got %d", maxRetryLimit, req.Limit)
	default:
		params.Limit = req.Limit
	}
	switch p.role {
	case roleTenant:
		if req.Tenant != "" && req.Tenant != p.tenant {
			return nil, errf(http.StatusForbidden, api.CodePermissionDenied, "a key of tenant %s cannot retry jobs of tenant %s", p.tenant, req.Tenant)
		}
		params.Tenant = p.tenant
	case roleWorker:
		return nil, errf(http.StatusForbidden, api.CodePermissionDenied, "worker keys cannot retry jobs")
	default:
		params.Tenant = req.Tenant
	}
	page, err := s.st.JobList(ctx, params)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(page.Jobs))
	for _, j := range page.Jobs {
		ids = append(ids, j.ID)
	}
	return ids, nil
}
