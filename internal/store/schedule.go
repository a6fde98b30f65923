package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// MisfirePolicy is what a schedule does with runs missed while the server
// was down.
type MisfirePolicy string

// Misfire policies.
const (
	MisfireSkip    MisfirePolicy = "skip"     // drop missed runs
	MisfireRunOnce MisfirePolicy = "run_once" // run once for all missed runs
)

// Schedule creates jobs from Template at the times Spec names.
type Schedule struct {
	ID            string
	Tenant        string
	Name          string
	Spec          string // cron expression, "@every 5m", or "@once 2025-11-03T10:00:00Z"
	Timezone      string // IANA name; "" = UTC
	Template      json.RawMessage
	MisfirePolicy MisfirePolicy
	Enabled       bool
	NextRunAt     time.Time
	LastRunAt     time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
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
	case s.MisfirePolicy != "" && s.MisfirePolicy != MisfireSkip && s.MisfirePolicy != MisfireRunOnce:
		return fmt.Errorf("%w: schedule %s: unknown misfire policy %q", ErrInvalid, s.ID, s.MisfirePolicy)
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
	DueBefore   time.Time // enabled, with next_run_at <= DueBefore
	Limit       int       // 0 = DefaultListLimit; capped at MaxListLimit
}
