package sqlstore

import (
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// PlannedQuery is a statement that reads jobs through one index of
// theirs, for the drivers' plan tests (store doc.go, "The hot row and its
// indexes"): every index of jobs but the primary key is named by one.
type PlannedQuery struct {
	Name  string
	Index string   // the index its plan must use
	Also  []string // further indexes it must use (a merge of branches)
	SQL   string   // the dialect's placeholders
	Args  []any
}

// FeedIndexes are the indexes of jobs and executions that no
// PlannedQuery names: the audit feed's ways to the synthesised events
// (one partial index per id column; store doc.go, "Attempt history in the
// execution row", "The submitted event in the job row", "The finished
// attempt in the job row"), whose plans the drivers' events plan tests
// check instead.
var FeedIndexes = map[string]bool{
	"jobs_live_events": true, "jobs_submit_event": true, "jobs_start_event": true, "jobs_end_event": true,
	"executions_lease_event": true, "executions_start_event": true, "executions_end_event": true,
}

// PlannedQueries returns the statements of the job listings, the rebuild
// at lead, retention and event retention's walk, with the index each
// must use.
func (c *Core) PlannedQueries() []PlannedQuery {
	list := func(name, index string, p store.JobListParams, also ...string) PlannedQuery {
		q, args, err := c.jobListQuery(p, 50)
		if err != nil {
			panic(err) // no cursor: cannot fail
		}
		return PlannedQuery{Name: name, Index: index, Also: also, SQL: c.D.rebind(q), Args: args}
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// A tenant's jobs: one range of jobs_tenant_created, or with
	// Dialect.TenantUnfinished jobs_tenant_unfinished and
	// jobs_tenant_final's terminal states.
	tenantIndex, tenantAlso := "jobs_tenant_created", []string(nil)
	if c.D.TenantUnfinished {
		tenantIndex, tenantAlso = "jobs_tenant_unfinished", []string{"jobs_tenant_final"}
	}
	tenantCount, tenantCountArgs := c.jobCountQuery(store.JobListParams{Tenant: "t1"})
	return []PlannedQuery{
		list("list all", "jobs_unfinished", store.JobListParams{}, "jobs_final"),
		list("list all, second page", "jobs_unfinished", store.JobListParams{
			Cursor: store.JobCursor{CreatedAt: time.UnixMicro(1_030_000).UTC(), ID: "job-00030000"}.Encode()}, "jobs_final"),
		list("list a tenant", tenantIndex, store.JobListParams{Tenant: "t1"}, tenantAlso...),
		{Name: "count a tenant's jobs", Index: tenantIndex, Also: tenantAlso, SQL: c.D.rebind(tenantCount), Args: tenantCountArgs},
		list("list cancelled", "jobs_final", store.JobListParams{States: []store.State{store.StateCancelled}}),
		list("list a tenant's failed", "jobs_tenant_final",
			store.JobListParams{Tenant: "t1", States: []store.State{store.StateFailed}}),
		list("list a schedule's jobs", "jobs_schedule", store.JobListParams{ScheduleID: "s1"}),
		list("list running (no dispatcher)", "jobs_unfinished", store.JobListParams{States: []store.State{store.StateRunning}}),
		list("list finished", "jobs_final", store.JobListParams{States: store.TerminalStates()}),
		{Name: "rebuild at lead", Index: "jobs_unfinished", SQL: c.D.rebind(c.unfinishedSQL())},
		// The live attempts' largest event id (EventLastID), in no index
		// (store doc.go, "The hot row and its indexes").
		{Name: "last live event id", Index: "jobs_unfinished", SQL: "SELECT " + liveEventMaxima},
		{Name: "retention", Index: "jobs_finished", SQL: c.D.rebind(retentionSQL), Args: []any{t.UnixMicro(), 101}},
		{Name: "event retention", Index: "jobs_submit_event", SQL: c.D.rebind(oldEventsSQL), Args: []any{251, 251, 251}},
	}
}

// PlannedAttemptQueries returns the statements that read executions and
// idempotency claims through an index other than the primary key, with
// the index each must use (and jobs_finished for the attempts job rows
// hold); times are those of the plan tests' seeds
// (unix microseconds around 2,000,000).
func (c *Core) PlannedAttemptQueries() []PlannedQuery {
	q := func(name, index, sql string, args []any, also ...string) PlannedQuery {
		return PlannedQuery{Name: name, Index: index, Also: also, SQL: c.D.rebind(sql), Args: args}
	}
	at := func(us int64) time.Time { return time.UnixMicro(us).UTC() }
	series := store.SeriesParams{Since: at(2_010_000), Until: at(2_020_000), Step: time.Millisecond}
	list, listArgs := executionListQuery(store.ExecutionListParams{Limit: 50})
	since, sinceArgs := executionListQuery(store.ExecutionListParams{FinishedAfter: at(2_010_000), Limit: 50})
	finished, finishedArgs := finishedSeriesQuery(series)
	// The wait series of the last 10 ms of the seeds: the attempts job
	// rows hold are found by finished_at from the window's start on, all
	// of them for a window that began long ago (store doc.go, "The
	// finished attempt in the job row").
	waits, waitArgs := waitSeriesQuery(store.SeriesParams{Since: at(2_040_000), Until: at(2_050_000), Step: time.Millisecond})
	return []PlannedQuery{
		// The attempts job rows hold: the jobs' finished index (store
		// doc.go, "The finished attempt in the job row").
		q("list finished attempts", "executions_finished", list, listArgs, "jobs_finished"),
		q("list attempts finished since", "executions_finished", since, sinceArgs, "jobs_finished"),
		q("series of finished attempts", "executions_finished", finished, finishedArgs, "jobs_finished"),
		q("series of waits", "executions_leased", waits, waitArgs, "jobs_finished"),
		q("result uploads due", "executions_results_due", resultsDueSQL, []any{int64(3_000_000), 50}),
		q("purge of idempotency claims", "idempotency_keys_created", idemExpiredSQL, []any{int64(1_000_100), 101}),
	}
}
