package server

import (
	"net/http"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

// defaultUsageWindow is the usage report's window when since is not given.
const defaultUsageWindow = 24 * time.Hour

// handleUsage answers GET /usage?since=&until=&by=tenant|lane: per tenant
// or lane, what the attempts that finished in the window used (see
// store.UsageRow). A tenant key sees its own tenant only.
func (s *Server) handleUsage(w http.ResponseWriter, r *http.Request, p principal) error {
	if p.role == roleWorker {
		return errf(http.StatusForbidden, api.CodePermissionDenied, "worker keys cannot read usage")
	}
	up, err := s.usageParams(r, p)
	if err != nil {
		return err
	}
	rows, err := s.st.ExecutionUsage(r.Context(), up)
	if err != nil {
		return err
	}
	out := api.UsageReport{Since: up.FinishedAfter.UTC(), Until: up.FinishedBefore.UTC(), By: string(up.By), Rows: make([]api.UsageRow, len(rows))}
	for i, row := range rows {
		out.Rows[i] = api.UsageRow{
			Key: row.Key, Jobs: row.Jobs, Attempts: row.Attempts, WallSeconds: row.Wall.Seconds(),
			CoreSeconds: row.CoreSeconds, GPUSeconds: row.GPUSeconds, MemoryGBSeconds: row.MemoryGBSeconds,
			MeasuredAttempts: row.Measured, CPUSeconds: row.CPUSeconds, PeakMemoryGBSeconds: row.PeakMemGBSeconds,
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// usageParams reads by (tenant or lane, default tenant) and the window:
// since and until are dates or RFC 3339 times; until defaults to now,
// since to a day before until. since must not be in the future and must
// be before until.
func (s *Server) usageParams(r *http.Request, p principal) (store.UsageParams, error) {
	q := r.URL.Query()
	up := store.UsageParams{By: store.UsageBy(q.Get("by"))}
	switch up.By {
	case "":
		up.By = store.UsageByTenant
	case store.UsageByTenant, store.UsageByLane:
	default:
		return up, badField("by", "must be tenant or lane, got %q", q.Get("by"))
	}
	if p.role == roleTenant {
		up.Tenant = p.tenant
	}
	var err error
	if up.FinishedAfter, err = rangeParam(q, "since", "", false); err != nil {
		return up, err
	}
	if up.FinishedBefore, err = rangeParam(q, "until", "", true); err != nil {
		return up, err
	}
	now := s.clock.Now()
	if up.FinishedBefore.IsZero() {
		up.FinishedBefore = now
	}
	if up.FinishedAfter.IsZero() {
		up.FinishedAfter = up.FinishedBefore.Add(-defaultUsageWindow)
	}
	switch {
	case up.FinishedAfter.After(now):
		return up, badField("since", "is in the future (%s): give a time before now", up.FinishedAfter.UTC().Format(time.RFC3339))
	case !up.FinishedAfter.Before(up.FinishedBefore):
		return up, badField("since", "must be before until (%s)", up.FinishedBefore.UTC().Format(time.RFC3339))
	}
	return up, nil
}
