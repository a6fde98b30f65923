package client

import (
	"context"
	"net/http"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// The worker protocol: a worker registers once per start, then loops on
// Lease (a long poll), Start, Heartbeat, AppendLogs and Complete, all
// fenced by each job's attempt. A worker the server no longer knows gets a
// not-found error (IsNotFound) on every call and must register again.

// Register announces a worker and returns its fresh identity and the lease
// timing it must keep.
func (c *Client) Register(ctx context.Context, req api.RegisterRequest) (api.RegisterResponse, error) {
	var out api.RegisterResponse
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/workers/register", in: &req, out: &out})
	return out, wrap("register worker", err)
}

// Lease asks for up to maxJobs jobs, waiting up to wait (the server caps it at
// 60 s) for at least one. It answers as soon as one is assigned, or with
// none when wait passes. ctx must allow for wait; the request timeout
// applies on top of it.
func (c *Client) Lease(ctx context.Context, workerID string, maxJobs int, wait time.Duration) ([]api.Lease, error) {
	var out api.LeaseResponse
	in := api.LeaseRequest{Max: maxJobs, WaitMS: wait.Milliseconds()}
	_, err := c.do(ctx, call{method: http.MethodPost, path: workerPath(workerID, "lease"), in: &in, out: &out, wait: wait})
	return out.Leases, wrap("lease", err)
}

// Start reports the real start of the named attempts. The server counts a
// leased job running from its lease, so a worker need not call it: the
// worker package reports the start with its heartbeats and completions
// (started_at). It is kept for workers written against it. Each item's
// result says whether it is still current (see ResultError).
func (c *Client) Start(ctx context.Context, workerID string, jobs []api.JobAttempt) ([]api.ItemResult, error) {
	var out api.ItemResults
	in := api.StartRequest{Jobs: jobs}
	_, err := c.do(ctx, call{method: http.MethodPost, path: workerPath(workerID, "start"), in: &in, out: &out})
	return out.Results, wrap("start", err)
}

// Heartbeat names every attempt the worker holds and extends their leases.
// The answer lists attempts to kill and report cancelled (Cancel) and
// attempts no longer current, to stop without reporting (Revoked).
func (c *Client) Heartbeat(ctx context.Context, workerID string, jobs []api.JobAttempt) (api.HeartbeatResponse, error) {
	return c.HeartbeatWait(ctx, workerID, jobs, 0)
}

// HeartbeatWait is Heartbeat that lets the server hold the answer up to
// wait while it has nothing new for the worker (see api.HeartbeatRequest):
// the worker's heartbeat loop then learns of a cancel as soon as it is
// made. ctx must allow for the wait. A heartbeat lists what the worker
// holds when it is made, so it is not retried after a pause or a timeout
// (a late copy would make the leader hand back attempts leased since):
// it is tried once on each instance, and the caller sends a fresh one.
func (c *Client) HeartbeatWait(ctx context.Context, workerID string, jobs []api.JobAttempt, wait time.Duration) (api.HeartbeatResponse, error) {
	var out api.HeartbeatResponse
	in := api.HeartbeatRequest{Jobs: jobs, WaitMS: wait.Milliseconds()}
	_, err := c.do(ctx, call{method: http.MethodPost, path: workerPath(workerID, "heartbeat"), in: &in, out: &out,
		snapshot: true, wait: wait})
	return out, wrap("heartbeat", err)
}

// Complete reports finished attempts. A stale attempt is refused per item
// (see ResultError and IsStaleAttempt).
func (c *Client) Complete(ctx context.Context, workerID string, results []api.Completion) ([]api.ItemResult, error) {
	res, _, err := c.CompleteAndLease(ctx, workerID, results, 0)
	return res, err
}

// CompleteAndLease is Complete that also asks for up to leaseMax new
// leases, made in the same server batch (typically into the slots the
// results free); it does not wait for work. The leases come highest
// priority first.
func (c *Client) CompleteAndLease(ctx context.Context, workerID string, results []api.Completion, leaseMax int) ([]api.ItemResult, []api.Lease, error) {
	// The answer has an item per result and at most leaseMax leases:
	// sized once, the decoder fills these instead of growing slices
	// from 10 elements by doubling. (A server refuses a lease_max past
	// 1000, so no more is set aside.)
	out := api.ItemResults{Results: make([]api.ItemResult, 0, len(results))}
	if leaseMax > 0 {
		out.Leases = make([]api.Lease, 0, min(leaseMax, 1000))
	}
	in := api.CompleteRequest{Results: results, LeaseMax: leaseMax}
	_, err := c.do(ctx, call{method: http.MethodPost, path: workerPath(workerID, "complete"), in: &in, out: &out})
	if len(out.Leases) == 0 {
		out.Leases = nil // as decoded when the answer has none (omitempty)
	}
	return out.Results, out.Leases, wrap("complete", err)
}

// AppendLogs sends output chunks and returns how many the server accepted.
func (c *Client) AppendLogs(ctx context.Context, workerID string, chunks []api.LogChunk) (int, error) {
	var out api.LogAppendResponse
	in := api.LogAppendRequest{Chunks: chunks}
	_, err := c.do(ctx, call{method: http.MethodPost, path: workerPath(workerID, "logs"), in: &in, out: &out, idempotent: true})
	return out.Accepted, wrap("append logs", err)
}

// Deregister says the worker is leaving; the jobs it still holds are
// released for another attempt.
func (c *Client) Deregister(ctx context.Context, workerID string) error {
	_, err := c.do(ctx, call{method: http.MethodPost, path: workerPath(workerID, "deregister"), in: struct{}{}})
	return wrap("deregister", err)
}
