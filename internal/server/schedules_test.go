package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

func (h *harness) createSchedule(spec api.ScheduleSpec) api.Schedule {
	h.t.Helper()
	var out api.Schedule
	if code := h.do("POST", "/schedules", spec, &out); code != http.StatusCreated {
		h.t.Fatalf("create schedule: HTTP %d", code)
	}
	return out
}

func (h *harness) schedule(id string) api.Schedule {
	h.t.Helper()
	var out api.Schedule
	if code := h.do("GET", "/schedules/"+id, nil, &out); code != http.StatusOK {
		h.t.Fatalf("get schedule %s: HTTP %d", id, code)
	}
	return out
}

// scheduleJobs lists the jobs of a schedule, newest first.
func (h *harness) scheduleJobs(id string) []api.Job {
	h.t.Helper()
	var all api.JobList
	h.do("GET", "/jobs?limit=1000", nil, &all)
	var out []api.Job
	for _, j := range all.Jobs {
		if j.ScheduleID == id {
			out = append(out, j)
		}
	}
	return out
}

var everyMinute = api.ScheduleSpec{Name: "minutely", Spec: "every 1m", Template: api.JobSpec{Type: "a", Command: []string{"true"}}}

func TestAScheduleFiresOneJobPerSlot(t *testing.T) {
	h := newHarness(t, defaultConfig()) // the clock stands at 12:00:00
	sc := h.createSchedule(everyMinute)
	if sc.NextRunAt == nil || !sc.NextRunAt.Equal(h.clock.Now().Add(time.Minute)) || sc.Overlap != "skip" || sc.CatchupWindowMS != 15*60*1000 {
		t.Fatalf("created %+v", sc)
	}
	h.tick()
	if jobs := h.scheduleJobs(sc.ID); len(jobs) != 0 {
		t.Fatalf("fired before its time: %+v", jobs)
	}
	h.clock.Advance(time.Minute)
	h.tick()
	h.tick()
	jobs := h.scheduleJobs(sc.ID)
	if len(jobs) != 1 || jobs[0].ScheduledFor == nil || !jobs[0].ScheduledFor.Equal(h.clock.Now()) || jobs[0].Type != "a" {
		t.Fatalf("after the first slot: %+v", jobs)
	}
	got := h.schedule(sc.ID)
	if !got.NextRunAt.Equal(h.clock.Now().Add(time.Minute)) || len(got.Upcoming) != 10 || len(got.Recent) != 1 || got.Recent[0].JobID != jobs[0].ID {
		t.Errorf("after the first slot the schedule reads %+v", got)
	}
	if evs := h.events(jobs[0].ID); !strings.Contains(strings.Join(evs, ","), "schedule_fired") {
		t.Errorf("the job's events lack schedule_fired: %v", evs)
	}
}

// The default overlap policy skips a slot while the previous job runs, and
// records it.
func TestOverlapSkipWhileTheLastRunIsUnfinished(t *testing.T) {
	h := newHarness(t, defaultConfig())
	sc := h.createSchedule(everyMinute)
	h.clock.Advance(time.Minute)
	h.tick() // slot 1 fires; no worker runs it, so it stays pending
	h.clock.Advance(time.Minute)
	h.tick()
	if jobs := h.scheduleJobs(sc.ID); len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1: the second slot must be skipped", len(jobs))
	}
	skipped, err := h.srv.st.EventList(t.Context(), storeEventParams("schedule_skipped"))
	if err != nil || len(skipped) != 1 {
		t.Errorf("schedule_skipped events: %v, %v", skipped, err)
	}
}

// A restart between slots neither repeats nor loses a slot.
func TestARestartFiresEachSlotOnce(t *testing.T) {
	cfg := defaultConfig()
	h := newHarness(t, cfg)
	spec := everyMinute
	spec.Overlap = "allow_all"
	sc := h.createSchedule(spec)
	h.clock.Advance(time.Minute)
	h.tick()
	h.stop()
	h2 := startHarness(t, cfg, h.path, h.clock)
	h2.tick()
	h2.clock.Advance(time.Minute)
	h2.tick()
	jobs := h2.scheduleJobs(sc.ID)
	if len(jobs) != 2 || jobs[0].ScheduledFor.Equal(*jobs[1].ScheduledFor) {
		t.Fatalf("after a restart: %d jobs %+v, want one per slot", len(jobs), jobs)
	}
}

// Paused for an hour, a schedule resumes with its catch-up window: older
// slots are missed (and recorded), the rest go through the overlap policy.
func TestPauseResumeCatchesUpWithinTheWindow(t *testing.T) {
	h := newHarness(t, defaultConfig())
	spec := everyMinute
	spec.CatchupWindowMS = (10 * time.Minute).Milliseconds()
	sc := h.createSchedule(spec)
	var paused api.Schedule
	if code := h.do("POST", "/schedules/"+sc.ID+"/pause", api.ScheduleNoteRequest{Note: "maintenance"}, &paused); code != http.StatusOK || !paused.Paused || paused.Note != "maintenance" {
		t.Fatalf("pause: HTTP %d %+v", code, paused)
	}
	h.clock.Advance(time.Hour)
	h.tick()
	if jobs := h.scheduleJobs(sc.ID); len(jobs) != 0 {
		t.Fatalf("a paused schedule fired %d jobs", len(jobs))
	}
	var resumed api.Schedule
	if code := h.do("POST", "/schedules/"+sc.ID+"/resume", nil, &resumed); code != http.StatusOK || resumed.Paused {
		t.Fatalf("resume: HTTP %d %+v", code, resumed)
	}
	h.tick()
	jobs := h.scheduleJobs(sc.ID)
	if len(jobs) != 1 || jobs[0].ScheduledFor.Before(h.clock.Now().Add(-10*time.Minute)) {
		t.Fatalf("after resuming: %+v, want one job inside the window", jobs)
	}
	missed, _ := h.srv.st.EventList(t.Context(), storeEventParams("schedule_missed"))
	if len(missed) != 1 || !strings.Contains(string(missed[0].Detail), `"count":49`) {
		t.Errorf("missed: %+v, want one record of 49 slots (12:01..12:49)", missed)
	}
}

func TestTriggerAndBackfill(t *testing.T) {
	h := newHarness(t, defaultConfig())
	spec := everyMinute
	spec.Spec, spec.Overlap = "every 10m", "allow_all"
	sc := h.createSchedule(spec)
	var res api.ScheduleActionResponse
	if code := h.do("POST", "/schedules/"+sc.ID+"/trigger", nil, &res); code != http.StatusOK || len(res.Fired) != 1 {
		t.Fatalf("trigger: HTTP %d %+v", code, res)
	}
	from := h.clock.Now().Add(-time.Hour)
	req := api.ScheduleBackfillRequest{StartTime: from, EndTime: h.clock.Now(), Overlap: "allow_all"}
	if code := h.do("POST", "/schedules/"+sc.ID+"/backfill", req, &res); code != http.StatusOK || len(res.Fired) != 6 {
		t.Fatalf("backfill: HTTP %d %+v", code, res)
	}
	if jobs := h.scheduleJobs(sc.ID); len(jobs) != 7 {
		t.Errorf("%d jobs, want 1 triggered + 6 backfilled", len(jobs))
	}
	if code := h.do("POST", "/schedules/"+sc.ID+"/backfill", req, &res); code != http.StatusOK || len(res.Fired) != 6 {
		t.Fatalf("second backfill: HTTP %d %+v", code, res)
	}
	if jobs := h.scheduleJobs(sc.ID); len(jobs) != 7 {
		t.Errorf("%d jobs after backfilling the same range again, want 7: a slot yields one job", len(jobs))
	}
}

func TestBadSchedulesAreRefusedNamingTheField(t *testing.T) {
	h := newHarness(t, defaultConfig())
	cases := []struct {
		spec  api.ScheduleSpec
		field string
	}{
		{api.ScheduleSpec{Spec: "every soon", Template: everyMinute.Template}, "spec"},
		{api.ScheduleSpec{Spec: "0 9 * * *", Timezone: "Mars/Base", Template: everyMinute.Template}, "timezone"},
		{api.ScheduleSpec{Spec: "0 9 * * *", Overlap: "queue", Template: everyMinute.Template}, "overlap"},
		{api.ScheduleSpec{Spec: "0 9 * * *", Template: api.JobSpec{Type: "a", Lane: "nope", Command: []string{"true"}}}, "template.lane"},
		{api.ScheduleSpec{Spec: "0 9 * * *", JitterMS: -1, Template: everyMinute.Template}, "jitter_ms"},
	}
	for _, c := range cases {
		var e api.ErrorResponse
		if code := h.do("POST", "/schedules", c.spec, &e); code != http.StatusBadRequest || e.Error.Field != c.field {
			t.Errorf("%+v: HTTP %d %+v, want 400 on %s", c.spec, code, e.Error, c.field)
		}
	}
	// Issue 28 items 33 and 34, as raw bodies: the clock stands at
	// 2026-11-26T12:00:00Z (or wherever the harness put it).
	now := h.clock.Now().UTC()
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	const tmpl = `"template": {"type": "a", "command": ["true"]}`
	raw := []struct{ body, field, msg string }{
		{`{"spec": "every 1000000h", ` + tmpl + `}`, "spec", "between 1s and 87600h"},
		{`{"spec": "every 1h", "start_at": "2026-13-01", ` + tmpl + `}`, "start_at", "RFC 3339"},
		{`{"spec": "every 1h", "end_at": "soon", ` + tmpl + `}`, "end_at", "RFC 3339"},
		{`{"spec": "every 1h", "start_at": "` + at(2*time.Hour) + `", "end_at": "` + at(time.Hour) + `", ` + tmpl + `}`, "end_at", "after start_at"},
		{`{"spec": "every 1h", "start_at": "2400-01-01T00:00:00Z", ` + tmpl + `}`, "start_at", "between 1970"},
		{`{"spec": "at ` + at(-time.Minute) + `", ` + tmpl + `}`, "spec", "in the past"},
		{`{"spec": "every 1m", "end_at": "` + at(-time.Minute) + `", ` + tmpl + `}`, "end_at", "in the past"},
		{`{"spec": "at 2300-01-01T00:00:00Z", ` + tmpl + `}`, "spec", "between 1970"},
	}
	for _, c := range raw {
		var e api.ErrorResponse
		if code := h.do("POST", "/schedules", c.body, &e); code != http.StatusBadRequest || e.Error.Field != c.field || !strings.Contains(e.Error.Message, c.msg) {
			t.Errorf("%s: HTTP %d %+v, want 400 on %s saying %q", c.body, code, e.Error, c.field, c.msg)
		}
	}
	var future api.Schedule
	if code := h.do("POST", "/schedules", `{"spec": "at `+at(time.Minute)+`", `+tmpl+`}`, &future); code != http.StatusCreated || future.NextRunAt == nil {
		t.Errorf("a one-time spec a minute ahead: HTTP %d %+v", code, future)
	}
	var b api.ErrorResponse
	if code := h.do("POST", "/schedules/"+future.ID+"/backfill", `{"start_time": "2026-01-01T00:00:00Z", "end_time": "9999-01-01T00:00:00Z"}`, &b); code != http.StatusBadRequest || b.Error.Field != "end_time" {
		t.Errorf("a backfill to 9999: HTTP %d %+v, want 400 on end_time", code, b.Error)
	}
	var e api.ErrorResponse
	if code := h.do("GET", "/schedules/s-nope", nil, &e); code != http.StatusNotFound {
		t.Errorf("unknown schedule: HTTP %d", code)
	}
	sc := h.createSchedule(everyMinute)
	if code := h.do("DELETE", "/schedules/"+sc.ID, nil, nil); code != http.StatusOK {
		t.Errorf("delete: HTTP %d", code)
	}
	if code := h.do("GET", "/schedules/"+sc.ID, nil, &e); code != http.StatusNotFound {
		t.Errorf("deleted schedule: HTTP %d", code)
	}
}

func storeEventParams(typ string) store.EventListParams {
	return store.EventListParams{Types: []store.EventType{store.EventType(typ)}}
}

// Seed 002's reports, narrowed to one job or one schedule; plain dates
// are taken for the range.
func TestReportsForOneJobAndOneSchedule(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	other := h.runOnce(w, api.JobSpec{Type: "a", Command: []string{"true"}, MaxAttempts: 1}, api.OutcomeFailed, "exit_code", 10)
	spec := everyMinute
	spec.Spec = "every 20s" // within the worker's lease TTL, so that it stays alive between slots
	sc := h.createSchedule(spec)
	for i, outcome := range []string{api.OutcomeFailed, api.OutcomeSucceeded} {
		h.clock.Advance(20 * time.Second)
		h.tick()
		leases := h.lease(w, 1)
		if len(leases) != 1 || leases[0].Job.ScheduleID != sc.ID {
			t.Fatalf("slot %d: leases %+v", i, leases)
		}
		end := h.clock.Now()
		began := end.Add(-time.Duration(100*(i+1)) * time.Millisecond)
		h.complete(w, api.Completion{JobID: leases[0].Job.ID, Attempt: leases[0].Attempt, Outcome: outcome,
			FailureClass: map[string]string{api.OutcomeFailed: "exit_code"}[outcome], ExitCode: intp(i), StartedAt: &began, FinishedAt: &end})
	}
	var f api.FailureReport
	if code := h.do("GET", "/schedules/"+sc.ID+"/failures", nil, &f); code != http.StatusOK || f.Total != 2 || f.Failed != 1 || len(f.Recent) != 1 {
		t.Errorf("schedule failures: HTTP %d %+v", code, f)
	}
	var s api.SuccessReport
	if code := h.do("GET", "/schedules/"+sc.ID+"/successes", nil, &s); code != http.StatusOK || s.Total != 2 || s.Succeeded != 1 || s.P50DurationMS != 200 {
		t.Errorf("schedule successes: HTTP %d %+v", code, s)
	}
	if code := h.do("GET", "/jobs/"+other.ID+"/failures", nil, &f); code != http.StatusOK || f.Total != 1 || f.Failed != 1 || f.Recent[0].JobID != other.ID {
		t.Errorf("job failures: HTTP %d %+v", code, f)
	}
	day := h.clock.Now().Format(time.DateOnly)
	var sla api.SLAReport
	if code := h.do("GET", "/schedules/"+sc.ID+"/sla-compliance?start_date="+day+"&end_date="+day, nil, &sla); code != http.StatusOK {
		t.Errorf("sla-compliance with plain dates: HTTP %d", code)
	}
	if code := h.do("GET", "/jobs/"+other.ID+"/failures?start_date="+day+"&end_date="+h.clock.Now().AddDate(0, 0, -1).Format(time.DateOnly), nil, &f); code != http.StatusOK || f.Total != 0 {
		t.Errorf("a range ending the day before: HTTP %d %+v", code, f)
	}
	var e api.ErrorResponse
	if code := h.do("GET", "/schedules/"+sc.ID+"/failures?start_date=yesterday", nil, &e); code != http.StatusBadRequest || e.Error.Field != "start_date" {
		t.Errorf("a bad date: HTTP %d %+v", code, e.Error)
	}
}
