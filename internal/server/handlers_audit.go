package server

import (
	"net/http"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
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
	if lp.Since, err = timeParam(q.Get("since"), "since"); err != nil {
		return err
	}
	if lp.Until, err = timeParam(q.Get("until"), "until"); err != nil {
		return err
	}
	if !lp.Since.IsZero() && !lp.Until.IsZero() && !lp.Since.Before(lp.Until) {
		return badField("until", "must be after since")
	}
	return s.writeEvents(w, r, lp)
}
