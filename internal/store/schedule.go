package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// Schedule creates jobs from Template at the times Spec names (package
// internal/schedule reads Spec and applies the policies).
type Schedule struct {
	ID       string
	Tenant   string
	Name     string
	Tags     []string
	Spec     string // cron expression, "every 15m offset 5m", or "at 2026-12-01T09:00:00Z"
	Timezone string // IANA name; "" = UTC
	Template json.RawMessage
	// Overlap is what a slot does while a job of the schedule has not
	// finished: skip, buffer_one, buffer_all, cancel_other, allow_all.
	Overlap        string
	CatchupWindow  time.Duration // 0: the default window
	Jitter         time.Duration
	StartAt, EndAt time.Time // no slot outside them (zero: unbounded)
	Enabled        bool      // false: paused
	PauseNote      string
	PauseOnFailure bool
	NextRunAt      time.Time   // the next nominal time not yet handled; zero: none left
	Buffered       []time.Time // slots waiting for the running job, oldest first
	LastRunAt      time.Time   // the nominal time of the last job fired
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Validate checks the id, tenant, spec and template.
func (s *Schedule) Validate() error {
	switch {
	case s.ID == "":
		return fmt.Errorf("%w: schedule: empty id", ErrInvalid)
	case s.Tenant == "":
		return fmt.Errorf("%w: schedule %s: empty tenant", ErrInvalid, s.ID)
	case s.Spec == "":
		return fmt.Errorf("%w: schedule %s: empty spec", ErrInvalid, s.ID)
	case len(s.Template) > 0 && !json.Valid(s.Template):
		return fmt.Errorf("%w: schedule %s: template is not JSON", ErrInvalid, s.ID)
	case s.CatchupWindow < 0 || s.Jitter < 0:
		return fmt.Errorf("%w: schedule %s: negative catch-up window or jitter", ErrInvalid, s.ID)
	case s.CreatedAt.IsZero():
		return fmt.Errorf("%w: schedule %s: zero created_at", ErrInvalid, s.ID)
	}
	return nil
}

// ScheduleListParams selects schedules in id order. Zero fields do not
// filter.
type ScheduleListParams struct {
	Tenant      string
	EnabledOnly bool
	Tag         string    // schedules that carry this tag
	DueBefore   time.Time // enabled, with next_run_at <= DueBefore
	AfterID     string    // only ids after it (paging)
	Limit       int       // 0 = DefaultListLimit; capped at MaxListLimit
}
