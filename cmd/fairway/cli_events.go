package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

func init() {
	commands["events"] = command{summary: "read the audit trail", run: runEvents}
}

const eventsAbout = `Reads the audit trail, oldest first: every state change of every job, and
the operators' actions (schedules changed, lanes paused, jobs retried, ...),
each with who did it. An admin key reads every event, a tenant key its own
tenant's. --since and --until take an RFC 3339 time or a duration ago (1h).`

func runEvents(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("events", "[flags]", eventsAbout, stdout, stderr)
	var o client.EventOptions
	var since, until string
	limit := 100
	types := c.filter("type", "only events of these `types` (any of them: repeat the flag or separate them with commas): submitted, leased, failed, retried, lane_paused, ...")
	job := c.filter("job", "only the events of this job `ID` (one)")
	schedule := c.filter("schedule", "only the events of this schedule `ID` (one)")
	actor := c.filter("actor", "only events by this `actor` (one): admin, tenant:NAME, worker:ID, system")
	tenant := c.filter("tenant", "only events of this `tenant` (one; admin keys)")
	c.fs.StringVar(&since, "since", "", "only events at or after this `time`")
	c.fs.StringVar(&until, "until", "", "only events before this `time`")
	c.fs.Int64Var(&o.AfterID, "after-id", 0, "only events after this event `ID` (the last one you read)")
	c.fs.IntVar(&limit, "limit", limit, "at most `N` events")
	if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
		return code
	}
	err := singles(map[*filterFlag]*string{job: &o.JobID, schedule: &o.ScheduleID, actor: &o.Actor, tenant: &o.Tenant})
	if err != nil {
		return c.usageErr("%v", err)
	}
	now := time.Now()
	if o.Since, err = sinceFlag(since, now); err != nil {
		return c.usageErr("--since: %v", err)
	}
	if o.Until, err = sinceFlag(until, now); err != nil {
		return c.usageErr("--until: %v", err)
	}
	if limit < 1 {
		return c.usageErr("--limit: want at least 1, got %d", limit)
	}
	o.Types = types.values
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	var all []api.Event
	for len(all) < limit {
		o.Limit = min(limit-len(all), 1000)
		page, err := cl.AuditEvents(ctx, o)
		if err != nil {
			return c.fail(err)
		}
		all = append(all, page.Events...)
		if page.NextAfterID == 0 {
			break
		}
		o.AfterID = page.NextAfterID
	}
	if c.json {
		return c.done(c.printJSON(api.EventList{Events: emptyIfNil(all)}))
	}
	tw := c.table()
	tableRow(tw, "ID", "AT", "EVENT", "JOB", "ATTEMPT", "TENANT", "ACTOR", "DETAIL")
	for _, e := range all {
		attempt := "-"
		if e.JobID != "" {
			attempt = strconv.Itoa(e.Attempt)
		}
		tableRow(tw, strconv.FormatInt(e.ID, 10), timeText(&e.At), e.Type, dashIfEmpty(e.JobID), attempt,
			dashIfEmpty(e.Tenant), e.Actor, detailText(e.Detail))
	}
	return c.done(tw.Flush())
}

// sinceFlag reads an RFC 3339 time, or a duration that long before now.
func sinceFlag(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	d, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok && err != nil {
		var n int
		if n, err = strconv.Atoi(days); err == nil {
			d = time.Duration(n) * 24 * time.Hour
		}
	}
	if err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("want a duration ago (1h, 7d) or an RFC 3339 time, got %q", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want an RFC 3339 time (2026-11-25T06:00:00Z) or a duration ago (1h, 7d), got %q", s)
	}
	return t, nil
}

// detailText is an event's detail on one line ("-" for none).
func detailText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "-"
	}
	return string(raw)
}
