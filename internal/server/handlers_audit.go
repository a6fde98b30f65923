package server

import (
	"net/http"
	"strconv"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/wire"
)

// handleAuditEvents is the audit trail: every event (admin keys) or a
// tenant's own, filtered by type, job, schedule, actor and time, oldest
// first, paged with after_id.
func (s *Server) handleAuditEvents(w http.ResponseWriter, r *http.Request, p principal) error {
	q := r.URL.Query()
	lp := store.EventListParams{JobID: q.Get("job_id"), ScheduleID: q.Get("schedule_id"), Actor: q.Get("actor")}
	switch p.role {
	case roleTenant:
		if t := q.Get("tenant"); t != "" && t != p.tenant {
			return errf(http.StatusForbidden, api.CodePermissionDenied, "a key of tenant %s cannot read the events of tenant %s", p.tenant, t)
		}
		lp.Tenant = p.tenant
	case roleWorker:
		return errf(http.StatusForbidden, api.CodePermissionDenied, "worker keys cannot read the audit trail")
	default:
		lp.Tenant = q.Get("tenant")
	}
	var err error
	if lp.Limit, err = intParam(q.Get("limit"), "limit", 1, 1000, 100); err != nil {
		return err
	}
	if v := q.Get("after_id"); v != "" {
		if lp.AfterID, err = strconv.ParseInt(v, 10, 64); err != nil || lp.AfterID < 0 {
			return badField("after_id", "must be an event id (a whole number), got %q", v)
		}
	}
	if lp.Since, err = timeParam(q.Get("since"), "since"); err != nil {
		return err
	}
	if lp.Until, err = timeParam(q.Get("until"), "until"); err != nil {
		return err
	}
	if !lp.Since.IsZero() && !lp.Until.IsZero() && !lp.Since.Before(lp.Until) {
		return badField("until", "must be after since")
	}
	for _, t := range splitValues(q["type"]) {
		lp.Types = append(lp.Types, store.EventType(t))
	}
	evs, err := s.st.EventList(r.Context(), lp)
	if err != nil {
		return err
	}
	out := api.EventList{Events: make([]api.Event, 0, len(evs))}
	for _, e := range evs {
		out.Events = append(out.Events, wire.Event(e))
	}
	if len(evs) == lp.Limit {
		out.NextAfterID = evs[len(evs)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
