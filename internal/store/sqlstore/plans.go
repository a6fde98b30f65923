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
	Index string // the index its plan must use
	SQL   string // the dialect's placeholders
	Args  []any
}

// PlannedQueries returns the statements of the job listings, the rebuild
// at lead, retention and event retention's walk, with the index each
// must use.
func (c *Core) PlannedQueries() []PlannedQuery {
	list := func(name, index string, p store.JobListParams) PlannedQuery {
		q, args, err := c.jobListQuery(p, 50)
		if err != nil {
			panic(err) // no cursor: cannot fail
		}
		return PlannedQuery{Name: name, Index: index, SQL: c.D.rebind(q), Args: args}
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return []PlannedQuery{
		list("list all", "jobs_created", store.JobListParams{}),
		list("list a tenant", "jobs_tenant_created", store.JobListParams{Tenant: "t1"}),
		list("list cancelled", "jobs_final", store.JobListParams{States: []store.State{store.StateCancelled}}),
		list("list a tenant's failed", "jobs_tenant_final",
			store.JobListParams{Tenant: "t1", States: []store.State{store.StateFailed}}),
		list("list a schedule's jobs", "jobs_schedule", store.JobListParams{ScheduleID: "s1"}),
		list("list running (no dispatcher)", "jobs_unfinished", store.JobListParams{States: []store.State{store.StateRunning}}),
		{Name: "rebuild at lead", Index: "jobs_unfinished", SQL: c.D.rebind(unfinishedSQL)},
		{Name: "retention", Index: "jobs_finished", SQL: c.D.rebind(retentionSQL), Args: []any{t.UnixMicro(), 101}},
		{Name: "event retention", Index: "jobs_submit_event", SQL: c.D.rebind(oldEventsSQL), Args: []any{251, 251, 251}},
	}
}
