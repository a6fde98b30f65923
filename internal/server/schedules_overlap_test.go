package server

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/config"

	"github.com/fairwayhq/fairway/api"
)

// scheduleEvents reads a schedule's history through the API.
func (h *harness) scheduleEvents(id, query string) []api.Event {
	h.t.Helper()
	var out api.EventList
	if code := h.do("GET", "/schedules/"+id+"/events"+query, nil, &out); code != http.StatusOK {
		h.t.Fatalf("schedule events: HTTP %d", code)
	}
	return out.Events
}

// slotsOf are the nominal times of a schedule's jobs, oldest first, as
// offsets from base.
func slotsOf(jobs []api.Job, base time.Time) []time.Duration {
	var out []time.Duration
	for _, j := range jobs {
		out = append(out, j.ScheduledFor.Sub(base))
	}
	slices.Sort(out)
	return out
}

// finishJob runs a schedule's job to success on worker w.
func (h *harness) finishJob(w string, j api.Job) {
	h.t.Helper()
	leases := h.lease(w, 1)
	if len(leases) != 1 || leases[0].Job.ID != j.ID {
		h.t.Fatalf("lease: %+v, want job %s", leases, j.ID)
	}
	if r := h.complete(w, api.Completion{JobID: j.ID, Attempt: leases[0].Attempt, Outcome: "succeeded", ExitCode: intp(0)}); !r.OK {
		h.t.Fatalf("complete %s: %+v", j.ID, r)
	}
}

// patientConfig keeps a worker silent for minutes of the fake clock
// registered and its leases alive.
func patientConfig() config.Config {
	c := defaultConfig()
	c.Server.LeaseTTL = config.Duration(time.Hour)
	c.Server.HeartbeatInterval = config.Duration(time.Minute)
	return c
}

// startOverlap is a server with a worker of slots slots and a minutely
// schedule under overlap, the clock moved to its first slot (12:01).
func startOverlap(t *testing.T, overlap string, slots int) (h *harness, base time.Time, w string, sc api.Schedule) {
	t.Helper()
	h = newHarness(t, patientConfig())
	base = h.clock.Now()
	w = h.register(api.RegisterRequest{Name: "w", Slots: slots})
	spec := everyMinute
	spec.Overlap = overlap
	sc = h.createSchedule(spec)
	h.clock.Advance(time.Minute)
	return h, base, w, sc
}

// pendingJob is the schedule's one unfinished job.
func (h *harness) pendingJob(id string) api.Job {
	h.t.Helper()
	var open []api.Job
	for _, j := range h.scheduleJobs(id) {
		if !api.Terminal(j.State) {
			open = append(open, j)
		}
	}
	if len(open) != 1 {
		h.t.Fatalf("schedule %s has %d unfinished jobs, want 1: %+v", id, len(open), open)
	}
	return open[0]
}

// buffer_one keeps one slot that came while the last run was unfinished
// and fires it once that run ends; the others are skipped and recorded.
func TestOverlapBufferOneRunsOneSlotAfterTheRunningJob(t *testing.T) {
	h, base, w, sc := startOverlap(t, "buffer_one", 1)
	h.tick() // 12:01 fires
	for range 3 {
		h.clock.Advance(time.Minute)
		h.tick() // 12:02 is buffered, 12:03 and 12:04 are skipped
	}
	if got := h.schedule(sc.ID); len(got.Buffered) != 1 || !got.Buffered[0].Equal(base.Add(2*time.Minute)) {
		t.Fatalf("buffered %v, want [12:02]", got.Buffered)
	}
	h.finishJob(w, h.pendingJob(sc.ID))
	h.tick()
	next := h.pendingJob(sc.ID)
	if !next.ScheduledFor.Equal(base.Add(2 * time.Minute)) {
		t.Fatalf("after the run ended the job for %v fired, want the buffered 12:02", next.ScheduledFor)
	}
	if got := slotsOf(h.scheduleJobs(sc.ID), base); !slices.Equal(got, []time.Duration{time.Minute, 2 * time.Minute}) {
		t.Errorf("slots run %v", got)
	}
	skipped := h.scheduleEvents(sc.ID, "?type=schedule_skipped")
	if len(skipped) != 2 {
		t.Errorf("schedule_skipped events %+v, want 12:03 and 12:04 recorded", skipped)
	}
}

// buffer_all keeps every slot and runs them one after another, oldest
// first, never two at once.
func TestOverlapBufferAllRunsEverySlotInTurn(t *testing.T) {
	h, base, w, sc := startOverlap(t, "buffer_all", 2)
	h.tick()
	h.clock.Advance(3 * time.Minute)
	h.tick() // 12:02, 12:03, 12:04 buffered behind 12:01
	var ran []time.Duration
	for range 4 {
		j := h.pendingJob(sc.ID) // one at a time: never two unfinished
		ran = append(ran, j.ScheduledFor.Sub(base))
		h.finishJob(w, j)
		h.tick()
	}
	if want := []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute}; !slices.Equal(ran, want) {
		t.Errorf("ran %v, want %v in order", ran, want)
	}
	if skipped := h.scheduleEvents(sc.ID, "?type=schedule_skipped"); len(skipped) != 0 {
		t.Errorf("buffer_all skipped %+v", skipped)
	}
}

// cancel_other cancels the unfinished run when the next slot comes and
// starts the new one once the old one has stopped (issue 28 item 35: the
// two never run at once): a running job's worker is told to stop, and the
// new slot waits, buffered, until the worker reports the run ended.
func TestOverlapCancelOtherReplacesTheUnfinishedRun(t *testing.T) {
	h, base, w, sc := startOverlap(t, "cancel_other", 2)
	h.tick()
	first := h.pendingJob(sc.ID)
	leases := h.lease(w, 1)
	if len(leases) != 1 {
		t.Fatalf("lease: %+v", leases)
	}
	h.start(w, first.ID, leases[0].Attempt)
	h.clock.Advance(time.Minute)
	h.tick() // 12:02: the running 12:01 is told to stop; 12:02 waits for it
	if got := h.get(first.ID); !got.CancelRequested {
		t.Fatalf("the running run is not being cancelled: %+v", got)
	}
	h.tick()
	if still := h.pendingJob(sc.ID); still.ID != first.ID {
		t.Fatalf("a new run exists while the cancelled one still runs: %+v", still)
	}
	if got := h.schedule(sc.ID); len(got.Buffered) != 1 || !got.Buffered[0].Equal(base.Add(2*time.Minute)) {
		t.Fatalf("12:02 does not wait for the cancelled run: buffered %v", got.Buffered)
	}
	if leases := h.lease(w, 1); len(leases) != 0 {
		t.Fatalf("the worker's free slot got %+v while the cancelled run still runs", leases)
	}
	h.complete(w, api.Completion{JobID: first.ID, Attempt: leases[0].Attempt, Outcome: "cancelled"})
	if got := h.get(first.ID); got.State != api.StateCancelled {
		t.Errorf("first run ended %s, want cancelled", got.State)
	}
	h.tick()
	second := h.pendingJob(sc.ID)
	if !second.ScheduledFor.Equal(base.Add(2 * time.Minute)) {
		t.Errorf("the new run is for %v, want 12:02", second.ScheduledFor)
	}
	// A pending (not yet leased) run is cancelled outright.
	h.clock.Advance(time.Minute)
	h.tick()
	if got := h.get(second.ID); got.State != api.StateCancelled {
		t.Errorf("pending 12:02 run is %s, want cancelled", got.State)
	}
	if third := h.pendingJob(sc.ID); !third.ScheduledFor.Equal(base.Add(3 * time.Minute)) {
		t.Errorf("the third run is for %v, want 12:03", third.ScheduledFor)
	}
}

// GET /schedules/{id}/events is the schedule's history: creation, each
// fired slot, the slots missed past the catch-up window with their exact
// count; paged by after_id; another tenant's key sees nothing of it.
func TestScheduleEventsShowMissedSlots(t *testing.T) {
	cfg := defaultConfig()
	cfg.Tenants = map[string]config.Tenant{
		"acme":   {APIKeys: []string{"acme-key-0123456789"}},
		"globex": {APIKeys: []string{"globex-key-0123456789"}},
	}
	h := newHarness(t, cfg)
	h.key = "acme-key-0123456789"
	spec := everyMinute
	spec.Overlap, spec.CatchupWindowMS = "allow_all", (5 * time.Minute).Milliseconds()
	sc := h.createSchedule(spec)
	h.clock.Advance(time.Minute)
	h.tick() // 12:01 fires
	h.srv.Close()
	// Down from 12:01 to 13:01: back up, the slots 12:02..12:55 are past
	// the 5-minute window (54 missed), 12:56..13:01 fire (6).
	h.clock.Advance(time.Hour)
	h2 := startHarness(t, cfg, h.path, h.clock)
	h2.key = h.key
	h2.tick()
	missed := h2.scheduleEvents(sc.ID, "?type=schedule_missed")
	if len(missed) != 1 || !strings.Contains(string(missed[0].Detail), `"count":54`) || missed[0].ScheduleID != sc.ID {
		t.Fatalf("missed: %+v, want one record of 54 slots", missed)
	}
	fired := h2.scheduleEvents(sc.ID, "?type=schedule_fired")
	if len(fired) != 7 || len(h2.scheduleJobs(sc.ID)) != 7 {
		t.Errorf("%d fired events and %d jobs, want 7 of each", len(fired), len(h2.scheduleJobs(sc.ID)))
	}
	all := h2.scheduleEvents(sc.ID, "")
	if len(all) != 9 || all[0].Type != "schedule_created" {
		t.Errorf("history: %d events starting with %v, want created + 7 fired + 1 missed", len(all), all[0].Type)
	}
	var page api.EventList
	h2.do("GET", "/schedules/"+sc.ID+"/events?limit=4", nil, &page)
	if len(page.Events) != 4 || page.NextAfterID != page.Events[3].ID {
		t.Fatalf("first page: %+v", page)
	}
	rest := h2.scheduleEvents(sc.ID, "?after_id="+strconv.FormatInt(page.NextAfterID, 10))
	if len(rest) != 5 || rest[0].ID <= page.NextAfterID {
		t.Errorf("second page: %d events", len(rest))
	}
	var e api.ErrorResponse
	if code := h2.do("GET", "/schedules/"+sc.ID+"/events?after_id=x", nil, &e); code != http.StatusBadRequest || e.Error.Field != "after_id" {
		t.Errorf("bad after_id: HTTP %d %+v", code, e.Error)
	}
	h2.key = "globex-key-0123456789"
	if code := h2.do("GET", "/schedules/"+sc.ID+"/events", nil, nil); code != http.StatusNotFound {
		t.Errorf("another tenant's key: HTTP %d, want 404", code)
	}
}
