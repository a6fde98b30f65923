package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/dispatch"
	"github.com/fairwayhq/fairway/internal/schedule"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/wire"
)

// Schedules (docs/schedules.md): the HTTP side. The dispatcher holds the
// schedules and fires them; reads come from the store.

const (
	upcomingShown = 10
	recentShown   = 10
	maxCatchup    = 365 * 24 * time.Hour
)

func (s *Server) handleScheduleCreate(w http.ResponseWriter, r *http.Request, p principal) error {
	var spec api.ScheduleSpec
	if err := decode(w, r, maxBody, &spec); err != nil {
		return err
	}
	tenant, aerr := p.tenantFor(spec.Tenant)
	if aerr != nil {
		return aerr
	}
	sc, err := scheduleRecord(spec, tenant)
	if err != nil {
		return err
	}
	created, err := s.d.CreateSchedule(r.Context(), sc, p.name())
	if err != nil {
		return err
	}
	out, err := s.scheduleView(r.Context(), created, false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// scheduleRecord checks a schedule spec's own fields (the dispatcher reads
// the spec and the template) and makes the record to store.
func scheduleRecord(spec api.ScheduleSpec, tenant string) (store.Schedule, error) {
	switch {
	case len(spec.Name) > maxNameLen:
		return store.Schedule{}, badField("name", "longer than %d characters", maxNameLen)
	case spec.CatchupWindowMS < 0 || time.Duration(spec.CatchupWindowMS)*time.Millisecond > maxCatchup:
		return store.Schedule{}, badField("catchup_window_ms", "must be between 0 (the default, 15 minutes) and %d", maxCatchup.Milliseconds())
	case spec.JitterMS < 0 || time.Duration(spec.JitterMS)*time.Millisecond > schedule.MaxJitter:
		return store.Schedule{}, badField("jitter_ms", "must be between 0 and %d", schedule.MaxJitter.Milliseconds())
	case spec.Template.Tenant != "" && spec.Template.Tenant != tenant:
		return store.Schedule{}, badField("template.tenant", "a schedule's jobs belong to its tenant (%s); leave it out", tenant)
	case len(spec.Note) > 1024:
		return store.Schedule{}, badField("note", "longer than 1024 characters")
	}
	if err := checkTags(spec.Tags, "tags"); err != nil {
		return store.Schedule{}, err
	}
	if _, err := schedule.ParseOverlap(spec.Overlap); err != nil {
		return store.Schedule{}, badField("overlap", "%s", err.(*schedule.FieldError).Msg)
	}
	template, err := json.Marshal(spec.Template)
	if err != nil {
		return store.Schedule{}, badField("template", "%v", err)
	}
	overlap, _ := schedule.ParseOverlap(spec.Overlap)
	sc := store.Schedule{
		Tenant: tenant, Name: spec.Name, Tags: spec.Tags, Spec: spec.Spec, Timezone: spec.Timezone, Template: template,
		Overlap: string(overlap), CatchupWindow: time.Duration(spec.CatchupWindowMS) * time.Millisecond,
		Jitter: time.Duration(spec.JitterMS) * time.Millisecond, PauseOnFailure: spec.PauseOnFailure,
		Enabled: !spec.Paused, PauseNote: spec.Note,
	}
	if spec.StartAt != nil {
		sc.StartAt = *spec.StartAt
	}
	if spec.EndAt != nil {
		sc.EndAt = *spec.EndAt
	}
	return sc, nil
}

// visibleSchedule reads a schedule the principal may see, or answers 404.
func (s *Server) visibleSchedule(ctx context.Context, p principal, id string) (store.Schedule, error) {
	sc, err := s.st.ScheduleGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !p.sees(sc.Tenant)) {
		return store.Schedule{}, notFound("schedule", id)
	}
	return sc, err
}

func (s *Server) handleScheduleGet(w http.ResponseWriter, r *http.Request, p principal) error {
	sc, err := s.visibleSchedule(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out, err := s.scheduleView(r.Context(), sc, true)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleScheduleEvents is a schedule's history, oldest first: created,
// updated, paused, resumed, each slot fired, skipped by the overlap
// policy, missed past the catch-up window or failed. type filters
// (repeatable or comma-separated); after_id and limit page.
func (s *Server) handleScheduleEvents(w http.ResponseWriter, r *http.Request, p principal) error {
	sc, err := s.visibleSchedule(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.writeEvents(w, r, store.EventListParams{ScheduleID: sc.ID})
}

// writeEvents answers an event list: lp's filters, with the type,
// after_id and limit parameters of the request, oldest first.
func (s *Server) writeEvents(w http.ResponseWriter, r *http.Request, lp store.EventListParams) error {
	q := r.URL.Query()
	var err error
	if lp.Limit, err = intParam(q.Get("limit"), "limit", 1, 1000, 100); err != nil {
		return err
	}
	if v := q.Get("after_id"); v != "" {
		if lp.AfterID, err = strconv.ParseInt(v, 10, 64); err != nil || lp.AfterID < 0 {
			return badField("after_id", "must be an event id (a whole number), got %q", v)
		}
	}
	for _, t := range splitValues(q["type"]) {
		lp.Types = append(lp.Types, store.EventType(t))
	}
	evs, err := s.listEvents(r.Context(), lp)
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

// splitValues flattens repeated and comma-separated query values.
func splitValues(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// scheduleView renders a schedule; with detail, its next nominal times and
// its last runs.
func (s *Server) scheduleView(ctx context.Context, sc store.Schedule, detail bool) (api.Schedule, error) {
	out := api.Schedule{
		ID: sc.ID, Tenant: sc.Tenant, Name: sc.Name, Tags: sc.Tags, Spec: sc.Spec, Timezone: firstOr(sc.Timezone, "UTC"),
		Overlap: sc.Overlap, CatchupWindowMS: sc.CatchupWindow.Milliseconds(), JitterMS: sc.Jitter.Milliseconds(),
		StartAt: wire.TimePtr(sc.StartAt), EndAt: wire.TimePtr(sc.EndAt), PauseOnFailure: sc.PauseOnFailure,
		Paused: !sc.Enabled, Note: sc.PauseNote, NextRunAt: wire.TimePtr(sc.NextRunAt), LastRunAt: wire.TimePtr(sc.LastRunAt),
		CreatedAt: sc.CreatedAt.UTC(), UpdatedAt: sc.UpdatedAt.UTC(),
	}
	if out.CatchupWindowMS == 0 {
		out.CatchupWindowMS = schedule.DefaultCatchupWindow.Milliseconds()
	}
	for _, b := range sc.Buffered {
		out.Buffered = append(out.Buffered, b.UTC())
	}
	_ = json.Unmarshal(sc.Template, &out.Template)
	var err error
	if out.LastFailure, err = s.scheduleFailing(ctx, sc.ID); err != nil {
		return out, err
	}
	if !detail {
		return out, nil
	}
	spec, err := schedule.Parse(sc.Spec, schedule.Options{Zone: sc.Timezone, Start: sc.StartAt, End: sc.EndAt, Jitter: sc.Jitter})
	if err == nil && !sc.NextRunAt.IsZero() {
		out.Upcoming = append([]time.Time{sc.NextRunAt.In(spec.Location())}, spec.Upcoming(sc.NextRunAt, upcomingShown-1)...)
	}
	page, err := s.st.JobList(ctx, store.JobListParams{ScheduleID: sc.ID, Limit: recentShown})
	if err != nil {
		return out, err
	}
	for _, j := range page.Jobs {
		run := api.ScheduleRun{ScheduledFor: j.ScheduledFor.UTC(), JobID: j.ID, State: string(j.State), StartedAt: wire.TimePtr(j.StartedAt)}
		if !j.StartedAt.IsZero() && !j.ScheduledFor.IsZero() {
			lag := j.StartedAt.Sub(j.ScheduledFor).Milliseconds()
			run.LagMS = &lag
		}
		out.Recent = append(out.Recent, run)
	}
	return out, nil
}

// scheduleFailing is the schedule's latest slot failure when it is newer
// than its latest fired slot: the schedule fires, and nothing runs.
func (s *Server) scheduleFailing(ctx context.Context, id string) (*api.ScheduleSlotFailure, error) {
	evs, err := s.st.EventList(ctx, store.EventListParams{ScheduleID: id, Limit: 1, Newest: true,
		Types: []store.EventType{store.EventScheduleFailed, store.EventScheduleFired}})
	if err != nil || len(evs) == 0 || evs[0].Type != store.EventScheduleFailed {
		return nil, err
	}
	var detail struct {
		ScheduledFor time.Time `json:"scheduled_for"`
		Error        string    `json:"error"`
	}
	_ = json.Unmarshal(evs[0].Detail, &detail)
	at := evs[0].At.UTC()
	return &api.ScheduleSlotFailure{ScheduledFor: detail.ScheduledFor.UTC(), At: &at, Error: detail.Error}, nil
}

func firstOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (s *Server) handleScheduleList(w http.ResponseWriter, r *http.Request, p principal) error {
	q := r.URL.Query()
	params := store.ScheduleListParams{Tenant: q.Get("tenant"), AfterID: q.Get("cursor"), Tag: q.Get("tag")}
	if p.role == roleTenant {
		if params.Tenant != "" && params.Tenant != p.tenant {
			return errf(http.StatusForbidden, api.CodePermissionDenied, "a key of tenant %s cannot list tenant %s", p.tenant, params.Tenant)
		}
		params.Tenant = p.tenant
	}
	var err error
	if params.Limit, err = intParam(q.Get("limit"), "limit", 1, 1000, 100); err != nil {
		return err
	}
	list, err := s.st.ScheduleList(r.Context(), params)
	if err != nil {
		return err
	}
	out := api.ScheduleList{Schedules: []api.Schedule{}}
	for _, sc := range list {
		v, err := s.scheduleView(r.Context(), sc, false)
		if err != nil {
			return err
		}
		out.Schedules = append(out.Schedules, v)
	}
	if len(list) == params.Limit {
		out.NextCursor = list[len(list)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleScheduleUpdate replaces a schedule's spec, template and policies;
// its runs and run state stay (a new spec starts from its next time).
func (s *Server) handleScheduleUpdate(w http.ResponseWriter, r *http.Request, p principal) error {
	var spec api.ScheduleSpec
	if err := decode(w, r, maxBody, &spec); err != nil {
		return err
	}
	old, err := s.visibleSchedule(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	if spec.Tenant != "" && spec.Tenant != old.Tenant {
		return badField("tenant", "a schedule cannot move to another tenant")
	}
	rec, err := scheduleRecord(spec, old.Tenant)
	if err != nil {
		return err
	}
	return s.changeSchedule(w, r, p, old.ID, func(sc *store.Schedule) error {
		sc.Name, sc.Tags, sc.Spec, sc.Timezone, sc.Template = rec.Name, rec.Tags, rec.Spec, rec.Timezone, rec.Template
		sc.Overlap, sc.CatchupWindow, sc.Jitter = rec.Overlap, rec.CatchupWindow, rec.Jitter
		sc.StartAt, sc.EndAt, sc.PauseOnFailure = rec.StartAt, rec.EndAt, rec.PauseOnFailure
		sc.Enabled, sc.PauseNote = rec.Enabled, rec.PauseNote
		return nil
	})
}

func (s *Server) handleSchedulePause(w http.ResponseWriter, r *http.Request, p principal) error {
	return s.scheduleNote(w, r, p, false)
}

func (s *Server) handleScheduleResume(w http.ResponseWriter, r *http.Request, p principal) error {
	return s.scheduleNote(w, r, p, true)
}

// scheduleNote pauses or resumes a schedule with an optional note. A
// resumed schedule's slots missed while paused meet its catch-up window.
func (s *Server) scheduleNote(w http.ResponseWriter, r *http.Request, p principal, enabled bool) error {
	var req api.ScheduleNoteRequest
	if err := decodeOptional(w, r, maxBody, &req); err != nil {
		return err
	}
	if len(req.Note) > 1024 {
		return badField("note", "longer than 1024 characters")
	}
	sc, err := s.visibleSchedule(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.changeSchedule(w, r, p, sc.ID, func(sc *store.Schedule) error {
		sc.Enabled, sc.PauseNote = enabled, req.Note
		return nil
	})
}

func (s *Server) changeSchedule(w http.ResponseWriter, r *http.Request, p principal, id string, change func(*store.Schedule) error) error {
	updated, err := s.d.UpdateSchedule(r.Context(), id, change, p.name())
	if err != nil {
		return err
	}
	out, err := s.scheduleView(r.Context(), updated, true)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleScheduleTrigger(w http.ResponseWriter, r *http.Request, p principal) error {
	sc, err := s.visibleSchedule(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	res, err := s.d.TriggerSchedule(r.Context(), sc.ID, p.name())
	if err != nil {
		return err
	}
	return s.answerSlots(w, r, res)
}

func (s *Server) handleScheduleBackfill(w http.ResponseWriter, r *http.Request, p principal) error {
	var req api.ScheduleBackfillRequest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	switch {
	case req.StartTime.IsZero():
		return badField("start_time", "is required (RFC 3339)")
	case req.EndTime.IsZero():
		return badField("end_time", "is required (RFC 3339)")
	}
	overlap, err := schedule.ParseOverlap(req.Overlap)
	if err != nil {
		return badField("overlap", "%s", err.(*schedule.FieldError).Msg)
	}
	sc, err := s.visibleSchedule(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	res, err := s.d.BackfillSchedule(r.Context(), sc.ID, req.StartTime, req.EndTime, overlap, p.name())
	if err != nil {
		return err
	}
	return s.answerSlots(w, r, res)
}

func (s *Server) answerSlots(w http.ResponseWriter, r *http.Request, res dispatch.SlotsResult) error {
	view, err := s.scheduleView(r.Context(), res.Schedule, false)
	if err != nil {
		return err
	}
	out := api.ScheduleActionResponse{Schedule: view, Fired: res.Fired, Buffered: res.Buffered, Skipped: res.Skipped}
	if out.Fired == nil {
		out.Fired = []string{}
	}
	for _, f := range res.Failed {
		out.Failed = append(out.Failed, api.ScheduleSlotFailure{ScheduledFor: f.ScheduledFor.UTC(), Error: f.Err.Error()})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleScheduleDelete(w http.ResponseWriter, r *http.Request, p principal) error {
	sc, err := s.visibleSchedule(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.d.DeleteSchedule(r.Context(), sc.ID, p.name()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}
