package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
)

func (s *Server) handleLogs(w http.ResponseWriter, r *http.Request, p principal) error {
	j, err := s.visibleJob(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	lp, err := logParams(r, j.ID)
	if err != nil {
		return err
	}
	follow := r.URL.Query().Get("follow") == "true" || strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	// A follow past the last attempt is how client.Wait waits for the end
	// without output; only a plain read of a missing attempt is refused.
	if lp.Attempt > j.Attempt && !follow {
		e := errf(http.StatusNotFound, api.CodeNotFound, "job %s has had %d attempt(s): there is no attempt %d", j.ID, j.Attempt, lp.Attempt)
		e.body.Field = "attempt"
		return e
	}
	if follow {
		return s.followLogs(w, r, lp)
	}
	chunks, err := s.st.LogList(r.Context(), lp)
	if err != nil {
		return err
	}
	out := api.LogList{Chunks: make([]api.LogChunk, 0, len(chunks))}
	for _, c := range chunks {
		out.Chunks = append(out.Chunks, apiChunk(c))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func logParams(r *http.Request, id string) (store.LogListParams, error) {
	q := r.URL.Query()
	lp := store.LogListParams{JobID: id, Stream: store.Stream(q.Get("stream"))}
	if lp.Stream != "" && lp.Stream != store.Stdout && lp.Stream != store.Stderr {
		return lp, badField("stream", "must be stdout or stderr, got %q", lp.Stream)
	}
	var err error
	if lp.Attempt, err = intParam(q.Get("attempt"), "attempt", 0, 1<<30, 0); err != nil {
		return lp, err
	}
	if lp.AfterAttempt, err = intParam(q.Get("after_attempt"), "after_attempt", 0, 1<<30, 0); err != nil {
		return lp, err
	}
	if lp.Limit, err = intParam(q.Get("limit"), "limit", 1, 10000, 1000); err != nil {
		return lp, err
	}
	if v := q.Get("after_seq"); v != "" {
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil || n < 0 {
			return lp, badField("after_seq", "must be an integer >= 0, got %q", v)
		}
		lp.AfterSeq = n
	}
	return lp, nil
}

func apiChunk(c store.LogChunk) api.LogChunk {
	data := string(c.Data)
	if !utf8.ValidString(data) {
		data = strings.ToValidUTF8(data, "\uFFFD")
	}
	return api.LogChunk{JobID: c.JobID, Attempt: c.Attempt, Stream: string(c.Stream), Seq: c.Seq, At: c.At.UTC(), Data: data}
}

// followLogs streams chunks as Server-Sent Events until the job has ended
// and its logs are drained, or the client leaves.
func (s *Server) followLogs(w http.ResponseWriter, r *http.Request, lp store.LogListParams) error {
	fl, ok := w.(http.Flusher)
	if !ok {
		return errf(http.StatusInternalServerError, api.CodeInternal, "streaming unsupported")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastPing := time.Now()
	for {
		job, err := s.st.JobGet(r.Context(), lp.JobID)
		if err != nil {
			return nil
		}
		n, err := s.sendChunks(w, r, &lp)
		if err != nil {
			return nil
		}
		if n == 0 && job.State.Terminal() {
			writeSSE(w, "end", api.LogEnd{State: string(job.State)})
			fl.Flush()
			return nil
		}
		if time.Since(lastPing) > 15*time.Second {
			fmt.Fprint(w, ": ping\n\n")
			lastPing = time.Now()
		}
		fl.Flush()
		if n > 0 {
			continue
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-s.done:
			return nil
		case <-tick.C:
		}
	}
}

// sendChunks writes the next page of chunks and advances lp past them.
func (s *Server) sendChunks(w http.ResponseWriter, r *http.Request, lp *store.LogListParams) (int, error) {
	chunks, err := s.st.LogList(r.Context(), *lp)
	if err != nil {
		return 0, err
	}
	for _, c := range chunks {
		writeSSE(w, "log", apiChunk(c))
		lp.AfterAttempt, lp.AfterSeq = c.Attempt, c.Seq
	}
	return len(chunks), nil
}

func writeSSE(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
}

func (s *Server) handleExplain(w http.ResponseWriter, r *http.Request, p principal) error {
	j, err := s.visibleJob(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	var x api.Explanation
	var live bool
	if err := s.d.submit(r.Context(), func(tx *txn) { x, live = s.d.explain(j.ID, tx.now) }); err != nil {
		return err
	}
	if !live {
		x = api.Explanation{JobID: j.ID, State: string(j.State), Code: string(j.State), Message: "the job has ended: " + string(j.State)}
	}
	writeJSON(w, http.StatusOK, x)
	return nil
}

// explain asks the engine why the job is not running, with a rough
// estimated start: its position over the pool's slots, times the learned
// cost of its kind of work.
func (d *dispatcher) explain(id string, now time.Time) (api.Explanation, bool) {
	rec := d.jobs[id]
	if rec == nil {
		return api.Explanation{}, false
	}
	x := api.Explanation{JobID: id, State: string(rec.job.State), Lane: rec.job.Lane}
	if rec.job.State == store.StateLeased || rec.job.State == store.StateRunning {
		x.Code, x.Message = string(policy.CodeRunning), fmt.Sprintf("%s on worker %s (attempt %d)", rec.job.State, rec.job.WorkerID, rec.job.Attempt)
		return x, true
	}
	e, err := d.eng.Explain(id, now)
	if err != nil {
		x.Code, x.Message = "unknown", err.Error()
		return x, true
	}
	x.Code, x.Message, x.Blocker = string(e.Code), e.Message, e.Blocker
	x.Score, x.Position, x.Queued = e.Score, e.Position, e.Queued
	d.estimateStart(&x, e, now)
	return x, true
}

// estimateStart fills the explanation's estimated start: run_at for a job
// not yet due, else the engine's estimate from the running jobs' and the
// jobs ahead's expected run times (policy.EstimateStart), with its basis.
func (d *dispatcher) estimateStart(x *api.Explanation, e policy.Explanation, now time.Time) {
	if e.Code == policy.CodeNotYetDue {
		x.EstimatedStart, x.EstimateBasis = timePtr(e.RunAt), "run_at"
		return
	}
	if e.Code != policy.CodeQueued && e.Code != policy.CodeNoFreeSlot && e.Code != policy.CodeLaneOverShare {
		return // held by a cap, a conflict or a missing worker: capacity says nothing
	}
	est, ok := d.eng.EstimateStart(x.JobID, now)
	if !ok {
		return
	}
	x.EstimatedStart, x.EstimateBasis = timePtr(est.At), string(est.Basis)
}

// handleLanes shows every lane's load. A tenant key sees only its own
// jobs' counts and usage in each lane: not the other tenants' queues, the
// lanes' dominant shares (which are made of every tenant's usage) or the
// pool's capacity.
func (s *Server) handleLanes(w http.ResponseWriter, r *http.Request, p principal) error {
	var out api.LaneList
	err := s.d.submit(r.Context(), func(tx *txn) {
		if p.role == roleTenant {
			out = s.d.tenantLanes(p.tenant)
		} else {
			out = s.d.lanes()
		}
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// tenantLanes is lanes() counting only tenant's unfinished jobs.
func (d *dispatcher) tenantLanes(tenant string) api.LaneList {
	byLane := map[string]*api.LaneInfo{}
	out := api.LaneList{}
	for _, l := range d.eng.Lanes() {
		out.Lanes = append(out.Lanes, api.LaneInfo{Name: l.Name, Weight: l.Weight})
	}
	for i := range out.Lanes {
		byLane[out.Lanes[i].Name] = &out.Lanes[i]
	}
	usage := map[string]policy.Resources{}
	for _, rec := range d.jobs {
		l := byLane[rec.job.Lane]
		if rec.job.Tenant != tenant || l == nil {
			continue
		}
		switch rec.job.State {
		case store.StateLeased, store.StateRunning:
			l.Running++
			usage[l.Name] = usage[l.Name].Add(rec.job.Resources)
		case store.StatePending:
			l.Pending++
			l.Queued++
		case store.StateBlocked, store.StateRetryWait:
			l.Pending++
		}
	}
	for name, u := range usage {
		byLane[name].Usage = apiResources(u)
	}
	return out
}

func (d *dispatcher) lanes() api.LaneList {
	capRes, slots := d.eng.Capacity()
	out := api.LaneList{Capacity: api.Capacity{Resources: apiResources(capRes), Slots: slots}}
	for _, l := range d.eng.Lanes() {
		out.Lanes = append(out.Lanes, api.LaneInfo{
			Name: l.Name, Weight: l.Weight, Pending: l.Pending, Queued: l.Queued, Running: l.Running,
			Usage: apiResources(l.Usage), DominantShare: l.DominantShare,
		})
	}
	return out
}

// handleWorkers lists the workers: their names, types and labels are for
// admin and worker keys, not for tenants.
func (s *Server) handleWorkers(w http.ResponseWriter, r *http.Request, p principal) error {
	if p.role == roleTenant {
		return errf(http.StatusForbidden, api.CodePermissionDenied,
			"a tenant key cannot list workers: ask for an admin key, or use GET /lanes for your own jobs' load")
	}
	var out api.WorkerList
	if err := s.d.submit(r.Context(), func(tx *txn) { out = s.d.workerList() }); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (d *dispatcher) workerList() api.WorkerList {
	out := api.WorkerList{Workers: []api.WorkerInfo{}}
	for _, wk := range d.workers {
		state := string(store.WorkerActive)
		if wk.draining {
			state = string(store.WorkerDraining)
		}
		out.Workers = append(out.Workers, api.WorkerInfo{
			ID: wk.w.ID, Name: wk.w.Name, Types: wk.w.Types, Handlers: wk.w.Handlers, Labels: wk.w.Labels, Slots: wk.w.Slots,
			CPU: float64(wk.w.Resources.MilliCPU) / 1000, MemoryMB: wk.w.Resources.MemoryMB, GPU: wk.w.Resources.GPU,
			State: state, Running: len(wk.jobs), RegisteredAt: wk.w.RegisteredAt.UTC(), LastSeenAt: wk.lastSeen.UTC(),
		})
	}
	sort.Slice(out.Workers, func(i, j int) bool { return out.Workers[i].ID < out.Workers[j].ID })
	return out
}

func (s *Server) summary(r *http.Request, p principal) (store.Summary, error) {
	sp, err := summaryParams(r, p)
	if err != nil {
		return store.Summary{}, err
	}
	return s.st.ExecutionSummary(r.Context(), sp)
}

// summaryParams reads the report filters; a tenant key sees its own tenant.
func summaryParams(r *http.Request, p principal) (store.SummaryParams, error) {
	q := r.URL.Query()
	sp := store.SummaryParams{Tenant: q.Get("tenant"), Type: q.Get("type"), Lane: q.Get("lane")}
	if p.role == roleTenant {
		sp.Tenant = p.tenant
	}
	var err error
	if sp.FinishedAfter, err = timeParam(q.Get("since"), "since"); err != nil {
		return sp, err
	}
	sp.FinishedBefore, err = timeParam(q.Get("until"), "until")
	return sp, err
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ratio(n, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(n) / float64(total)
}

// failedOutcomes are the outcomes /failures counts and lists.
var failedOutcomes = []store.Outcome{store.OutcomeFailed, store.OutcomeTimeout, store.OutcomeLost, store.OutcomeCancelled}

func (s *Server) handleFailures(w http.ResponseWriter, r *http.Request, p principal) error {
	sp, err := summaryParams(r, p)
	if err != nil {
		return err
	}
	limit, err := intParam(r.URL.Query().Get("limit"), "limit", 1, 1000, 20)
	if err != nil {
		return err
	}
	sum, err := s.st.ExecutionSummary(r.Context(), sp)
	if err != nil {
		return err
	}
	recent, err := s.st.ExecutionList(r.Context(), store.ExecutionListParams{Tenant: sp.Tenant, Type: sp.Type,
		Outcomes: failedOutcomes, FinishedAfter: sp.FinishedAfter, FinishedBefore: sp.FinishedBefore, Limit: limit})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, failureReport(sum, recent))
	return nil
}

func failureReport(sum store.Summary, recent []store.Execution) api.FailureReport {
	out := api.FailureReport{Total: sum.Executions, ByOutcome: map[string]int64{}, ByClass: map[string]int64{},
		Recent: make([]api.FailedAttempt, 0, len(recent))}
	for o, n := range sum.ByOutcome {
		if o != store.OutcomeSucceeded {
			out.Failed += n
			out.ByOutcome[string(o)] = n
		}
	}
	out.FailureRate = ratio(out.Failed, out.Total)
	for c, n := range sum.ByFailureClass {
		out.ByClass[string(c)] = n
	}
	for _, e := range recent {
		out.Recent = append(out.Recent, api.FailedAttempt{JobID: e.JobID, Attempt: e.Attempt, Outcome: string(e.Outcome),
			FailureClass: string(e.FailureClass), ExitCode: e.ExitCode, Error: e.Error, FinishedAt: e.FinishedAt.UTC()})
	}
	return out
}

func (s *Server) handleSuccesses(w http.ResponseWriter, r *http.Request, p principal) error {
	sp, err := summaryParams(r, p)
	if err != nil {
		return err
	}
	all, err := s.st.ExecutionSummary(r.Context(), sp)
	if err != nil {
		return err
	}
	sp.Outcome = store.OutcomeSucceeded
	ok, err := s.st.ExecutionSummary(r.Context(), sp)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.SuccessReport{
		Total: all.Executions, Succeeded: ok.Executions, SuccessRate: ratio(ok.Executions, all.Executions),
		MeanDurationMS: msOf(ok.MeanDuration), P50DurationMS: msOf(ok.P50Duration),
		P95DurationMS: msOf(ok.P95Duration), P99DurationMS: msOf(ok.P99Duration),
	})
	return nil
}

func (s *Server) handleSLACompliance(w http.ResponseWriter, r *http.Request, p principal) error {
	sum, err := s.summary(r, p)
	if err != nil {
		return err
	}
	rep := api.SLAReport{Total: sum.SLAMeasured, Met: sum.SLAMet, Violated: sum.SLAMeasured - sum.SLAMet, Compliance: 1}
	if sum.SLAMeasured > 0 {
		rep.Compliance = float64(sum.SLAMet) / float64(sum.SLAMeasured)
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}
