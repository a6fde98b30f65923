package server

import (
	"net/http"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

// defaultSeriesPoints is how many steps a series has when no step is
// given: the last hour by minute, by default.
const defaultSeriesPoints = 60

// handleSeries answers GET /series: attempts finished by outcome and
// lease waits per step over [since, until) (default the last hour), for a
// tenant key its own jobs only.
func (s *Server) handleSeries(w http.ResponseWriter, r *http.Request, p principal) error {
	if p.role == roleWorker {
		return errf(http.StatusForbidden, api.CodePermissionDenied, "worker keys cannot read series")
	}
	sp, err := s.seriesParams(r, p)
	if err != nil {
		return err
	}
	points, err := s.st.ExecutionSeries(r.Context(), sp)
	if err != nil {
		return err
	}
	out := api.Series{Since: sp.Since, Until: sp.Until, StepMS: sp.Step.Milliseconds(), Points: make([]api.SeriesPoint, len(points))}
	for i, pt := range points {
		finished := make(map[string]int64, len(pt.Finished))
		for outcome, n := range pt.Finished {
			finished[string(outcome)] = n
		}
		out.Points[i] = api.SeriesPoint{Start: pt.Start, Finished: finished, Leased: pt.Leased,
			WaitMeanMS: msOf(pt.WaitMean), WaitP50MS: msOf(pt.WaitP50), WaitP95MS: msOf(pt.WaitP95), WaitMaxMS: msOf(pt.WaitMax)}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// seriesParams reads the range (since/until: dates or RFC 3339 times;
// until defaults to now, since to an hour before until) and the step (a
// Go duration of at least a second; default the range over 60). With
// none of the three, the range is the 60 whole minutes up to the end of
// the current one.
func (s *Server) seriesParams(r *http.Request, p principal) (store.SeriesParams, error) {
	q := r.URL.Query()
	sp := store.SeriesParams{Tenant: q.Get("tenant"), Type: q.Get("type"), Lane: q.Get("lane")}
	if p.role == roleTenant {
		sp.Tenant = p.tenant
	}
	var err error
	if sp.Since, err = rangeParam(q, "since", "", false); err != nil {
		return sp, err
	}
	if sp.Until, err = rangeParam(q, "until", "", true); err != nil {
		return sp, err
	}
	if sp.Until.IsZero() && sp.Since.IsZero() && q.Get("step") == "" {
		// The last hour by minute, whole minutes, the current one last.
		sp.Until = s.clock.Now().Truncate(time.Minute).Add(time.Minute)
	}
	if sp.Until.IsZero() {
		sp.Until = s.clock.Now()
	}
	if sp.Since.IsZero() {
		sp.Since = sp.Until.Add(-time.Hour)
	}
	if !sp.Until.After(sp.Since) {
		return sp, badField("since", "must be before until (%s), got %s", sp.Until.Format(time.RFC3339), sp.Since.Format(time.RFC3339))
	}
	sp.Step = (sp.Until.Sub(sp.Since) + defaultSeriesPoints - 1) / defaultSeriesPoints
	sp.Step = max(sp.Step.Round(time.Second), time.Second)
	if v := q.Get("step"); v != "" {
		if sp.Step, err = time.ParseDuration(v); err != nil || sp.Step < time.Second {
			return sp, badField("step", "must be a duration of at least 1s (30s, 1m, 1h), got %q", v)
		}
	}
	if n := sp.Points(); n > store.MaxSeriesPoints {
		return sp, badField("step", "makes %d points over the range, at most %d: take a longer step or a shorter range", n, store.MaxSeriesPoints)
	}
	return sp, nil
}
