package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// The start is folded into the lease (docs/worker.md): a leased job runs,
// its started_at the lease time until the worker reports the real start
// with a heartbeat or its completion.

// startedEvents returns the job's started events.
func (h *harness) startedEvents(id string) []api.Event {
	h.t.Helper()
	var r api.EventList
	h.do("GET", "/jobs/"+id+"/events", nil, &r)
	var out []api.Event
	for _, e := range r.Events {
		if e.Type == "started" {
			out = append(out, e)
		}
	}
	return out
}

// execution returns the job's current attempt as GET /jobs/{id} shows it.
func (h *harness) execution(id string) api.JobResponse {
	h.t.Helper()
	var got api.JobResponse
	if code := h.do("GET", "/jobs/"+id, nil, &got); code != http.StatusOK {
		h.t.Fatalf("get %s: HTTP %d", id, code)
	}
	return got
}

func (h *harness) beat(worker string, jobs ...api.JobAttempt) api.HeartbeatResponse {
	h.t.Helper()
	var r api.HeartbeatResponse
	if code := h.do("POST", "/workers/"+worker+"/heartbeat", api.HeartbeatRequest{Jobs: jobs}, &r); code != http.StatusOK {
		h.t.Fatalf("heartbeat: HTTP %d", code)
	}
	return r
}

func TestLeasedJobRunsFromItsLeaseAndTakesTheReportedStart(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	job := h.submit(api.JobSpec{Type: "a"})
	leasedAt := h.clock.Now()
	if ls := h.lease(w, 1); len(ls) != 1 {
		t.Fatalf("leases: %+v", ls)
	}
	got := h.get(job.ID)
	if got.State != api.StateRunning || got.StartedAt == nil || !got.StartedAt.Equal(leasedAt) {
		t.Fatalf("after the lease: %s started_at %v, want running since the lease %v", got.State, got.StartedAt, leasedAt)
	}
	if ev := h.startedEvents(job.ID); len(ev) != 0 {
		t.Fatalf("started events before any report: %+v", ev)
	}

	// A long job: its heartbeat reports the real start.
	started := leasedAt.Add(1500 * time.Millisecond)
	h.clock.Advance(3 * time.Second)
	h.beat(w, api.JobAttempt{JobID: job.ID, Attempt: 1, StartedAt: &started})
	if got := h.get(job.ID); got.StartedAt == nil || !got.StartedAt.Equal(started) {
		t.Fatalf("after the heartbeat: started_at %v, want the reported %v", got.StartedAt, started)
	}
	// Later reports change nothing: the first one is the start.
	later := started.Add(time.Second)
	h.beat(w, api.JobAttempt{JobID: job.ID, Attempt: 1, StartedAt: &later})
	ev := h.startedEvents(job.ID)
	if len(ev) != 1 || ev[0].Actor != "worker:"+w {
		t.Fatalf("started events %+v, want one by worker:%s", ev, w)
	}

	finished := started.Add(2 * time.Second)
	if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: api.OutcomeSucceeded, StartedAt: &later, FinishedAt: &finished}); !r.OK {
		t.Fatalf("complete: %+v", r)
	}
	res := h.execution(job.ID)
	if res.Job.StartedAt == nil || !res.Job.StartedAt.Equal(started) || res.Execution == nil || res.Execution.StartedAt == nil ||
		!res.Execution.StartedAt.Equal(started) || res.Execution.LeasedAt == nil || !res.Execution.LeasedAt.Equal(leasedAt) {
		t.Fatalf("job %+v execution %+v: want started_at %v, leased_at %v", res.Job, res.Execution, started, leasedAt)
	}
	if ev := h.startedEvents(job.ID); len(ev) != 1 {
		t.Fatalf("started events after the completion: %+v", ev)
	}
}

// An older worker's start call still works, and reports the start.
func TestStartCallOfAnOlderWorkerStillReportsTheStart(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	job := h.submit(api.JobSpec{Type: "a"})
	h.lease(w, 1)
	h.clock.Advance(time.Second)
	var r api.ItemResults
	h.do("POST", "/workers/"+w+"/start", api.StartRequest{Jobs: []api.JobAttempt{{JobID: job.ID, Attempt: 1}}}, &r)
	if len(r.Results) != 1 || !r.Results[0].OK {
		t.Fatalf("start: %+v", r)
	}
	if got := h.get(job.ID); got.State != api.StateRunning || got.StartedAt == nil || !got.StartedAt.Equal(h.clock.Now()) {
		t.Fatalf("after the start call: %s started_at %v, want running since %v", got.State, got.StartedAt, h.clock.Now())
	}
	if ev := h.startedEvents(job.ID); len(ev) != 1 || ev[0].Actor != "worker:"+w {
		t.Fatalf("started events %+v", ev)
	}
	if r := h.start(w, job.ID, 2); r.OK || r.Error == nil || r.Error.Code != api.CodeStaleAttempt {
		t.Fatalf("start of a stale attempt: %+v", r)
	}
}

// A start reported earlier than the lease is clamped to the lease (the job
// cannot start before it reached a worker: the worker's clock is behind);
// one later than now is clamped to now (the worker's clock is ahead). The
// report is not refused: refusing would lose the outcome.
func TestReportedStartIsClampedBetweenLeaseAndEnd(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})

	early := h.submit(api.JobSpec{Type: "a"})
	leasedAt := h.clock.Now()
	h.lease(w, 1)
	h.clock.Advance(2 * time.Second)
	before, fin := leasedAt.Add(-time.Hour), leasedAt.Add(time.Second)
	if r := h.complete(w, api.Completion{JobID: early.ID, Attempt: 1, Outcome: api.OutcomeSucceeded, StartedAt: &before, FinishedAt: &fin}); !r.OK {
		t.Fatalf("complete: %+v", r)
	}
	if res := h.execution(early.ID); !res.Job.StartedAt.Equal(leasedAt) || !res.Execution.StartedAt.Equal(leasedAt) {
		t.Errorf("start before the lease: job %v execution %v, want the lease time %v", res.Job.StartedAt, res.Execution.StartedAt, leasedAt)
	}

	late := h.submit(api.JobSpec{Type: "a"})
	h.lease(w, 1)
	h.clock.Advance(2 * time.Second)
	now := h.clock.Now()
	after := now.Add(time.Hour)
	if r := h.complete(w, api.Completion{JobID: late.ID, Attempt: 1, Outcome: api.OutcomeSucceeded, StartedAt: &after}); !r.OK {
		t.Fatalf("complete: %+v", r)
	}
	res := h.execution(late.ID)
	if !res.Job.StartedAt.Equal(now) || !res.Execution.StartedAt.Equal(now) || !res.Execution.FinishedAt.Equal(now) {
		t.Errorf("start after the end: job %v execution %+v, want now %v", res.Job.StartedAt, res.Execution, now)
	}

	// The same clamp holds for a heartbeat's report.
	beat := h.submit(api.JobSpec{Type: "a"})
	leasedAt = h.clock.Now()
	h.lease(w, 1)
	h.beat(w, api.JobAttempt{JobID: beat.ID, Attempt: 1, StartedAt: &before})
	if got := h.get(beat.ID); !got.StartedAt.Equal(leasedAt) {
		t.Errorf("heartbeat start before the lease: %v, want %v", got.StartedAt, leasedAt)
	}
}

// Fencing holds with the start folded into the lease: a zombie attempt's
// heartbeat start and completion never touch its successor.
func TestZombieAttemptNeverOverwritesItsSuccessor(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	job := h.submit(api.JobSpec{Type: "a", MaxAttempts: 3, Retry: &api.RetryPolicy{Kind: "immediate"}})
	h.lease(w, 1)
	// Attempt 1 is held, then lost: the worker stops listing it.
	h.beat(w, api.JobAttempt{JobID: job.ID, Attempt: 1})
	h.clock.Advance(11 * time.Second)
	h.beat(w)
	h.tick()
	ls := h.lease(w, 1)
	if len(ls) != 1 || ls[0].Attempt != 2 {
		t.Fatalf("re-lease: %+v (job %+v)", ls, h.get(job.ID))
	}
	succStart := h.clock.Now().Add(500 * time.Millisecond)
	h.clock.Advance(time.Second)
	h.beat(w, api.JobAttempt{JobID: job.ID, Attempt: 2, StartedAt: &succStart})

	zombieStart := h.clock.Now()
	hb := h.beat(w, api.JobAttempt{JobID: job.ID, Attempt: 1, StartedAt: &zombieStart}, api.JobAttempt{JobID: job.ID, Attempt: 2, StartedAt: &succStart})
	if len(hb.Revoked) != 1 || hb.Revoked[0].Attempt != 1 {
		t.Fatalf("heartbeat with the zombie: %+v, want attempt 1 revoked", hb)
	}
	if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: api.OutcomeFailed, StartedAt: &zombieStart}); r.OK || r.Error == nil ||
		r.Error.Code != api.CodeStaleAttempt {
		t.Fatalf("zombie completion: %+v, want stale_attempt", r)
	}
	if got := h.get(job.ID); got.State != api.StateRunning || got.Attempt != 2 || !got.StartedAt.Equal(succStart) {
		t.Fatalf("successor after the zombie: %s attempt %d started_at %v, want running 2 since %v", got.State, got.Attempt, got.StartedAt, succStart)
	}
	if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: 2, Outcome: api.OutcomeSucceeded}); !r.OK {
		t.Fatalf("successor completion: %+v", r)
	}
	if got := h.get(job.ID); got.State != api.StateSucceeded || !got.StartedAt.Equal(succStart) {
		t.Fatalf("final: %s started_at %v", got.State, got.StartedAt)
	}
}

// A worker that dies after its lease and before its completion: its lease
// expires and the attempt is retried as lost_worker. Its execution starts
// at the reported start, at the lease when none was reported, and not at
// all when the lease never left the server.
func TestWorkerDeadAfterTheLeaseLosesTheAttempt(t *testing.T) {
	for _, tc := range []string{"undelivered", "unreported", "reported"} {
		h := newHarness(t, defaultConfig())
		w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
		job := h.submit(api.JobSpec{Type: "a", Retry: &api.RetryPolicy{Kind: "fixed", DelayMS: 1000}})
		leasedAt := h.clock.Now()
		wantStart := &leasedAt
		switch tc {
		case "undelivered":
			wantStart = nil
		case "unreported":
			h.lease(w, 1)
		case "reported":
			h.lease(w, 1)
			reported := leasedAt.Add(200 * time.Millisecond)
			wantStart = &reported
			h.clock.Advance(time.Second)
			h.beat(w, api.JobAttempt{JobID: job.ID, Attempt: 1, StartedAt: &reported})
		}
		h.clock.Advance(31 * time.Second) // past the lease TTL without a call
		h.tick()
		got := h.get(job.ID)
		if got.State != api.StateRetryWait || got.FailureClass != "lost_worker" || got.Attempt != 1 {
			t.Fatalf("%s: %s %s attempt %d, want retry_wait lost_worker 1", tc, got.State, got.FailureClass, got.Attempt)
		}
		if (wantStart == nil) != (got.StartedAt == nil) || (wantStart != nil && !got.StartedAt.Equal(*wantStart)) {
			t.Errorf("%s: job started_at %v, want %v", tc, got.StartedAt, wantStart)
		}
		var execs api.ExecutionList
		h.do("GET", "/jobs/"+job.ID+"/executions", nil, &execs)
		if len(execs.Executions) != 1 || execs.Executions[0].Outcome != "lost" {
			t.Fatalf("%s: executions %+v, want one lost", tc, execs.Executions)
		}
		if e := execs.Executions[0]; (wantStart == nil) != (e.StartedAt == nil) || (wantStart != nil && !e.StartedAt.Equal(*wantStart)) {
			t.Errorf("%s: execution started_at %v, want %v", tc, e.StartedAt, wantStart)
		}
	}
}

// A heartbeat held open counts the attempts leased to its worker since it
// was sent as listed, but they do not show that the worker holds them: a
// lease delivered meanwhile whose answer was lost still goes back to the
// queue uncharged when the worker's next heartbeat does not list it.
func TestHeldHeartbeatDoesNotClaimLeasesMadeSince(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 2})
	a := h.submit(api.JobSpec{Type: "a"})
	if ls := h.lease(w, 1); len(ls) != 1 || ls[0].Job.ID != a.ID {
		t.Fatalf("leases: %+v", ls)
	}
	b := h.submit(api.JobSpec{Type: "a", MaxAttempts: 1})
	answered := make(chan api.HeartbeatResponse, 1)
	go func() {
		var r api.HeartbeatResponse
		h.do("POST", "/workers/"+w+"/heartbeat", api.HeartbeatRequest{Jobs: []api.JobAttempt{{JobID: a.ID, Attempt: 1}}, WaitMS: 60000}, &r)
		answered <- r
	}()
	// Let the heartbeat be held, then lease b (its answer is "lost") and
	// cancel a: the cancel wakes the held heartbeat, which applies again
	// with b counted as listed.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ls := h.lease(w, 1); len(ls) == 1 && ls[0].Job.ID == b.ID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b was never leased")
		}
	}
	time.Sleep(100 * time.Millisecond) // the heartbeat is held by now (no assertion rests on it)
	var r api.ActionResponse
	h.do("DELETE", "/jobs/"+a.ID, nil, &r)
	select {
	case hb := <-answered:
		if len(hb.Cancel) != 1 || hb.Cancel[0].JobID != a.ID {
			t.Fatalf("held heartbeat: %+v", hb)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the held heartbeat was not answered on the cancel")
	}
	h.clock.Advance(11 * time.Second)
	h.beat(w, api.JobAttempt{JobID: a.ID, Attempt: 1})
	got := h.get(b.ID)
	if got.ReturnedLeases != 1 || got.FailureClass != "" || (got.State != api.StatePending && got.State != api.StateRunning) {
		t.Fatalf("b after a heartbeat without it: %s class %q returned %d, want handed back uncharged", got.State, got.FailureClass, got.ReturnedLeases)
	}
}
