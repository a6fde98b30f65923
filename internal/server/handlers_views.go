package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/wire"
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
	follow, err := boolParam(r.URL.Query().Get("follow"), "follow")
	if err != nil {
		return err
	}
	follow = follow || strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	// A follow past the last attempt is how client.Wait waits for the end
	// without output; only a plain read of a missing attempt is refused.
	if lp.Attempt > j.Attempt && !follow {
		e := errf(http.StatusNotFound, api.CodeNotFound, "job %s has had %d attempt(s): there is no attempt %d", j.ID, j.Attempt, lp.Attempt)
		e.body.Field = "attempt"
		return e
	}
	if follow && r.URL.Query().Get("q") != "" {
		return badField("q", "a search reads the output so far; it does not follow")
	}
	if follow {
		return s.followLogs(w, r, lp)
	}
	if q := r.URL.Query().Get("q"); q != "" {
		return s.searchLogs(r.Context(), w, lp, q)
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
	x, live, err := s.d.Explain(r.Context(), j.ID)
	if err != nil {
		return err
	}
	if !live {
		x = api.Explanation{JobID: j.ID, State: string(j.State), Code: string(j.State), Message: "the job has ended: " + string(j.State)}
	}
	writeJSON(w, http.StatusOK, x)
	return nil
}

// handleLanes shows every lane's load. A tenant key sees only its own
// jobs' counts and usage in each lane: not the other tenants' queues, the
// lanes' dominant shares (which are made of every tenant's usage) or the
// pool's capacity.
func (s *Server) handleLanes(w http.ResponseWriter, r *http.Request, p principal) error {
	tenant := ""
	if p.role == roleTenant {
		tenant = p.tenant
	}
	costs, err := boolParam(r.URL.Query().Get("costs"), "costs")
	if err != nil {
		return err
	}
	if costs && p.role == roleTenant {
		return errf(http.StatusForbidden, api.CodePermissionDenied,
			"a tenant key cannot see fair queuing's costs: fairness keys are shared by every tenant; ask for an admin key, or leave out costs=true")
	}
	out, err := s.d.Lanes(r.Context(), tenant)
	if err != nil {
		return err
	}
	if costs {
		c, err := s.d.Costs(r.Context())
		if err != nil {
			return err
		}
		out.Costs = &c
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleWorkers lists the workers: their names, types and labels are for
// admin and worker keys, not for tenants.
func (s *Server) handleWorkers(w http.ResponseWriter, r *http.Request, p principal) error {
	if p.role == roleTenant {
		return errf(http.StatusForbidden, api.CodePermissionDenied,
			"a tenant key cannot list workers: ask for an admin key, or use GET /lanes for your own jobs' load")
	}
	out, err := s.d.Workers(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// summaryParams reads the report filters; a tenant key sees its own
// tenant. The time range is since/until (RFC 3339) or start_date/end_date
// (seed 002's names), which also take plain dates: end_date 2026-11-24
// covers that whole day (UTC).
func summaryParams(r *http.Request, p principal) (store.SummaryParams, error) {
	q := r.URL.Query()
	sp := store.SummaryParams{Tenant: q.Get("tenant"), Type: q.Get("type"), Lane: q.Get("lane")}
	if p.role == roleTenant {
		sp.Tenant = p.tenant
	}
	var err error
	if sp.FinishedAfter, err = rangeParam(q, "since", "start_date", false); err != nil {
		return sp, err
	}
	sp.FinishedBefore, err = rangeParam(q, "until", "end_date", true)
	return sp, err
}

// rangeParam reads one end of a report's range from name or its seed-002
// alias; a plain date is the start of that day, or with end the start of
// the next day.
func rangeParam(q url.Values, name, alias string, end bool) (time.Time, error) {
	v, field := q.Get(name), name
	if a := q.Get(alias); a != "" {
		if v != "" {
			return time.Time{}, badField(alias, "give %s or %s, not both", name, alias)
		}
		v, field = a, alias
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			d = d.AddDate(0, 0, 1)
		}
		return d, nil
	}
	t, err := timeParam(v, field)
	if err != nil {
		return t, badField(field, "must be a date (2026-11-24) or an RFC 3339 time, got %q", v)
	}
	return t, nil
}

// scopedReport answers a report for one job or one schedule: the same
// report as the server-wide one, narrowed to its executions.
func (s *Server) scopedReport(h func(w http.ResponseWriter, r *http.Request, p principal, scope func(*store.SummaryParams)) error, schedule bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p principal) error {
		id := r.PathValue("id")
		if schedule {
			if _, err := s.visibleSchedule(r.Context(), p, id); err != nil {
				return err
			}
			return h(w, r, p, func(sp *store.SummaryParams) { sp.ScheduleID = id })
		}
		if _, err := s.visibleJob(r.Context(), p, id); err != nil {
			return err
		}
		return h(w, r, p, func(sp *store.SummaryParams) { sp.JobID = id })
	}
}

func unscoped(*store.SummaryParams) {}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ratio(n, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(n) / float64(total)
}

// failedOutcomes are the outcomes /failures counts and lists: a
// cancelled attempt is not a failure.
var failedOutcomes = []store.Outcome{store.OutcomeFailed, store.OutcomeTimeout, store.OutcomeLost}

func (s *Server) handleFailures(w http.ResponseWriter, r *http.Request, p principal) error {
	return s.failures(w, r, p, unscoped)
}

func (s *Server) failures(w http.ResponseWriter, r *http.Request, p principal, scope func(*store.SummaryParams)) error {
	sp, err := summaryParams(r, p)
	if err != nil {
		return err
	}
	scope(&sp)
	sp.Breakdowns = true
	limit, err := intParam(r.URL.Query().Get("limit"), "limit", 1, 1000, 20)
	if err != nil {
		return err
	}
	sum, err := s.st.ExecutionSummary(r.Context(), sp)
	if err != nil {
		return err
	}
	recent, err := s.st.ExecutionList(r.Context(), store.ExecutionListParams{JobID: sp.JobID, ScheduleID: sp.ScheduleID,
		Tenant: sp.Tenant, Type: sp.Type, Outcomes: failedOutcomes, FinishedAfter: sp.FinishedAfter,
		FinishedBefore: sp.FinishedBefore, Limit: limit})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, failureReport(sum, recent))
	return nil
}

// verdicts splits counts by outcome into attempts that reached a verdict
// (succeeded or failed), the failed ones, and the cancelled ones.
func verdicts(byOutcome map[store.Outcome]int64) (total, failed, cancelled int64) {
	for o, n := range byOutcome {
		switch o {
		case store.OutcomeCancelled:
			cancelled += n
		case store.OutcomeSucceeded:
			total += n
		default:
			total += n
			failed += n
		}
	}
	return total, failed, cancelled
}

func failureReport(sum store.Summary, recent []store.Execution) api.FailureReport {
	out := api.FailureReport{ByOutcome: map[string]int64{}, ByClass: map[string]int64{},
		ByTenant: map[string]api.FailureCounts{}, ByType: map[string]api.FailureCounts{},
		Recent: make([]api.FailedAttempt, 0, len(recent))}
	out.Total, out.Failed, out.Cancelled = verdicts(sum.ByOutcome)
	out.Preempted = sum.ByFailureClass[store.FailPreempted] // stored as cancelled
	out.Snoozed = sum.ByFailureClass[store.FailSnoozed]     // stored as cancelled
	out.Cancelled -= out.Preempted + out.Snoozed
	for o, n := range sum.ByOutcome {
		if o != store.OutcomeSucceeded && o != store.OutcomeCancelled {
			out.ByOutcome[string(o)] = n
		}
	}
	out.FailureRate = ratio(out.Failed, out.Total)
	for c, n := range sum.ByFailureClass {
		if c != store.FailCancelled && c != store.FailPreempted && c != store.FailSnoozed {
			out.ByClass[string(c)] = n
		}
	}
	for _, g := range []struct {
		in  map[string]store.GroupSummary
		out map[string]api.FailureCounts
	}{{sum.ByTenant, out.ByTenant}, {sum.ByType, out.ByType}} {
		for key, gs := range g.in {
			total, failed, cancelled := verdicts(gs.ByOutcome)
			g.out[key] = api.FailureCounts{Total: total, Failed: failed, Cancelled: cancelled, FailureRate: ratio(failed, total)}
		}
	}
	for _, e := range recent {
		out.Recent = append(out.Recent, api.FailedAttempt{JobID: e.JobID, Attempt: e.Attempt, Outcome: string(e.Outcome),
			FailureClass: string(e.FailureClass), ExitCode: e.ExitCode, Error: e.Error, DurationMS: e.Duration.Milliseconds(),
			FinishedAt: e.FinishedAt.UTC()})
	}
	return out
}

func (s *Server) handleSuccesses(w http.ResponseWriter, r *http.Request, p principal) error {
	return s.successes(w, r, p, unscoped)
}

func (s *Server) successes(w http.ResponseWriter, r *http.Request, p principal, scope func(*store.SummaryParams)) error {
	sp, err := summaryParams(r, p)
	if err != nil {
		return err
	}
	scope(&sp)
	sp.Breakdowns = true
	all, err := s.st.ExecutionSummary(r.Context(), sp)
	if err != nil {
		return err
	}
	sp.Outcome, sp.Breakdowns = store.OutcomeSucceeded, false
	ok, err := s.st.ExecutionSummary(r.Context(), sp)
	if err != nil {
		return err
	}
	out := api.SuccessReport{Succeeded: ok.Executions,
		AvgExecutionTimeMS: msOf(ok.MeanDuration), MeanDurationMS: msOf(ok.MeanDuration), P50DurationMS: msOf(ok.P50Duration),
		P95DurationMS: msOf(ok.P95Duration), P99DurationMS: msOf(ok.P99Duration),
		ByTenant: map[string]api.SuccessCounts{}, ByType: map[string]api.SuccessCounts{}}
	out.Total, _, out.Cancelled = verdicts(all.ByOutcome)
	out.SuccessRate = ratio(out.Succeeded, out.Total)
	for _, g := range []struct {
		in  map[string]store.GroupSummary
		out map[string]api.SuccessCounts
	}{{all.ByTenant, out.ByTenant}, {all.ByType, out.ByType}} {
		for key, gs := range g.in {
			total, _, cancelled := verdicts(gs.ByOutcome)
			succeeded := gs.ByOutcome[store.OutcomeSucceeded]
			c := api.SuccessCounts{Total: total, Succeeded: succeeded, Cancelled: cancelled, SuccessRate: ratio(succeeded, total)}
			if succeeded > 0 {
				c.AvgExecutionTimeMS = msOf(gs.SucceededDuration) / float64(succeeded)
			}
			g.out[key] = c
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleSLACompliance(w http.ResponseWriter, r *http.Request, p principal) error {
	return s.slaCompliance(w, r, p, unscoped)
}

func (s *Server) slaCompliance(w http.ResponseWriter, r *http.Request, p principal, scope func(*store.SummaryParams)) error {
	sp, err := summaryParams(r, p)
	if err != nil {
		return err
	}
	scope(&sp)
	sum, err := s.st.ExecutionSummary(r.Context(), sp)
	if err != nil {
		return err
	}
	rep := api.SLAReport{Period: api.ReportPeriod{Start: wire.TimePtr(sp.FinishedAfter), End: wire.TimePtr(sp.FinishedBefore)},
		Total: sum.SLAMeasured, Met: sum.SLAMet, Violated: sum.SLAMeasured - sum.SLAMet,
		AvgExecutionTimeMS: msOf(sum.SLAMeanDuration), AvgSLAViolationPercentage: sum.MeanSLAViolationPct}
	if sum.SLAMeasured > 0 {
		c := float64(sum.SLAMet) / float64(sum.SLAMeasured)
		rep.Compliance = &c
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}
