package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/worker"
)

// openTest opens an embedded fairway on store and closes it at the end.
func openTest(t *testing.T, store string, opts Options) *Embedded {
	t.Helper()
	opts.Store = store
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fw, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fw.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if err := fw.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	return fw
}

// submitRunsInProcess submits jobs in process; a handler of this process
// runs each, and each ends succeeded with the handler's result.
func submitRunsInProcess(t *testing.T, fw *Embedded) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var ran atomic.Int64
	w, err := fw.NewWorker(worker.Options{Slots: 4, Handlers: map[string]worker.Handler{
		"double": worker.Typed(func(_ context.Context, _ worker.Job, in struct{ N int }) (any, error) {
			ran.Add(1)
			return map[string]int{"n": 2 * in.N}, nil
		}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = w.Run(ctx) }()
	var ids []string
	for n := range 20 {
		sub, err := fw.Submit(ctx, api.JobSpec{Type: "double", Payload: json.RawMessage(`{"N":` + string(rune('0'+n%10)) + `}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sub.Job.ID)
	}
	batch, err := fw.SubmitBatch(ctx, []api.JobSpec{{Type: "double", Payload: json.RawMessage(`{"N":21}`)}, {Type: "double"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range batch.Jobs {
		ids = append(ids, s.Job.ID)
	}
	for _, id := range ids {
		j, err := fw.Client().Wait(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != api.StateSucceeded || j.Attempt != 1 {
			t.Errorf("job %s: %s (attempt %d), want succeeded at attempt 1", id, j.State, j.Attempt)
		}
	}
	if got := ran.Load(); got != int64(len(ids)) {
		t.Errorf("the handler ran %d times for %d jobs", got, len(ids))
	}
	last, err := fw.Client().Get(ctx, batch.Jobs[0].Job.ID)
	if err != nil || string(last.Job.Result) != `{"n":42}` {
		t.Errorf("result %s, %v; want {\"n\":42}", last.Job.Result, err)
	}
	events, err := fw.Client().Events(ctx, ids[0])
	if err != nil || len(events) == 0 || events[0].Actor != "embedded" {
		t.Errorf("events of %s: %+v, %v; want the submit by actor embedded first", ids[0], events, err)
	}
}

func TestSubmitRunsInProcessOnSQLite(t *testing.T) {
	submitRunsInProcess(t, openTest(t, t.TempDir(), Options{}))
}

func TestSubmitRunsInProcessOnPostgres(t *testing.T) {
	submitRunsInProcess(t, openTest(t, pgtest.URL(t), Options{}))
}

// A submit the HTTP API refuses is refused in process with the same code
// and field.
func TestSubmitValidatesAsTheHTTPAPI(t *testing.T) {
	fw := openTest(t, t.TempDir(), Options{})
	_, err := fw.Submit(context.Background(), api.JobSpec{Type: "x", Priority: ptr(5000)})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Code != api.CodeInvalidArgument || ae.Field != "priority" {
		t.Fatalf("err = %v, want 400 invalid_argument on priority", err)
	}
	if _, err := fw.SubmitBatch(context.Background(), nil); !errors.As(err, &ae) || ae.Field != "jobs" {
		t.Fatalf("empty batch: err = %v, want invalid_argument on jobs", err)
	}
}

func ptr[T any](v T) *T { return &v }

// The in-process transport fences by attempt as the HTTP API does: once
// a job's lease has moved to another worker (the first deregistered, the
// job went back to the queue), the first attempt's completion is refused
// stale_attempt and changes nothing; the current attempt's is accepted.
func TestStaleAttemptIsRefusedInProcess(t *testing.T) {
	// Each store is made with the subtest's t: pgtest.URL skips the
	// subtest it is given, and a skip of the parent from a subtest fails.
	for name, store := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return t.TempDir() },
		"postgres": func(t *testing.T) string { return pgtest.URL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			fw := openTest(t, store(t), Options{})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tr := fw.Transport()
			reg := api.RegisterRequest{Name: "first", Slots: 1, Types: []string{"fenced"}}
			first, err := tr.Register(ctx, reg)
			if err != nil {
				t.Fatal(err)
			}
			sub, err := fw.Submit(ctx, api.JobSpec{Type: "fenced", MaxAttempts: 3})
			if err != nil {
				t.Fatal(err)
			}
			leases, err := tr.Lease(ctx, first.WorkerID, 1, 5*time.Second)
			if err != nil || len(leases) != 1 || leases[0].Attempt != 1 {
				t.Fatalf("first lease: %+v, %v", leases, err)
			}
			if err := tr.Deregister(ctx, first.WorkerID); err != nil {
				t.Fatal(err)
			}
			reg.Name = "second"
			second, err := tr.Register(ctx, reg)
			if err != nil {
				t.Fatal(err)
			}
			leases, err = tr.Lease(ctx, second.WorkerID, 1, 5*time.Second)
			if err != nil || len(leases) != 1 || leases[0].Job.ID != sub.Job.ID || leases[0].Attempt < 2 {
				t.Fatalf("second lease: %+v, %v", leases, err)
			}
			current := leases[0].Attempt
			stale := api.Completion{JobID: sub.Job.ID, Attempt: 1, Outcome: api.OutcomeFailed, Error: "stale"}
			res, _, err := tr.CompleteAndLease(ctx, second.WorkerID, []api.Completion{stale}, 0)
			if err != nil || len(res) != 1 || !client.IsStaleAttempt(client.ResultError(res[0])) {
				t.Fatalf("stale completion: %+v, %v; want refused stale_attempt", res, err)
			}
			_, _, err = tr.CompleteAndLease(ctx, first.WorkerID, []api.Completion{stale}, 0)
			if !client.IsNotFound(err) {
				t.Fatalf("completion by the deregistered worker: %v, want not_found", err)
			}
			ok := api.Completion{JobID: sub.Job.ID, Attempt: current, Outcome: api.OutcomeSucceeded}
			res, _, err = tr.CompleteAndLease(ctx, second.WorkerID, []api.Completion{ok}, 0)
			if err != nil || len(res) != 1 || !res[0].OK {
				t.Fatalf("current completion: %+v, %v", res, err)
			}
			j, err := fw.Client().Get(ctx, sub.Job.ID)
			if err != nil || j.Job.State != api.StateSucceeded || j.Job.Attempt != current || j.Job.LastError != "" {
				t.Fatalf("job: %+v, %v; want succeeded at attempt %d", j.Job, err, current)
			}
		})
	}
}

// What a submitter does to its spec after Submit, and a handler to its
// lease (payload, env), does not reach the dispatcher's memory: the
// leases of the job are as submitted.
func TestLeaseIsTheCallersCopy(t *testing.T) {
	fw := openTest(t, t.TempDir(), Options{})
	ctx := context.Background()
	tr := fw.Transport()
	reg, err := tr.Register(ctx, api.RegisterRequest{Name: "w", Slots: 1, Types: []string{"copy"}})
	if err != nil {
		t.Fatal(err)
	}
	spec := api.JobSpec{Type: "copy", MaxAttempts: 3, Payload: json.RawMessage(`{"a":1}`), Env: map[string]string{"K": "v"}}
	if _, err := fw.Submit(ctx, spec); err != nil {
		t.Fatal(err)
	}
	spec.Payload[2], spec.Env["K"] = 'Y', "reused" // the submitter reuses its buffers
	leases, err := tr.Lease(ctx, reg.WorkerID, 1, 5*time.Second)
	if err != nil || len(leases) != 1 {
		t.Fatalf("lease: %+v, %v", leases, err)
	}
	if string(leases[0].Job.Payload) != `{"a":1}` || leases[0].Job.Env["K"] != "v" {
		t.Fatalf("lease carries %s %v: the submitter's later changes reached the server", leases[0].Job.Payload, leases[0].Job.Env)
	}
	leases[0].Job.Payload[2] = 'X'
	leases[0].Job.Env["K"] = "changed"
	if err := tr.Deregister(ctx, reg.WorkerID); err != nil {
		t.Fatal(err)
	}
	reg, err = tr.Register(ctx, api.RegisterRequest{Name: "w2", Slots: 1, Types: []string{"copy"}})
	if err != nil {
		t.Fatal(err)
	}
	again, err := tr.Lease(ctx, reg.WorkerID, 1, 5*time.Second)
	if err != nil || len(again) != 1 {
		t.Fatalf("lease again: %+v, %v", again, err)
	}
	if string(again[0].Job.Payload) != `{"a":1}` || again[0].Job.Env["K"] != "v" {
		t.Fatalf("second lease carries %s %v: the handler's changes reached the server", again[0].Job.Payload, again[0].Job.Env)
	}
}

// With API keys configured, Open wants one for what goes through the
// HTTP API, and Client presents it; the in-process calls need none.
func TestAPIKeysConfigured(t *testing.T) {
	cfg := []byte("admin_keys: [\"k-admin-0123456789abcdef\"]\nserver:\n  allow_unknown_types: true\n")
	if _, err := Open(context.Background(), Options{Store: t.TempDir(), Config: cfg}); err == nil {
		t.Fatal("Open with API keys configured and no Options.APIKey succeeded")
	}
	fw := openTest(t, t.TempDir(), Options{Config: cfg, APIKey: "k-admin-0123456789abcdef"})
	sub, err := fw.Submit(context.Background(), api.JobSpec{Type: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Client().Get(context.Background(), sub.Job.ID); err != nil {
		t.Fatalf("Client with the admin key: %v", err)
	}
}

// With HTTPAddr, programs outside the process join over HTTP: a job a
// remote client submits runs on the in-process worker, and the web UI is
// served.
func TestHTTPAddrServesTheAPIAndUI(t *testing.T) {
	fw := openTest(t, t.TempDir(), Options{HTTPAddr: "127.0.0.1:0"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := fw.NewWorker(worker.Options{Slots: 1, Handlers: map[string]worker.Handler{
		"remote": worker.HandlerFunc(func(context.Context, worker.Job) (json.RawMessage, error) { return json.RawMessage(`"ran here"`), nil }),
	}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = w.Run(ctx) }()
	c, err := client.New("http://" + fw.Addr())
	if err != nil {
		t.Fatal(err)
	}
	sub, err := c.Submit(ctx, api.JobSpec{Type: "remote"})
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.Wait(ctx, sub.Job.ID)
	if err != nil || j.State != api.StateSucceeded || string(j.Result) != `"ran here"` {
		t.Fatalf("job over HTTP: %s %s, %v", j.State, j.Result, err)
	}
	resp, err := http.Get("http://" + fw.Addr() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s, want the web UI", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
