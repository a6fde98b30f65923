package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fairwayhq/fairway/internal/store"
)

// The events' read: the events table, the attempt events that jobs and
// executions hold (package store, "Attempt history in the execution
// row") and the submitted events that jobs hold ("The submitted event in
// the job row"), as one list in id order.

// eventSource is one branch of EventList's UNION ALL: where its events
// come from and the SQL expression of each column a filter reads.
type eventSource struct {
	kind      int             // how scanEvent builds the event (eventStored ...)
	from      string          // FROM clause
	base      string          // condition every row of the branch meets
	typ       string          // the type column's expression, when not constType
	constType store.EventType // the branch's one type, if it has one

	// The columns of an event, as expressions of the branch's tables.
	id, jobID, attempt, tenant, at, actor, detail, scheduleID string

	// worker, late (the worker's start time of a start reported with
	// the completion), exitCode, class, errText and outcome feed the
	// synthesised events.
	worker, late, exitCode, class, errText, outcome string

	// key is the indexed column the branch walks in id order, when it
	// is not id itself: key = id + keyShift in every row of the branch
	// (lateStartSource).
	key      string
	keyShift int64
}

const (
	eventStored = iota
	eventExecLeased
	eventExecStarted
	eventExecEnd
	eventJobLeased
	eventJobStarted
	eventJobSubmitted
	eventJobEnd
	eventJobLiveLeased
	eventJobLiveStarted
	eventJobLateStarted
)

const (
	nullText   = "CAST(NULL AS TEXT)"
	nullBigint = "CAST(NULL AS BIGINT)"
	execJoin   = "executions x JOIN jobs j ON j.id = x.job_id"
	execWorker = "'worker:' || COALESCE(x.worker_id, '')"
	jobWorker  = "'worker:' || COALESCE(j.worker_id, '')"
	// jobTenant is the synthesised events' tenant: the job's, through
	// Dialect.Unindexed.
	jobTenant = "{unindexed j.tenant}"
	// jobCreated is the submitted event's time, through Dialect.Unindexed:
	// a time range filters the walk by id, it does not choose
	// jobs_created.
	jobCreated = "{unindexed j.created_at}"
)

var eventSources = []eventSource{
	{kind: eventStored, from: "events", base: "", typ: "type",
		id: "id", jobID: "job_id", attempt: "attempt", tenant: "tenant", at: "at", actor: "actor", detail: "detail",
		scheduleID: "schedule_id", worker: nullText, late: nullBigint, exitCode: nullBigint, class: nullText,
		errText: nullText, outcome: nullText},
	{kind: eventExecLeased, from: execJoin, base: "x.lease_event_id IS NOT NULL", constType: store.EventLeased,
		id: "x.lease_event_id", jobID: "x.job_id", attempt: "x.attempt", tenant: jobTenant, at: "x.leased_at",
		actor: "'system'", detail: nullText, scheduleID: nullText, worker: "x.worker_id", late: nullBigint,
		exitCode: nullBigint, class: nullText, errText: nullText, outcome: nullText},
	{kind: eventExecStarted, from: execJoin, base: "x.start_event_id IS NOT NULL", constType: store.EventStarted,
		id: "x.start_event_id", jobID: "x.job_id", attempt: "x.attempt", tenant: jobTenant,
		at: "COALESCE(x.start_event_at, x.finished_at)", actor: execWorker, detail: nullText, scheduleID: nullText,
		worker: "x.worker_id", late: "CASE WHEN x.start_event_at IS NULL THEN x.started_at END",
		exitCode: nullBigint, class: nullText, errText: nullText, outcome: nullText},
	{kind: eventExecEnd, from: execJoin, base: "x.end_event_id IS NOT NULL",
		typ: "CASE x.outcome WHEN 'succeeded' THEN 'succeeded' WHEN 'cancelled' THEN 'cancelled' ELSE 'failed' END",
		id:  "x.end_event_id", jobID: "x.job_id", attempt: "x.attempt", tenant: jobTenant, at: "x.finished_at",
		actor: execWorker, detail: nullText, scheduleID: nullText, worker: "x.worker_id", late: nullBigint,
		exitCode: "x.exit_code", class: "x.failure_class", errText: "x.error", outcome: "x.outcome"},
	jobLeasedSource,
	// A running job's live attempt (store doc.go, "The hot row and its
	// indexes"): its ids are in columns no index holds, so the audit feed
	// walks jobs_unfinished (final_state IS NULL: filter adds it) and
	// filters; one job's events find its row by key. The leader answers the feed's live
	// events from its dispatcher instead (EventListParams.NoLive).
	jobLeasedSource.fromLiveColumn(eventJobLiveLeased, liveLease),
	jobStartedSource.fromLiveColumn(eventJobLiveStarted, liveStart),
	// Held attempts (store doc.go, "The finished attempt in the job
	// row"), through jobs_start_event. A held attempt's start
	// reported with its completion has no start_event_at, as in an
	// execution row; when its id is the one before its outcome event's,
	// jobs_start_event leaves it out and jobs_end_event finds it.
	jobStartedSource,
	lateStartSource,
	// The outcome event of a held attempt, through jobs_end_event.
	{kind: eventJobEnd, from: "jobs j", base: "j.end_event_id IS NOT NULL",
		typ: "CASE j.attempt_outcome WHEN 'succeeded' THEN 'succeeded' WHEN 'cancelled' THEN 'cancelled' ELSE 'failed' END",
		id:  "j.end_event_id", jobID: "j.id", attempt: "j.attempt", tenant: jobTenant, at: "j.finished_at",
		actor: jobWorker, detail: nullText, scheduleID: nullText, worker: "j.worker_id", late: nullBigint,
		exitCode: "j.exit_code", class: "j.failure_class", errText: "j.last_error", outcome: "j.attempt_outcome"},
	// Found through jobs_submit_event. The detail's type, lane and
	// priority ride in worker_id, error and exit_code.
	{kind: eventJobSubmitted, from: "jobs j", base: "j.submit_event_id IS NOT NULL", constType: store.EventSubmitted,
		id: "j.submit_event_id", jobID: "j.id", attempt: "0", tenant: jobTenant, at: jobCreated,
		actor: "COALESCE(j.submit_actor, '')", detail: nullText, scheduleID: nullText, worker: "j.type", late: nullBigint,
		exitCode: "COALESCE(j.submit_priority, j.priority)", class: nullText, errText: "j.lane", outcome: nullText},
}

// jobLeasedSource and jobStartedSource are the leased and started events
// a job row holds in its indexed columns (jobs_live_events,
// jobs_start_event); fromLiveColumn makes from each the branch of a live
// attempt's.
var (
	jobLeasedSource = eventSource{kind: eventJobLeased, from: "jobs j", base: "j.lease_event_id IS NOT NULL", constType: store.EventLeased,
		id: "j.lease_event_id", jobID: "j.id", attempt: "j.attempt", tenant: jobTenant, at: "j.leased_at",
		actor: "'system'", detail: nullText, scheduleID: nullText, worker: "j.worker_id", late: nullBigint,
		exitCode: nullBigint, class: nullText, errText: nullText, outcome: nullText}
	jobStartedSource = eventSource{kind: eventJobStarted, from: "jobs j", base: "j.start_event_id IS NOT NULL AND " + heldStartIndexed,
		constType: store.EventStarted, id: "j.start_event_id", jobID: "j.id", attempt: "j.attempt", tenant: jobTenant,
		at: "COALESCE(j.start_event_at, j.finished_at)", actor: jobWorker, detail: nullText, scheduleID: nullText,
		worker: "j.worker_id", late: "CASE WHEN j.start_event_at IS NULL THEN j.started_at END",
		exitCode: nullBigint, class: nullText, errText: nullText, outcome: nullText}
)

// lateStartSource is the started events of held attempts that
// jobs_start_event leaves out (heldStartIndexed): reported with the
// completion, and one id before the outcome event, which the same
// transition drew. jobs_end_event gives them in id order, one apart.
var lateStartSource = func() eventSource {
	src := jobStartedSource
	src.kind, src.base = eventJobLateStarted, "j.start_event_id IS NOT NULL AND "+heldStartLate
	src.key, src.keyShift = "j.end_event_id", 1
	return src
}()

// heldStartIndexed is jobs_start_event's condition beyond a started
// event (both drivers' migrations, "jobs_start_event"), and
// heldStartLate the rest of the started events a job row holds: a start
// reported with the completion whose id is the one before the outcome
// event's. The finish of a drained job writes no entry for its started
// event: jobs_end_event, written anyway, serves both.
const (
	heldStartIndexed = "(j.start_event_at IS NOT NULL OR j.end_event_id IS NULL OR j.end_event_id <> j.start_event_id + 1)"
	heldStartLate    = "j.start_event_at IS NULL AND j.end_event_id = j.start_event_id + 1"
)

// fromLiveColumn is src read from the live column of c instead of its
// indexed one, as a branch of kind.
func (src eventSource) fromLiveColumn(kind int, c liveEventCol) eventSource {
	src.kind, src.id, src.base = kind, "j."+c.live, "j."+c.live+" IS NOT NULL"
	return src
}

// orderKey is the column the branch walks, in the order of its ids.
func (src *eventSource) orderKey() string {
	if src.key != "" {
		return src.key
	}
	return src.id
}

// typeExpr is the branch's type column.
func (src *eventSource) typeExpr() string {
	if src.constType != "" {
		return "'" + string(src.constType) + "'"
	}
	return src.typ
}

// live reports whether the branch reads a live attempt's columns, which
// no index holds.
func (src *eventSource) live() bool {
	return src.kind == eventJobLiveLeased || src.kind == eventJobLiveStarted
}

// skipped reports whether no event of the branch can match p.
func (src *eventSource) skipped(p *store.EventListParams) bool {
	if src.kind == eventStored {
		return false
	}
	if p.ScheduleID != "" {
		return true // synthesised events belong to no schedule
	}
	if p.NoLive && src.live() {
		return true
	}
	if src.constType != "" && len(p.Types) > 0 && !slices.Contains(p.Types, src.constType) {
		return true
	}
	if (src.kind == eventExecEnd || src.kind == eventJobEnd) && len(p.Types) > 0 && !slices.ContainsFunc(p.Types, func(t store.EventType) bool {
		return t == store.EventSucceeded || t == store.EventFailed || t == store.EventCancelled
	}) {
		return true
	}
	return false
}

// filter is the branch's WHERE for p.
func (src *eventSource) filter(p *store.EventListParams) where {
	var w where
	if src.base != "" {
		w.add(src.base)
	}
	if src.live() && p.JobID == "" {
		w.add("j.final_state IS NULL") // the live columns are NULL in other rows
	}
	key := src.orderKey()
	w.add(key+" > ?", p.AfterID+src.keyShift)
	if p.UpToID > 0 {
		w.add(key+" <= ?", p.UpToID+src.keyShift)
	}
	if p.JobID != "" {
		w.add(src.jobID+" = ?", p.JobID)
	}
	if p.Tenant != "" {
		w.add(src.tenant+" = ?", p.Tenant)
	}
	if p.ScheduleID != "" {
		w.add(src.scheduleID+" = ?", p.ScheduleID)
	}
	if len(p.Types) > 0 && src.constType == "" {
		in(&w, src.typeExpr(), p.Types)
	}
	if p.Actor != "" {
		// The actor itself, every key of a role ("admin" finds "admin
		// key 1a2b... (name)"), or one key by its id.
		esc := likeEscaper.Replace(p.Actor)
		a := src.actor
		w.add("("+a+" = ? OR "+a+` LIKE ? ESCAPE '\' OR `+a+` LIKE ? ESCAPE '\')`, p.Actor, esc+" key %", "% key "+esc+"%")
	}
	if !p.Since.IsZero() {
		w.add(src.at+" >= ?", timeArg(p.Since))
	}
	if !p.Until.IsZero() {
		w.add(src.at+" < ?", timeArg(p.Until))
	}
	return w
}

// branchSQL is the branch's SELECT for p, ordered and limited on its own
// (with a job named, its rows are found by key, and are few).
func (src *eventSource) branchSQL(w where, order string) string {
	cols := []string{src.id, fmt.Sprint(src.kind), src.jobID, src.attempt, src.tenant, src.typeExpr(), src.at, src.actor,
		src.detail, src.scheduleID, src.worker, src.late, src.exitCode, src.class, src.errText, src.outcome}
	for i, name := range eventColumns {
		cols[i] += " AS " + name
	}
	return "SELECT * FROM (SELECT " + strings.Join(cols, ", ") + " FROM " + src.from + w.sql() +
		" ORDER BY " + src.orderKey() + order + " LIMIT ?) AS b" + fmt.Sprint(src.kind)
}

var eventColumns = []string{"id", "kind", "job_id", "attempt", "tenant", "type", "at", "actor", "detail", "schedule_id",
	"worker_id", "late_start", "exit_code", "failure_class", "error", "outcome"}

// EventListQuery returns EventList's query for p and its arguments
// (exported for the drivers' plan tests).
func (s *Core) EventListQuery(p store.EventListParams) (string, []any) {
	limit := store.ClampLimit(p.Limit, store.DefaultListLimit, store.MaxListLimit)
	order := ""
	if p.Newest {
		order = " DESC"
	}
	var parts []string
	var args []any
	for i := range eventSources {
		src := &eventSources[i]
		if src.skipped(&p) {
			continue
		}
		w := src.filter(&p)
		parts = append(parts, src.branchSQL(w, order))
		args = append(append(args, w.args...), limit)
	}
	q := "SELECT * FROM (" + strings.Join(parts, " UNION ALL ") + ") AS u ORDER BY id" + order + " LIMIT ?"
	for _, col := range []string{jobTenant, jobCreated} {
		name := strings.TrimSuffix(strings.TrimPrefix(col, "{unindexed "), "}")
		q = strings.ReplaceAll(q, col, strings.ReplaceAll(s.D.Unindexed, "%s", name))
	}
	return s.D.rebind(q), append(args, limit)
}

// EventList implements store.Reader.
func (s *Core) EventList(ctx context.Context, p store.EventListParams) ([]store.Event, error) {
	if err := s.readCheck(ctx); err != nil {
		return nil, err
	}
	q, args := s.EventListQuery(p)
	rows, err := s.RDB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list events: %w", err)
	}
	defer rows.Close()
	var out []store.Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list events: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list events: %w", err)
	}
	return out, nil
}

// scanEvent reads one row of EventList's query: a stored event as it is,
// a synthesised one built by package store's functions.
func scanEvent(sc scanner) (store.Event, error) {
	var e store.Event
	var kind, attempt int64
	var x store.Execution
	if err := sc.Scan(&e.ID, &kind, strCol[string]{&e.JobID}, &attempt, &e.Tenant, strCol[store.EventType]{&e.Type},
		timeCol{&e.At}, &e.Actor, rawJSONCol{&e.Detail}, strCol[string]{&e.ScheduleID},
		strCol[string]{&x.WorkerID}, timeCol{&x.StartedAt}, intPtrCol{&x.ExitCode}, strCol[store.FailureClass]{&x.FailureClass},
		strCol[string]{&x.Error}, strCol[store.Outcome]{&x.Outcome}); err != nil {
		return store.Event{}, err
	}
	e.Attempt = int(attempt)
	switch kind {
	case eventExecLeased, eventJobLeased, eventJobLiveLeased:
		return store.LeasedEvent(e.ID, e.JobID, e.Attempt, e.Tenant, e.At, x.WorkerID), nil
	case eventExecStarted, eventJobStarted, eventJobLiveStarted, eventJobLateStarted:
		return store.StartedEvent(e.ID, e.JobID, e.Attempt, e.Tenant, e.At, x.WorkerID, x.StartedAt), nil
	case eventExecEnd, eventJobEnd:
		x.JobID, x.Attempt, x.FinishedAt = e.JobID, e.Attempt, e.At
		return store.OutcomeEvent(e.ID, e.Tenant, x), nil
	case eventJobSubmitted:
		var priority int
		if x.ExitCode != nil {
			priority = *x.ExitCode
		}
		return store.SubmittedEvent(e.ID, e.JobID, e.Tenant, e.At, e.Actor, x.WorkerID, x.Error, priority), nil
	}
	return e, nil
}

// EventIDMaxima lists, comma-separated, the largest event id of each
// place an event lives: the events table, the attempt rows' id columns
// and the jobs' submitted ids, each one end of an index (a held late
// start that jobs_start_event leaves out is one below its outcome event's
// id, in jobs_end_event), and the live
// attempts' ids (liveEventMaxima). The job rows' held starts are read
// as the feed's branch reads them (jobStartedSource). With the events'
// sequence, which covers ids deleted by retention, it gives EventLastID.
var EventIDMaxima = `COALESCE((SELECT max(id) FROM events), 0),
	COALESCE((SELECT max(lease_event_id) FROM executions WHERE lease_event_id IS NOT NULL), 0),
	COALESCE((SELECT max(start_event_id) FROM executions WHERE start_event_id IS NOT NULL), 0),
	COALESCE((SELECT max(end_event_id) FROM executions WHERE end_event_id IS NOT NULL), 0),
	COALESCE((SELECT max(lease_event_id) FROM jobs WHERE lease_event_id IS NOT NULL), 0),
	COALESCE((SELECT max(j.start_event_id) FROM jobs j WHERE ` + jobStartedSource.base + `), 0),
	COALESCE((SELECT max(end_event_id) FROM jobs WHERE end_event_id IS NOT NULL), 0),
	COALESCE((SELECT max(submit_event_id) FROM jobs WHERE submit_event_id IS NOT NULL), 0),
	` + liveEventMaxima

// liveEventMaxima is the largest event id the live attempts of unfinished
// jobs hold: their live columns (liveEventCol), which no index holds, so
// a walk of jobs_unfinished, as the rebuild's (a started event's id is
// larger than its attempt's leased event's).
const liveEventMaxima = `COALESCE((SELECT max(COALESCE(live_start_event_id, live_lease_event_id))
	FROM jobs WHERE final_state IS NULL), 0)`

// EventLastID implements store.Reader.
func (s *Core) EventLastID(ctx context.Context) (int64, error) {
	if err := s.readCheck(ctx); err != nil {
		return 0, err
	}
	var id int64
	if err := s.RDB.QueryRowContext(ctx, s.D.EventLastID).Scan(&id); err != nil {
		return 0, fmt.Errorf("store: last event id: %w", err)
	}
	return id, nil
}
