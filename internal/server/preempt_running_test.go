package server

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

func preemptConfig(after time.Duration) config.Config {
	c := defaultConfig()
	d, g := config.Duration(after), config.Duration(5*time.Second)
	c.Lanes = map[string]config.Lane{"default": {Preemption: &config.Preempt{After: &d, Grace: &g}}}
	return c
}

// A high job that waited past preempt_after behind a running low job:
// the worker's heartbeat answer says preempt, the worker reports the
// outcome preempted, the low job is queued again with its attempt not
// charged, and the high job is leased.
func TestRunningJobIsPreemptedAndQueuedAgainUncharged(t *testing.T) {
	h := newHarness(t, preemptConfig(30*time.Second))
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	low := h.submit(api.JobSpec{Type: "t", Priority: intp(100), MaxAttempts: 1})
	if ls := h.lease(w, 1); len(ls) != 1 || ls[0].Job.ID != low.ID {
		t.Fatalf("leases = %+v", ls)
	}
	h.start(w, low.ID, 1)
	high := h.submit(api.JobSpec{Type: "t", Priority: intp(900)})

	hb := h.heartbeat(w, low.ID, 1)
	if len(hb.Preempt) != 0 {
		t.Fatalf("preempted before preempt_after: %+v", hb)
	}
	var x api.Explanation
	h.do("GET", "/jobs/"+high.ID+"/explain", nil, &x)
	if x.Code != "reserved" {
		t.Fatalf("high while it waits: %+v, want reserved", x)
	}

	for range 4 { // 32 s, beating every 8 s so that the worker stays alive
		h.clock.Advance(8 * time.Second)
		h.tick()
		if hb = h.heartbeat(w, low.ID, 1); len(hb.Preempt) > 0 {
			break
		}
	}
	if !slices.Equal(hb.Preempt, []api.JobAttempt{{JobID: low.ID, Attempt: 1}}) {
		t.Fatalf("heartbeat after preempt_after = %+v, want preempt of %s/1", hb, low.ID)
	}
	h.do("GET", "/jobs/"+high.ID+"/explain", nil, &x)
	if x.Code != "preempting" {
		t.Errorf("high while the low job stops: %+v, want preempting", x)
	}

	if r := h.complete(w, api.Completion{JobID: low.ID, Attempt: 1, Outcome: api.OutcomePreempted, FailureClass: api.FailPreempted}); !r.OK {
		t.Fatalf("complete preempted: %+v", r)
	}
	got := h.get(low.ID)
	if got.State != api.StatePending || got.ReturnedLeases != 1 {
		t.Fatalf("low after its preemption: %s, returned_leases %d; want pending, 1 (uncharged: max_attempts is 1)", got.State, got.ReturnedLeases)
	}
	if ls := h.lease(w, 1); len(ls) != 1 || ls[0].Job.ID != high.ID {
		t.Fatalf("next lease = %+v, want the high job", ls)
	}
	evs := h.events(low.ID)
	if !slices.Contains(evs, "preempt_requested") || !slices.Contains(evs, "preempted") {
		t.Errorf("low's events %v lack preempt_requested and preempted", evs)
	}
	var ex api.ExecutionList
	h.do("GET", "/jobs/"+low.ID+"/executions", nil, &ex)
	if len(ex.Executions) != 1 || ex.Executions[0].Outcome != api.OutcomePreempted {
		t.Errorf("low's executions %+v, want one with outcome preempted", ex.Executions)
	}
}

// With preemption off (the default) a running job is never preempted.
func TestNoPreemptionByDefault(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	low := h.submit(api.JobSpec{Type: "t", Priority: intp(100)})
	h.lease(w, 1)
	h.start(w, low.ID, 1)
	h.submit(api.JobSpec{Type: "t", Priority: intp(900)})
	for range 20 {
		h.clock.Advance(8 * time.Second)
		h.tick()
		if hb := h.heartbeat(w, low.ID, 1); len(hb.Preempt) != 0 {
			t.Fatalf("preempted with preemption off: %+v", hb)
		}
	}
}

// A job submitted with preemptible: false is never stopped.
func TestNotPreemptibleJobIsNeverStopped(t *testing.T) {
	h := newHarness(t, preemptConfig(5*time.Second))
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	no := false
	low := h.submit(api.JobSpec{Type: "t", Priority: intp(100), Preemptible: &no})
	if !h.get(low.ID).NotPreemptible {
		t.Fatalf("job %+v does not say it is not preemptible", h.get(low.ID))
	}
	h.lease(w, 1)
	h.start(w, low.ID, 1)
	h.submit(api.JobSpec{Type: "t", Priority: intp(900)})
	for range 5 {
		h.clock.Advance(8 * time.Second)
		h.tick()
		if hb := h.heartbeat(w, low.ID, 1); len(hb.Preempt) != 0 {
			t.Fatalf("a job submitted preemptible: false was preempted: %+v", hb)
		}
	}
}

// The webhook hears who preempted whom: job_preempted names the victim,
// and its event the job it yields to.
func TestPreemptionRaisesAnAlert(t *testing.T) {
	recv := newReceiver(t)
	cfg := alertConfig(recv.srv.URL)
	d, g := config.Duration(5*time.Second), config.Duration(5*time.Second)
	cfg.Lanes = map[string]config.Lane{"default": {Preemption: &config.Preempt{After: &d, Grace: &g}}}
	h := newHarness(t, cfg)
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	low := h.submit(api.JobSpec{Type: "t", Priority: intp(100)})
	h.lease(w, 1)
	h.start(w, low.ID, 1)
	high := h.submit(api.JobSpec{Type: "t", Priority: intp(900)})
	h.clock.Advance(6 * time.Second)
	h.tick()
	h.waitEvents("alert_delivered", 1)
	var got *received
	for _, r := range recv.deliveries() {
		if r.alert.Kind == "job_preempted" {
			got = &r
		}
	}
	if got == nil || got.alert.JobID != low.ID || got.alert.Event == nil || !strings.Contains(string(got.alert.Event.Detail), high.ID) {
		t.Fatalf("deliveries %+v, want job_preempted for %s naming %s", recv.deliveries(), low.ID, high.ID)
	}
}

// A job cancelled while it is being preempted ends cancelled: its
// worker's preempted report does not queue it again.
func TestCancelWhilePreemptingEndsCancelled(t *testing.T) {
	h := newHarness(t, preemptConfig(5*time.Second))
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	low := h.submit(api.JobSpec{Type: "t", Priority: intp(100)})
	h.lease(w, 1)
	h.start(w, low.ID, 1)
	h.submit(api.JobSpec{Type: "t", Priority: intp(900)})
	h.clock.Advance(6 * time.Second)
	h.tick()
	if hb := h.heartbeat(w, low.ID, 1); len(hb.Preempt) != 1 {
		t.Fatalf("heartbeat = %+v, want the low job preempted", hb)
	}
	h.do("POST", "/jobs/"+low.ID+"/cancel", nil, nil)
	h.complete(w, api.Completion{JobID: low.ID, Attempt: 1, Outcome: api.OutcomePreempted, FailureClass: api.FailPreempted})
	if got := h.get(low.ID).State; got != api.StateCancelled {
		t.Fatalf("a job cancelled while preempted ended %s, want cancelled", got)
	}
}
