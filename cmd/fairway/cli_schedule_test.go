package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Issue 28 item 1: a trigger whose slot created no job says why on stderr
// and exits 4; a create the server refuses exits 4 with its message.
func TestCLIScheduleTriggerReportsAFailedSlot(t *testing.T) {
	slot := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	res := api.ScheduleActionResponse{Schedule: api.Schedule{ID: "s-1", Timezone: "UTC"}, Fired: []string{},
		Failed: []api.ScheduleSlotFailure{{ScheduledFor: slot, Error: "tenant acme has 1 unfinished jobs; its limit is 1"}}}
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/schedules/{id}/trigger": replyWith(200, res),
		"POST /api/v1/schedules": replyWith(400, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeInvalidArgument,
			Field: "template.command", Message: "command: the job has no command"}}),
	})
	code, out, errOut := runCmd(t, "schedule", "trigger", "s-1", "--server", f.URL)
	if code != exitAPI || out != "" || !strings.Contains(errOut, "the slot at 2026-11-26 08:00:00 UTC") || !strings.Contains(errOut, "its limit is 1") {
		t.Errorf("trigger: exit %d, stdout %q, stderr %q; want exit 4 and the reason", code, out, errOut)
	}
	code, _, errOut = runCmd(t, "schedule", "create", "--spec", "every 1m", "--name", "nocmd", "demo", "--server", f.URL)
	if code != exitAPI || !strings.Contains(errOut, "no command") {
		t.Errorf("create: exit %d, stderr %q; want exit 4 and the server's message", code, errOut)
	}
}

// Issue 28 items 1 and 18: the list names each time's zone (the
// schedule's) and says which schedules are failing; get shows the failure.
func TestCLIScheduleListNamesTheZone(t *testing.T) {
	next := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	failure := &api.ScheduleSlotFailure{ScheduledFor: next.Add(-time.Hour), Error: "lane nightly: unknown lane"}
	list := api.ScheduleList{Schedules: []api.Schedule{
		{ID: "s-1", Spec: "0 9 * * *", Timezone: "Europe/Berlin", Overlap: "skip", NextRunAt: &next, LastFailure: failure},
		{ID: "s-2", Spec: "every 1m", Timezone: "UTC", Overlap: "skip", NextRunAt: &next},
	}}
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"GET /api/v1/schedules":      replyWith(200, list),
		"GET /api/v1/schedules/{id}": replyWith(200, list.Schedules[0]),
	})
	code, out, errOut := runCmd(t, "schedule", "list", "--server", f.URL)
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) < 3 || !strings.Contains(lines[0], "FAILING") ||
		!strings.Contains(lines[1], "2026-11-26 09:00:00 CET") || !strings.Contains(lines[1], "yes") ||
		!strings.Contains(lines[2], "2026-11-26 08:00:00 UTC") {
		t.Errorf("list: exit %d, stdout:\n%s\nstderr %q", code, out, errOut)
	}
	code, out, _ = runCmd(t, "schedule", "get", "s-1", "--server", f.URL)
	if code != 0 || !strings.Contains(out, "the slot at 2026-11-26 08:00:00 CET") || !strings.Contains(out, "unknown lane") {
		t.Errorf("get: exit %d, stdout:\n%s", code, out)
	}
}
