package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// where accumulates AND-ed conditions and their arguments.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// in adds "col IN (...)" for a non-empty list of string-like values.
func in[T ~string](w *where, col string, vals []T) {
	if len(vals) == 0 {
		return
	}
	w.conds = append(w.conds, col+" IN ("+placeholders(len(vals))+")")
	for _, v := range vals {
		w.args = append(w.args, string(v))
	}
}

// withOne is vals plus one when one is set, without duplicates.
func withOne(vals []string, one string) []string {
	if one == "" || slices.Contains(vals, one) {
		return vals
	}
	return append(slices.Clone(vals), one)
}

// clone is a copy of w that conditions can be added to, w unchanged.
func (w *where) clone() where {
	return where{conds: slices.Clone(w.conds), args: slices.Clone(w.args)}
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, v := range ss {
		out[i] = v
	}
	return out
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// readCheck fails fast on a closed store, and waits for the driver's
// ReadBarrier.
func (s *Core) readCheck(ctx context.Context) error {
	if s.Closed.Load() {
		return store.ErrClosed
	}
	if s.ReadBarrier != nil {
		return s.ReadBarrier(ctx)
	}
	return nil
}

// queryAll runs a SELECT on the read pool and scans every row.
func queryAll[T any](ctx context.Context, s *Core, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	if err := s.readCheck(ctx); err != nil {
		return nil, err
	}
	rows, err := s.RDB.QueryContext(ctx, s.D.rebind(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// getOne returns the single row a keyed SELECT finds, or ErrNotFound.
func getOne[T any](ctx context.Context, s *Core, scan func(scanner) (T, error), what, id, q string) (T, error) {
	var zero T
	vs, err := queryAll(ctx, s, scan, q, id)
	if err != nil {
		return zero, fmt.Errorf("store: get %s %s: %w", what, id, err)
	}
	if len(vs) == 0 {
		return zero, fmt.Errorf("%w: %s %s", store.ErrNotFound, what, id)
	}
	return vs[0], nil
}

func (s *Core) queryJobs(ctx context.Context, q string, args ...any) ([]store.Job, error) {
	return queryAll(ctx, s, scanJob, q, args...)
}

// JobGet implements store.Reader.
func (s *Core) JobGet(ctx context.Context, id string) (store.Job, error) {
	return getOne(ctx, s, scanJob, "job", id, s.jobSelect()+" WHERE id = ?")
}

// JobGetMany implements store.Reader.
func (s *Core) JobGetMany(ctx context.Context, ids []string) ([]store.Job, error) {
	const chunk = 500
	byID := make(map[string]store.Job, len(ids))
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		jobs, err := s.queryJobs(ctx, s.jobSelect()+" WHERE id IN ("+placeholders(len(part))+")", args...)
		if err != nil {
			return nil, fmt.Errorf("store: get jobs: %w", err)
		}
		for _, j := range jobs {
			byID[j.ID] = j
		}
	}
	out := make([]store.Job, 0, len(byID))
	for _, id := range ids {
		if j, ok := byID[id]; ok {
			out = append(out, j)
			delete(byID, id) // a repeated id comes back once
		}
	}
	return out, nil
}

// JobGetByIdempotencyKey implements store.Reader.
func (s *Core) JobGetByIdempotencyKey(ctx context.Context, tenant, key string, createdAfter time.Time) (store.Job, error) {
	jobs, err := s.queryJobs(ctx, s.jobSelect()+` WHERE id = (SELECT job_id FROM idempotency_keys
		WHERE tenant = ? AND key = ? AND created_at > ?)`, tenant, key, timeArg(createdAfter))
	if err != nil {
		return store.Job{}, fmt.Errorf("store: get job by idempotency key: %w", err)
	}
	if len(jobs) == 0 {
		return store.Job{}, fmt.Errorf("%w: tenant %q idempotency key %q", store.ErrNotFound, tenant, key)
	}
	return jobs[0], nil
}

// SubmitTokens implements store.Reader. It walks job_specs' primary key
// from sinceID: the jobs of the last few minutes, whose specs hold the
// tokens (no index does).
func (s *Core) SubmitTokens(ctx context.Context, sinceID string) ([]store.SubmitToken, error) {
	rows, err := s.RDB.QueryContext(ctx, s.D.rebind(`SELECT jobs.tenant, job_specs.submit_token, job_specs.job_id, jobs.created_at
		FROM job_specs JOIN jobs ON jobs.id = job_specs.job_id
		WHERE job_specs.job_id >= ? AND job_specs.submit_token IS NOT NULL ORDER BY job_specs.job_id`), sinceID)
	if err != nil {
		return nil, fmt.Errorf("store: submit tokens: %w", err)
	}
	defer rows.Close()
	var out []store.SubmitToken
	for rows.Next() {
		var t store.SubmitToken
		if err := rows.Scan(&t.Tenant, &t.Token, &t.JobID, timeCol{&t.CreatedAt}); err != nil {
			return nil, fmt.Errorf("store: submit tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: submit tokens: %w", err)
	}
	return out, nil
}

// likeEscaper escapes a LIKE pattern's wildcards (with ESCAPE '\').
var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)

// IdempotencyHolder implements store.Reader.
func (s *Core) IdempotencyHolder(ctx context.Context, tenant, key string, createdAfter time.Time) (string, error) {
	var id string
	err := s.RDB.QueryRowContext(ctx, s.D.rebind(`SELECT job_id FROM idempotency_keys
		WHERE tenant = ? AND key = ? AND created_at > ?`), tenant, key, timeArg(createdAfter)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: tenant %q idempotency key %q", store.ErrNotFound, tenant, key)
	}
	if err != nil {
		return "", fmt.Errorf("store: idempotency key holder: %w", err)
	}
	return id, nil
}

// stateCond is the condition that a job is in state st, written so that
// it walks the index made for it (store doc.go, "The hot row and its
// indexes"): a terminal state through (tenant,) final_state, created_at,
// id; an unfinished one through the unfinished jobs' (created_at, id),
// filtered.
func stateCond(w *where, st store.State) {
	if st.Terminal() {
		w.add("final_state = ?", string(st))
		return
	}
	w.add("final_state IS NULL AND state = ?", string(st))
}

// JobList implements store.Reader.
//
// With several states it runs one index-ordered branch per state and
// merges them, instead of filtering one tenant- or time-ordered scan: a
// rare finished state among millions of rows stays cheap to list. With
// no state, tenant or schedule it does the same for the unfinished jobs
// and each terminal state: there is no index of all jobs by creation. An
// unfinished state has no index of its own: its branch walks the
// unfinished jobs newest first (the server lists them from the
// dispatcher's memory instead).
func (s *Core) JobList(ctx context.Context, p store.JobListParams) (store.JobPage, error) {
	limit := store.ClampLimit(p.Limit, store.DefaultListLimit, store.MaxListLimit)
	q, args, err := s.jobListQuery(p, limit)
	if err != nil {
		return store.JobPage{}, err
	}
	jobs, err := s.queryJobs(ctx, q, args...)
	if err != nil {
		return store.JobPage{}, fmt.Errorf("store: list jobs: %w", err)
	}
	page := store.JobPage{Jobs: jobs}
	if len(jobs) > limit {
		page.Jobs = jobs[:limit]
		last := page.Jobs[limit-1]
		page.NextCursor = store.JobCursor{CreatedAt: last.CreatedAt, ID: last.ID}.Encode()
	}
	return page, nil
}

// jobListQuery is JobList's statement (? placeholders) for a page of
// limit jobs: it reads one more, which says whether a next page exists.
func (s *Core) jobListQuery(p store.JobListParams, limit int) (string, []any, error) {
	w := s.jobFilter(p)
	if p.Cursor != "" {
		c, err := store.DecodeJobCursor(p.Cursor)
		if err != nil {
			return "", nil, err
		}
		us := c.CreatedAt.UnixMicro()
		// created_at <= ? bounds the walk of the index: the OR alone
		// would read the page's index from its top.
		w.add("created_at <= ? AND (created_at < ? OR (created_at = ? AND id < ?))", us, us, us, c.ID)
	}
	const order = " ORDER BY created_at DESC, id DESC LIMIT ?"
	states := slices.Compact(slices.Sorted(slices.Values(p.States)))
	var branches []func(*where)
	switch {
	case len(states) == 0 && p.ScheduleID == "" && p.Tenant == "", s.tenantMerged(p):
		// Every job, or a tenant's: no index holds them all in
		// (created_at, id) order (store doc.go, "The hot row and its
		// indexes"), so the page merges the unfinished ones
		// (jobs_unfinished, jobs_tenant_unfinished) with each terminal
		// state's (jobs_final, jobs_tenant_final).
		branches = append(branches, func(w *where) { w.add("final_state IS NULL") })
		for _, st := range store.TerminalStates() {
			branches = append(branches, func(w *where) { w.add("final_state = ?", string(st)) })
		}
	case len(states) == 0:
		// A tenant's (jobs_tenant_created) or a schedule's (jobs_schedule).
	default:
		for _, st := range states {
			branches = append(branches, func(w *where) { stateCond(w, st) })
		}
	}
	if len(branches) <= 1 {
		for _, b := range branches {
			b(&w)
		}
		return s.jobSelect() + w.sql() + order, append(w.args, limit+1), nil
	}
	parts := make([]string, len(branches))
	var args []any
	for i, cond := range branches {
		b := w.clone()
		cond(&b)
		parts[i] = "SELECT * FROM (" + s.jobSelect() + b.sql() + order + ") AS s" + strconv.Itoa(i)
		args = append(append(args, b.args...), limit+1)
	}
	q := "SELECT * FROM (" + strings.Join(parts, " UNION ALL ") + ") AS u" + order
	return q, append(args, limit+1), nil
}

// unfinishedSQL is JobListUnfinished's statement.
func (s *Core) unfinishedSQL() string {
	return s.jobSelect() + " WHERE final_state IS NULL ORDER BY created_at, id"
}

// JobListUnfinished implements store.Reader.
func (s *Core) JobListUnfinished(ctx context.Context) ([]store.Job, error) {
	// The partial index of unfinished jobs, in its order: no sort.
	jobs, err := s.queryJobs(ctx, s.unfinishedSQL())
	if err != nil {
		return nil, fmt.Errorf("store: list unfinished jobs: %w", err)
	}
	return jobs, nil
}

const executionSelect = `SELECT e.job_id, e.attempt, e.worker_id, e.leased_at, e.wait_ms, e.started_at, e.finished_at,
	e.outcome, e.exit_code, e.failure_class, e.error, e.duration_ms, e.sla_met, e.sla_violation_pct,
	e.result_state, e.result_url, e.result_error, e.result_tries, e.result_next_at,
	e.cpu_user_us, e.cpu_system_us, e.peak_rss_bytes, e.usage_source,
	e.lease_event_id, e.start_event_id, e.start_event_at, e.end_event_id
	FROM executions e`

func scanExecution(sc scanner) (store.Execution, error) {
	var e store.Execution
	var attempt, tries int64
	var cpuUser, cpuSys, peak sql.NullInt64
	var source sql.NullString
	err := sc.Scan(&e.JobID, &attempt, strCol[string]{&e.WorkerID}, timeCol{&e.LeasedAt}, msNullCol{&e.Wait},
		timeCol{&e.StartedAt}, timeCol{&e.FinishedAt}, strCol[store.Outcome]{&e.Outcome},
		intPtrCol{&e.ExitCode}, strCol[store.FailureClass]{&e.FailureClass}, strCol[string]{&e.Error},
		msCol{&e.Duration}, boolPtrCol{&e.SLAMet}, &e.SLAViolationPct,
		strCol[store.ResultState]{&e.ResultState}, strCol[string]{&e.ResultURL}, strCol[string]{&e.ResultError},
		&tries, timeCol{&e.ResultNextAt},
		&cpuUser, &cpuSys, &peak, &source,
		idCol{&e.LeaseEventID}, idCol{&e.StartEventID}, timeCol{&e.StartEventAt}, idCol{&e.EndEventID})
	e.Attempt, e.ResultTries = int(attempt), int(tries)
	if source.Valid {
		e.Usage = store.Usage{
			CPUUser: time.Duration(cpuUser.Int64) * time.Microsecond, CPUSystem: time.Duration(cpuSys.Int64) * time.Microsecond,
			PeakRSSBytes: peak.Int64, Source: source.String,
		}
	}
	return e, err
}

// executionFilter returns the FROM tail (a join with jobs when a job
// column is filtered) and the conditions shared by the execution queries.
func executionFilter(tenant, typ, lane, scheduleID string, after, before time.Time) (string, where) {
	var w where
	join := ""
	if tenant != "" || typ != "" || lane != "" || scheduleID != "" {
		join = " JOIN jobs j ON j.id = e.job_id"
	}
	if scheduleID != "" {
		w.add("j.schedule_id = ?", scheduleID)
	}
	if tenant != "" {
		w.add("j.tenant = ?", tenant)
	}
	if typ != "" {
		w.add("j.type = ?", typ)
	}
	if lane != "" {
		w.add("j.lane = ?", lane)
	}
	if !after.IsZero() {
		w.add("e.finished_at > ?", timeArg(after))
	}
	if !before.IsZero() {
		w.add("e.finished_at < ?", timeArg(before))
	}
	return join, w
}

// resultsDueSQL selects the pending result uploads that are due, through
// executions_results_due.
var resultsDueSQL = executionSelect +
	" WHERE e.result_state = 'pending' AND e.result_next_at <= ? ORDER BY e.result_next_at, e.job_id, e.attempt LIMIT ?"

// ExecutionResultsDue implements store.Reader.
func (s *Core) ExecutionResultsDue(ctx context.Context, now time.Time, limit int) ([]store.Execution, error) {
	if err := s.readCheck(ctx); err != nil {
		return nil, err
	}
	limit = store.ClampLimit(limit, store.DefaultListLimit, store.MaxListLimit)
	es, err := queryAll(ctx, s, scanExecution, resultsDueSQL, timeArg(now), limit)
	if err != nil {
		return nil, fmt.Errorf("store: executions with results due: %w", err)
	}
	return es, nil
}

// executionListQuery is ExecutionList's statement (? placeholders): a
// job's attempts by the primary key, else finished attempts newest first
// through executions_finished.
func executionListQuery(p store.ExecutionListParams) (string, []any) {
	join, w := executionFilter(p.Tenant, p.Type, "", p.ScheduleID, p.FinishedAfter, p.FinishedBefore)
	in(&w, "e.outcome", p.Outcomes)
	var order string
	var limit int
	if p.JobID != "" {
		w.add("e.job_id = ?", p.JobID)
		if p.AfterAttempt > 0 {
			w.add("e.attempt > ?", p.AfterAttempt)
		}
		order, limit = " ORDER BY e.attempt", store.ClampLimit(p.Limit, store.MaxListLimit, store.MaxListLimit)
	} else {
		w.add("e.finished_at IS NOT NULL")
		order = " ORDER BY e.finished_at DESC, e.job_id DESC, e.attempt DESC"
		limit = store.ClampLimit(p.Limit, store.DefaultListLimit, store.MaxListLimit)
	}
	// Each branch, the execution rows and the attempts job rows hold, is
	// ordered and limited on its own (store doc.go, "The finished attempt
	// in the job row"), then merged.
	q := executionSelect + join + w.sql() + order + " LIMIT ?"
	args := append(w.args, limit)
	return "SELECT * FROM (SELECT * FROM (" + q + ") AS x UNION ALL SELECT * FROM (" + heldBranch(q) + ") AS h) AS u" +
		strings.ReplaceAll(order, "e.", "") + " LIMIT ?", append(append(args, args...), limit)
}

// ExecutionList implements store.Reader.
func (s *Core) ExecutionList(ctx context.Context, p store.ExecutionListParams) ([]store.Execution, error) {
	if err := s.readCheck(ctx); err != nil {
		return nil, err
	}
	q, args := executionListQuery(p)
	rows, err := s.RDB.QueryContext(ctx, s.D.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("store: list executions: %w", err)
	}
	defer rows.Close()
	var out []store.Execution
	for rows.Next() {
		e, err := scanExecution(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list executions: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list executions: %w", err)
	}
	return out, nil
}

// jobFilter is the WHERE of JobList and JobCount but the states and the
// cursor.
func (s *Core) jobFilter(p store.JobListParams) where {
	var w where
	if p.Tenant != "" {
		w.add("tenant = ?", p.Tenant)
	}
	in(&w, "type", withOne(p.Types, p.Type))
	in(&w, "lane", withOne(p.Lanes, p.Lane))
	if p.ScheduleID != "" {
		w.add("schedule_id = ?", p.ScheduleID)
	}
	if p.Tag != "" {
		w.add(s.D.TagFilter("job_specs"), p.Tag)
	}
	if p.FailureClass != "" {
		w.add("failure_class = ?", string(p.FailureClass))
	}
	if !p.CreatedAfter.IsZero() {
		w.add("created_at > ?", timeArg(p.CreatedAfter))
	}
	if !p.CreatedBefore.IsZero() {
		w.add("created_at < ?", timeArg(p.CreatedBefore))
	}
	return w
}

// JobCount implements store.Reader: one COUNT over the job indexes, no
// rows loaded.
func (s *Core) JobCount(ctx context.Context, p store.JobListParams) (int64, error) {
	if err := s.readCheck(ctx); err != nil {
		return 0, err
	}
	q, args := s.jobCountQuery(p)
	var n int64
	if err := s.RDB.QueryRowContext(ctx, s.D.rebind(q), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count jobs: %w", err)
	}
	return n, nil
}

// tenantMerged reports whether a tenant's jobs, with no state or
// schedule, are read as their unfinished ones and their finished ones,
// one index each (Dialect.TenantUnfinished).
func (s *Core) tenantMerged(p store.JobListParams) bool {
	return s.D.TenantUnfinished && p.Tenant != "" && len(p.States) == 0 && p.ScheduleID == ""
}

// jobCountQuery is JobCount's statement (? placeholders).
func (s *Core) jobCountQuery(p store.JobListParams) (string, []any) {
	w := s.jobFilter(p)
	from := "jobs"
	if p.Tag != "" { // the tags are the spec's
		from = s.jobFrom()
	}
	if s.tenantMerged(p) {
		// A tenant's unfinished jobs and finished ones: one index each.
		unfinished, finished := w.clone(), w.clone()
		unfinished.add("final_state IS NULL")
		finished.add("final_state IS NOT NULL")
		return "SELECT (SELECT COUNT(*) FROM " + from + unfinished.sql() + ") + (SELECT COUNT(*) FROM " + from + finished.sql() + ")",
			append(unfinished.args, finished.args...)
	}
	var final, unfinished []string
	for _, st := range slices.Compact(slices.Sorted(slices.Values(p.States))) {
		if st.Terminal() {
			final = append(final, string(st))
		} else {
			unfinished = append(unfinished, string(st))
		}
	}
	switch {
	case len(final) > 0 && len(unfinished) > 0:
		w.add("(final_state IN ("+placeholders(len(final))+") OR (final_state IS NULL AND state IN ("+
			placeholders(len(unfinished))+")))", append(anys(final), anys(unfinished)...)...)
	case len(final) > 0:
		in(&w, "final_state", final)
	case len(unfinished) > 0:
		w.add("final_state IS NULL")
		in(&w, "state", unfinished)
	}
	return "SELECT COUNT(*) FROM " + from + w.sql(), w.args
}

// ExecutionSummary implements store.Reader. Its queries run in one read
// transaction, so they see one snapshot.
func (s *Core) ExecutionSummary(ctx context.Context, p store.SummaryParams) (store.Summary, error) {
	if err := s.readCheck(ctx); err != nil {
		return store.Summary{}, err
	}
	tx, err := s.RDB.BeginTx(ctx, nil)
	if err != nil {
		return store.Summary{}, fmt.Errorf("store: summary: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	sum, err := s.summarize(ctx, tx, p)
	if err != nil {
		return store.Summary{}, fmt.Errorf("store: summary: %w", err)
	}
	return sum, nil
}

func (s *Core) summarize(ctx context.Context, tx *sql.Tx, p store.SummaryParams) (store.Summary, error) {
	join, w := executionFilter(p.Tenant, p.Type, p.Lane, p.ScheduleID, p.FinishedAfter, p.FinishedBefore)
	w.add("e.finished_at IS NOT NULL AND e.outcome IS NOT NULL")
	var ex, held where
	finishedRange(&ex, &held, p.FinishedAfter, p.FinishedBefore)
	if p.JobID != "" {
		w.add("e.job_id = ?", p.JobID)
		ex.add("job_id = ?", p.JobID)
		held.add("id = ?", p.JobID)
	}
	if p.Outcome != "" {
		w.add("e.outcome = ?", string(p.Outcome))
	}
	src, srcArgs := attemptsFrom(ex, held)
	w.args = append(srcArgs, w.args...)
	from := " FROM " + src + " e" + join + w.sql()
	sum := store.Summary{ByOutcome: map[store.Outcome]int64{}, ByFailureClass: map[store.FailureClass]int64{}}
	var meanMs, violation, slaMeanMs sql.NullFloat64
	err := tx.QueryRowContext(ctx, s.D.rebind(`SELECT COUNT(*), AVG(e.duration_ms),
		COUNT(e.sla_met), COALESCE(SUM(CASE WHEN e.sla_met THEN 1 ELSE 0 END), 0),
		AVG(CASE WHEN NOT e.sla_met THEN e.sla_violation_pct END),
		AVG(CASE WHEN e.sla_met IS NOT NULL THEN e.duration_ms END)`+from), w.args...).
		Scan(&sum.Executions, &meanMs, &sum.SLAMeasured, &sum.SLAMet, &violation, &slaMeanMs)
	if err != nil || sum.Executions == 0 {
		return sum, err
	}
	sum.MeanDuration = time.Duration(meanMs.Float64 * float64(time.Millisecond)).Round(time.Millisecond)
	sum.SLAMeanDuration = time.Duration(slaMeanMs.Float64 * float64(time.Millisecond)).Round(time.Millisecond)
	sum.MeanSLAViolationPct = violation.Float64
	if err := countInto(ctx, tx, &s.D, "SELECT e.outcome, COUNT(*)"+from+" GROUP BY e.outcome", w.args, sum.ByOutcome); err != nil {
		return sum, err
	}
	if err := countInto(ctx, tx, &s.D, "SELECT e.failure_class, COUNT(*)"+from+
		" AND e.failure_class IS NOT NULL GROUP BY e.failure_class", w.args, sum.ByFailureClass); err != nil {
		return sum, err
	}
	for _, pc := range []struct {
		pct int64
		dst *time.Duration
	}{{50, &sum.P50Duration}, {95, &sum.P95Duration}, {99, &sum.P99Duration}} {
		if *pc.dst, err = durationPercentile(ctx, tx, &s.D, from, w.args, pc.pct, sum.Executions); err != nil {
			return sum, err
		}
	}
	if !p.Breakdowns {
		return sum, nil
	}
	grouped := from
	if join == "" {
		grouped = " FROM " + src + " e JOIN jobs j ON j.id = e.job_id" + w.sql()
	}
	if sum.ByTenant, err = groupSummaries(ctx, tx, &s.D, "j.tenant", grouped, w.args); err != nil {
		return sum, err
	}
	sum.ByType, err = groupSummaries(ctx, tx, &s.D, "j.type", grouped, w.args)
	return sum, err
}

// groupSummaries groups the executions that from selects (joined with
// their jobs as j) by the job column col.
func groupSummaries(ctx context.Context, tx *sql.Tx, d *Dialect, col, from string, args []any) (map[string]store.GroupSummary, error) {
	rows, err := tx.QueryContext(ctx, d.rebind("SELECT "+col+", e.outcome, COUNT(*), COALESCE(SUM(e.duration_ms), 0)"+from+
		" GROUP BY "+col+", e.outcome"), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]store.GroupSummary{}
	for rows.Next() {
		var key, outcome string
		var n, ms int64
		if err := rows.Scan(&key, &outcome, &n, &ms); err != nil {
			return nil, err
		}
		g, ok := out[key]
		if !ok {
			g = store.GroupSummary{ByOutcome: map[store.Outcome]int64{}}
		}
		g.ByOutcome[store.Outcome(outcome)] += n
		if store.Outcome(outcome) == store.OutcomeSucceeded {
			g.SucceededDuration += time.Duration(ms) * time.Millisecond
		}
		out[key] = g
	}
	return out, rows.Err()
}

// durationPercentile is the nearest-rank pct-th percentile (ceil(pct/100·n))
// of the run times of the n executions that from selects.
func durationPercentile(ctx context.Context, tx *sql.Tx, d *Dialect, from string, args []any, pct, n int64) (time.Duration, error) {
	rank := (pct*n + 99) / 100
	var ms int64
	err := tx.QueryRowContext(ctx, d.rebind("SELECT e.duration_ms"+from+" ORDER BY e.duration_ms LIMIT 1 OFFSET ?"),
		append(args, rank-1)...).Scan(&ms)
	return time.Duration(ms) * time.Millisecond, err
}

func countInto[K ~string](ctx context.Context, tx *sql.Tx, d *Dialect, q string, args []any, m map[K]int64) error {
	rows, err := tx.QueryContext(ctx, d.rebind(q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return err
		}
		m[K(k)] = n
	}
	return rows.Err()
}

// LogList implements store.Reader.
func (s *Core) LogList(ctx context.Context, p store.LogListParams) ([]store.LogChunk, error) {
	if err := s.readCheck(ctx); err != nil {
		return nil, err
	}
	var w where
	w.add("job_id = ?", p.JobID)
	if p.Attempt > 0 {
		w.add("attempt = ? AND seq > ?", int64(p.Attempt), p.AfterSeq)
	} else {
		w.add("(attempt > ? OR (attempt = ? AND seq > ?))", int64(p.AfterAttempt), int64(p.AfterAttempt), p.AfterSeq)
	}
	if p.Stream != "" {
		w.add("stream = ?", string(p.Stream))
	}
	limit := store.ClampLimit(p.Limit, store.DefaultLogLimit, store.MaxLogLimit)
	rows, err := s.RDB.QueryContext(ctx, s.D.rebind("SELECT job_id, attempt, stream, seq, at, data FROM log_chunks"+
		w.sql()+" ORDER BY attempt, seq LIMIT ?"), append(w.args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: list logs: %w", err)
	}
	defer rows.Close()
	var out []store.LogChunk
	for rows.Next() {
		var c store.LogChunk
		var attempt int64
		if err := rows.Scan(&c.JobID, &attempt, strCol[store.Stream]{&c.Stream}, &c.Seq,
			timeCol{&c.At}, bytesCol{&c.Data}); err != nil {
			return nil, fmt.Errorf("store: list logs: %w", err)
		}
		c.Attempt = int(attempt)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list logs: %w", err)
	}
	return out, nil
}

const workerSelect = `SELECT id, name, types, labels, slots, milli_cpu, memory_mb, gpu, state,
	registered_at, last_seen_at, handlers FROM workers`

func scanWorker(sc scanner) (store.Worker, error) {
	var w store.Worker
	var slots int64
	var handlers sql.NullString
	err := sc.Scan(&w.ID, &w.Name, jsonCol{&w.Types}, jsonCol{&w.Labels}, &slots,
		&w.Resources.MilliCPU, &w.Resources.MemoryMB, &w.Resources.GPU, strCol[store.WorkerState]{&w.State},
		timeCol{&w.RegisteredAt}, timeCol{&w.LastSeenAt}, &handlers)
	w.Slots = int(slots)
	if err == nil && handlers.Valid { // "[]" must stay an empty list, not "not reported"
		w.Handlers = []string{}
		err = json.Unmarshal([]byte(handlers.String), &w.Handlers)
	}
	return w, err
}

// WorkerGet implements store.Reader.
func (s *Core) WorkerGet(ctx context.Context, id string) (store.Worker, error) {
	return getOne(ctx, s, scanWorker, "worker", id, workerSelect+" WHERE id = ?")
}

// WorkerList implements store.Reader.
func (s *Core) WorkerList(ctx context.Context) ([]store.Worker, error) {
	ws, err := queryAll(ctx, s, scanWorker, workerSelect+" ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("store: list workers: %w", err)
	}
	return ws, nil
}

const scheduleSelect = `SELECT id, tenant, name, spec, timezone, template, overlap, enabled,
	next_run_at, last_run_at, created_at, updated_at, catchup_window_ms, jitter_ms, start_at, end_at,
	pause_note, pause_on_failure, buffered, tags FROM schedules`

func scanSchedule(sc scanner) (store.Schedule, error) {
	var v store.Schedule
	var buffered []int64
	err := sc.Scan(&v.ID, &v.Tenant, &v.Name, &v.Spec, &v.Timezone, rawJSONCol{&v.Template},
		&v.Overlap, &v.Enabled, timeCol{&v.NextRunAt},
		timeCol{&v.LastRunAt}, timeCol{&v.CreatedAt}, timeCol{&v.UpdatedAt}, msCol{&v.CatchupWindow}, msCol{&v.Jitter},
		timeCol{&v.StartAt}, timeCol{&v.EndAt}, &v.PauseNote, &v.PauseOnFailure, jsonCol{&buffered}, jsonCol{&v.Tags})
	v.Buffered = timesCol(buffered)
	return v, err
}

// ScheduleGet implements store.Reader.
func (s *Core) ScheduleGet(ctx context.Context, id string) (store.Schedule, error) {
	return getOne(ctx, s, scanSchedule, "schedule", id, scheduleSelect+" WHERE id = ?")
}

// ScheduleList implements store.Reader.
func (s *Core) ScheduleList(ctx context.Context, p store.ScheduleListParams) ([]store.Schedule, error) {
	var w where
	if p.Tenant != "" {
		w.add("tenant = ?", p.Tenant)
	}
	if p.EnabledOnly || !p.DueBefore.IsZero() {
		w.add("enabled = TRUE")
	}
	if !p.DueBefore.IsZero() {
		w.add("next_run_at <= ?", timeArg(p.DueBefore))
	}
	if p.AfterID != "" {
		w.add("id > ?", p.AfterID)
	}
	if p.Tag != "" {
		w.add(s.D.TagFilter("schedules"), p.Tag)
	}
	limit := store.ClampLimit(p.Limit, store.DefaultListLimit, store.MaxListLimit)
	scs, err := queryAll(ctx, s, scanSchedule, scheduleSelect+w.sql()+" ORDER BY id LIMIT ?", append(w.args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: list schedules: %w", err)
	}
	return scs, nil
}

func (s *Core) WebhookList(ctx context.Context) ([]store.Webhook, error) {
	out, err := queryAll(ctx, s, func(sc scanner) (store.Webhook, error) {
		var h store.Webhook
		err := sc.Scan(&h.Name, &h.URL, &h.Secret, jsonCol{&h.Kinds}, jsonCol{&h.Tenants}, timeCol{&h.CreatedAt}, &h.CreatedBy)
		return h, err
	}, "SELECT name, url, secret, kinds, tenants, created_at, created_by FROM webhooks ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("store: list webhooks: %w", err)
	}
	return out, nil
}

func (s *Core) LaneStateList(ctx context.Context) ([]store.LaneState, error) {
	out, err := queryAll(ctx, s, func(sc scanner) (store.LaneState, error) {
		var l store.LaneState
		err := sc.Scan(&l.Lane, &l.Paused, &l.Note, timeCol{&l.ChangedAt}, &l.ChangedBy)
		return l, err
	}, "SELECT lane, paused, note, changed_at, changed_by FROM lane_states ORDER BY lane")
	if err != nil {
		return nil, fmt.Errorf("store: list lane states: %w", err)
	}
	return out, nil
}

const apiKeySelect = "SELECT key_hash, tenant, role, name, created_at, created_by, expires_at FROM api_keys"

func scanAPIKey(sc scanner) (store.APIKey, error) {
	var k store.APIKey
	err := sc.Scan(&k.KeyHash, &k.Tenant, strCol[store.Role]{&k.Role}, &k.Name, timeCol{&k.CreatedAt},
		&k.CreatedBy, timeCol{&k.ExpiresAt})
	return k, err
}

// APIKeyGet implements store.Reader.
func (s *Core) APIKeyGet(ctx context.Context, keyHash string) (store.APIKey, error) {
	ks, err := queryAll(ctx, s, scanAPIKey, apiKeySelect+" WHERE key_hash = ?", keyHash)
	if err != nil {
		return store.APIKey{}, fmt.Errorf("store: get api key: %w", err)
	}
	if len(ks) == 0 {
		return store.APIKey{}, fmt.Errorf("%w: api key", store.ErrNotFound)
	}
	return ks[0], nil
}

// APIKeyList implements store.Reader.
func (s *Core) APIKeyList(ctx context.Context, tenant string) ([]store.APIKey, error) {
	var w where
	if tenant != "" {
		w.add("tenant = ?", tenant)
	}
	ks, err := queryAll(ctx, s, scanAPIKey, apiKeySelect+w.sql()+" ORDER BY key_hash", w.args...)
	if err != nil {
		return nil, fmt.Errorf("store: list api keys: %w", err)
	}
	return ks, nil
}
