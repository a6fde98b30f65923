package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

func TestCLISubmitSpec(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs": replyWith(201, api.SubmitResponse{Job: testJob("j1", api.StatePending)}),
	})
	code, out, errOut := runCLI(t, f.URL, "submit", "report",
		"--tenant", "acme", "--name", "nightly", "--lane", "batch", "--key", "acct-42", "--fairness-key", "u7",
		"--priority", "0", "--on-demand", "--cpu", "0.5", "--memory-mb", "256", "--gpu", "1",
		"--label", "ssd", "--label", "eu", "--env", "A=1", "--env", "B=x=y", "--dir", "/srv", "--shell",
		"--idempotency-key", "n-1", "--max-attempts", "3", "--retry", "exponential", "--retry-delay", "1.5s", "--retry-max-delay", "2m",
		"--timeout", "10m", "--expected", "1m", "--sla", "flexible", "--run-at", "2026-11-21T08:00:00+01:00",
		"--after", "j0", "--after", "j9:any", "--payload", `{"day":"2026-11-20"}`, "--output-limit", "64KiB",
		"--", "./report.sh", "--day", "2026-11-20")
	if code != 0 || out != "j1\n" || errOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	prio := 0
	runAt := time.Date(2026, 11, 21, 7, 0, 0, 0, time.UTC)
	want := api.JobSpec{
		Type: "report", Tenant: "acme", Name: "nightly", Lane: "batch", Key: "acct-42", FairnessKey: "u7",
		Priority: &prio, OnDemand: true, Resources: &api.Resources{CPU: 0.5, MemoryMB: 256, GPU: 1},
		Labels: []string{"ssd", "eu"}, Command: []string{"./report.sh", "--day", "2026-11-20"}, Shell: true,
		Env: map[string]string{"A": "1", "B": "x=y"}, Dir: "/srv", Payload: json.RawMessage(`{"day":"2026-11-20"}`),
		IdempotencyKey: "n-1", MaxAttempts: 3, Retry: &api.RetryPolicy{Kind: "exponential", DelayMS: 1500, MaxDelayMS: 120000},
		TimeoutMS: 600000, ExpectedMS: 60000, SLAPolicy: "flexible", RunAt: &runAt,
		DependsOn:        []api.Dependency{{JobID: "j0"}, {JobID: "j9", Condition: "any"}},
		OutputLimitBytes: 64 << 10,
	}
	got := decodeJSON[api.JobSpec](t, string(f.only(t).Body))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spec (-want +got)\n%s", diff)
	}
}

func TestCLISubmitMinimal(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs": replyWith(201, api.SubmitResponse{Job: testJob("j1", api.StatePending)}),
	})
	before := time.Now()
	code, _, errOut := runCLI(t, f.URL, "submit", "--run-at", "+10m", "report")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := decodeJSON[api.JobSpec](t, string(f.only(t).Body))
	if got.RunAt == nil || got.RunAt.Before(before.Add(10*time.Minute)) || got.RunAt.After(time.Now().Add(10*time.Minute)) {
		t.Errorf("run_at %v, want now+10m", got.RunAt)
	}
	got.RunAt = nil
	if !strings.HasPrefix(got.IdempotencyKey, client.GeneratedKeyPrefix) {
		t.Errorf("idempotency key %q, want one the client made up (its retries are safe)", got.IdempotencyKey)
	}
	got.IdempotencyKey = ""
	if diff := cmp.Diff(api.JobSpec{Type: "report"}, got); diff != "" {
		t.Errorf("a minimal submit sends defaults (-want +got)\n%s", diff)
	}
}

func TestCLISubmitJSONAndDuplicate(t *testing.T) {
	res := api.SubmitResponse{Job: testJob("j1", api.StateRunning), Deduplicated: true}
	f := newAPIFake(t, map[string]http.HandlerFunc{"POST /api/v1/jobs": replyWith(200, res)})
	code, out, errOut := runCLI(t, f.URL, "submit", "report", "--idempotency-key", "k", "--json")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if diff := cmp.Diff(res, decodeJSON[api.SubmitResponse](t, out)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	code, out, errOut = runCLI(t, f.URL, "submit", "report", "--idempotency-key", "k")
	if code != 0 || out != "j1\n" || errOut != "fairway: idempotency key seen before: job j1 already exists (running)\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestCLISubmitRefused(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs": replyWith(400, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeInvalidArgument, Message: "priority: must be between 0 and 1000, got 1200", Field: "priority"}}),
	})
	code, out, errOut := runCLI(t, f.URL, "submit", "report", "--priority", "1200")
	want := "fairway: submit: invalid_argument (400): priority: must be between 0 and 1000, got 1200 [field priority]\n"
	if code != exitAPI || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// waitFake is a server with one job whose life the test scripts: the logs
// stream moves it to running, waits until the client has read that state
// (it has answered a second read since: the reads come one after the
// other, so the first one's answer has been handled), then writes its
// output and ends it in final.
type waitFake struct {
	mu          sync.Mutex
	job         api.Job
	runningRead int
	sawRunning  chan struct{}
	final       api.Job
}

func newWaitFake(t *testing.T, final api.Job) (*apiFake, *waitFake) {
	w := &waitFake{job: testJob("j1", api.StatePending), sawRunning: make(chan struct{}), final: final}
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs":             w.submit,
		"GET /api/v1/jobs/{id}":         w.get,
		"GET /api/v1/jobs/{id}/logs":    w.logs,
		"GET /api/v1/jobs/{id}/explain": replyWith(200, api.Explanation{JobID: "j1", State: api.StatePending, Code: "queued"}),
	})
	return f, w
}

func (w *waitFake) submit(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	jsonReply(rw, 201, api.SubmitResponse{Job: w.job})
}

func (w *waitFake) get(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	jsonReply(rw, 200, api.JobResponse{Job: w.job})
	if w.job.State != api.StateRunning {
		return
	}
	if w.runningRead++; w.runningRead == 2 {
		close(w.sawRunning)
	}
}

func (w *waitFake) set(j api.Job) {
	w.mu.Lock()
	w.job = j
	w.mu.Unlock()
}

func (w *waitFake) logs(rw http.ResponseWriter, r *http.Request) {
	running := testJob("j1", api.StateRunning)
	running.Attempt, running.WorkerID = 1, "w1"
	w.set(running)
	s := openSSE(rw)
	select {
	case <-w.sawRunning:
	case <-r.Context().Done():
		return
	}
	s.send("log", logChunk(1, "stdout", "row 1\n"))
	s.send("log", logChunk(2, "stderr", "warning: row 2 skipped\n"))
	s.send("log", logChunk(3, "stdout", "row 3\n"))
	w.set(w.final)
	s.send("end", api.LogEnd{State: w.final.State})
}

func TestCLISubmitWaitSucceeded(t *testing.T) {
	final := testJob("j1", api.StateSucceeded)
	final.Attempt = 1
	started := at.Add(time.Second)
	finished := started.Add(1500 * time.Millisecond)
	final.StartedAt, final.FinishedAt = &started, &finished
	f, _ := newWaitFake(t, final)
	code, out, errOut := runCLI(t, f.URL, "submit", "report", "--wait", "--", "./report.sh")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if out != "row 1\nrow 3\n" {
		t.Errorf("stdout %q: want the job's stdout only", out)
	}
	want := "fairway: job j1 submitted: pending\n" +
		"fairway: job j1 running (attempt 1 on worker w1)\n" +
		"warning: row 2 skipped\n" +
		"fairway: job j1 succeeded (attempt 1, ran 1.5s)\n"
	if errOut != want {
		t.Errorf("stderr\n%s\nwant\n%s", errOut, want)
	}
}

func TestCLISubmitWaitFailed(t *testing.T) {
	final := testJob("j1", api.StateFailed)
	exit := 3
	final.Attempt, final.ExitCode, final.FailureClass, final.LastError = 1, &exit, "exit_code", "exit status 3"
	f, _ := newWaitFake(t, final)
	code, _, errOut := runCLI(t, f.URL, "submit", "report", "--on-demand", "--wait", "--", "false")
	if code != exitJobFailed {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.HasSuffix(errOut, "fairway: job j1 failed (attempt 1: exit code 3)\n") {
		t.Errorf("stderr %q", errOut)
	}
	if spec := decodeJSON[api.JobSpec](t, string(f.requests()[0].Body)); !spec.OnDemand {
		t.Error("--on-demand not sent")
	}
}

func TestCLISubmitWaitCancelled(t *testing.T) {
	f, _ := newWaitFake(t, testJob("j1", api.StateCancelled))
	code, _, errOut := runCLI(t, f.URL, "submit", "report", "--wait")
	if code != exitJobFailed || !strings.HasSuffix(errOut, "fairway: job j1 cancelled\n") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// --wait --json prints only the ended job, as GET /jobs/{id} answers it.
func TestCLISubmitWaitJSON(t *testing.T) {
	final := testJob("j1", api.StateFailed)
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs":     replyWith(201, api.SubmitResponse{Job: testJob("j1", api.StatePending)}),
		"GET /api/v1/jobs/{id}": replyWith(200, api.JobResponse{Job: final, Execution: &api.Execution{JobID: "j1", Attempt: 1, Outcome: "failed"}}),
		"GET /api/v1/jobs/{id}/logs": func(w http.ResponseWriter, r *http.Request) {
			openSSE(w).send("end", api.LogEnd{State: api.StateFailed})
		},
	})
	code, out, errOut := runCLI(t, f.URL, "submit", "report", "--wait", "--json")
	if code != exitJobFailed || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	got := decodeJSON[api.JobResponse](t, out)
	if got.Job.State != api.StateFailed || got.Execution == nil {
		t.Errorf("printed %+v", got)
	}
}

// Ctrl-C while following stops following, not the job: exit 130.
func TestCLISubmitWaitInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs":     replyWith(201, api.SubmitResponse{Job: testJob("j1", api.StatePending)}),
		"GET /api/v1/jobs/{id}": replyWith(200, api.JobResponse{Job: testJob("j1", api.StatePending)}),
		"GET /api/v1/jobs/{id}/explain": replyWith(200, api.Explanation{JobID: "j1", State: api.StatePending,
			Code: "no_free_slot", Message: "every worker that can run it is busy (0 free slots in the pool)"}),
		"GET /api/v1/jobs/{id}/logs": func(w http.ResponseWriter, r *http.Request) {
			openSSE(w)
			cancel() // the user presses Ctrl-C while the job runs
			<-r.Context().Done()
		},
	})
	var out, errb bytes.Buffer
	code := run(ctx, []string{"submit", "--server", f.URL, "report", "--wait"}, &out, &errb)
	want := "fairway: stopped following job j1; it goes on (fairway cancel j1 stops it)\n"
	reason := "fairway: job j1 waits: every worker that can run it is busy (0 free slots in the pool) (no_free_slot)\n"
	if code != exitInterrupted || !strings.HasSuffix(errb.String(), want) || !strings.Contains(errb.String(), reason) {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}
