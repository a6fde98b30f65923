package api

import "time"

// ScheduleSpec is the body of POST /schedules and PUT /schedules/{id}: a
// job template and when to run it (docs/schedules.md).
type ScheduleSpec struct {
	Tenant   string   `json:"tenant,omitempty"` // admin keys only; default the key's tenant
	Name     string   `json:"name,omitempty"`
	Tags     []string `json:"tags,omitempty"`     // the schedule's own, for list filters
	Spec     string   `json:"spec"`               // "0 9 * * 1-5", "every 15m offset 5m", "at 2026-12-01T09:00:00+01:00"
	Timezone string   `json:"timezone,omitempty"` // IANA zone of cron expressions; default UTC
	Template JobSpec  `json:"template"`           // the job each slot creates, as POST /jobs takes it
	// Overlap: skip (default), buffer_one, buffer_all, cancel_other, allow_all.
	Overlap         string     `json:"overlap,omitempty"`
	CatchupWindowMS int64      `json:"catchup_window_ms,omitempty"` // default 15 minutes
	JitterMS        int64      `json:"jitter_ms,omitempty"`
	StartAt         *time.Time `json:"start_at,omitempty"`
	EndAt           *time.Time `json:"end_at,omitempty"`
	PauseOnFailure  bool       `json:"pause_on_failure,omitempty"`
	Paused          bool       `json:"paused,omitempty"`
	Note            string     `json:"note,omitempty"` // why it is paused
}

// Schedule is a schedule as the server reports it.
type Schedule struct {
	ID              string      `json:"id"`
	Tenant          string      `json:"tenant"`
	Name            string      `json:"name,omitempty"`
	Tags            []string    `json:"tags,omitempty"`
	Spec            string      `json:"spec"`
	Timezone        string      `json:"timezone"`
	Template        JobSpec     `json:"template"`
	Overlap         string      `json:"overlap"`
	CatchupWindowMS int64       `json:"catchup_window_ms"`
	JitterMS        int64       `json:"jitter_ms,omitempty"`
	StartAt         *time.Time  `json:"start_at,omitempty"`
	EndAt           *time.Time  `json:"end_at,omitempty"`
	PauseOnFailure  bool        `json:"pause_on_failure,omitempty"`
	Paused          bool        `json:"paused"`
	Note            string      `json:"note,omitempty"`
	NextRunAt       *time.Time  `json:"next_run_at,omitempty"` // the next nominal time; absent when none is left
	LastRunAt       *time.Time  `json:"last_run_at,omitempty"` // the nominal time of the last job fired
	Buffered        []time.Time `json:"buffered,omitempty"`    // slots waiting for the running job
	CreatedAt       time.Time   `json:"created_at"`
	UpdatedAt       time.Time   `json:"updated_at"`
	// Upcoming (the next 10 nominal times) and Recent (the last 10 runs)
	// are filled by GET /schedules/{id}.
	Upcoming []time.Time   `json:"upcoming,omitempty"`
	Recent   []ScheduleRun `json:"recent,omitempty"`

	// LastFailure is set while the schedule's latest slot failed to
	// create its job (a schedule_failed event newer than its latest
	// schedule_fired): the schedule fires, but nothing runs.
	LastFailure *ScheduleSlotFailure `json:"last_failure,omitempty"`
}

// ScheduleRun is one job a schedule created.
type ScheduleRun struct {
	ScheduledFor time.Time  `json:"scheduled_for"`
	JobID        string     `json:"job_id"`
	State        string     `json:"state"`
	StartedAt    *time.Time `json:"started_at,omitempty"`
	LagMS        *int64     `json:"lag_ms,omitempty"` // scheduled_for to started_at
}

// ScheduleList answers GET /schedules.
type ScheduleList struct {
	Schedules  []Schedule `json:"schedules"`
	NextCursor string     `json:"next_cursor,omitempty"`
}

// ScheduleNoteRequest is the body of POST /schedules/{id}/pause and /resume.
type ScheduleNoteRequest struct {
	Note string `json:"note,omitempty"`
}

// ScheduleBackfillRequest is the body of POST /schedules/{id}/backfill:
// the slots in [start_time, end_time) fire under overlap (default skip).
type ScheduleBackfillRequest struct {
	StartTime time.Time `json:"start_time"`
	EndTime   time.Time `json:"end_time"`
	Overlap   string    `json:"overlap,omitempty"`
}

// ScheduleSlotFailure is a slot whose job could not be created, and why
// (the schedule_failed event's detail).
type ScheduleSlotFailure struct {
	ScheduledFor time.Time  `json:"scheduled_for"`
	At           *time.Time `json:"at,omitempty"` // when it failed
	Error        string     `json:"error"`
}

// ScheduleActionResponse answers trigger and backfill.
type ScheduleActionResponse struct {
	Schedule Schedule              `json:"schedule"`
	Fired    []string              `json:"fired"`            // ids of the jobs created
	Failed   []ScheduleSlotFailure `json:"failed,omitempty"` // slots whose job could not be created
	Buffered int                   `json:"buffered"`         // slots waiting behind a running job
	Skipped  int                   `json:"skipped"`          // slots dropped by the overlap policy
}
