package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// EventOptions filters the audit trail (GET /events). Zero fields do not
// filter; a tenant key reads its own tenant's events only.
type EventOptions struct {
	Types      []string
	JobID      string
	ScheduleID string
	Actor      string // "admin", "tenant:acme", "worker:w1", "system"
	Tenant     string // admin keys
	Since      time.Time
	Until      time.Time
	AfterID    int64 // the previous page's NextAfterID
	Limit      int   // 1-1000; 0: the server's default (100)
}

// AuditEvents reads one page of the audit trail, oldest first.
func (c *Client) AuditEvents(ctx context.Context, o EventOptions) (api.EventList, error) {
	q := url.Values{}
	for _, t := range o.Types {
		q.Add("type", t)
	}
	for k, v := range map[string]string{"job_id": o.JobID, "schedule_id": o.ScheduleID, "actor": o.Actor, "tenant": o.Tenant} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !o.Since.IsZero() {
		q.Set("since", o.Since.Format(time.RFC3339Nano))
	}
	if !o.Until.IsZero() {
		q.Set("until", o.Until.Format(time.RFC3339Nano))
	}
	if o.AfterID > 0 {
		q.Set("after_id", strconv.FormatInt(o.AfterID, 10))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	var out api.EventList
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/events", query: q, out: &out})
	return out, wrap("list events", err)
}
