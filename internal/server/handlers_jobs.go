package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/wire"
)

const (
	defaultWait = 60 * time.Second
	maxWait     = 10 * time.Minute
	maxBatch    = 1000
)

func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request, p principal) error {
	var spec api.JobSpec
	if err := decode(w, r, maxBody, &spec); err != nil {
		return err
	}
	wait, timeout, err := waitParams(r)
	if err != nil {
		return err
	}
	if wait {
		spec.OnDemand = true
	}
	jobs, err := s.buildJobs(p, []api.JobSpec{spec}, false)
	if err != nil {
		return err
	}
	if err := setSubmitToken(r, jobs); err != nil {
		return err
	}
	endSpan := s.traceSubmit(r, jobs[0].Tenant, jobs)
	res, waitCh, err := s.d.Submit(r.Context(), jobs, wait, p.name())
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		endSpan("", err)
		return err
	}
	endSpan(res[0].Response.Job.ID, nil)
	if wait {
		return s.answerWait(w, r, res[0].Response.Job, waitCh, timeout)
	}
	status := http.StatusCreated
	if res[0].Response.Deduplicated {
		status = http.StatusOK
	}
	compactJob(&res[0].Response.Job)
	writeWireJSON(w, status, res[0].Response)
	return nil
}

// setSubmitToken gives every job of the submit the request's token
// (api.SubmitTokenHeader), lowercased; a token that is not 32
// hexadecimal characters is refused.
func setSubmitToken(r *http.Request, jobs []store.Job) error {
	tok := strings.ToLower(r.Header.Get(api.SubmitTokenHeader))
	if tok == "" {
		return nil
	}
	if _, ok := store.ParseSubmitToken(tok); !ok {
		got := fmt.Sprintf("%d characters", len(tok))
		if len(tok) == 32 {
			got += " that are not all hexadecimal"
		}
		return badField(api.SubmitTokenHeader, "must be 32 hexadecimal characters (128 random bits, drawn anew for each submit), got %s", got)
	}
	for i := range jobs {
		jobs[i].SubmitToken = tok
	}
	return nil
}

func waitParams(r *http.Request) (bool, time.Duration, error) {
	q := r.URL.Query()
	wait, err := boolParam(q.Get("wait"), "wait")
	if err != nil {
		return false, 0, err
	}
	timeout := defaultWait
	if v := q.Get("timeout_ms"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || time.Duration(n)*time.Millisecond > maxWait {
			return false, 0, badField("timeout_ms", "must be between 1 and %d", maxWait.Milliseconds())
		}
		timeout = time.Duration(n) * time.Millisecond
	}
	return wait, timeout, nil
}

func (s *Server) handleBatch(w http.ResponseWriter, r *http.Request, p principal) error {
	var req api.BatchRequest
	if err := decode(w, r, maxBatchBody, &req); err != nil {
		return err
	}
	if len(req.Jobs) == 0 || len(req.Jobs) > maxBatch {
		return badField("jobs", "must hold 1 to %d job specs, got %d", maxBatch, len(req.Jobs))
	}
	jobs, err := s.buildJobs(p, req.Jobs, true)
	if err != nil {
		return err
	}
	if err := setSubmitToken(r, jobs); err != nil {
		return err
	}
	endSpan := s.traceSubmit(r, jobs[0].Tenant, jobs)
	res, _, err := s.d.Submit(r.Context(), jobs, false, p.name())
	endSpan("", err)
	if err != nil {
		return err
	}
	out := api.BatchResponse{Jobs: make([]api.SubmitResponse, len(res))}
	for i, one := range res {
		if one.Err != nil {
			return one.Err
		}
		out.Jobs[i] = one.Response
		compactJob(&out.Jobs[i].Job)
	}
	writeWireJSON(w, http.StatusCreated, out)
	return nil
}

// buildJobs validates specs and applies the submit rate limit.
func (s *Server) buildJobs(p principal, specs []api.JobSpec, batch bool) ([]store.Job, error) {
	jobs := make([]store.Job, len(specs))
	for i, spec := range specs {
		tenant, aerr := p.tenantFor(spec.Tenant)
		if aerr != nil {
			return nil, aerr
		}
		j, ferr := s.buildJob(spec, tenant)
		if ferr != nil {
			if batch {
				ferr.field = fmt.Sprintf("jobs[%d].%s", i, ferr.field)
			}
			return nil, ferr
		}
		jobs[i] = j
	}
	counts := tenantCounts(jobs)
	for tenant, n := range counts {
		if burst, ok := s.limits.burstOf(tenant); ok && n > burst {
			ae := errf(http.StatusRequestEntityTooLarge, api.CodeBatchTooLarge,
				"%d jobs of tenant %s in one request can never pass its submit_burst of %d: split the batch into requests of at most %d jobs",
				n, tenant, burst, burst)
			ae.body.Field = "jobs"
			return nil, ae
		}
	}
	for tenant, n := range counts {
		if ok, wait := s.limits.allow(tenant, n, s.clock.Now()); !ok {
			ae := errf(http.StatusTooManyRequests, api.CodeRateLimited, "tenant %s is over its submit rate; retry in %ds", tenant, wait)
			ae.retryAfter = max(1, wait)
			return nil, ae
		}
	}
	return jobs, nil
}

func tenantCounts(jobs []store.Job) map[string]int {
	m := map[string]int{}
	for _, j := range jobs {
		m[j.Tenant]++
	}
	return m
}

// answerWait waits for the job to end: 200 with the final job, or 202 with
// the job as it stands when the wait times out.
func (s *Server) answerWait(w http.ResponseWriter, r *http.Request, job api.Job, ch chan api.Job, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case done, ok := <-ch:
		if ok {
			writeJSON(w, http.StatusOK, api.JobResponse{Job: done})
			return nil
		}
	case <-t.C:
	case <-r.Context().Done():
	case <-s.done: // shutting down: the job as it is now
	}
	s.d.StopWaiting(job.ID, ch)
	cur, err := s.st.JobGet(r.Context(), job.ID)
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if cur.State.Terminal() {
		status = http.StatusOK
	}
	writeJSON(w, status, api.JobResponse{Job: wire.Job(cur)})
	return nil
}

// visibleJob reads a job the principal may see, or answers 404.
func (s *Server) visibleJob(ctx context.Context, p principal, id string) (store.Job, error) {
	j, err := s.st.JobGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !p.sees(j.Tenant)) {
		return store.Job{}, notFound("job", id)
	}
	return j, err
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, p principal) error {
	j, err := s.visibleJob(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	one := []api.Job{wire.Job(j)}
	if err := s.addReasons(r.Context(), one); err != nil {
		return err
	}
	resp := api.JobResponse{Job: one[0]}
	if j.Attempt > 0 {
		e, err := s.currentExecution(r.Context(), j)
		if err != nil {
			return err
		}
		resp.Execution = e
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request, p principal) error {
	params, err := listParams(r, p)
	if err != nil {
		return err
	}
	if params.Cursor, err = openCursor(params.Cursor, params); err != nil {
		return err
	}
	page, err := s.listJobs(r.Context(), params)
	if errors.Is(err, store.ErrInvalidCursor) {
		return badField("cursor", "not a cursor this server returned")
	}
	if err != nil {
		return err
	}
	out := api.JobList{Jobs: make([]api.Job, 0, len(page.Jobs)), NextCursor: withFilters(page.NextCursor, params)}
	for _, j := range page.Jobs {
		out.Jobs = append(out.Jobs, wire.Job(j))
	}
	if err := s.addReasons(r.Context(), out.Jobs); err != nil {
		return err
	}
	if count, err := boolParam(r.URL.Query().Get("count"), "count"); err != nil {
		return err
	} else if count {
		n, err := s.countJobs(r.Context(), params)
		if err != nil {
			return err
		}
		out.Total = &n
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func boolParam(v, field string) (bool, error) {
	switch v {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	}
	return false, badField(field, "must be true or false, got %q", v)
}

func listParams(r *http.Request, p principal) (store.JobListParams, error) {
	q := r.URL.Query()
	lp := store.JobListParams{Types: splitValues(q["type"]), Lanes: splitValues(q["lane"]), Tenant: q.Get("tenant"), Cursor: q.Get("cursor"),
		Tag: q.Get("tag"), ScheduleID: q.Get("schedule_id")}
	if p.role == roleTenant {
		if lp.Tenant != "" && lp.Tenant != p.tenant {
			return lp, errf(http.StatusForbidden, api.CodePermissionDenied, "a key of tenant %s cannot list tenant %s", p.tenant, lp.Tenant)
		}
		lp.Tenant = p.tenant
	}
	if len(q["state"]) > 0 && len(q["status"]) > 0 {
		return lp, badField("status", "give the state filter once: status (seed 002's name) or state, not both")
	}
	for _, st := range splitValues(append(q["state"], q["status"]...)) {
		if !store.State(st).Valid() {
			return lp, badField("state", "unknown state %q; the states are blocked, pending, leased, running, retry_wait, succeeded, failed, cancelled", st)
		}
		lp.States = append(lp.States, store.State(st))
	}
	var err error
	if lp.Limit, err = intParam(q.Get("limit"), "limit", 1, 1000, 100); err != nil {
		return lp, err
	}
	if lp.CreatedAfter, err = timeParam(q.Get("created_after"), "created_after"); err != nil {
		return lp, err
	}
	lp.CreatedBefore, err = timeParam(q.Get("created_before"), "created_before")
	return lp, err
}

func intParam(v, field string, lo, hi, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, badField(field, "must be an integer between %d and %d, got %q", lo, hi, v)
	}
	return n, nil
}

func timeParam(v, field string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, badField(field, "must be an RFC 3339 time, got %q", v)
	}
	return t, nil
}

// jobAction runs a cancel-like command on a visible job and answers with
// the job as committed.
func (s *Server) jobAction(w http.ResponseWriter, r *http.Request, p principal, act func(ctx context.Context, id string) (string, error)) error {
	id := r.PathValue("id")
	if _, err := s.visibleJob(r.Context(), p, id); err != nil {
		return err
	}
	result, err := act(r.Context(), id)
	if err != nil {
		return err
	}
	j, err := s.st.JobGet(r.Context(), id)
	if err != nil {
		return err
	}
	if result == "" {
		return errf(http.StatusConflict, api.CodeConflict, "job %s changed meanwhile; retry", id)
	}
	writeJSON(w, http.StatusOK, api.ActionResponse{Job: wire.Job(j), Result: result})
	return nil
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request, p principal) error {
	return s.jobAction(w, r, p, func(ctx context.Context, id string) (string, error) { return s.d.Cancel(ctx, id, p.name()) })
}

func (s *Server) handleHold(w http.ResponseWriter, r *http.Request, p principal) error {
	return s.jobAction(w, r, p, func(ctx context.Context, id string) (string, error) { return s.d.Hold(ctx, id, p.name()) })
}

func (s *Server) handleRelease(w http.ResponseWriter, r *http.Request, p principal) error {
	return s.jobAction(w, r, p, func(ctx context.Context, id string) (string, error) { return s.d.Release(ctx, id, p.name()) })
}

func (s *Server) handleReprioritize(w http.ResponseWriter, r *http.Request, p principal) error {
	var req api.ReprioritizeRequest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	if req.Priority == nil {
		return badField("priority", "is required")
	}
	prio := *req.Priority
	if prio < 0 || prio > 1000 {
		return badField("priority", "must be between 0 and 1000, got %d", prio)
	}
	return s.jobAction(w, r, p, func(ctx context.Context, id string) (string, error) {
		return s.d.Reprioritize(ctx, id, prio, p.name())
	})
}

func (s *Server) handleExtendSLA(w http.ResponseWriter, r *http.Request, p principal) error {
	var req api.ExtendSLARequest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	if req.ExtendMS <= 0 || req.ExtendMS > int64(30*24*time.Hour/time.Millisecond) {
		return badField("extend_ms", "must be between 1 and 30 days in milliseconds, got %d", req.ExtendMS)
	}
	id := r.PathValue("id")
	if _, err := s.visibleJob(r.Context(), p, id); err != nil {
		return err
	}
	live, err := s.d.ExtendSLA(r.Context(), id, ms(req.ExtendMS), p.name())
	if err != nil {
		return err
	}
	if !live {
		return errf(http.StatusConflict, api.CodeConflict, "job %s has finished; its SLA can no longer change", id)
	}
	j, err := s.st.JobGet(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.JobResponse{Job: wire.Job(j)})
	return nil
}

func (s *Server) handleExecutions(w http.ResponseWriter, r *http.Request, p principal) error {
	j, err := s.visibleJob(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit", 1, store.MaxListLimit, store.MaxListLimit)
	if err != nil {
		return err
	}
	after := 0
	if c := q.Get("cursor"); c != "" {
		if after, err = strconv.Atoi(c); err != nil || after < 1 {
			return badField("cursor", "not a cursor of this list: pass the next_cursor of the previous page")
		}
	}
	execs, err := s.st.ExecutionList(r.Context(), store.ExecutionListParams{JobID: j.ID, AfterAttempt: after, Limit: limit})
	if err != nil {
		return err
	}
	out := api.ExecutionList{Executions: make([]api.Execution, 0, len(execs))}
	for _, e := range execs {
		out.Executions = append(out.Executions, wire.Execution(e))
	}
	if len(execs) == limit {
		out.NextCursor = strconv.Itoa(execs[len(execs)-1].Attempt)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request, p principal) error {
	j, err := s.visibleJob(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	evs, err := s.st.EventList(r.Context(), store.EventListParams{JobID: j.ID, Limit: 1000})
	if err != nil {
		return err
	}
	out := api.EventList{Events: make([]api.Event, 0, len(evs))}
	for _, e := range evs {
		out.Events = append(out.Events, wire.Event(e))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// currentExecution is the latest attempt's execution: its row once it has
// ended, else what the job row says of the attempt under way.
func (s *Server) currentExecution(ctx context.Context, j store.Job) (*api.Execution, error) {
	execs, err := s.st.ExecutionList(ctx, store.ExecutionListParams{JobID: j.ID})
	if err != nil {
		return nil, err
	}
	for i := range execs {
		if execs[i].Attempt == j.Attempt {
			e := wire.Execution(execs[i])
			return &e, nil
		}
	}
	if j.State != store.StateLeased && j.State != store.StateRunning {
		return nil, nil
	}
	return &api.Execution{JobID: j.ID, Attempt: j.Attempt, WorkerID: j.WorkerID, StartedAt: wire.TimePtr(j.StartedAt)}, nil
}
