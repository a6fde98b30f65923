package client_test

// Tests against the real job server (internal/server on SQLite), through
// the client.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/server/servertest"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

// startServer runs a real server on a fresh SQLite file and returns a
// client for it.
func startServer(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(servertest.Start(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// bounded is a context that ends the test instead of hanging it.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// worker is a test worker speaking the protocol through the client.
type worker struct {
	t  *testing.T
	c  *client.Client
	id string
}

func register(ctx context.Context, t *testing.T, c *client.Client) *worker {
	t.Helper()
	reg, err := c.Register(ctx, api.RegisterRequest{Name: "test-host", Slots: 2, CPU: 4, MemoryMB: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if reg.WorkerID == "" || reg.LeaseTTLMS <= 0 || reg.HeartbeatIntervalMS <= 0 {
		t.Fatalf("register answer %+v", reg)
	}
	return &worker{t: t, c: c, id: reg.WorkerID}
}

// lease long-polls for one job.
func (w *worker) lease(ctx context.Context) api.Lease {
	w.t.Helper()
	leases, err := w.c.Lease(ctx, w.id, 1, 20*time.Second)
	if err != nil || len(leases) != 1 {
		w.t.Fatalf("lease: %v, %d leases", err, len(leases))
	}
	return leases[0]
}

// run starts the leased attempt, writes output and reports outcome.
func (w *worker) run(ctx context.Context, l api.Lease, outcome string, out ...api.LogChunk) error {
	now := time.Now().UTC()
	res, err := w.c.Start(ctx, w.id, []api.JobAttempt{{JobID: l.Job.ID, Attempt: l.Attempt, StartedAt: &now}})
	if err != nil {
		return err
	}
	if err := client.ResultError(res[0]); err != nil {
		return err
	}
	for i := range out {
		out[i].JobID, out[i].Attempt, out[i].At = l.Job.ID, l.Attempt, now
	}
	if n, err := w.c.AppendLogs(ctx, w.id, out); err != nil || n != len(out) {
		return errors.Join(err, errors.New("not every chunk accepted"))
	}
	hb, err := w.c.Heartbeat(ctx, w.id, []api.JobAttempt{{JobID: l.Job.ID, Attempt: l.Attempt}})
	if err != nil || len(hb.Cancel)+len(hb.Revoked) != 0 {
		return errors.Join(err, errors.New("heartbeat: job taken away"))
	}
	exit := 0
	if outcome != api.OutcomeSucceeded {
		exit = 1
	}
	done := time.Now().UTC()
	res, err = w.c.Complete(ctx, w.id, []api.Completion{{JobID: l.Job.ID, Attempt: l.Attempt, Outcome: outcome,
		ExitCode: &exit, FailureClass: failureClass(outcome), StartedAt: &now, FinishedAt: &done}})
	if err != nil {
		return err
	}
	return client.ResultError(res[0])
}

func failureClass(outcome string) string {
	if outcome == api.OutcomeSucceeded {
		return ""
	}
	return api.FailExitCode
}

func out(seq int64, stream, data string) api.LogChunk {
	return api.LogChunk{Seq: seq, Stream: stream, Data: data}
}

// A job's whole life through the client: submit, follow its logs and wait
// for it while a worker leases, runs and completes it.
func TestServerJobLifecycle(t *testing.T) {
	ctx := bounded(t)
	c := startServer(t)
	res, err := c.Submit(ctx, api.JobSpec{Type: "report", Command: []string{"./report.sh"}})
	if err != nil || res.Job.ID == "" || res.Deduplicated {
		t.Fatalf("submit: %+v, %v", res, err)
	}
	id := res.Job.ID

	var wg sync.WaitGroup
	var chunks []api.LogChunk
	var end api.LogEnd
	var followErr error
	wg.Go(func() {
		end, followErr = c.FollowLogs(ctx, id, client.LogOptions{}, func(ch api.LogChunk) error {
			chunks = append(chunks, ch)
			return nil
		})
	})
	var waited api.Job
	var waitErr error
	wg.Go(func() { waited, waitErr = c.Wait(ctx, id) })

	w := register(ctx, t, c)
	l := w.lease(ctx)
	if l.Job.ID != id || l.Attempt != 1 {
		t.Fatalf("lease %+v", l)
	}
	if err := w.run(ctx, l, api.OutcomeSucceeded, out(1, "stdout", "hello\n"), out(2, "stderr", "warn\n")); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	if followErr != nil || end.State != api.StateSucceeded || len(chunks) != 2 || chunks[0].Data != "hello\n" || chunks[1].Stream != "stderr" {
		t.Errorf("follow: end %+v, err %v, chunks %+v", end, followErr, chunks)
	}
	if waitErr != nil || waited.State != api.StateSucceeded {
		t.Errorf("wait: %+v, %v", waited, waitErr)
	}
	var all []api.LogChunk
	if err := c.LogsAll(ctx, id, client.LogOptions{}, func(ch api.LogChunk) error { all = append(all, ch); return nil }); err != nil || len(all) != 2 {
		t.Errorf("LogsAll: %v, %d chunks", err, len(all))
	}
	got, err := c.Get(ctx, id)
	if err != nil || got.Job.State != api.StateSucceeded || got.Execution == nil || got.Execution.Outcome != api.OutcomeSucceeded {
		t.Errorf("get: %+v, %v", got, err)
	}
	execs, err := c.Executions(ctx, id)
	if err != nil || len(execs) != 1 {
		t.Errorf("executions: %+v, %v", execs, err)
	}
	events, err := c.Events(ctx, id)
	if err != nil || len(events) < 3 {
		t.Errorf("events: %+v, %v", events, err)
	}
	if err := c.Deregister(ctx, w.id); err != nil {
		t.Error(err)
	}
}

// A stale attempt is refused per item, and IsStaleAttempt says so.
func TestServerStaleAttempt(t *testing.T) {
	ctx := bounded(t)
	c := startServer(t)
	res, err := c.Submit(ctx, api.JobSpec{Type: "report"})
	if err != nil {
		t.Fatal(err)
	}
	w := register(ctx, t, c)
	l := w.lease(ctx)
	l.Attempt++
	if err := w.run(ctx, l, api.OutcomeSucceeded); !client.IsStaleAttempt(err) {
		t.Errorf("attempt %d of %s: %v, want stale_attempt", l.Attempt, res.Job.ID, err)
	}
}

func TestServerQueries(t *testing.T) {
	ctx := bounded(t)
	c := startServer(t)
	batch, err := c.SubmitBatch(ctx, []api.JobSpec{{Type: "a"}, {Type: "b"}, {Type: "a", Lane: "default"}})
	if err != nil || len(batch.Jobs) != 3 {
		t.Fatalf("batch: %+v, %v", batch, err)
	}
	var seen []string
	err = c.ListAll(ctx, client.ListOptions{Limit: 2, States: []string{api.StatePending}}, func(j api.Job) error {
		seen = append(seen, j.ID)
		return nil
	})
	if err != nil || len(seen) != 3 {
		t.Errorf("ListAll: %v, %v", seen, err)
	}
	page, err := c.List(ctx, client.ListOptions{Type: "b"})
	if err != nil || len(page.Jobs) != 1 || page.NextCursor != "" {
		t.Errorf("List type b: %+v, %v", page, err)
	}
	id := batch.Jobs[0].Job.ID
	x, err := c.Explain(ctx, id)
	if err != nil || x.JobID != id || x.Code == "" || x.Message == "" {
		t.Errorf("explain: %+v, %v", x, err)
	}
	r, err := c.Reprioritize(ctx, id, 900)
	if err != nil || r.Result != api.ResultReprioritized || r.Job.Priority != 900 {
		t.Errorf("reprioritize: %+v, %v", r, err)
	}
	if _, err := c.ExtendSLA(ctx, id, time.Minute); err != nil {
		t.Errorf("extend SLA: %v", err)
	}
	r, err = c.Cancel(ctx, id)
	if err != nil || r.Result != api.ResultCancelled || r.Job.State != api.StateCancelled {
		t.Errorf("cancel: %+v, %v", r, err)
	}
	if r, err = c.Cancel(ctx, id); err != nil || r.Result != api.ResultAlreadyFinished {
		t.Errorf("second cancel: %+v, %v", r, err)
	}
	if _, err := c.Get(ctx, "01NOSUCHJOB"); !client.IsNotFound(err) {
		t.Errorf("get unknown: %v", err)
	}
	if _, err := c.Wait(ctx, "01NOSUCHJOB"); !client.IsNotFound(err) {
		t.Errorf("wait unknown: %v", err)
	}
	if _, err := c.Reprioritize(ctx, batch.Jobs[1].Job.ID, 1200); err == nil || client.IsRetryable(err) {
		t.Errorf("priority 1200: %v", err)
	} else if e, _ := client.APIError(err); e.Status != 400 || e.Field != "priority" {
		t.Errorf("priority 1200: %+v", e)
	}
}

func TestServerViews(t *testing.T) {
	ctx := bounded(t)
	c := startServer(t)
	if err := c.Health(ctx); err != nil {
		t.Errorf("health: %v", err)
	}
	if err := c.Ready(ctx); err != nil {
		t.Errorf("ready: %v", err)
	}
	w := register(ctx, t, c)
	workers, err := c.Workers(ctx)
	if err != nil || len(workers) != 1 || workers[0].ID != w.id || workers[0].Slots != 2 {
		t.Errorf("workers: %+v, %v", workers, err)
	}
	lanes, err := c.Lanes(ctx)
	if err != nil || len(lanes.Lanes) == 0 || lanes.Capacity.Slots != 2 {
		t.Errorf("lanes: %+v, %v", lanes, err)
	}
	for name, call := range map[string]func() error{
		"failures": func() error {
			_, err := c.Failures(ctx, client.SummaryOptions{Since: time.Now().Add(-time.Hour)})
			return err
		},
		"successes": func() error { _, err := c.Successes(ctx, client.SummaryOptions{Type: "report"}); return err },
		"sla":       func() error { _, err := c.SLACompliance(ctx, client.SummaryOptions{}); return err },
	} {
		if err := call(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// SubmitWait holds the request until a worker has run the job.
func TestServerSubmitWait(t *testing.T) {
	ctx := bounded(t)
	c := startServer(t)
	w := register(ctx, t, c)
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() {
		l := w.lease(ctx)
		if !l.Job.OnDemand {
			runErr = errors.New("wait=true did not make the job on-demand")
		}
		runErr = errors.Join(runErr, w.run(ctx, l, api.OutcomeFailed, out(1, "stderr", "boom\n")))
	})
	job, err := c.SubmitWait(ctx, api.JobSpec{Type: "report", MaxAttempts: 1}, 20*time.Second)
	wg.Wait()
	if runErr != nil {
		t.Fatal(runErr)
	}
	if err != nil || job.State != api.StateFailed {
		t.Errorf("SubmitWait: %+v, %v", job, err)
	}
}

// Many goroutines share one client against the real server.
func TestServerConcurrentSubmits(t *testing.T) {
	ctx := bounded(t)
	c := startServer(t)
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := c.Submit(ctx, api.JobSpec{Type: "noop", Key: strings.Repeat("k", i%7+1)})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	page, err := c.List(ctx, client.ListOptions{Limit: 1000})
	if err != nil || len(page.Jobs) != n {
		t.Errorf("%d jobs listed, %v", len(page.Jobs), err)
	}
}
