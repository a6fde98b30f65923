package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// Issue 28 item 1: a schedule whose template a submit would refuse (no
// command, and no registered worker runs the type without one) is
// refused when it is made or changed, naming the template's field.
func TestAScheduleWithoutACommandIsRefusedAsASubmitIs(t *testing.T) {
	h := newHarness(t, defaultConfig())
	h.register(api.RegisterRequest{Name: "wa", Types: []string{"a"}, Handlers: []string{}, Slots: 1})
	var e api.ErrorResponse
	if code := h.do("POST", "/jobs", api.JobSpec{Type: "a"}, &e); code != http.StatusBadRequest || e.Error.Field != "command" {
		t.Fatalf("the submit itself: HTTP %d %+v", code, e.Error)
	}
	nocmd := api.ScheduleSpec{Name: "nocmd", Spec: "every 1m", Template: api.JobSpec{Type: "a"}}
	if code := h.do("POST", "/schedules", nocmd, &e); code != http.StatusBadRequest || e.Error.Field != "template.command" ||
		!strings.Contains(e.Error.Message, "no command") {
		t.Fatalf("create without a command: HTTP %d %+v, want 400 on template.command", code, e.Error)
	}
	sc := h.createSchedule(everyMinute)
	if code := h.do("PUT", "/schedules/"+sc.ID, nocmd, &e); code != http.StatusBadRequest || e.Error.Field != "template.command" {
		t.Fatalf("update to no command: HTTP %d %+v, want 400 on template.command", code, e.Error)
	}
	if code := h.do("POST", "/schedules/"+sc.ID+"/pause", nil, nil); code != http.StatusOK {
		t.Errorf("pause: HTTP %d", code)
	}
}

// Issue 28 item 1: a slot that fails to create its job is reported by the
// trigger that fired it, shown by GET /schedules/{id} and the list until
// a slot fires again, and raises the schedule_failed alert.
func TestAFailingSlotIsReportedShownAndAlerted(t *testing.T) {
	recv := newReceiver(t)
	cfg := alertConfig(recv.srv.URL)
	cfg.Tenants = map[string]config.Tenant{"acme": {MaxQueued: 1}}
	h := newHarness(t, cfg)
	spec := everyMinute
	spec.Tenant, spec.Overlap = "acme", "allow_all"
	sc := h.createSchedule(spec)
	blocker := h.submit(api.JobSpec{Type: "a", Tenant: "acme", Command: []string{"true"}})

	var res api.ScheduleActionResponse
	if code := h.do("POST", "/schedules/"+sc.ID+"/trigger", nil, &res); code != http.StatusOK || len(res.Fired) != 0 ||
		len(res.Failed) != 1 || !strings.Contains(res.Failed[0].Error, "limit is 1") || res.Failed[0].ScheduledFor.IsZero() {
		t.Fatalf("trigger over the quota: HTTP %d %+v, want the slot's failure", code, res)
	}
	got := h.schedule(sc.ID)
	if got.LastFailure == nil || !strings.Contains(got.LastFailure.Error, "limit is 1") || got.LastFailure.At == nil {
		t.Fatalf("GET after a failed slot: last_failure %+v", got.LastFailure)
	}
	var list api.ScheduleList
	h.do("GET", "/schedules", nil, &list)
	if len(list.Schedules) != 1 || list.Schedules[0].LastFailure == nil {
		t.Errorf("the list does not show the failure: %+v", list.Schedules)
	}
	h.waitEvents("alert_delivered", 2) // tenant_over_quota, and schedule_failed
	var failedAlerts int
	for _, d := range recv.deliveries() {
		if d.alert.Kind == "schedule_failed" && d.alert.ScheduleID == sc.ID && d.valid {
			failedAlerts++
		}
	}
	if failedAlerts != 1 {
		t.Fatalf("deliveries %+v, want one schedule_failed alert", recv.deliveries())
	}

	if code := h.do("POST", "/jobs/"+blocker.ID+"/cancel", nil, nil); code != http.StatusOK {
		t.Fatalf("cancel the blocker: HTTP %d", code)
	}
	var res2 api.ScheduleActionResponse
	if code := h.do("POST", "/schedules/"+sc.ID+"/trigger", nil, &res2); code != http.StatusOK || len(res2.Fired) != 1 || len(res2.Failed) != 0 {
		t.Fatalf("trigger under the quota: HTTP %d %+v", code, res2)
	}
	if got := h.schedule(sc.ID); got.LastFailure != nil {
		t.Errorf("after a slot fired, last_failure is still %+v", got.LastFailure)
	}
}
