package server

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
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
	var id string
	var regErr error
	if err := s.d.submit(r.Context(), func(tx *txn) {
		id, regErr = s.d.register(tx, req)
		tx.fatal(regErr)
	}); err != nil {
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

// workerCall runs fn on the dispatcher for a known worker, counting the
// call as a sign of life.
func (s *Server) workerCall(ctx context.Context, p principal, id string, fn func(tx *txn, wk *workerRec)) error {
	if !p.mayWork() {
		return errf(http.StatusForbidden, api.CodePermissionDenied, "only worker or admin keys may use the worker protocol")
	}
	known := true
	err := s.d.submit(ctx, func(tx *txn) {
		wk := s.d.workers[id]
		if wk == nil {
			known = false
			return
		}
		wk.lastSeen = tx.now
		fn(tx, wk)
	})
	if err != nil {
		return err
	}
	if !known {
		return notFound("worker", id+" (register again)")
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
	id := r.PathValue("id")
	poll := &poller{max: req.Max, ch: make(chan []api.Lease, 1)}
	if err := s.workerCall(r.Context(), p, id, func(tx *txn, wk *workerRec) { s.d.openPoll(wk, poll) }); err != nil {
		return err
	}
	leases := s.awaitLeases(r.Context(), id, poll, wait)
	if leases == nil {
		leases = []api.Lease{}
	}
	writeJSON(w, http.StatusOK, api.LeaseResponse{Leases: leases})
	return nil
}

// awaitLeases waits for the poll to be answered; past the wait (or when
// the client goes away) it withdraws the poll and takes whatever answer
// the dispatcher gives — leases handed over meanwhile are never lost.
func (s *Server) awaitLeases(ctx context.Context, workerID string, poll *poller, wait time.Duration) []api.Lease {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case ls := <-poll.ch:
		return ls
	case <-t.C:
	case <-ctx.Done():
	case <-s.done:
		return nil
	}
	err := s.d.submit(context.Background(), func(tx *txn) { s.d.withdrawPoll(s.d.workers[workerID], poll) })
	if err != nil {
		return nil
	}
	select {
	case ls := <-poll.ch:
		return ls
	default:
		return nil // the worker was removed meanwhile; its poll was closed
	}
}

func (s *Server) handleStart(w http.ResponseWriter, r *http.Request, p principal) error {
	var req api.StartRequest
	if err := decode(w, r, maxBatchBody, &req); err != nil {
		return err
	}
	if err := checkItems(len(req.Jobs), "jobs"); err != nil {
		return err
	}
	out := api.ItemResults{Results: make([]api.ItemResult, len(req.Jobs))}
	err := s.workerCall(r.Context(), p, r.PathValue("id"), func(tx *txn, wk *workerRec) {
		for i, a := range req.Jobs {
			out.Results[i] = s.d.startAttempt(tx, wk, a)
		}
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
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
	out, err := s.heartbeatWaiting(r.Context(), p, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// heartbeatWaiting applies a heartbeat and, when it asks to wait and the
// answer holds no news, holds the answer until news is committed for the
// worker (its nudge), the wait (at most a heartbeat interval, so that
// liveness is unchanged) passes, or the client goes. On a nudge the
// heartbeat is applied again, so the answer reflects the news.
func (s *Server) heartbeatWaiting(ctx context.Context, p principal, id string, req api.HeartbeatRequest) (api.HeartbeatResponse, error) {
	var out api.HeartbeatResponse
	var news bool
	var nudge chan struct{}
	again := false
	beat := func() error {
		return s.workerCall(ctx, p, id, func(tx *txn, wk *workerRec) {
			nudge = wk.nudge
			drain(nudge)
			held := req.Jobs
			if again {
				// The list is as old as the request: the worker also
				// holds what it was leased since.
				held = withCurrent(held, wk)
			}
			out = s.d.heartbeat(tx, wk, held)
			news = wk.news(out)
		})
	}
	if err := beat(); err != nil || news || req.WaitMS == 0 {
		return out, err
	}
	timer := time.NewTimer(min(time.Duration(req.WaitMS)*time.Millisecond, s.cfg.Server.HeartbeatInterval.D()))
	defer timer.Stop()
	for {
		select {
		case <-nudge:
			again = true
			if err := beat(); err != nil || news {
				return out, err
			}
		case <-timer.C:
			return out, nil
		case <-ctx.Done():
			return out, nil
		}
	}
}

// withCurrent adds to held the attempts wk holds by the server's records.
func withCurrent(held []api.JobAttempt, wk *workerRec) []api.JobAttempt {
	out := slices.Clone(held)
	listed := make(map[api.JobAttempt]bool, len(held))
	for _, a := range held {
		listed[api.JobAttempt{JobID: a.JobID, Attempt: a.Attempt}] = true
	}
	for _, rec := range sortedRecs(wk.jobs) {
		a := api.JobAttempt{JobID: rec.job.ID, Attempt: rec.job.Attempt}
		if !listed[a] {
			out = append(out, a)
		}
	}
	return out
}

// drain empties a nudge channel.
func drain(ch chan struct{}) {
	select {
	case <-ch:
	default:
	}
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
	out := api.ItemResults{Results: make([]api.ItemResult, len(req.Results))}
	var owed *poller
	err := s.workerCall(r.Context(), p, r.PathValue("id"), func(tx *txn, wk *workerRec) {
		for i, c := range req.Results {
			out.Results[i] = s.d.complete(tx, wk, c)
		}
		if req.LeaseMax > 0 {
			// Once the batch is durable, before long-polls are served: the
			// leases made in it (into the slots these results freed) go
			// back with this answer.
			owed = &poller{max: req.LeaseMax, ch: make(chan []api.Lease, 1)}
			tx.then(func() { s.d.oweLeases(wk, owed) })
		}
	})
	if err != nil {
		return err
	}
	if owed != nil {
		select {
		case out.Leases = <-owed.ch:
		case <-s.done:
		}
	}
	writeJSON(w, http.StatusOK, out)
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
	case api.OutcomeSucceeded, api.OutcomeFailed, api.OutcomeCancelled:
	default:
		return badField("outcome", "must be succeeded, failed or cancelled, got %q", c.Outcome)
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
	return nil
}

func validClass(c string) bool {
	switch store.FailureClass(c) {
	case store.FailExitCode, store.FailTimeout, store.FailKilled, store.FailOOM, store.FailLostWorker, store.FailCancelled, store.FailStartError, "signal":
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
	accepted := 0
	err := s.workerCall(r.Context(), p, r.PathValue("id"), func(tx *txn, wk *workerRec) {
		accepted = s.d.appendLogs(tx, wk, chunks)
	})
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

// appendLogs stores the chunks of jobs this worker holds or held: the
// attempt must not be newer than the job's current one.
func (d *dispatcher) appendLogs(tx *txn, wk *workerRec, chunks []store.LogChunk) int {
	keep := chunks[:0]
	for _, c := range chunks {
		rec := d.jobs[c.JobID]
		if rec != nil && c.Attempt > rec.job.Attempt {
			continue
		}
		if rec != nil && c.Attempt == rec.job.Attempt && !d.withinOutputLimit(tx, rec, len(c.Data)) {
			continue
		}
		if c.At.IsZero() {
			c.At = tx.now
		}
		keep = append(keep, c)
	}
	if len(keep) == 0 {
		return 0
	}
	if err := tx.w.LogAppend(tx.ctx, keep); err != nil {
		if isOpError(err) {
			return 0
		}
		tx.fatal(err)
	}
	return len(keep)
}

// outputSlack is what a worker may send beyond a job's output limit: the
// truncation marker and chunk boundaries.
const outputSlack = 4 << 10

// withinOutputLimit counts n more bytes of output of rec's current attempt
// and reports whether they are within its limit. The worker keeps the
// head and the tail within the limit itself; this is the backstop against
// one that does not, so that no worker can fill the disk: past the limit
// chunks are refused, with one output_truncated event per attempt.
func (d *dispatcher) withinOutputLimit(tx *txn, rec *jobRec, n int) bool {
	limit := d.outputLimit(rec) + outputSlack
	if rec.outputBytes+int64(n) > limit {
		if !rec.outputCut {
			rec.outputCut = true
			tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventOutputTruncated, "system",
				map[string]any{"limit_bytes": limit - outputSlack, "by": "server"})
		}
		return false
	}
	rec.outputBytes += int64(n)
	return true
}

func (s *Server) handleDeregister(w http.ResponseWriter, r *http.Request, p principal) error {
	var req struct{}
	if r.ContentLength != 0 {
		if err := decode(w, r, maxBody, &req); err != nil {
			return err
		}
	}
	if err := s.workerCall(r.Context(), p, r.PathValue("id"), func(tx *txn, wk *workerRec) { s.d.deregister(tx, wk) }); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}
