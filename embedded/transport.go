package embedded

import (
	"context"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/internal/instance"
	"github.com/fairwayhq/fairway/internal/server"
	"github.com/fairwayhq/fairway/worker"
)

// transport is the in-process worker.Transport. While this process leads
// (always, on SQLite), each call goes to the dispatcher directly, under
// the term's context: no HTTP, no JSON, the same validation and fencing
// as the HTTP API (server.Local). While it does not lead (a standby on
// PostgreSQL), the call goes through the instance's own HTTP handler,
// which forwards it to the leader over HTTP as it forwards any client's
// (package ha); with no leader known it answers 503 not_leader, which the
// worker retries with back-off until a leader is elected, here or
// elsewhere.
type transport struct {
	inst   *instance.Instance
	remote *client.Client // through inst.Handler()
}

var _ worker.Transport = (*transport)(nil)

// via runs local on the leading server, else remote.
func via[T any](ctx context.Context, t *transport, local func(*server.Local, context.Context) (T, error), remote func() (T, error)) (T, error) {
	l, callCtx, release, ok := t.inst.Leading(ctx)
	if !ok {
		return remote()
	}
	defer release()
	return local(l, callCtx)
}

func (t *transport) Register(ctx context.Context, req api.RegisterRequest) (api.RegisterResponse, error) {
	return via(ctx, t, func(l *server.Local, ctx context.Context) (api.RegisterResponse, error) { return l.Register(ctx, req) },
		func() (api.RegisterResponse, error) { return t.remote.Register(ctx, req) })
}

func (t *transport) Lease(ctx context.Context, workerID string, maxJobs int, wait time.Duration) ([]api.Lease, error) {
	return via(ctx, t, func(l *server.Local, ctx context.Context) ([]api.Lease, error) {
		return l.Lease(ctx, workerID, maxJobs, wait)
	},
		func() ([]api.Lease, error) { return t.remote.Lease(ctx, workerID, maxJobs, wait) })
}

func (t *transport) Start(ctx context.Context, workerID string, jobs []api.JobAttempt) ([]api.ItemResult, error) {
	return via(ctx, t, func(l *server.Local, ctx context.Context) ([]api.ItemResult, error) {
		return l.Start(ctx, workerID, jobs)
	},
		func() ([]api.ItemResult, error) { return t.remote.Start(ctx, workerID, jobs) })
}

func (t *transport) HeartbeatWait(ctx context.Context, workerID string, jobs []api.JobAttempt, wait time.Duration) (api.HeartbeatResponse, error) {
	return via(ctx, t, func(l *server.Local, ctx context.Context) (api.HeartbeatResponse, error) {
		return l.HeartbeatWait(ctx, workerID, jobs, wait)
	}, func() (api.HeartbeatResponse, error) { return t.remote.HeartbeatWait(ctx, workerID, jobs, wait) })
}

// completed is CompleteAndLease's two results, for via.
type completed struct {
	results []api.ItemResult
	leases  []api.Lease
}

func (t *transport) CompleteAndLease(ctx context.Context, workerID string, results []api.Completion, leaseMax int) ([]api.ItemResult, []api.Lease, error) {
	c, err := via(ctx, t, func(l *server.Local, ctx context.Context) (completed, error) {
		r, ls, err := l.CompleteAndLease(ctx, workerID, results, leaseMax)
		return completed{r, ls}, err
	}, func() (completed, error) {
		r, ls, err := t.remote.CompleteAndLease(ctx, workerID, results, leaseMax)
		return completed{r, ls}, err
	})
	return c.results, c.leases, err
}

func (t *transport) AppendLogs(ctx context.Context, workerID string, chunks []api.LogChunk) (int, error) {
	return via(ctx, t, func(l *server.Local, ctx context.Context) (int, error) { return l.AppendLogs(ctx, workerID, chunks) },
		func() (int, error) { return t.remote.AppendLogs(ctx, workerID, chunks) })
}

func (t *transport) Deregister(ctx context.Context, workerID string) error {
	_, err := via(ctx, t, func(l *server.Local, ctx context.Context) (struct{}, error) {
		return struct{}{}, l.Deregister(ctx, workerID)
	},
		func() (struct{}, error) { return struct{}{}, t.remote.Deregister(ctx, workerID) })
	return err
}
