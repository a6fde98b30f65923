package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fairwayhq/fairway/api"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// blockingHandler signals each call on started and returns once release
// is closed or its context is done, recording the cause.
type blockingHandler struct {
	started chan string
	release chan struct{}
	causes  chan error
}

func newBlockingHandler(n int) *blockingHandler {
	return &blockingHandler{started: make(chan string, n), release: make(chan struct{}), causes: make(chan error, n)}
}

func (h *blockingHandler) Run(ctx context.Context, job Job) (json.RawMessage, error) {
	h.started <- job.ID
	select {
	case <-h.release:
		return json.RawMessage(`{"ok":true}`), nil
	case <-ctx.Done():
		h.causes <- context.Cause(ctx)
		return nil, ctx.Err()
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

func noop() Handler {
	return HandlerFunc(func(context.Context, Job) (json.RawMessage, error) { return nil, nil })
}

func TestLeaseStartLogsComplete(t *testing.T) {
	f := newFakeServer(t)
	proceed := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, job Job) (json.RawMessage, error) {
		_, _ = job.Stdout().Write([]byte("hello\n"))
		_, _ = job.Stderr().Write([]byte("oops\n"))
		<-proceed
		return json.RawMessage(`{"n":1}`), nil
	})
	startWorker(t, testOptions(t, f, map[string]Handler{"report": h}))
	id := f.addJob(api.Job{Type: "report", Attempt: 2})
	f.waitFor("a heartbeat with the start", func() bool { return beatStart(f, id, 3) != nil })
	close(proceed)
	f.waitFor("completion", func() bool { return len(f.completions(id)) == 1 })

	f.mu.Lock()
	defer f.mu.Unlock()
	if got := f.callsOf("register"); len(got) != 1 {
		t.Fatalf("registers = %d, want 1", len(got))
	}
	if got := f.callsOf("start"); len(got) != 0 {
		t.Errorf("start calls %+v, want none: the lease is the start", got)
	}
	c := f.completions(id)[0]
	if c.Attempt != 3 || c.Outcome != api.OutcomeSucceeded || string(c.Result) != `{"n":1}` || c.StartedAt == nil || c.FinishedAt == nil {
		t.Errorf("completion = %+v", c)
	}
	if beat := beatStart(f, id, 3); c.StartedAt != nil && !beat.Equal(*c.StartedAt) {
		t.Errorf("heartbeat reported start %v, completion %v: one start, reported the same", beat, *c.StartedAt)
	}
	chunks := allChunks(f)
	want := []api.LogChunk{
		{JobID: id, Attempt: 3, Stream: "stdout", Seq: 1, Data: "hello\n"},
		{JobID: id, Attempt: 3, Stream: "stderr", Seq: 2, Data: "oops\n"},
	}
	if len(chunks) != 2 || !sameChunk(chunks[0], want[0]) || !sameChunk(chunks[1], want[1]) {
		t.Errorf("chunks = %+v, want %+v", chunks, want)
	}
	if lastLogs, firstDone := lastIndex(f, "logs"), firstIndex(f, "complete"); lastLogs > firstDone {
		t.Errorf("logs sent after the completion (calls %s)", f.describeLocked())
	}
}

// beatStart is the start of attempt of job id as a heartbeat first
// reported it, nil if none did; the caller holds f.mu (waitFor does).
func beatStart(f *fakeServer, id string, attempt int) *time.Time {
	for _, c := range f.callsOf("heartbeat") {
		for _, a := range c.beats {
			if a.JobID == id && a.Attempt == attempt && a.StartedAt != nil {
				return a.StartedAt
			}
		}
	}
	return nil
}

func sameChunk(a, b api.LogChunk) bool {
	return a.JobID == b.JobID && a.Attempt == b.Attempt && a.Stream == b.Stream && a.Seq == b.Seq && a.Data == b.Data && !a.At.IsZero()
}

func allChunks(f *fakeServer) []api.LogChunk {
	var out []api.LogChunk
	for _, c := range f.callsOf("logs") {
		if c.status == 200 {
			out = append(out, c.chunks...)
		}
	}
	return out
}

func firstIndex(f *fakeServer, verb string) int {
	return slices.IndexFunc(f.calls, func(c fakeCall) bool { return c.verb == verb })
}

func lastIndex(f *fakeServer, verb string) int {
	i := -1
	for j, c := range f.calls {
		if c.verb == verb {
			i = j
		}
	}
	return i
}

func TestStartsAndCompletionsBatched(t *testing.T) {
	const n = 40
	f := newFakeServer(t)
	h := newBlockingHandler(n)
	opts := testOptions(t, f, map[string]Handler{"*": h})
	opts.Slots = n + 1       // a free slot: saturated, the worker would report at once
	opts.BatchWindow = guard // only a full batch or no job left running ends the wait
	startWorker(t, opts)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = f.addJob(api.Job{})
	}
	for range n {
		recv(t, h.started, "handler start")
	}
	close(h.release)
	f.waitFor("all completions", func() bool {
		for _, id := range ids {
			if len(f.completions(id)) != 1 {
				return false
			}
		}
		return true
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := len(f.callsOf("complete")); got != 1 {
		t.Errorf("%d complete calls for %d jobs finishing together, want 1", got, n)
	}
}

// TestSaturatedWorkerReportsAtOnce: with every slot taken, a completion
// is what brings the next job, so it does not wait for the batching
// window (an hour here) or for the other running job; with a slot free,
// the same completion waits for the other job to end and both share a
// request.
func TestSaturatedWorkerReportsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		slots     int
		wantCalls int
	}{{slots: 2, wantCalls: 2}, {slots: 3, wantCalls: 1}} {
		t.Run(fmt.Sprintf("slots=%d", tc.slots), func(t *testing.T) {
			f := newFakeServer(t)
			first, second := newBlockingHandler(1), newBlockingHandler(1)
			opts := testOptions(t, f, map[string]Handler{"first": first, "second": second})
			opts.Slots = tc.slots
			opts.BatchWindow = time.Hour
			w, _ := startWorker(t, opts)
			a := f.addJob(api.Job{Type: "first"})
			recv(t, first.started, "first handler")
			b := f.addJob(api.Job{Type: "second"})
			recv(t, second.started, "second handler")
			if tc.slots == 2 {
				waitUntil(t, "the lease loop waiting for a slot", w.slots.saturated)
			}
			close(first.release)
			if tc.slots == 2 {
				f.waitFor("the first completion, the second job still running", func() bool { return len(f.completions(a)) == 1 })
			} else {
				waitUntil(t, "the first completion queued", func() bool { return w.completes.len() == 1 })
			}
			close(second.release)
			f.waitFor("both completions", func() bool { return len(f.completions(a)) == 1 && len(f.completions(b)) == 1 })
			f.mu.Lock()
			defer f.mu.Unlock()
			if got := len(f.callsOf("complete")); got != tc.wantCalls {
				t.Errorf("%d complete calls, want %d: %s", got, tc.wantCalls, f.describeLocked())
			}
		})
	}
}

func TestNoStartReportWhenJobEndsFirst(t *testing.T) {
	f := newFakeServer(t)
	opts := testOptions(t, f, map[string]Handler{"*": noop()})
	opts.BatchWindow = guard
	w, _ := startWorker(t, opts)
	id := f.addJob(api.Job{})
	f.waitFor("completion", func() bool { return len(f.completions(id)) == 1 })
	if err := w.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := f.callsOf("start"); len(got) != 0 {
		t.Errorf("start calls %+v, want none", got)
	}
	if c := f.completions(id)[0]; c.StartedAt == nil || c.Outcome != api.OutcomeSucceeded {
		t.Errorf("completion %+v lacks started_at", c)
	}
}

func TestCancelViaHeartbeatKillsCommand(t *testing.T) {
	f := newFakeServer(t)
	startWorker(t, testOptions(t, f, map[string]Handler{"*": CommandHandler(CommandOptions{})}))
	id := f.addJob(api.Job{Command: []string{"sleep", "60"}})
	f.waitFor("start", func() bool { return beatStart(f, id, 1) != nil })
	f.setJob(id, func(j *fakeJob) { j.cancel = true })
	f.waitFor("completion", func() bool { return len(f.completions(id)) == 1 })
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.completions(id)[0]
	if c.Outcome != api.OutcomeCancelled || c.FailureClass != api.FailCancelled {
		t.Errorf("completion = %+v, want cancelled", c)
	}
}

// A preempted command finds FAIRWAY_PREEMPTED_FILE written when its
// SIGTERM comes, and the attempt is reported as preempted.
func TestPreemptViaHeartbeatTellsTheCommand(t *testing.T) {
	f := newFakeServer(t)
	startWorker(t, testOptions(t, f, map[string]Handler{"*": CommandHandler(CommandOptions{KillGrace: 5 * time.Second})}))
	script := `trap 'echo "preempted=$(cat "$FAIRWAY_PREEMPTED_FILE")"; exit 0' TERM; echo ready; while :; do sleep 0.05; done`
	id := f.addJob(api.Job{Command: []string{"sh", "-c", script}})
	f.waitFor("start", func() bool { return beatStart(f, id, 1) != nil })
	f.waitFor("ready", func() bool { return strings.Contains(stdoutOf(f, id), "ready") })
	f.setJob(id, func(j *fakeJob) { j.preempt = true })
	f.waitFor("completion", func() bool { return len(f.completions(id)) == 1 })
	f.mu.Lock()
	c := f.completions(id)[0]
	f.mu.Unlock()
	if c.Outcome != api.OutcomePreempted || c.FailureClass != api.FailPreempted {
		t.Errorf("completion = %+v, want preempted", c)
	}
	f.waitFor("output", func() bool { return strings.Contains(stdoutOf(f, id), "preempted=1") })
}

// stdoutOf is the job's stdout as the fake server received it; the
// caller holds f.mu (waitFor does).
func stdoutOf(f *fakeServer, id string) string {
	var out string
	for _, ch := range allChunks(f) {
		if ch.JobID == id && ch.Stream == "stdout" {
			out += ch.Data
		}
	}
	return out
}

func TestRevokedIsNotReported(t *testing.T) {
	f := newFakeServer(t)
	h := newBlockingHandler(1)
	w, _ := startWorker(t, testOptions(t, f, map[string]Handler{"*": h}))
	id := f.addJob(api.Job{})
	recv(t, h.started, "handler start")
	f.setJob(id, func(j *fakeJob) { j.revoked = true })
	if cause := recv(t, h.causes, "cancellation"); !errors.Is(cause, ErrRevoked) {
		t.Errorf("cause = %v, want ErrRevoked", cause)
	}
	if err := w.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := f.callsOf("complete"); len(got) != 0 {
		t.Errorf("complete calls %+v, want none", got)
	}
	if len(f.callsOf("deregister")) != 1 {
		t.Errorf("no deregister")
	}
}

func TestReregisterAfterNotFound(t *testing.T) {
	f := newFakeServer(t)
	h := newBlockingHandler(2)
	startWorker(t, testOptions(t, f, map[string]Handler{"*": h}))
	first := f.addJob(api.Job{})
	recv(t, h.started, "first job")
	f.forgetWorkers()
	if cause := recv(t, h.causes, "first job's cancellation"); !errors.Is(cause, ErrRevoked) {
		t.Errorf("cause = %v, want ErrRevoked", cause)
	}
	f.waitFor("second registration", func() bool { return f.registers == 2 })
	close(h.release)
	second := f.addJob(api.Job{})
	f.waitFor("second job's completion", func() bool { return len(f.completions(second)) == 1 })
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := f.jobs[second].worker; got != "w-2" {
		t.Errorf("second job leased by %q, want w-2", got)
	}
	if got := f.completions(first); len(got) != 0 {
		t.Errorf("first job reported: %+v", got)
	}
}

func TestCompletionRetriedAfter503(t *testing.T) {
	f := newFakeServer(t)
	f.fault("complete", 503, 503)
	startWorker(t, testOptions(t, f, map[string]Handler{"*": noop()}))
	id := f.addJob(api.Job{})
	f.waitFor("completion", func() bool { return len(f.completions(id)) == 1 })
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := len(f.callsOf("complete")); got != 3 {
		t.Errorf("%d complete calls, want 3 (two refused)", got)
	}
}

func TestStopDrainsThenDeregisters(t *testing.T) {
	f := newFakeServer(t)
	h := newBlockingHandler(1)
	w, done := startWorker(t, testOptions(t, f, map[string]Handler{"*": h}))
	id := f.addJob(api.Job{})
	recv(t, h.started, "handler start")
	stopped := make(chan error, 1)
	go func() { stopped <- w.Stop(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if !w.waitUntil(ctx, func() bool { return w.sess.closed }) {
		t.Fatal("the worker did not begin to stop")
	}
	close(h.release)
	if err := recv(t, stopped, "Stop"); err != nil {
		t.Errorf("Stop = %v", err)
	}
	if err := recv(t, done, "Run"); err != nil {
		t.Errorf("Run = %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.completions(id)) != 1 {
		t.Fatalf("job not completed")
	}
	// An abandoned long poll may reach the server late: leases aside,
	// deregister is the last call.
	dereg := lastIndex(f, "deregister")
	for i, c := range f.calls {
		if i > dereg && c.verb != "lease" {
			t.Errorf("%s after deregister: %s", c.verb, f.describeLocked())
		}
	}
	if dereg < lastIndex(f, "complete") {
		t.Errorf("deregister before the completion: %s", f.describeLocked())
	}
}

func TestStopCancelsAtDeadline(t *testing.T) {
	f := newFakeServer(t)
	h := newBlockingHandler(1)
	w, _ := startWorker(t, testOptions(t, f, map[string]Handler{"*": h}))
	id := f.addJob(api.Job{})
	recv(t, h.started, "handler start")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Stop(ctx); err == nil || !strings.Contains(err.Error(), "1 running jobs cancelled") {
		t.Errorf("Stop = %v, want an error saying a job was cancelled", err)
	}
	if cause := recv(t, h.causes, "cancellation"); !errors.Is(cause, ErrShutdown) {
		t.Errorf("cause = %v, want ErrShutdown", cause)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := f.completions(id); len(got) != 0 {
		t.Errorf("job reported %+v; it should be handed back", got)
	}
	if len(f.callsOf("deregister")) != 1 {
		t.Errorf("no deregister")
	}
}

type addArgs struct{ A, B int }

func TestTypedHandler(t *testing.T) {
	f := newFakeServer(t)
	var calls atomic.Int32
	add := Typed(func(ctx context.Context, job Job, in addArgs) (any, error) {
		calls.Add(1)
		return map[string]int{"sum": in.A + in.B}, nil
	})
	startWorker(t, testOptions(t, f, map[string]Handler{"add": add}))
	ok := f.addJob(api.Job{Type: "add", Payload: json.RawMessage(`{"A":2,"B":40}`)})
	bad := f.addJob(api.Job{Type: "add", Payload: json.RawMessage(`"nope"`)})
	f.waitFor("completions", func() bool { return len(f.completions(ok)) == 1 && len(f.completions(bad)) == 1 })
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.completions(ok)[0]; c.Outcome != api.OutcomeSucceeded || string(c.Result) != `{"sum":42}` {
		t.Errorf("completion = %+v, want result {\"sum\":42}", c)
	}
	if c := f.completions(bad)[0]; c.Outcome != api.OutcomeFailed || c.FailureClass != api.FailStartError {
		t.Errorf("completion = %+v, want failed start_error", c)
	}
	if calls.Load() != 1 {
		t.Errorf("handler ran %d times, want 1", calls.Load())
	}
}

func TestCommandOutputChunks(t *testing.T) {
	f := newFakeServer(t)
	startWorker(t, testOptions(t, f, map[string]Handler{"*": CommandHandler(CommandOptions{})}))
	script := "for i in 1 2 3; do echo out$i; echo err$i >&2; done; exit 3"
	id := f.addJob(api.Job{Command: []string{"/bin/sh", "-c", script}})
	f.waitFor("completion", func() bool { return len(f.completions(id)) == 1 })
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.completions(id)[0]
	if c.Outcome != api.OutcomeFailed || c.FailureClass != api.FailExitCode || c.ExitCode == nil || *c.ExitCode != 3 {
		t.Errorf("completion = %+v, want failed exit_code 3", c)
	}
	streams := map[string]string{}
	var last int64
	for _, ch := range allChunks(f) {
		if ch.JobID != id || ch.Attempt != 1 || ch.Seq <= last {
			t.Errorf("chunk %+v out of order (last seq %d)", ch, last)
		}
		last = ch.Seq
		streams[ch.Stream] += ch.Data
	}
	if streams["stdout"] != "out1\nout2\nout3\n" || streams["stderr"] != "err1\nerr2\nerr3\n" {
		t.Errorf("streams = %q", streams)
	}
}

func TestCommandRefusals(t *testing.T) {
	f := newFakeServer(t)
	startWorker(t, testOptions(t, f, map[string]Handler{"*": CommandHandler(CommandOptions{})}))
	none := f.addJob(api.Job{})
	shell := f.addJob(api.Job{Command: []string{"echo hi"}, Shell: true})
	missing := f.addJob(api.Job{Command: []string{"/nonexistent/binary"}})
	f.waitFor("completions", func() bool {
		return len(f.completions(none)) == 1 && len(f.completions(shell)) == 1 && len(f.completions(missing)) == 1
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, want := range map[string]string{none: "job has no command", shell: "--allow-shell", missing: "nonexistent"} {
		c := f.completions(id)[0]
		if c.Outcome != api.OutcomeFailed || c.FailureClass != api.FailStartError || !strings.Contains(c.Error, want) {
			t.Errorf("%s: completion = %+v, want start_error mentioning %q", id, c, want)
		}
	}
}

func TestStrictTimeoutKillsFlexibleDoesNot(t *testing.T) {
	f := newFakeServer(t)
	opts := testOptions(t, f, map[string]Handler{"*": CommandHandler(CommandOptions{AllowShell: true})})
	startWorker(t, opts)
	strict := f.addJob(api.Job{Command: []string{"sleep", "60"}, TimeoutMS: 50})
	flexible := f.addJob(api.Job{Command: []string{"sleep 0.2"}, Shell: true, TimeoutMS: 10, SLAPolicy: "flexible"})
	f.waitFor("completions", func() bool { return len(f.completions(strict)) == 1 && len(f.completions(flexible)) == 1 })
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.completions(strict)[0]; c.Outcome != api.OutcomeFailed || c.FailureClass != api.FailTimeout {
		t.Errorf("strict: completion = %+v, want failed timeout", c)
	}
	if c := f.completions(flexible)[0]; c.Outcome != api.OutcomeSucceeded || c.ExitCode == nil || *c.ExitCode != 0 {
		t.Errorf("flexible: completion = %+v, want succeeded with exit code 0", c)
	}
}

func TestHandlerPanicAndUnknownType(t *testing.T) {
	f := newFakeServer(t)
	boom := HandlerFunc(func(context.Context, Job) (json.RawMessage, error) { panic("boom") })
	opts := testOptions(t, f, map[string]Handler{"boom": boom})
	if !slices.Equal(mustDefaults(t, opts).Types, []string{"boom"}) {
		t.Errorf("types not derived from the handlers")
	}
	startWorker(t, opts)
	p := f.addJob(api.Job{Type: "boom"})
	u := f.addJob(api.Job{Type: "other"})
	f.waitFor("completions", func() bool { return len(f.completions(p)) == 1 && len(f.completions(u)) == 1 })
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.completions(p)[0]; c.Outcome != api.OutcomeFailed || !strings.Contains(c.Error, "panicked: boom") {
		t.Errorf("panic: completion = %+v", c)
	}
	if c := f.completions(u)[0]; c.FailureClass != api.FailStartError || !strings.Contains(c.Error, `no handler for job type "other"`) {
		t.Errorf("unknown type: completion = %+v", c)
	}
}

func mustDefaults(t *testing.T, o Options) Options {
	t.Helper()
	o, err := o.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestHeartbeatNamesHeldJobs(t *testing.T) {
	f := newFakeServer(t)
	h := newBlockingHandler(1)
	startWorker(t, testOptions(t, f, map[string]Handler{"*": h}))
	id := f.addJob(api.Job{Attempt: 6})
	recv(t, h.started, "handler start")
	f.waitFor("a heartbeat naming the job", func() bool {
		for _, c := range f.callsOf("heartbeat") {
			if len(c.beats) == 1 && c.beats[0].JobID == id && c.beats[0].Attempt == 7 {
				return true
			}
		}
		return false
	})
	close(h.release)
}

func TestRunFailsOnRefusedRegistration(t *testing.T) {
	f := newFakeServer(t)
	f.fault("register", 403)
	w, err := New(testOptions(t, f, map[string]Handler{"*": noop()}))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err == nil {
		t.Fatal("Run succeeded after a refused registration")
	}
}

// TestStartReportedWithHeartbeats: the worker makes no start call; a
// heartbeat lists an attempt running for half a heartbeat interval or more
// with its start (a job running longer than a heartbeat has its start on
// the server before it ends), and the completion reports the same start.
func TestStartReportedWithHeartbeats(t *testing.T) {
	const n = 5
	f := newFakeServer(t)
	h := newBlockingHandler(n)
	opts := testOptions(t, f, map[string]Handler{"*": h})
	opts.Slots = n
	startWorker(t, opts)
	var ids []string
	for range n {
		ids = append(ids, f.addJob(api.Job{}))
	}
	for range n {
		recv(t, h.started, "handler")
	}
	f.waitFor("every start in a heartbeat", func() bool {
		for _, id := range ids {
			if beatStart(f, id, 1) == nil {
				return false
			}
		}
		return true
	})
	close(h.release)
	f.waitFor("completions", func() bool {
		for _, id := range ids {
			if len(f.completions(id)) != 1 {
				return false
			}
		}
		return true
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := f.callsOf("start"); len(got) != 0 {
		t.Errorf("%d start calls, want none", len(got))
	}
	for _, id := range ids {
		c := f.completions(id)[0]
		if beat := beatStart(f, id, 1); c.StartedAt == nil || !beat.Equal(*c.StartedAt) {
			t.Errorf("job %s: heartbeat start %v, completion start %v", id, beat, c.StartedAt)
		}
	}
}

func TestRefusedBatchIsRetriedOneByOne(t *testing.T) {
	f := newFakeServer(t)
	f.fault("complete", 400)
	h := newBlockingHandler(2)
	opts := testOptions(t, f, map[string]Handler{"*": h})
	opts.BatchWindow = guard // the batch leaves when both are done
	startWorker(t, opts)
	a, b := f.addJob(api.Job{}), f.addJob(api.Job{})
	recv(t, h.started, "first handler")
	recv(t, h.started, "second handler")
	close(h.release)
	f.waitFor("both completions", func() bool { return len(f.completions(a)) == 1 && len(f.completions(b)) == 1 })
	f.mu.Lock()
	defer f.mu.Unlock()
	calls := f.callsOf("complete")
	if len(calls) != 3 || len(calls[0].results) != 2 || len(calls[1].results) != 1 || len(calls[2].results) != 1 {
		t.Errorf("complete calls: %s", f.describeLocked())
	}
}

// startHeldReports starts a worker of no-op handlers with slots slots on
// a fake server that keeps every complete call waiting until hold is
// closed.
func startHeldReports(t *testing.T, slots int) (f *fakeServer, w *Worker, hold chan struct{}) {
	f = newFakeServer(t)
	hold = make(chan struct{})
	f.mu.Lock()
	f.holdCompletes = hold
	f.mu.Unlock()
	noop := HandlerFunc(func(context.Context, Job) (json.RawMessage, error) { return nil, nil })
	opts := testOptions(t, f, map[string]Handler{"*": noop})
	opts.Slots = slots
	w, _ = startWorker(t, opts)
	return f, w, hold
}

// TestBulkReportWhileOneIsInFlight: while a completion report waits on the
// server, a backlog of bulkReport completions or more goes out in a second
// report; a smaller one waits for the first.
func TestBulkReportWhileOneIsInFlight(t *testing.T) {
	f, w, hold := startHeldReports(t, 2*bulkReport)
	first := f.addJob(api.Job{})
	f.waitFor("the first report held", func() bool { return f.completesIn == 1 })
	few := make([]string, bulkReport-1)
	for i := range few {
		few[i] = f.addJob(api.Job{})
	}
	waitUntil(t, "the small backlog queued", func() bool { return w.completes.len() == bulkReport-1 })
	f.mu.Lock()
	if f.completesIn != 1 {
		t.Errorf("%d reports in flight with a backlog of %d, want 1", f.completesIn, bulkReport-1)
	}
	f.mu.Unlock()
	for range bulkReport {
		f.addJob(api.Job{})
	}
	f.waitFor("a second report in flight", func() bool { return f.completesIn == 2 })
	close(hold)
	f.waitFor("every completion", func() bool {
		n := 0
		for _, j := range f.jobs {
			n += len(j.completed)
		}
		return n == 2*bulkReport
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.maxCompletesIn != 2 {
		t.Errorf("at most %d reports in flight at once, want 2", f.maxCompletesIn)
	}
	if len(f.completions(first)) != 1 {
		t.Errorf("first job completed %d times", len(f.completions(first)))
	}
}

// TestReportsInFlightAreBounded: while reports wait on the server, each
// new backlog of bulkReport completions goes out in a report of its own
// until reportsInFlight are in flight; the next backlog waits for one of
// them to come back, and every completion is reported once.
func TestReportsInFlightAreBounded(t *testing.T) {
	f, w, hold := startHeldReports(t, (reportsInFlight+1)*bulkReport)
	first := f.addJob(api.Job{})
	f.waitFor("the first report held", func() bool { return f.completesIn == 1 })
	for n := 2; n <= reportsInFlight; n++ {
		for range bulkReport {
			f.addJob(api.Job{})
		}
		f.waitFor(fmt.Sprintf("report %d in flight", n), func() bool { return f.completesIn == n })
	}
	for range bulkReport {
		f.addJob(api.Job{})
	}
	waitUntil(t, "the last backlog queued", func() bool { return w.completes.len() == bulkReport })
	f.mu.Lock()
	if f.completesIn != reportsInFlight {
		t.Errorf("%d reports in flight with %d held and a backlog of %d, want %d", f.completesIn, reportsInFlight, bulkReport, reportsInFlight)
	}
	f.mu.Unlock()
	close(hold)
	total := 1 + reportsInFlight*bulkReport
	f.waitFor("every completion", func() bool {
		n := 0
		for _, j := range f.jobs {
			n += len(j.completed)
		}
		return n == total
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.maxCompletesIn != reportsInFlight {
		t.Errorf("at most %d reports in flight at once, want %d", f.maxCompletesIn, reportsInFlight)
	}
	for id, j := range f.jobs {
		if len(j.completed) != 1 {
			t.Errorf("job %s completed %d times", id, len(j.completed))
		}
	}
	if len(f.completions(first)) != 1 {
		t.Errorf("first job completed %d times", len(f.completions(first)))
	}
}

// waitUntil polls cond (guarded by the test's bound) for state the fake
// server does not see.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
