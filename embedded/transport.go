package embedded

import (
	"context"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/internal/instance"
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

// Each call below goes to the leading server under the term's context
// (callCtx) while this process leads, else through remote.

func (t *transport) Register(ctx context.Context, req api.RegisterRequest) (api.RegisterResponse, error) {
	if l, callCtx, release, ok := t.inst.Leading(ctx); ok {
		defer release()
		return l.Register(callCtx, req)
	}
	return t.remote.Register(ctx, req)
}

func (t *transport) Lease(ctx context.Context, workerID string, maxJobs int, wait time.Duration) ([]api.Lease, error) {
	if l, callCtx, release, ok := t.inst.Leading(ctx); ok {
		defer release()
		return l.Lease(callCtx, workerID, maxJobs, wait)
	}
	return t.remote.Lease(ctx, workerID, maxJobs, wait)
}

func (t *transport) Start(ctx context.Context, workerID string, jobs []api.JobAttempt) ([]api.ItemResult, error) {
	if l, callCtx, release, ok := t.inst.Leading(ctx); ok {
		defer release()
		return l.Start(callCtx, workerID, jobs)
	}
	return t.remote.Start(ctx, workerID, jobs)
}

func (t *transport) HeartbeatWait(ctx context.Context, workerID string, jobs []api.JobAttempt, wait time.Duration) (api.HeartbeatResponse, error) {
	if l, callCtx, release, ok := t.inst.Leading(ctx); ok {
		defer release()
		return l.HeartbeatWait(callCtx, workerID, jobs, wait)
	}
	return t.remote.HeartbeatWait(ctx, workerID, jobs, wait)
}

func (t *transport) CompleteAndLease(ctx context.Context, workerID string, results []api.Completion, leaseMax int) ([]api.ItemResult, []api.Lease, error) {
	if l, callCtx, release, ok := t.inst.Leading(ctx); ok {
		defer release()
		return l.CompleteAndLease(callCtx, workerID, results, leaseMax)
	}
	return t.remote.CompleteAndLease(ctx, workerID, results, leaseMax)
}

func (t *transport) AppendLogs(ctx context.Context, workerID string, chunks []api.LogChunk) (int, error) {
	if l, callCtx, release, ok := t.inst.Leading(ctx); ok {
		defer release()
		return l.AppendLogs(callCtx, workerID, chunks)
	}
	return t.remote.AppendLogs(ctx, workerID, chunks)
}

func (t *transport) Deregister(ctx context.Context, workerID string) error {
	if l, callCtx, release, ok := t.inst.Leading(ctx); ok {
		defer release()
		return l.Deregister(callCtx, workerID)
	}
	return t.remote.Deregister(ctx, workerID)
}
