package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
)

func TestCLISubmitSpec(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs": replyWith(201, api.SubmitResponse{Job: testJob("j1", api.StatePending)}),
	})
	code, out, errOut := runCLI(t, f.URL, "submit", "report",
		"--tenant", "acme", "--name", "nightly", "--lane", "batch", "--key", "acct-42", "--fairness-key", "u7",
		"--priority", "0", "--on-demand", "--cpu", "0.5", "--memory-mb", "256", "--gpu", "1",
		"--label", "ssd", "--label", "eu", "--env", "A=1", "--env", "B=x=y", "--dir", "/srv", "--shell",
		"--idempotency-key", "n-1", "--traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "--max-attempts", "3", "--retry", "exponential", "--retry-delay", "1.5s", "--retry-max-delay", "2m",
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
		IdempotencyKey: "n-1", TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", MaxAttempts: 3, Retry: &api.RetryPolicy{Kind: "exponential", DelayMS: 1500, MaxDelayMS: 120000},
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
	if tok := f.only(t).Header.Get(api.SubmitTokenHeader); len(tok) != 32 {
		t.Errorf("submit token %q, want one the client drew (its retries are safe)", tok)
	}
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
		// a key that may not read the audit trail: --wait reads the job's state
		"GET /api/v1/events": replyError(403, api.CodePermissionDenied, "worker keys cannot read the audit trail"),
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
		"fairway: job j1 running (attempt 1 of 1 on worker w1)\n" +
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

// Item 9 of issue 28: --payload takes @FILE and - (stdin), so a payload
// need not fit in an argument list.
func TestCLISubmitPayloadFromFileAndStdin(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs": replyWith(201, api.SubmitResponse{Job: testJob("j1", api.StatePending)}),
	})
	big := `{"rows": [` + strings.Repeat(`"0123456789abcdef",`, 12000) + `"end"]}` // 200 KiB
	path := filepath.Join(t.TempDir(), "payload.json")
	if err := os.WriteFile(path, []byte(big+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, f.URL, "submit", "report", "--payload", "@"+path); code != 0 {
		t.Fatalf("@file: exit %d: %s", code, errOut)
	}
	withStdin(t, `{"from": "stdin"}`)
	if code, _, errOut := runCLI(t, f.URL, "submit", "report", "--payload", "-"); code != 0 {
		t.Fatalf("-: exit %d: %s", code, errOut)
	}
	reqs := f.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, want := range []string{big, `{"from": "stdin"}`} {
		got := decodeJSON[api.JobSpec](t, string(reqs[i].Body))
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(want)); err != nil {
			t.Fatal(err)
		}
		if string(got.Payload) != compact.String() {
			t.Errorf("request %d: payload of %d bytes, want %d", i, len(got.Payload), len(want))
		}
	}

	for _, tc := range []struct{ arg, stdin, want string }{
		{"@" + filepath.Join(t.TempDir(), "missing.json"), "", "--payload @"},
		{"@", "", "--payload @: want @FILE"},
		{"-", "not json", "--payload -: not valid JSON"},
		{"@" + path + "x", "", "no such file"},
		{"{nope", "", "--payload: not valid JSON"},
	} {
		withStdin(t, tc.stdin)
		code, _, errOut := runCLI(t, f.URL, "submit", "report", "--payload", tc.arg)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("--payload %q: exit %d, want 2 and %q: %s", tc.arg, code, tc.want, errOut)
		}
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("bad payloads were sent: %d requests", n)
	}
}

// withStdin makes the CLI read s as its standard input for the test.
func withStdin(t *testing.T, s string) {
	t.Helper()
	old := stdin
	stdin = strings.NewReader(s)
	t.Cleanup(func() { stdin = old })
}

// trailFake is a server whose job's audit trail the test writes: the logs
// stream sends one line, then the whole rest of the job's life lands at
// once, as it does when attempts end between two reads of the state.
type trailFake struct {
	mu     sync.Mutex
	job    api.Job
	events []api.Event
}

func (tf *trailFake) eventsAfter(w http.ResponseWriter, r *http.Request) {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	after, _ := strconv.ParseInt(r.URL.Query().Get("after_id"), 10, 64)
	out := api.EventList{Events: []api.Event{}}
	for _, e := range tf.events {
		if e.ID > after && e.JobID == r.URL.Query().Get("job_id") {
			out.Events = append(out.Events, e)
		}
	}
	jsonReply(w, 200, out)
}

func (tf *trailFake) get(w http.ResponseWriter, r *http.Request) {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	jsonReply(w, 200, api.JobResponse{Job: tf.job})
}

// Item 11 of issue 28: submit --wait prints every transition and each
// attempt's outcome with its reason, even when an attempt ends and the
// next starts between two reads.
func TestCLISubmitWaitPrintsEveryAttempt(t *testing.T) {
	submitted := testJob("j1", api.StatePending)
	submitted.MaxAttempts = 2
	ev := func(id int64, typ string, attempt int, actor, detail string) api.Event {
		e := api.Event{ID: id, JobID: "j1", Attempt: attempt, Type: typ, At: at, Actor: actor}
		if detail != "" {
			e.Detail = json.RawMessage(detail)
		}
		return e
	}
	tf := &trailFake{job: submitted, events: []api.Event{ev(1, "submitted", 0, "tenant:acme", `{"type":"report"}`)}}
	final := submitted
	final.State, final.Attempt, final.FailureClass, final.LastError = api.StateFailed, 2, api.FailTimeout, "timed out after 3s"
	rest := []api.Event{
		ev(2, "leased", 1, "system", `{"worker":"w1"}`),
		ev(3, "started", 1, "worker:w1", ""),
		ev(4, "sla_violation", 1, "system", `{"policy":"strict","running_ms":3001,"timeout_ms":3000}`),
		ev(5, "retry_scheduled", 1, "worker:w1", `{"class":"timeout","error":"timed out after 3s","run_at":"2026-11-21T06:00:00Z"}`),
		ev(6, "leased", 2, "system", `{"worker":"w2"}`),
		ev(7, "started", 2, "worker:w2", ""),
		ev(8, "lease_expired", 2, "system", `{"reason":"no heartbeat"}`),
		ev(9, "failed", 2, "worker:w2", `{"class":"timeout","error":"timed out after 3s"}`),
	}
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs":             replyWith(201, api.SubmitResponse{Job: submitted}),
		"GET /api/v1/jobs/{id}":         tf.get,
		"GET /api/v1/events":            tf.eventsAfter,
		"GET /api/v1/jobs/{id}/explain": replyWith(200, api.Explanation{JobID: "j1", State: api.StatePending, Code: "queued"}),
		"GET /api/v1/jobs/{id}/logs": func(w http.ResponseWriter, r *http.Request) {
			s := openSSE(w)
			s.send("log", logChunk(1, "stdout", "start\n"))
			tf.mu.Lock()
			tf.job, tf.events = final, append(tf.events, rest...)
			tf.mu.Unlock()
			s.send("end", api.LogEnd{State: api.StateFailed})
		},
	})
	code, out, errOut := runCLI(t, f.URL, "submit", "report", "--wait", "--timeout", "3s", "--max-attempts", "2", "--", "sleep", "10")
	if code != exitJobFailed || out != "start\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	want := "fairway: job j1 submitted: pending\n" +
		"fairway: job j1 leased (attempt 1 of 2 on worker w1)\n" +
		"fairway: job j1 running (attempt 1 of 2 on worker w1)\n" +
		"fairway: job j1 attempt 1 has run 3.001s, past its timeout 3s (SLA violation, policy strict)\n" +
		"fairway: job j1 retry_wait (attempt 1 of 2 failed: timeout: timed out after 3s; attempt 2 starts now)\n" +
		"fairway: job j1 leased (attempt 2 of 2 on worker w2)\n" +
		"fairway: job j1 running (attempt 2 of 2 on worker w2)\n" +
		"fairway: job j1 failed (attempt 2: timeout: timed out after 3s)\n"
	if errOut != want {
		t.Errorf("stderr\n%s\nwant\n%s", errOut, want)
	}
}

// The lines of the other transitions: a lease handed back uncharged, a
// retry that waits, a hold.
func TestJobTrailLines(t *testing.T) {
	tr := &jobTrail{job: api.Job{MaxAttempts: 3}}
	runAt := at.Add(90 * time.Second)
	for _, tc := range []struct {
		e    api.Event
		want string
	}{
		{api.Event{Type: "lease_returned", Attempt: 1, Detail: json.RawMessage(`{"reason":"worker shut down while it ran","worker":"w1"}`)},
			"pending (attempt 1 handed back uncharged: worker shut down while it ran; it does not count against max_attempts)"},
		{api.Event{Type: "leased", Attempt: 2, Detail: json.RawMessage(`{"worker":"w2"}`)}, "leased (attempt 2 of 4 on worker w2)"},
		{api.Event{Type: "retry_scheduled", Attempt: 2, At: at, Detail: json.RawMessage(`{"class":"exit_code","error":"exit code 3","run_at":"` + runAt.Format(time.RFC3339) + `"}`)},
			"retry_wait (attempt 2 of 4 failed: exit code 3; attempt 3 at 2026-11-21 06:01:30 UTC, in 1m30s)"},
		{api.Event{Type: "held", Attempt: 2, Actor: "admin"}, "held by admin"},
		{api.Event{Type: "succeeded", Attempt: 3}, ""},
	} {
		if got, _ := tr.line(tc.e); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.e.Type, got, tc.want)
		}
	}
}

// A submit from inside a job (TRACEPARENT in its environment) joins the
// job's trace unless --traceparent says otherwise.
func TestCLISubmitJoinsTheTraceInTheEnvironment(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	t.Setenv("TRACEPARENT", tp)
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs": replyWith(201, api.SubmitResponse{Job: testJob("j1", api.StatePending)}),
	})
	if code, _, errOut := runCLI(t, f.URL, "submit", "report"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := decodeJSON[api.JobSpec](t, string(f.only(t).Body)); got.TraceParent != tp {
		t.Fatalf("traceparent %q, want $TRACEPARENT %q", got.TraceParent, tp)
	}
}
