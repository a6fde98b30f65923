package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/fairwayhq/fairway/api"
)

// Schedules (docs/schedules.md): a job template and when to run it.

func schedulePath(id, suffix string) string {
	return "/schedules/" + url.PathEscape(id) + suffix
}

// CreateSchedule creates a schedule.
func (c *Client) CreateSchedule(ctx context.Context, spec api.ScheduleSpec) (api.Schedule, error) {
	var out api.Schedule
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/schedules", in: &spec, out: &out})
	return out, wrap("create schedule", err)
}

// GetSchedule returns a schedule with its next 10 times and last 10 runs.
func (c *Client) GetSchedule(ctx context.Context, id string) (api.Schedule, error) {
	var out api.Schedule
	_, err := c.do(ctx, call{method: http.MethodGet, path: schedulePath(id, ""), out: &out})
	return out, wrap("get schedule "+id, err)
}

// ScheduleListOptions filter GET /schedules; zero values do not filter.
type ScheduleListOptions struct {
	Tenant string
	Tag    string
	Limit  int
	Cursor string
}

// ListSchedules returns one page of schedules, by id.
func (c *Client) ListSchedules(ctx context.Context, o ScheduleListOptions) (api.ScheduleList, error) {
	q := url.Values{}
	if o.Tenant != "" {
		q.Set("tenant", o.Tenant)
	}
	if o.Tag != "" {
		q.Set("tag", o.Tag)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	var out api.ScheduleList
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/schedules", query: q, out: &out})
	return out, wrap("list schedules", err)
}

// UpdateSchedule replaces a schedule's spec, template and policies.
func (c *Client) UpdateSchedule(ctx context.Context, id string, spec api.ScheduleSpec) (api.Schedule, error) {
	var out api.Schedule
	_, err := c.do(ctx, call{method: http.MethodPut, path: schedulePath(id, ""), in: &spec, out: &out})
	return out, wrap("update schedule "+id, err)
}

// PauseSchedule pauses a schedule, with an optional note.
func (c *Client) PauseSchedule(ctx context.Context, id, note string) (api.Schedule, error) {
	var out api.Schedule
	_, err := c.do(ctx, call{method: http.MethodPost, path: schedulePath(id, "/pause"), in: &api.ScheduleNoteRequest{Note: note}, out: &out})
	return out, wrap("pause schedule "+id, err)
}

// ResumeSchedule resumes a paused schedule.
func (c *Client) ResumeSchedule(ctx context.Context, id, note string) (api.Schedule, error) {
	var out api.Schedule
	_, err := c.do(ctx, call{method: http.MethodPost, path: schedulePath(id, "/resume"), in: &api.ScheduleNoteRequest{Note: note}, out: &out})
	return out, wrap("resume schedule "+id, err)
}

// TriggerSchedule fires a slot now, under the schedule's overlap policy.
func (c *Client) TriggerSchedule(ctx context.Context, id string) (api.ScheduleActionResponse, error) {
	var out api.ScheduleActionResponse
	_, err := c.do(ctx, call{method: http.MethodPost, path: schedulePath(id, "/trigger"), in: struct{}{}, out: &out})
	return out, wrap("trigger schedule "+id, err)
}

// BackfillSchedule fires the schedule's slots of a past range.
func (c *Client) BackfillSchedule(ctx context.Context, id string, req api.ScheduleBackfillRequest) (api.ScheduleActionResponse, error) {
	var out api.ScheduleActionResponse
	_, err := c.do(ctx, call{method: http.MethodPost, path: schedulePath(id, "/backfill"), in: &req, out: &out})
	return out, wrap("backfill schedule "+id, err)
}

// DeleteSchedule deletes a schedule; its unfinished jobs go on.
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: schedulePath(id, "")})
	return wrap("delete schedule "+id, err)
}

// ScheduleEventOptions select a page of a schedule's history.
type ScheduleEventOptions struct {
	Types   []string // e.g. schedule_missed, schedule_skipped; none: all
	AfterID int64    // the previous page's NextAfterID
	Limit   int      // 1..1000, default 100
}

// ScheduleEvents returns one page of a schedule's history, oldest first:
// created, updated, paused, resumed, and each slot fired, skipped, missed
// or failed.
func (c *Client) ScheduleEvents(ctx context.Context, id string, o ScheduleEventOptions) (api.EventList, error) {
	q := url.Values{}
	for _, t := range o.Types {
		q.Add("type", t)
	}
	if o.AfterID > 0 {
		q.Set("after_id", strconv.FormatInt(o.AfterID, 10))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	var out api.EventList
	_, err := c.do(ctx, call{method: http.MethodGet, path: schedulePath(id, "/events"), query: q, out: &out})
	return out, wrap("events of schedule "+id, err)
}
