package worker

import (
	"context"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Transport is what the worker calls on the server: the worker protocol
// of docs/api.md. *client.Client implements it over HTTP; package
// embedded implements it in the server's own process, calling the
// dispatcher directly. Both fence every call by the job's attempt, and
// both answer errors the worker tells apart the same way: an *api.Error
// (in the error chain) with the HTTP API's status and code, or, for a
// call that got no answer at all, any other error (retried).
type Transport interface {
	Register(ctx context.Context, req api.RegisterRequest) (api.RegisterResponse, error)
	Lease(ctx context.Context, workerID string, maxJobs int, wait time.Duration) ([]api.Lease, error)
	Start(ctx context.Context, workerID string, jobs []api.JobAttempt) ([]api.ItemResult, error)
	HeartbeatWait(ctx context.Context, workerID string, jobs []api.JobAttempt, wait time.Duration) (api.HeartbeatResponse, error)
	CompleteAndLease(ctx context.Context, workerID string, results []api.Completion, leaseMax int) ([]api.ItemResult, []api.Lease, error)
	AppendLogs(ctx context.Context, workerID string, chunks []api.LogChunk) (int, error)
	Deregister(ctx context.Context, workerID string) error
}
