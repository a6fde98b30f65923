package server

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

const (
	maxLeaseWait  = 60 * time.Second
	maxLeaseBatch = 1000
	maxItems      = 10000
)

func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request, p principal) error {
	if !p.mayWork() {
		return errf(http.StatusForbidden, api.CodePermissionDenied, "only worker or admin keys may register workers")
	}
	var req api.RegisterRequest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	if err := checkRegister(req); err != nil {
		return err
	}
	id, err := s.d.Register(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, api.RegisterResponse{
		WorkerID:            id,
		LeaseTTLMS:          s.cfg.Server.LeaseTTL.D().Milliseconds(),
		HeartbeatIntervalMS: s.cfg.Server.HeartbeatInterval.D().Milliseconds(),
	})
	return nil
}

func checkRegister(req api.RegisterRequest) error {
	switch {
	case len(req.Name) > maxNameLen:
		return badField("name", "longer than %d characters", maxNameLen)
	case req.Slots < 1 || req.Slots > 100000:
		return badField("slots", "must be between 1 and 100000, got %d", req.Slots)
	case req.CPU < 0 || math.IsNaN(req.CPU) || math.IsInf(req.CPU, 0) || req.CPU > 1e6:
		return badField("cpu", "must be a number of cores between 0 and 1e6")
	case req.MemoryMB < 0:
		return badField("memory_mb", "must be >= 0")
	case req.GPU < 0:
		return badField("gpu", "must be >= 0")
	case len(req.Types) > 1000:
		return badField("types", "more than 1000 types")
	case len(req.Handlers) > 1000:
		return badField("handlers", "more than 1000 types")
	case len(req.Labels) > maxLabels:
		return badField("labels", "more than %d labels", maxLabels)
	}
	return nil
}

// mayWork refuses the worker protocol to a key that is not a worker's or
// an admin's.
func mayWork(p principal) error {
	if !p.mayWork() {
		return errf(http.StatusForbidden, api.CodePermissionDenied, "only worker or admin keys may use the worker protocol")
	}
	return nil
}

func (s *Server) handleLease(w http.ResponseWriter, r *http.Request, p principal) error {
	var req api.LeaseRequest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	if req.Max < 1 || req.Max > maxLeaseBatch {
		return badField("max", "must be between 1 and %d, got %d", maxLeaseBatch, req.Max)
	}
	wait := time.Duration(req.WaitMS) * time.Millisecond
	if req.WaitMS < 0 || wait > maxLeaseWait {
		return badField("wait_ms", "must be between 0 and %d", maxLeaseWait.Milliseconds())
	}
	if err := mayWork(p); err != nil {
		return err
	}
	leases, err := s.d.Lease(r.Context(), r.PathValue("id"), req.Max, wait)
	if err != nil {
		return err
	}
	if leases == nil {
		leases = []api.Lease{}
	}
	compactLeases(leases)
	writeWireJSON(w, http.StatusOK, api.LeaseResponse{Leases: leases})
	return nil
}

func (s *Server) handleStart(w http.ResponseWriter, r *http.Request, p principal) error {
	var req api.StartRequest
	if err := decode(w, r, maxBatchBody, &req); err != nil {
		return err
	}
	if err := checkItems(len(req.Jobs), "jobs"); err != nil {
		return err
	}
	if err := mayWork(p); err != nil {
		return err
	}
	results, err := s.d.Start(r.Context(), r.PathValue("id"), req.Jobs)
	if err != nil {
		return err
	}
	writeWireJSON(w, http.StatusOK, api.ItemResults{Results: results})
	return nil
}

func (s *Server) handleHeartbeat(w http.ResponseWriter, r *http.Request, p principal) error {
	var req api.HeartbeatRequest
	if err := decode(w, r, maxBatchBody, &req); err != nil {
		return err
	}
	if req.WaitMS < 0 || req.WaitMS > maxLeaseWait.Milliseconds() {
		return badField("wait_ms", "must be between 0 and %d, got %d", maxLeaseWait.Milliseconds(), req.WaitMS)
	}
	if err := mayWork(p); err != nil {
		return err
	}
	out, err := s.d.Heartbeat(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeWireJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleComplete(w http.ResponseWriter, r *http.Request, p principal) error {
	var req api.CompleteRequest
	if err := decode(w, r, maxBatchBody, &req); err != nil {
		return err
	}
	if err := checkItems(len(req.Results), "results"); err != nil {
		return err
	}
	if req.LeaseMax < 0 || req.LeaseMax > maxLeaseBatch {
		return badField("lease_max", "must be between 0 and %d, got %d", maxLeaseBatch, req.LeaseMax)
	}
	for i, c := range req.Results {
		if err := checkCompletion(c); err != nil {
			err.field = fmt.Sprintf("results[%d].%s", i, err.field)
			return err
		}
	}
	if err := mayWork(p); err != nil {
		return err
	}
	results, leases, err := s.d.Complete(r.Context(), r.PathValue("id"), req.Results, req.LeaseMax)
	if err != nil {
		return err
	}
	compactLeases(leases)
	writeWireJSON(w, http.StatusOK, api.ItemResults{Results: results, Leases: leases})
	return nil
}

func checkItems(n int, field string) error {
	if n > maxItems {
		return badField(field, "more than %d items", maxItems)
	}
	return nil
}

func checkCompletion(c api.Completion) *fieldError {
	switch c.Outcome {
	case api.OutcomeSucceeded, api.OutcomeFailed, api.OutcomeCancelled, api.OutcomePreempted, api.OutcomeSnoozed:
	default:
		return badField("outcome", "must be succeeded, failed, cancelled, preempted or snoozed, got %q", c.Outcome)
	}
	if c.FailureClass != "" && !validClass(c.FailureClass) {
		return badField("failure_class", "unknown failure class %q", c.FailureClass)
	}
	if len(c.Result) > maxPayload {
		return badField("result", "larger than %d bytes", maxPayload)
	}
	if len(c.Error) > 64<<10 {
		return badField("error", "longer than 64 KiB")
	}
	return checkUsage(c.Usage)
}

// maxUsageUS bounds a reported CPU time: a year of a thousand cores.
const maxUsageUS = 1000 * 366 * 24 * 3600 * 1e6

func checkUsage(u *api.Usage) *fieldError {
	switch {
	case u == nil:
		return nil
	case u.Source != "cgroup" && u.Source != "rusage":
		return badField("usage.source", `must be "cgroup" or "rusage", got %q`, u.Source)
	case u.CPUUserUS < 0 || u.CPUSystemUS < 0 || u.PeakRSSBytes < 0:
		return badField("usage", "cpu_user_us, cpu_system_us and peak_rss_bytes must not be negative")
	case u.CPUUserUS > maxUsageUS || u.CPUSystemUS > maxUsageUS:
		return badField("usage", "a CPU time of more than a year of 1000 cores")
	}
	return nil
}

func validClass(c string) bool {
	switch store.FailureClass(c) {
	case store.FailExitCode, store.FailTimeout, store.FailKilled, store.FailOOM, store.FailLostWorker, store.FailCancelled, store.FailStartError,
		store.FailPreempted, store.FailSnoozed, "signal":
		return true
	}
	return false
}

func (s *Server) handleLogAppend(w http.ResponseWriter, r *http.Request, p principal) error {
	var req api.LogAppendRequest
	if err := decode(w, r, maxBatchBody, &req); err != nil {
		return err
	}
	if err := checkItems(len(req.Chunks), "chunks"); err != nil {
		return err
	}
	chunks, ferr := storeChunks(req.Chunks)
	if ferr != nil {
		return ferr
	}
	if err := mayWork(p); err != nil {
		return err
	}
	accepted, err := s.d.AppendLogs(r.Context(), r.PathValue("id"), chunks)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.LogAppendResponse{Accepted: accepted})
	return nil
}

func storeChunks(in []api.LogChunk) ([]store.LogChunk, *fieldError) {
	out := make([]store.LogChunk, 0, len(in))
	for i, c := range in {
		if c.Stream != string(store.Stdout) && c.Stream != string(store.Stderr) {
			return nil, badField(fmt.Sprintf("chunks[%d].stream", i), "must be stdout or stderr, got %q", c.Stream)
		}
		if c.JobID == "" || c.Attempt < 1 || c.Seq < 0 {
			return nil, badField(fmt.Sprintf("chunks[%d]", i), "needs job_id, attempt >= 1 and seq >= 0")
		}
		out = append(out, store.LogChunk{JobID: c.JobID, Attempt: c.Attempt, Stream: store.Stream(c.Stream), Seq: c.Seq, At: c.At, Data: []byte(c.Data)})
	}
	return out, nil
}

func (s *Server) handleDeregister(w http.ResponseWriter, r *http.Request, p principal) error {
	var req struct{}
	if err := decodeOptional(w, r, maxBody, &req); err != nil {
		return err
	}
	if err := mayWork(p); err != nil {
		return err
	}
	if err := s.d.Deregister(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}
