package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Local is the server's API for a Go program in the same process (package
// embedded): the submit and worker calls of the HTTP API, with the same
// validation, the same dispatcher operations and so the same fencing, but
// no HTTP and no JSON. It acts as an admin (the program owns the server);
// its actor in the audit trail is "embedded".
//
// Errors are *api.Error with the status and code the HTTP API would
// answer (400 invalid_argument, 404 not_found for a worker the server no
// longer knows, 503 server_unavailable once the server stops, ...), so
// that a caller written against package client (the worker) classifies
// them the same way. Item results (start, complete) are the HTTP API's.
//
// What Local returns belongs to the caller: leases are copied out of the
// dispatcher's memory, so a handler may change its job's payload or maps.
type Local struct {
	s *Server
}

// localActor is the audit trail's actor of what Local changes.
const localActor = "embedded"

// Local returns the in-process API of s. s must have been started.
func (s *Server) Local() *Local { return &Local{s: s} }

// localPrincipal is who a Local call acts as: the admin.
var localPrincipal = principal{role: roleAdmin}

// apiErr turns an error of a server operation into the *api.Error the
// HTTP API would answer with.
func (l *Local) apiErr(op string, err error) error {
	if err == nil {
		return nil
	}
	ae := l.s.classify(err)
	if ae.status >= 500 && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrClosed) {
		l.s.log.Error("embedded call failed", "op", op, "err", err)
	}
	return fmt.Errorf("%s: %w", op, &api.Error{Status: ae.status, ErrorBody: ae.body, RetryAfter: ae.retryAfter})
}

// Submit validates specs as POST /jobs/batch does (one spec: POST /jobs)
// and submits them in one transaction: all or none. It returns once the
// transaction is durable.
func (l *Local) Submit(ctx context.Context, specs []api.JobSpec) ([]api.SubmitResponse, error) {
	if len(specs) == 0 || len(specs) > maxBatch {
		return nil, l.apiErr("submit", badField("jobs", "must hold 1 to %d job specs, got %d", maxBatch, len(specs)))
	}
	jobs, err := l.s.buildJobs(localPrincipal, copySpecs(specs), len(specs) > 1)
	if err != nil {
		return nil, l.apiErr("submit", err)
	}
	res, _, err := l.s.d.Submit(ctx, jobs, false, localActor)
	if err != nil {
		return nil, l.apiErr("submit", err)
	}
	out := make([]api.SubmitResponse, len(res))
	for i, one := range res {
		if one.Err != nil {
			return nil, l.apiErr("submit", one.Err)
		}
		out[i] = one.Response
	}
	return out, nil
}

// Lanes is GET /lanes: every lane's load.
func (l *Local) Lanes(ctx context.Context) (api.LaneList, error) {
	out, err := l.s.d.Lanes(ctx, "")
	return out, l.apiErr("lanes", err)
}

// Register is POST /workers/register.
func (l *Local) Register(ctx context.Context, req api.RegisterRequest) (api.RegisterResponse, error) {
	if err := checkRegister(req); err != nil {
		return api.RegisterResponse{}, l.apiErr("register worker", err)
	}
	id, err := l.s.d.Register(ctx, req)
	if err != nil {
		return api.RegisterResponse{}, l.apiErr("register worker", err)
	}
	return api.RegisterResponse{
		WorkerID:            id,
		LeaseTTLMS:          l.s.cfg.Server.LeaseTTL.D().Milliseconds(),
		HeartbeatIntervalMS: l.s.cfg.Server.HeartbeatInterval.D().Milliseconds(),
	}, nil
}

// Lease is POST /workers/{id}/lease.
func (l *Local) Lease(ctx context.Context, workerID string, maxJobs int, wait time.Duration) ([]api.Lease, error) {
	if maxJobs < 1 || maxJobs > maxLeaseBatch {
		return nil, l.apiErr("lease", badField("max", "must be between 1 and %d, got %d", maxLeaseBatch, maxJobs))
	}
	if wait < 0 || wait > maxLeaseWait {
		return nil, l.apiErr("lease", badField("wait_ms", "must be between 0 and %d", maxLeaseWait.Milliseconds()))
	}
	leases, err := l.s.d.Lease(ctx, workerID, maxJobs, wait.Truncate(time.Millisecond))
	if err != nil {
		return nil, l.apiErr("lease", err)
	}
	return copyLeases(leases), nil
}

// Start is POST /workers/{id}/start.
func (l *Local) Start(ctx context.Context, workerID string, jobs []api.JobAttempt) ([]api.ItemResult, error) {
	if err := checkItems(len(jobs), "jobs"); err != nil {
		return nil, l.apiErr("start", err)
	}
	res, err := l.s.d.Start(ctx, workerID, jobs)
	return res, l.apiErr("start", err)
}

// HeartbeatWait is POST /workers/{id}/heartbeat with wait_ms.
func (l *Local) HeartbeatWait(ctx context.Context, workerID string, jobs []api.JobAttempt, wait time.Duration) (api.HeartbeatResponse, error) {
	if wait < 0 || wait > maxLeaseWait {
		return api.HeartbeatResponse{}, l.apiErr("heartbeat", badField("wait_ms", "must be between 0 and %d", maxLeaseWait.Milliseconds()))
	}
	out, err := l.s.d.Heartbeat(ctx, workerID, api.HeartbeatRequest{Jobs: jobs, WaitMS: wait.Milliseconds()})
	return out, l.apiErr("heartbeat", err)
}

// CompleteAndLease is POST /workers/{id}/complete: the results, fenced by
// their attempts (a stale one is refused in its item), and up to leaseMax
// new leases made in the same transaction.
func (l *Local) CompleteAndLease(ctx context.Context, workerID string, results []api.Completion, leaseMax int) ([]api.ItemResult, []api.Lease, error) {
	if err := checkItems(len(results), "results"); err != nil {
		return nil, nil, l.apiErr("complete", err)
	}
	if leaseMax < 0 || leaseMax > maxLeaseBatch {
		return nil, nil, l.apiErr("complete", badField("lease_max", "must be between 0 and %d, got %d", maxLeaseBatch, leaseMax))
	}
	for i, c := range results {
		if err := checkCompletion(c); err != nil {
			err.field = fmt.Sprintf("results[%d].%s", i, err.field)
			return nil, nil, l.apiErr("complete", err)
		}
	}
	res, leases, err := l.s.d.Complete(ctx, workerID, copyResults(results), leaseMax)
	if err != nil {
		return nil, nil, l.apiErr("complete", err)
	}
	return res, copyLeases(leases), nil
}

// AppendLogs is POST /workers/{id}/logs.
func (l *Local) AppendLogs(ctx context.Context, workerID string, chunks []api.LogChunk) (int, error) {
	if err := checkItems(len(chunks), "chunks"); err != nil {
		return 0, l.apiErr("append logs", err)
	}
	sc, ferr := storeChunks(chunks)
	if ferr != nil {
		return 0, l.apiErr("append logs", ferr)
	}
	n, err := l.s.d.AppendLogs(ctx, workerID, sc)
	return n, l.apiErr("append logs", err)
}

// Deregister is POST /workers/{id}/deregister.
func (l *Local) Deregister(ctx context.Context, workerID string) error {
	return l.apiErr("deregister", l.s.d.Deregister(ctx, workerID))
}

// copySpecs copies what of a spec the job built from it may share (its
// slices, maps and payload), so that a caller that reuses them after
// Submit cannot change the dispatcher's state: over HTTP, JSON did it.
func copySpecs(in []api.JobSpec) []api.JobSpec {
	out := slices.Clone(in)
	for i := range out {
		s := &out[i]
		s.Labels, s.Tags, s.Command = slices.Clone(s.Labels), slices.Clone(s.Tags), slices.Clone(s.Command)
		s.Env, s.Payload, s.DependsOn = maps.Clone(s.Env), slices.Clone(s.Payload), slices.Clone(s.DependsOn)
		s.Priority, s.Preemptible, s.Resources = clonePtr(s.Priority), clonePtr(s.Preemptible), clonePtr(s.Resources)
		s.Retry, s.RunAt = clonePtr(s.Retry), clonePtr(s.RunAt)
		if s.Retry != nil {
			s.Retry.RetryOn = slices.Clone(s.Retry.RetryOn)
		}
	}
	return out
}

// copyResults copies the completions' results, which the caller may reuse.
func copyResults(in []api.Completion) []api.Completion {
	out := slices.Clone(in)
	for i := range out {
		out[i].Result = slices.Clone(out[i].Result)
	}
	return out
}

// copyLeases copies what of a lease may be shared with the dispatcher's
// memory (the job's slices, maps and payload), so that a handler that
// changes them cannot change the server's state: over HTTP, JSON did it.
// The slice itself is the caller's: the dispatcher makes one for each
// answer (and keeps none), so the leases are copied in place.
func copyLeases(out []api.Lease) []api.Lease {
	for i := range out {
		j := &out[i].Job
		j.Labels, j.Tags, j.Command = slices.Clone(j.Labels), slices.Clone(j.Tags), slices.Clone(j.Command)
		j.Env = maps.Clone(j.Env)
		j.Payload, j.Result = slices.Clone(j.Payload), slices.Clone(j.Result)
		j.DependsOn = slices.Clone(j.DependsOn)
		j.Retry.RetryOn = slices.Clone(j.Retry.RetryOn)
		j.RunAt, j.EnqueuedAt, j.StartedAt = clonePtr(j.RunAt), clonePtr(j.EnqueuedAt), clonePtr(j.StartedAt)
		j.FinishedAt, j.LeaseExpiresAt, j.ScheduledFor = clonePtr(j.FinishedAt), clonePtr(j.LeaseExpiresAt), clonePtr(j.ScheduledFor)
		j.ExitCode = clonePtr(j.ExitCode)
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
