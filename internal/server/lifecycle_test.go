package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

func TestJobRunsToSuccess(t *testing.T) {
	h := newHarness(t, defaultConfig())
	job := h.submit(api.JobSpec{Type: "echo", Command: []string{"echo", "hi"}})
	if job.State != api.StatePending || job.Attempt != 0 {
		t.Fatalf("submitted job: state %s attempt %d", job.State, job.Attempt)
	}
	w := h.register(api.RegisterRequest{Name: "w1", Slots: 2})
	leases := h.lease(w, 2)
	if len(leases) != 1 || leases[0].Job.ID != job.ID || leases[0].Attempt != 1 {
		t.Fatalf("leases = %+v", leases)
	}
	if r := h.start(w, job.ID, 1); !r.OK {
		t.Fatalf("start: %+v", r)
	}
	if got := h.get(job.ID).State; got != api.StateRunning {
		t.Fatalf("after start: %s", got)
	}
	if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: api.OutcomeSucceeded, ExitCode: intp(0)}); !r.OK {
		t.Fatalf("complete: %+v", r)
	}
	var got api.JobResponse
	h.do("GET", "/jobs/"+job.ID, nil, &got)
	if got.Job.State != api.StateSucceeded || got.Execution == nil || got.Execution.Outcome != "succeeded" {
		t.Fatalf("final: %+v", got)
	}
	want := []string{"submitted", "leased", "started", "succeeded"}
	if diff := cmp.Diff(want, h.events(job.ID)); diff != "" {
		t.Fatalf("audit trail (-want +got):\n%s", diff)
	}
}

func TestIdempotencyKeyReturnsOriginal(t *testing.T) {
	h := newHarness(t, defaultConfig())
	var first, second api.SubmitResponse
	spec := api.JobSpec{Type: "echo", IdempotencyKey: "nightly-1"}
	if code := h.do("POST", "/jobs", spec, &first); code != http.StatusCreated {
		t.Fatalf("first: HTTP %d", code)
	}
	if code := h.do("POST", "/jobs", spec, &second); code != http.StatusOK {
		t.Fatalf("second: HTTP %d", code)
	}
	if second.Job.ID != first.Job.ID || !second.Deduplicated {
		t.Fatalf("second = %s dedup=%v, want %s dedup", second.Job.ID, second.Deduplicated, first.Job.ID)
	}
	var list api.JobList
	h.do("GET", "/jobs", nil, &list)
	if len(list.Jobs) != 1 {
		t.Fatalf("%d jobs stored, want 1", len(list.Jobs))
	}
}

func TestStaleAttemptIsRefused(t *testing.T) {
	h := newHarness(t, defaultConfig())
	job := h.submit(api.JobSpec{Type: "echo", Retry: &api.RetryPolicy{Kind: "immediate"}})
	w1 := h.register(api.RegisterRequest{Name: "w1", Slots: 1})
	h.lease(w1, 1)
	// w1 falls silent past the lease TTL; a second worker keeps calling.
	w2 := h.register(api.RegisterRequest{Name: "w2", Slots: 1})
	h.clock.Advance(20 * time.Second)
	h.lease(w2, 1)
	h.clock.Advance(15 * time.Second)
	h.tick()
	leases := h.lease(w2, 1)
	if len(leases) != 1 || leases[0].Attempt != 2 {
		t.Fatalf("re-lease = %+v, want attempt 2", leases)
	}
	var r api.ItemResults
	code := h.do("POST", "/workers/"+w1+"/complete", api.CompleteRequest{Results: []api.Completion{{JobID: job.ID, Attempt: 1, Outcome: "succeeded"}}}, &r)
	if code != http.StatusNotFound {
		t.Fatalf("lost worker's complete: HTTP %d, want 404", code)
	}
	if res := h.complete(w2, api.Completion{JobID: job.ID, Attempt: 1, Outcome: "succeeded"}); res.OK || res.Error.Code != api.CodeStaleAttempt {
		t.Fatalf("stale attempt on w2: %+v", res)
	} else if want := "attempt 1 of job " + job.ID + " is not current"; !strings.HasPrefix(res.Error.Message, want) {
		t.Fatalf("stale attempt message %q, want it to start %q", res.Error.Message, want)
	}
	if res := h.complete(w2, api.Completion{JobID: job.ID, Attempt: 2, Outcome: "succeeded"}); !res.OK {
		t.Fatalf("current attempt: %+v", res)
	}
	var execs api.ExecutionList
	h.do("GET", "/jobs/"+job.ID+"/executions", nil, &execs)
	outcomes := []string{}
	for _, e := range execs.Executions {
		outcomes = append(outcomes, e.Outcome)
	}
	if diff := cmp.Diff([]string{"lost", "succeeded"}, outcomes); diff != "" {
		t.Fatalf("executions (-want +got):\n%s", diff)
	}
}

func TestRetryWithBackoffThenFail(t *testing.T) {
	h := newHarness(t, defaultConfig())
	job := h.submit(api.JobSpec{Type: "flaky", MaxAttempts: 2, Retry: &api.RetryPolicy{Kind: "fixed", DelayMS: 5000}})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	h.lease(w, 1)
	h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: "failed", ExitCode: intp(3), FailureClass: "exit_code", Error: "exit 3"})
	got := h.get(job.ID)
	if got.State != api.StateRetryWait || got.RunAt == nil || got.RunAt.Sub(h.clock.Now()) != 5*time.Second {
		t.Fatalf("after first failure: state %s run_at %v", got.State, got.RunAt)
	}
	if ls := h.lease(w, 1); len(ls) != 0 {
		t.Fatalf("leased during back-off: %+v", ls)
	}
	h.clock.Advance(5 * time.Second)
	h.tick()
	ls := h.lease(w, 1)
	if len(ls) != 1 || ls[0].Attempt != 2 {
		t.Fatalf("after back-off: %+v", ls)
	}
	h.complete(w, api.Completion{JobID: job.ID, Attempt: 2, Outcome: "failed", ExitCode: intp(3), FailureClass: "exit_code"})
	if got := h.get(job.ID); got.State != api.StateFailed || got.FailureClass != "exit_code" || *got.ExitCode != 3 {
		t.Fatalf("final: %+v", got)
	}
}

func TestCancelInEachState(t *testing.T) {
	h := newHarness(t, defaultConfig())
	cancel := func(id string) api.ActionResponse {
		var r api.ActionResponse
		if code := h.do("DELETE", "/jobs/"+id, nil, &r); code != http.StatusOK {
			t.Fatalf("cancel %s: HTTP %d", id, code)
		}
		return r
	}
	pending := h.submit(api.JobSpec{Type: "a"})
	if r := cancel(pending.ID); r.Result != api.ResultCancelled || r.Job.State != api.StateCancelled {
		t.Fatalf("pending: %+v", r)
	}
	// A lease that has not left the server (no poll took it yet) is
	// cancelled at once and never delivered; a delivered one runs, from
	// its lease, whether or not the worker reported its start: it is
	// asked to stop.
	w := h.register(api.RegisterRequest{Name: "w", Slots: 3})
	undelivered := h.submit(api.JobSpec{Type: "a"})
	if got := h.get(undelivered.ID); got.State != api.StateRunning || got.Attempt != 1 {
		t.Fatalf("undelivered lease: %s attempt %d, want running 1", got.State, got.Attempt)
	}
	if r := cancel(undelivered.ID); r.Result != api.ResultCancelled || r.Job.State != api.StateCancelled {
		t.Fatalf("undelivered: %+v", r)
	}
	var cancelled api.JobResponse
	h.do("GET", "/jobs/"+undelivered.ID, nil, &cancelled)
	if e := cancelled.Execution; e == nil || e.StartedAt != nil || e.Outcome != "cancelled" || cancelled.Job.StartedAt != nil {
		t.Fatalf("undelivered lease: job started_at %v, execution %+v: want cancelled, never started", cancelled.Job.StartedAt, e)
	}
	leased, running := h.submit(api.JobSpec{Type: "a"}), h.submit(api.JobSpec{Type: "a"})
	if ls := h.lease(w, 3); len(ls) != 2 || ls[0].Job.ID == undelivered.ID || ls[1].Job.ID == undelivered.ID {
		t.Fatalf("leases: %+v", ls)
	}
	h.start(w, running.ID, 1)
	if r := cancel(leased.ID); r.Result != api.ResultCancelRequested || r.Job.State != api.StateRunning {
		t.Fatalf("leased: %+v", r)
	}
	if r := cancel(running.ID); r.Result != api.ResultCancelRequested || r.Job.State != api.StateRunning {
		t.Fatalf("running: %+v", r)
	}
	var hb api.HeartbeatResponse
	h.do("POST", "/workers/"+w+"/heartbeat", api.HeartbeatRequest{Jobs: []api.JobAttempt{{JobID: leased.ID, Attempt: 1}, {JobID: running.ID, Attempt: 1}}}, &hb)
	if len(hb.Revoked) != 0 || len(hb.Cancel) != 2 {
		t.Fatalf("heartbeat = %+v", hb)
	}
	h.complete(w, api.Completion{JobID: leased.ID, Attempt: 1, Outcome: "cancelled"})
	h.complete(w, api.Completion{JobID: running.ID, Attempt: 1, Outcome: "cancelled"})
	if got := h.get(running.ID).State; got != api.StateCancelled {
		t.Fatalf("running after worker stopped it: %s", got)
	}
	if r := cancel(running.ID); r.Result != api.ResultAlreadyFinished {
		t.Fatalf("finished: %+v", r)
	}
}

func TestReprioritizeAndExplain(t *testing.T) {
	h := newHarness(t, defaultConfig())
	low := h.submit(api.JobSpec{Type: "a", Priority: intp(100)})
	high := h.submit(api.JobSpec{Type: "a", Priority: intp(900)})
	var x api.Explanation
	h.do("GET", "/jobs/"+low.ID+"/explain", nil, &x)
	if x.Code != "no_compatible_worker" {
		t.Fatalf("explain without workers: %+v", x)
	}
	var r api.ActionResponse
	h.do("POST", "/jobs/"+low.ID+"/reprioritize", map[string]int{"priority": 950}, &r)
	if r.Result != api.ResultReprioritized || r.Job.Priority != 950 {
		t.Fatalf("reprioritize: %+v", r)
	}
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	ls := h.lease(w, 1)
	if len(ls) != 1 || ls[0].Job.ID != low.ID {
		t.Fatalf("first lease = %+v, want the reprioritized job", ls)
	}
	h.do("GET", "/jobs/"+high.ID+"/explain", nil, &x)
	// The only slot is busy and high is its lane's best job: it holds the
	// reservation of that slot (docs/scheduling.md).
	if x.Code != "reserved" || x.Position != 1 || x.Reservation == nil || x.Reservation.JobID != high.ID {
		t.Fatalf("explain while the only slot is busy: %+v", x)
	}
}

func TestDependencyFailureCancelsDependent(t *testing.T) {
	h := newHarness(t, defaultConfig())
	a := h.submit(api.JobSpec{Type: "a", MaxAttempts: 1})
	b := h.submit(api.JobSpec{Type: "b", DependsOn: []api.Dependency{{JobID: a.ID}}})
	c := h.submit(api.JobSpec{Type: "c", DependsOn: []api.Dependency{{JobID: a.ID, Condition: "failure"}}})
	if b.State != api.StateBlocked {
		t.Fatalf("dependent state %s, want blocked", b.State)
	}
	w := h.register(api.RegisterRequest{Name: "w", Slots: 2})
	if ls := h.lease(w, 2); len(ls) != 1 || ls[0].Job.ID != a.ID {
		t.Fatalf("only the dependency may run first: %+v", ls)
	}
	h.complete(w, api.Completion{JobID: a.ID, Attempt: 1, Outcome: "failed", FailureClass: "exit_code"})
	if got := h.get(b.ID); got.State != api.StateCancelled {
		t.Fatalf("b = %s, want cancelled", got.State)
	}
	if !slices.Contains(h.events(b.ID), "dependency_failed") {
		t.Fatalf("b events %v lack dependency_failed", h.events(b.ID))
	}
	if ls := h.lease(w, 2); len(ls) != 1 || ls[0].Job.ID != c.ID {
		t.Fatalf("c (after failure) should run: %+v", ls)
	}
	var e api.ErrorResponse
	if code := h.do("POST", "/jobs", api.JobSpec{Type: "d", DependsOn: []api.Dependency{{JobID: a.ID}}}, &e); code != http.StatusBadRequest || e.Error.Field != "depends_on[0].job_id" {
		t.Fatalf("dependency that can never hold: HTTP %d %+v", code, e)
	}
}

func TestSubmitWaitAnswersWhenDone(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	done := make(chan api.JobResponse, 1)
	go func() {
		var r api.JobResponse
		h.do("POST", "/jobs?wait=true&timeout_ms=20000", api.JobSpec{Type: "a"}, &r)
		done <- r
	}()
	var ls []api.Lease
	for len(ls) == 0 {
		var r api.LeaseResponse
		h.do("POST", "/workers/"+w+"/lease", api.LeaseRequest{Max: 1, WaitMS: 5000}, &r)
		ls = r.Leases
	}
	if !ls[0].Job.OnDemand {
		t.Fatal("wait=true did not make the job on-demand")
	}
	h.complete(w, api.Completion{JobID: ls[0].Job.ID, Attempt: 1, Outcome: "succeeded"})
	if r := <-done; r.Job.State != api.StateSucceeded {
		t.Fatalf("wait answer: %+v", r.Job)
	}
}

func TestRestartKeepsJobsAndLeases(t *testing.T) {
	cfg := defaultConfig()
	h := newHarness(t, cfg)
	a, b := h.submit(api.JobSpec{Type: "a"}), h.submit(api.JobSpec{Type: "a"})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	ls := h.lease(w, 1)
	h.start(w, ls[0].Job.ID, 1)
	h.stop()
	h2 := startHarness(t, cfg, h.path, h.clock)
	if got := h2.get(ls[0].Job.ID).State; got != api.StateRunning {
		t.Fatalf("running job after restart: %s", got)
	}
	if r := h2.complete(w, api.Completion{JobID: ls[0].Job.ID, Attempt: 1, Outcome: "succeeded"}); !r.OK {
		t.Fatalf("complete after restart: %+v", r)
	}
	next := h2.lease(w, 1)
	other := a.ID
	if ls[0].Job.ID == a.ID {
		other = b.ID
	}
	if len(next) != 1 || next[0].Job.ID != other {
		t.Fatalf("queued job after restart: %+v", next)
	}
}

// A lease the worker never received (not started, not in its heartbeat
// past the grace) goes back to the queue without being charged: with
// max_attempts 1 the job still runs.
func TestHeartbeatReturnsALeaseTheWorkerNeverReceived(t *testing.T) {
	h := newHarness(t, defaultConfig())
	job := h.submit(api.JobSpec{Type: "a", MaxAttempts: 1})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	if ls := h.lease(w, 1); len(ls) != 1 {
		t.Fatalf("leases: %+v", ls)
	}
	hb := func() {
		var r api.HeartbeatResponse
		h.do("POST", "/workers/"+w+"/heartbeat", api.HeartbeatRequest{}, &r)
	}
	hb() // within the grace: the lease may still be on its way
	if got := h.get(job.ID); got.State != api.StateRunning || got.Attempt != 1 {
		t.Fatalf("within grace: %s attempt %d", got.State, got.Attempt)
	}
	h.clock.Advance(11 * time.Second)
	hb()
	got := h.get(job.ID)
	if (got.State != api.StatePending && got.State != api.StateRunning) || got.ReturnedLeases != 1 || got.LastError != "" {
		t.Fatalf("after a heartbeat without it: %s, returned leases %d, error %q", got.State, got.ReturnedLeases, got.LastError)
	}
	ls := h.lease(w, 1)
	if len(ls) != 1 || ls[0].Attempt != 2 {
		t.Fatalf("re-lease: %+v", ls)
	}
	if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: 2, Outcome: api.OutcomeSucceeded, ExitCode: intp(0)}); !r.OK {
		t.Fatalf("complete attempt 2: %+v", r)
	}
	if got := h.get(job.ID); got.State != api.StateSucceeded {
		t.Fatalf("final: %s", got.State)
	}
	want := []string{"submitted", "leased", "lease_returned", "leased", "started", "succeeded"}
	if diff := cmp.Diff(want, h.events(job.ID)); diff != "" {
		t.Fatalf("audit trail (-want +got):\n%s", diff)
	}
}

// An attempt the worker reported started and then no longer lists was lost
// on the worker: it is charged and retried as lost_worker.
func TestHeartbeatEndsAStartedAttemptTheWorkerNoLongerHolds(t *testing.T) {
	h := newHarness(t, defaultConfig())
	job := h.submit(api.JobSpec{Type: "a", Retry: &api.RetryPolicy{Kind: "fixed", DelayMS: 1000}})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	if ls := h.lease(w, 1); len(ls) != 1 {
		t.Fatalf("leases: %+v", ls)
	}
	h.start(w, job.ID, 1)
	h.clock.Advance(11 * time.Second)
	var r api.HeartbeatResponse
	h.do("POST", "/workers/"+w+"/heartbeat", api.HeartbeatRequest{}, &r)
	got := h.get(job.ID)
	if got.State != api.StateRetryWait || got.FailureClass != "lost_worker" || got.ReturnedLeases != 0 {
		t.Fatalf("after a heartbeat without it: %s %s, returned leases %d", got.State, got.FailureClass, got.ReturnedLeases)
	}
	h.clock.Advance(time.Second)
	h.tick()
	if ls := h.lease(w, 1); len(ls) != 1 || ls[0].Attempt != 2 {
		t.Fatalf("re-lease: %+v", ls)
	}
}

func TestBlockedJobsBecomePendingWhenRunnable(t *testing.T) {
	h := newHarness(t, defaultConfig())
	runAt := h.clock.Now().Add(time.Minute)
	later := h.submit(api.JobSpec{Type: "a", RunAt: &runAt})
	parent := h.submit(api.JobSpec{Type: "a"})
	child := h.submit(api.JobSpec{Type: "a", DependsOn: []api.Dependency{{JobID: parent.ID}}})
	if later.State != api.StateBlocked || child.State != api.StateBlocked {
		t.Fatalf("at submit: later %s, child %s", later.State, child.State)
	}
	h.clock.Advance(time.Minute)
	h.tick()
	if got := h.get(later.ID).State; got != api.StatePending {
		t.Fatalf("run_at passed: %s", got)
	}
	if !slices.Contains(h.events(later.ID), "unblocked") {
		t.Fatalf("events %v lack unblocked", h.events(later.ID))
	}
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	ls := h.lease(w, 1)
	h.complete(w, api.Completion{JobID: ls[0].Job.ID, Attempt: 1, Outcome: "succeeded"})
	if ls[0].Job.ID == parent.ID {
		if got := h.get(child.ID).State; got != api.StatePending && got != api.StateLeased {
			t.Fatalf("dependency met: child %s", got)
		}
	}
}

func TestRetentionDeletesOldFinishedJobs(t *testing.T) {
	cfg := defaultConfig()
	cfg.Server.Retention = config.Duration(time.Hour)
	h := newHarness(t, cfg)
	old := h.submit(api.JobSpec{Type: "a"})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	h.lease(w, 1)
	h.complete(w, api.Completion{JobID: old.ID, Attempt: 1, Outcome: "succeeded"})
	h.clock.Advance(30 * time.Minute)
	recent := h.submit(api.JobSpec{Type: "a"})
	h.clock.Advance(40 * time.Minute) // old ended 70 min ago, recent is still queued
	h.tick()
	if code := h.do("GET", "/jobs/"+old.ID, nil, nil); code != http.StatusNotFound {
		t.Fatalf("a job finished past the retention: HTTP %d", code)
	}
	if got := h.get(recent.ID); got.ID != recent.ID {
		t.Fatal("an unfinished job was deleted")
	}
}

func TestLeaseOfAWorkerGoneAtRestartIsRetried(t *testing.T) {
	cfg := defaultConfig()
	h := newHarness(t, cfg)
	job := h.submit(api.JobSpec{Type: "a", Retry: &api.RetryPolicy{Kind: "fixed", DelayMS: 1000}})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	h.lease(w, 1)
	h.stop()
	// The worker is recorded as gone while the server is down.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, h.path)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := st.WorkerGet(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	gone.State = store.WorkerGone
	if err := st.Write(ctx, func(wr store.Writer) error { return wr.WorkerUpsert(ctx, gone) }); err != nil {
		t.Fatal(err)
	}
	st.Close()
	h2 := startHarness(t, cfg, h.path, h.clock)
	h2.tick()
	got := h2.get(job.ID)
	if got.State != api.StateRetryWait || got.FailureClass != "lost_worker" {
		t.Fatalf("after restart: %s %s", got.State, got.FailureClass)
	}
	if ev := h2.events(job.ID); !slices.Contains(ev, "lease_expired") || !slices.Contains(ev, "retry_scheduled") {
		t.Fatalf("events %v", ev)
	}
	w2 := h2.register(api.RegisterRequest{Name: "w2", Slots: 1})
	h2.clock.Advance(time.Second)
	h2.tick()
	if ls := h2.lease(w2, 1); len(ls) != 1 || ls[0].Attempt != 2 {
		t.Fatalf("re-lease: %+v", ls)
	}
}

// Issue 9 item 4: a job that starts and ends between two worker reports
// shows the start time its execution shows.
func TestFastJobRecordsItsStartTime(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w1", Slots: 1})
	for _, outcome := range []string{api.OutcomeSucceeded, api.OutcomeFailed} {
		job := h.submit(api.JobSpec{Type: "echo", Command: []string{"true"}, MaxAttempts: 2})
		leases := h.lease(w, 1)
		if len(leases) != 1 {
			t.Fatalf("leases = %+v", leases)
		}
		started := h.clock.Now().Add(time.Second).Truncate(time.Millisecond)
		finished := started.Add(300 * time.Millisecond)
		h.clock.Advance(2 * time.Second)
		if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: outcome, ExitCode: intp(0),
			StartedAt: &started, FinishedAt: &finished}); !r.OK {
			t.Fatalf("complete: %+v", r)
		}
		var got api.JobResponse
		h.do("GET", "/jobs/"+job.ID, nil, &got)
		if got.Job.StartedAt == nil || !got.Job.StartedAt.Equal(started) {
			t.Errorf("%s: job.started_at %v, want %v", outcome, got.Job.StartedAt, started)
		}
		if got.Execution == nil || got.Execution.StartedAt == nil || !got.Execution.StartedAt.Equal(started) {
			t.Errorf("%s: execution %+v", outcome, got.Execution)
		}
	}
}

// Hold and release: a held job is never leased, survives a restart held,
// and is leased once released.
func TestAHeldJobWaitsForItsRelease(t *testing.T) {
	cfg := defaultConfig()
	h := newHarness(t, cfg)
	job := h.submit(api.JobSpec{Type: "echo", Command: []string{"true"}})
	var act api.ActionResponse
	if code := h.do("POST", "/jobs/"+job.ID+"/hold", nil, &act); code != http.StatusOK || act.Result != api.ResultHeld || !act.Job.Held {
		t.Fatalf("hold: HTTP %d %+v", code, act)
	}
	if code := h.do("POST", "/jobs/"+job.ID+"/hold", nil, &act); code != http.StatusOK || act.Result != api.ResultAlreadyHeld {
		t.Errorf("hold again: HTTP %d %+v", code, act)
	}
	w := h.register(api.RegisterRequest{Name: "w1", Slots: 1})
	if leases := h.lease(w, 1); len(leases) != 0 {
		t.Fatalf("a held job was leased: %+v", leases)
	}
	var x api.Explanation
	h.do("GET", "/jobs/"+job.ID+"/explain", nil, &x)
	if x.Code != "held" {
		t.Errorf("explain: %+v", x)
	}
	h.stop()
	h2 := startHarness(t, cfg, h.path, h.clock)
	w2 := w // restored at the restart
	if leases := h2.lease(w2, 1); len(leases) != 0 {
		t.Fatalf("after a restart the held job was leased: %+v", leases)
	}
	var list api.JobList
	h2.do("GET", "/jobs", nil, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].Reason != "held" || !list.Jobs[0].Held {
		t.Errorf("list after a restart: %+v", list.Jobs)
	}
	if code := h2.do("POST", "/jobs/"+job.ID+"/release", nil, &act); code != http.StatusOK || act.Result != api.ResultReleased {
		t.Fatalf("release: HTTP %d %+v", code, act)
	}
	if leases := h2.lease(w2, 1); len(leases) != 1 || leases[0].Job.ID != job.ID {
		t.Fatalf("after the release: %+v", leases)
	}
	if code := h2.do("POST", "/jobs/"+job.ID+"/hold", nil, &act); code != http.StatusOK || act.Result != api.ResultAlreadyRunning {
		t.Errorf("hold of a leased job: HTTP %d %+v", code, act)
	}
	evs := strings.Join(h2.events(job.ID), ",")
	if !strings.Contains(evs, "held") || !strings.Contains(evs, "released") {
		t.Errorf("events: %s", evs)
	}
}
