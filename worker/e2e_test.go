package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/server/servertest"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/worker"
)

// guard bounds the waits of the end-to-end tests.
const e2eGuard = 20 * time.Second

// realServer runs the real server on SQLite in t.TempDir() behind a
// loopback HTTP server and returns a client of it.
func realServer(t testing.TB) *client.Client {
	t.Helper()
	cfg := config.Default()
	cfg.Server.LeaseTTL = config.Duration(5 * time.Second)
	cfg.Server.HeartbeatInterval = config.Duration(50 * time.Millisecond)
	url := servertest.Start(t, &cfg)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(hc.CloseIdleConnections)
	c, err := client.New(url, client.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runWorker runs a worker until the test ends.
func runWorker(t testing.TB, opts worker.Options) *worker.Worker {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	w, err := worker.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), e2eGuard)
		defer cancel()
		if err := w.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return w
}

func submit(t testing.TB, c *client.Client, spec api.JobSpec) string {
	t.Helper()
	resp, err := c.Submit(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Job.ID
}

func wait(t testing.TB, c *client.Client, id string) api.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eGuard)
	defer cancel()
	j, err := c.Wait(ctx, id)
	if err != nil {
		t.Fatalf("wait for %s: %v", id, err)
	}
	return j
}

type sum struct{ A, B int }

func TestEndToEnd(t *testing.T) {
	c := realServer(t)
	release := make(chan struct{})
	runWorker(t, worker.Options{
		Client: c, Name: "e2e", Slots: 4,
		Handlers: map[string]worker.Handler{
			"*": worker.CommandHandler(worker.CommandOptions{}),
			"add": worker.Typed(func(ctx context.Context, job worker.Job, in sum) (any, error) {
				return map[string]int{"sum": in.A + in.B}, nil
			}),
			"long": worker.HandlerFunc(func(ctx context.Context, job worker.Job) (json.RawMessage, error) {
				<-release
				return nil, nil
			}),
		},
	})

	t.Run("command", func(t *testing.T) {
		id := submit(t, c, api.JobSpec{Type: "sh", Command: []string{"/bin/sh", "-c", "echo hello; echo bad >&2"}})
		if j := wait(t, c, id); j.State != api.StateSucceeded || j.ExitCode == nil || *j.ExitCode != 0 {
			t.Fatalf("job = %+v, want succeeded with exit code 0", j)
		}
		var out strings.Builder
		err := c.LogsAll(context.Background(), id, client.LogOptions{}, func(ch api.LogChunk) error {
			out.WriteString(ch.Stream + ":" + ch.Data)
			return nil
		})
		if err != nil || !strings.Contains(out.String(), "stdout:hello\n") || !strings.Contains(out.String(), "stderr:bad\n") {
			t.Errorf("logs = %q, %v", out.String(), err)
		}
	})
	t.Run("failure", func(t *testing.T) {
		id := submit(t, c, api.JobSpec{Type: "sh", Command: []string{"/bin/sh", "-c", "exit 7"}, MaxAttempts: 1})
		if j := wait(t, c, id); j.State != api.StateFailed || j.FailureClass != api.FailExitCode || j.ExitCode == nil || *j.ExitCode != 7 {
			t.Fatalf("job = %+v, want failed exit_code 7", j)
		}
	})
	t.Run("typed", func(t *testing.T) {
		id := submit(t, c, api.JobSpec{Type: "add", Payload: json.RawMessage(`{"A":20,"B":22}`)})
		if j := wait(t, c, id); j.State != api.StateSucceeded || string(j.Result) != `{"sum":42}` {
			t.Fatalf("job = %+v, want result {\"sum\":42}", j)
		}
	})
	// The start is folded into the lease: a job running longer than a
	// heartbeat has its real start on the server before it ends, reported
	// once, by the worker, within [leased_at, finished_at].
	t.Run("start reported by heartbeat", func(t *testing.T) {
		id := submit(t, c, api.JobSpec{Type: "long"})
		ctx, cancel := context.WithTimeout(context.Background(), e2eGuard)
		defer cancel()
		var started []api.Event
		for len(started) == 0 {
			if ctx.Err() != nil {
				t.Fatal("no started event while the job runs")
			}
			evs, err := c.Events(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			started = eventsOf(evs, "started")
			time.Sleep(20 * time.Millisecond)
		}
		close(release)
		if j := wait(t, c, id); j.State != api.StateSucceeded {
			t.Fatalf("job = %+v", j)
		}
		execs, err := c.Executions(ctx, id)
		if err != nil || len(execs) != 1 {
			t.Fatalf("executions %+v, %v", execs, err)
		}
		e := execs[0]
		evs, err := c.Events(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		started = eventsOf(evs, "started")
		var detail struct {
			StartedAt time.Time `json:"started_at"`
		}
		if len(started) != 1 || started[0].Actor != "worker:"+e.WorkerID || json.Unmarshal(started[0].Detail, &detail) != nil ||
			e.StartedAt == nil || !detail.StartedAt.Equal(*e.StartedAt) {
			t.Fatalf("started events %+v, execution %+v: want one by the worker with the execution's start", started, e)
		}
		if e.LeasedAt == nil || e.FinishedAt == nil || e.StartedAt.Before(*e.LeasedAt) || e.StartedAt.After(*e.FinishedAt) {
			t.Fatalf("execution %+v: started_at outside [leased_at, finished_at]", e)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		id := submit(t, c, api.JobSpec{Type: "sh", Command: []string{"/bin/sh", "-c", "echo started; exec sleep 60"}})
		waitForOutput(t, c, id)
		if _, err := c.Cancel(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		if j := wait(t, c, id); j.State != api.StateCancelled {
			t.Fatalf("job = %+v, want cancelled", j)
		}
	})
}

var errSeen = errors.New("seen")

func eventsOf(evs []api.Event, typ string) []api.Event {
	var out []api.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// waitForOutput returns once the job has logged something: it is running.
func waitForOutput(t *testing.T, c *client.Client, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eGuard)
	defer cancel()
	_, err := c.FollowLogs(ctx, id, client.LogOptions{}, func(api.LogChunk) error { return errSeen })
	if !errors.Is(err, errSeen) {
		t.Fatalf("follow logs of %s: %v", id, err)
	}
}

func TestEndToEndStopDeregisters(t *testing.T) {
	c := realServer(t)
	w, err := worker.New(worker.Options{
		Client: c, Name: "leaving", Slots: 1, Logger: slog.New(slog.DiscardHandler),
		Handlers: map[string]worker.Handler{"*": worker.CommandHandler(worker.CommandOptions{})},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	id := submit(t, c, api.JobSpec{Type: "sh", Command: []string{"/bin/sh", "-c", "echo started; sleep 0.2; echo done"}})
	waitForOutput(t, c, id)
	cancel() // graceful stop: the running job finishes first
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(e2eGuard):
		t.Fatal("Run did not return")
	}
	if j := wait(t, c, id); j.State != api.StateSucceeded {
		t.Errorf("job = %+v, want succeeded (drained)", j)
	}
	workers, err := c.Workers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, wi := range workers {
		if wi.Name == "leaving" && wi.State != "gone" {
			t.Errorf("worker still %s after Run returned", wi.State)
		}
	}
}

// BenchmarkNoopJobs measures jobs per second through the real server and
// one worker with a no-op handler.
func BenchmarkNoopJobs(b *testing.B) {
	c := realServer(b)
	var ran atomic.Int64
	all := make(chan struct{})
	target := int64(b.N)
	noop := worker.HandlerFunc(func(context.Context, worker.Job) (json.RawMessage, error) {
		if ran.Add(1) == target {
			close(all)
		}
		return nil, nil
	})
	w, err := worker.New(worker.Options{
		Client: c, Slots: 256, Logger: slog.New(slog.DiscardHandler),
		Handlers: map[string]worker.Handler{"*": noop},
	})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	b.ResetTimer()
	for i := 0; i < b.N; i += 1000 {
		specs := make([]api.JobSpec, min(1000, b.N-i))
		for j := range specs {
			specs[j] = api.JobSpec{Type: "noop"}
		}
		if _, err := c.SubmitBatch(context.Background(), specs); err != nil {
			b.Fatal(err)
		}
	}
	<-all
	if err := w.Stop(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
