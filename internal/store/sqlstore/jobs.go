package sqlstore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fairwayhq/fairway/internal/store"
)

// jobColumns is the column order of every job SELECT.
var jobColumns = []string{
	"id", "tenant", "name", "type", "lane", "key", "fairness_key", "priority", "on_demand",
	"milli_cpu", "memory_mb", "gpu", "labels", "command", "env", "dir", "payload",
	"idempotency_key", "state", "attempt", "max_attempts",
	"retry_kind", "retry_delay_ms", "retry_max_delay_ms", "retry_jitter", "retry_on",
	"timeout_ms", "expected_ms", "sla_policy", "run_at", "depends_on", "schedule_id",
	"created_at", "updated_at", "enqueued_at", "started_at", "finished_at",
	"worker_id", "lease_expires_at", "cancel_requested", "last_error", "exit_code",
	"failure_class", "result", "shell", "returned_leases", "output_limit", "scheduled_for", "tags", "result_location", "held",
	"not_preemptible", "trace_parent", "unique_rule", "snoozes", "max_snoozes",
	"lease_event_id", "leased_at", "start_event_id", "start_event_at",
	"submit_event_id", "submit_actor", "submit_priority", "submit_token",
}

// specColumns are the columns of jobColumns that job_specs holds: the
// job's spec, written once by its insert and never by a state change
// (store doc.go, "The hot row and its indexes"). The others are the
// columns of jobs.
var specColumns = []string{
	"name", "key", "fairness_key", "on_demand", "labels", "command", "env", "dir", "payload",
	"idempotency_key", "retry_kind", "retry_delay_ms", "retry_max_delay_ms", "retry_jitter", "retry_on",
	"sla_policy", "depends_on", "shell", "output_limit", "scheduled_for", "tags", "result_location",
	"not_preemptible", "trace_parent", "unique_rule", "max_snoozes", "submit_token",
}

// JobFrom is the FROM of every job SELECT unless the dialect has its
// own (Dialect.JobFrom): a job's row and its spec. No column name is in
// both tables (job_specs' key is job_id), so the columns need no table
// name. A LEFT JOIN, so that every plan walks an index of jobs and finds
// each spec by its key; every job has one.
const JobFrom = "jobs LEFT JOIN job_specs ON job_specs.job_id = jobs.id"

// jobFrom is the dialect's FROM of a job SELECT.
func (c *Core) jobFrom() string {
	if c.D.JobFrom != "" {
		return c.D.JobFrom
	}
	return JobFrom
}

// liveEventCol is a live attempt's event id column and the indexed
// column it moves to when the job finishes (store doc.go, "The hot row
// and its indexes"): while the job is unfinished its id is in live, which
// no index holds, so that the lease or start that writes it is HOT on
// PostgreSQL; the write that finishes the job moves it to indexed.
type liveEventCol struct{ indexed, live string }

var (
	liveLease = liveEventCol{indexed: "lease_event_id", live: "live_lease_event_id"}
	liveStart = liveEventCol{indexed: "start_event_id", live: "live_start_event_id"}
)

// read is the column as a job SELECT reads it: the live id, or else the
// indexed one (a row never has both).
func (c liveEventCol) read() string { return "COALESCE(" + c.live + ", " + c.indexed + ")" }

// jobColumnList is jobColumns, comma-separated, each live attempt's event
// id read from whichever of its two columns holds it.
var jobColumnList = func() string {
	cols := slices.Clone(jobColumns)
	for i, c := range cols {
		for _, l := range []liveEventCol{liveLease, liveStart} {
			if c == l.indexed {
				cols[i] = l.read()
			}
		}
	}
	return strings.Join(cols, ", ")
}()

// jobSelect is "SELECT <columns> FROM <jobFrom>".
func (c *Core) jobSelect() string { return "SELECT " + jobColumnList + " FROM " + c.jobFrom() }

// jobInsertColumns is the column order of jobArgs: jobColumns and
// final_state, the terminal state or NULL (store doc.go, "The hot row
// and its indexes"), which is derived from state and never read back,
// and the live attempt's event ids (liveEventCol), which the insert of
// an unfinished job writes in place of lease_event_id and start_event_id.
var jobInsertColumns = append(append([]string(nil), jobColumns...), "final_state", liveLease.live, liveStart.live)

// hotArgs and specArgs are the positions in jobInsertColumns of the
// columns of jobs and of job_specs (after job_id, which is the job's id).
var hotArgs, specArgs = func() (hot, spec []int) {
	for i, c := range jobInsertColumns {
		if slices.Contains(specColumns, c) {
			spec = append(spec, i)
		} else {
			hot = append(hot, i)
		}
	}
	return hot, spec
}()

// pick is the elements of list at positions at.
func pick[T any](list []T, at []int) []T {
	out := make([]T, len(at))
	for i, n := range at {
		out[i] = list[n]
	}
	return out
}

// splitJobArgs cuts jobArgs' values into the row of jobs and the row of
// job_specs (job_id first).
func splitJobArgs(args []any) (hot, spec []any) {
	return appendSplitJobArgs(args, make([]any, 0, len(hotArgs)), make([]any, 0, 1+len(specArgs)))
}

// appendSplitJobArgs is splitJobArgs appending to hot and spec.
func appendSplitJobArgs(args, hot, spec []any) ([]any, []any) {
	spec = append(spec, args[0]) // id
	for _, n := range specArgs {
		spec = append(spec, args[n])
	}
	for _, n := range hotArgs {
		hot = append(hot, args[n])
	}
	return hot, spec
}

// requiredCols and zeroCols classify the insert columns (shapes.go):
// those with no default, and those NOT NULL DEFAULT 0, FALSE or the
// empty string.
var (
	requiredCols = []string{"id", "job_id", "tenant", "type", "priority", "state", "created_at"}
	zeroCols     = []string{"name", "lane", "key", "fairness_key", "on_demand", "milli_cpu", "memory_mb", "gpu", "dir",
		"attempt", "max_attempts", "retry_kind", "retry_delay_ms", "retry_max_delay_ms", "retry_jitter",
		"timeout_ms", "expected_ms", "sla_policy", "cancel_requested", "shell", "returned_leases", "output_limit",
		"held", "not_preemptible", "snoozes", "max_snoozes"}
)

// jobTable and specTable are the insert columns of jobs and job_specs
// with their defaults (shapes.go): the batched inserts write only the
// columns a job sets.
// A job's insert changes no row when its id is taken; a spec's is
// written after its job's row, so it has no conflict to skip.
var (
	jobTable = func() *insertTable {
		t := newInsertTable("jobs", pick(jobInsertColumns, hotArgs), requiredCols, zeroCols)
		t.onConflict = " ON CONFLICT (id) DO NOTHING"
		return t
	}()
	specTable = newInsertTable("job_specs", append([]string{"job_id"}, specColumns...), requiredCols, zeroCols)
)

// insertShapeSQL is the multi-row INSERT into t of rows of shape sh,
// with tail ("" or " ON CONFLICT (id) DO NOTHING") appended.
func (t *insertTable) insertShapeSQL(sh insertShape, rows int, tail string) string {
	cols, n := t.columns(sh)
	var b strings.Builder
	b.WriteString("INSERT INTO " + t.name + " (" + cols + ") VALUES ")
	writeRows(&b, rows, n)
	b.WriteString(tail)
	return b.String()
}

// insertAllSQL is the INSERT of one row of t, every column bound.
func (t *insertTable) insertAllSQL() string {
	return "INSERT INTO " + t.name + " (" + strings.Join(t.cols, ", ") + ") VALUES (" + placeholders(len(t.cols)) + ")"
}

// jobInsertSQL inserts a job's row unless its id is taken (then it
// changes no row: ErrExists, without an error that would spoil the
// transaction); specInsertSQL inserts its spec, after it.
var (
	jobInsertSQL  = jobTable.insertAllSQL() + jobTable.onConflict
	specInsertSQL = specTable.insertAllSQL()
)

// OldJobRow is j's row as one table held it before job_specs (SQLite
// migration 0025, PostgreSQL 0019): its columns and values, for the
// drivers' migration tests.
func OldJobRow(j *store.Job) ([]string, []any, error) {
	args, err := jobArgs(j)
	if err != nil {
		return nil, nil, err
	}
	// The live columns came later (PostgreSQL 0020, SQLite 0026): the
	// ids were in the indexed ones. So did submit_token (0021, 0027).
	var cols []string
	var vals []any
	for i, c := range jobInsertColumns[:len(jobInsertColumns)-2] {
		switch c {
		case liveLease.indexed:
			args[i] = idArg(j.LeaseEventID)
		case liveStart.indexed:
			args[i] = idArg(j.StartEventID)
		case "submit_token":
			continue
		}
		cols, vals = append(cols, c), append(vals, args[i])
	}
	return cols, vals, nil
}

// finalStateArg is final_state's value for a job in state s.
func finalStateArg(s store.State) any {
	if s.Terminal() {
		return string(s)
	}
	return nil
}

// jobArgs returns j's values in jobInsertColumns order.
func jobArgs(j *store.Job) ([]any, error) { return appendJobArgs(nil, j) }

// appendJobArgs is jobArgs appending to args.
func appendJobArgs(args []any, j *store.Job) ([]any, error) {
	labels, err := jsonArg(j.Labels)
	if err != nil {
		return nil, err
	}
	command, err := jsonArg(j.Command)
	if err != nil {
		return nil, err
	}
	env, err := jsonArg(j.Env)
	if err != nil {
		return nil, err
	}
	retryOn, err := jsonArg(j.Retry.RetryOn)
	if err != nil {
		return nil, err
	}
	deps, err := jsonArg(j.DependsOn)
	if err != nil {
		return nil, err
	}
	tags, err := jsonArg(j.Tags)
	if err != nil {
		return nil, err
	}
	unique, err := uniqueArg(j.Unique)
	if err != nil {
		return nil, err
	}
	return append(args,
		j.ID, j.Tenant, j.Name, j.Type, j.Lane, j.Key, j.FairnessKey, int64(j.Priority), j.OnDemand,
		j.Resources.MilliCPU, j.Resources.MemoryMB, j.Resources.GPU, labels, command, env, j.Dir, bytesArg(j.Payload),
		strArg(j.IdempotencyKey), string(j.State), int64(j.Attempt), int64(j.MaxAttempts),
		string(j.Retry.Kind), msArg(j.Retry.Delay), msArg(j.Retry.MaxDelay), j.Retry.Jitter, retryOn,
		msArg(j.Timeout), msArg(j.Expected), string(j.SLAPolicy), timeArg(j.RunAt), deps, strArg(j.ScheduleID),
		timeArg(j.CreatedAt), timeArg(j.UpdatedAt), timeArg(j.EnqueuedAt), timeArg(j.StartedAt), timeArg(j.FinishedAt),
		strArg(j.WorkerID), timeArg(j.LeaseExpiresAt), j.CancelRequested, strArg(j.LastError), intPtrArg(j.ExitCode),
		strArg(string(j.FailureClass)), bytesArg(j.Result), j.Shell, int64(j.ReturnedLeases), j.OutputLimit,
		timeArg(j.ScheduledFor), tags, strArg(j.ResultLocation), j.Held,
		j.NotPreemptible, strArg(j.TraceParent), unique, int64(j.Snoozes), int64(j.MaxSnoozes),
		finishedID(j.State, j.LeaseEventID), timeArg(j.LeasedAt), finishedID(j.State, j.StartEventID), timeArg(j.StartEventAt),
		idArg(j.SubmitEventID), submitActorArg(j), intPtrArg(j.SubmitPriority), strArg(j.SubmitToken), finalStateArg(j.State),
		liveID(j.State, j.LeaseEventID), liveID(j.State, j.StartEventID),
	), nil
}

// finishedID and liveID are the values of a live attempt's event id
// columns (liveEventCol) for a job in state s: a finished job's id is in
// the indexed column, an unfinished one's in the live column.
func finishedID(s store.State, id int64) any { return idIf(s.Terminal(), id) }

func liveID(s store.State, id int64) any { return idIf(!s.Terminal(), id) }

// idIf is id's value where held is true, else NULL.
func idIf(held bool, id int64) any {
	if !held {
		return nil
	}
	return idArg(id)
}

// submitActorArg is submit_actor's value: NULL unless the row holds the
// submitted event.
func submitActorArg(j *store.Job) any {
	if j.SubmitEventID == 0 {
		return nil
	}
	return j.SubmitActor
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanJob reads one row of jobSelect.
func scanJob(sc scanner) (store.Job, error) {
	var j store.Job
	var priority, attempt, maxAttempts, returned, snoozes, maxSnoozes int64
	err := sc.Scan(
		&j.ID, &j.Tenant, &j.Name, &j.Type, &j.Lane, &j.Key, &j.FairnessKey, &priority, &j.OnDemand,
		&j.Resources.MilliCPU, &j.Resources.MemoryMB, &j.Resources.GPU,
		jsonCol{&j.Labels}, jsonCol{&j.Command}, jsonCol{&j.Env}, &j.Dir, bytesCol{&j.Payload},
		strCol[string]{&j.IdempotencyKey}, strCol[store.State]{&j.State}, &attempt, &maxAttempts,
		strCol[store.RetryKind]{&j.Retry.Kind}, msCol{&j.Retry.Delay}, msCol{&j.Retry.MaxDelay}, &j.Retry.Jitter,
		jsonCol{&j.Retry.RetryOn},
		msCol{&j.Timeout}, msCol{&j.Expected}, strCol[store.SLAPolicy]{&j.SLAPolicy}, timeCol{&j.RunAt},
		jsonCol{&j.DependsOn}, strCol[string]{&j.ScheduleID},
		timeCol{&j.CreatedAt}, timeCol{&j.UpdatedAt}, timeCol{&j.EnqueuedAt}, timeCol{&j.StartedAt}, timeCol{&j.FinishedAt},
		strCol[string]{&j.WorkerID}, timeCol{&j.LeaseExpiresAt}, &j.CancelRequested, strCol[string]{&j.LastError},
		intPtrCol{&j.ExitCode}, strCol[store.FailureClass]{&j.FailureClass}, bytesCol{&j.Result}, &j.Shell, &returned, &j.OutputLimit,
		timeCol{&j.ScheduledFor}, jsonCol{&j.Tags}, strCol[string]{&j.ResultLocation}, &j.Held,
		&j.NotPreemptible, strCol[string]{&j.TraceParent}, jsonCol{&j.Unique}, &snoozes, &maxSnoozes,
		idCol{&j.LeaseEventID}, timeCol{&j.LeasedAt}, idCol{&j.StartEventID}, timeCol{&j.StartEventAt},
		idCol{&j.SubmitEventID}, strCol[string]{&j.SubmitActor}, intPtrCol{&j.SubmitPriority},
		strCol[string]{&j.SubmitToken},
	)
	j.Priority, j.Attempt, j.MaxAttempts, j.ReturnedLeases = int(priority), int(attempt), int(maxAttempts), int(returned)
	j.Snoozes, j.MaxSnoozes = int(snoozes), int(maxSnoozes)
	return j, err
}

// setField is one column JobTransition may write.
type setField struct {
	col string
	typ string                            // the column's SQL type, for a batched UPDATE's casts
	arg func(s *store.JobSet) (any, bool) // value, and whether the field is set
	// expr, if not empty, is the value written, an expression of the
	// row's columns before the UPDATE: the field binds no argument.
	expr string
}

// finishing reports whether s makes the job terminal.
func finishing(s *store.JobSet) bool { return s.State != nil && s.State.Terminal() }

// liveEventFields are the three fields of a live attempt's event id
// (liveEventCol) in JobTransition, from id, the JobSet's field:
//
//   - a set id (with an unfinished state, or on an unfinished job: the
//     dispatcher's lease, start and clear) goes to the live column, or,
//     if the same write finishes the job, to the indexed one; the other is written NULL (as it is
//     already while the job is unfinished: no indexed value changes, and
//     the lease's UPDATE stays HOT);
//   - a write that finishes the job and sets no id moves the live one to
//     the indexed column, in the same UPDATE (a row that holds none keeps
//     its indexed one).
func liveEventFields(c liveEventCol, id func(s *store.JobSet) *int64) []setField {
	return []setField{
		{col: c.indexed, typ: "bigint", arg: func(s *store.JobSet) (any, bool) {
			if v := id(s); v != nil {
				return idIf(finishing(s), *v), true
			}
			return nil, false
		}},
		{col: c.indexed, expr: c.read(), arg: func(s *store.JobSet) (any, bool) {
			return nil, id(s) == nil && finishing(s)
		}},
		{col: c.live, typ: "bigint", arg: func(s *store.JobSet) (any, bool) {
			switch v := id(s); {
			case finishing(s):
				return nil, true
			case v != nil:
				return idArg(*v), true
			}
			return nil, false
		}},
	}
}

// releasedCols are the columns releaseHeld sets NULL when a job gives
// its held attempt up (store doc.go, "The finished attempt in the job
// row"): those of the held attempt (heldField), and those it shares with
// a live attempt.
var releasedCols = []string{"lease_event_id", "leased_at", "start_event_id", "start_event_at"}

// heldField is a column of the attempt a job row holds, written from
// JobSet.HeldAttempt when not NULL: the row of an unfinished job has it
// NULL already.
func heldField(col, typ string, v func(e *store.Execution) any) setField {
	releasedCols = append(releasedCols, col)
	return setField{col: col, typ: typ, arg: func(s *store.JobSet) (any, bool) {
		if s.HeldAttempt == nil {
			return nil, false
		}
		x := v(s.HeldAttempt)
		return x, x != nil
	}}
}

// nonZero is v, or nil (NULL) for its zero value.
func nonZero[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

// usageField is a usage column of a held attempt: NULL unless measured.
func usageField(col, typ string, v func(u store.Usage) any) setField {
	return heldField(col, typ, func(e *store.Execution) any {
		if !e.Usage.Measured() {
			return nil
		}
		return v(e.Usage)
	})
}

// setFields lists the settable columns; a field's index is its bit in
// transitionShape.fields.
var setFields = slices.Concat([]setField{
	{col: "state", typ: "text", arg: func(s *store.JobSet) (any, bool) {
		return optional(s.State, func(v store.State) any { return string(v) })
	}},
	// final_state follows state in the same UPDATE (store doc.go, "The
	// hot row and its indexes").
	{col: "final_state", typ: "text", arg: func(s *store.JobSet) (any, bool) {
		return optional(s.State, finalStateArg)
	}},
	{col: "attempt", typ: "bigint", arg: func(s *store.JobSet) (any, bool) { return optional(s.Attempt, func(v int) any { return int64(v) }) }},
	{col: "returned_leases", typ: "bigint", arg: func(s *store.JobSet) (any, bool) {
		return optional(s.ReturnedLeases, func(v int) any { return int64(v) })
	}},
	{col: "snoozes", typ: "bigint", arg: func(s *store.JobSet) (any, bool) { return optional(s.Snoozes, func(v int) any { return int64(v) }) }},
	{col: "priority", typ: "bigint", arg: func(s *store.JobSet) (any, bool) { return optional(s.Priority, func(v int) any { return int64(v) }) }},
	{col: "worker_id", typ: "text", arg: func(s *store.JobSet) (any, bool) { return optional(s.WorkerID, strArg) }},
	{col: "lease_expires_at", typ: "bigint", arg: func(s *store.JobSet) (any, bool) { return optional(s.LeaseExpiresAt, timeArg) }},
	{col: "enqueued_at", typ: "bigint", arg: func(s *store.JobSet) (any, bool) { return optional(s.EnqueuedAt, timeArg) }},
	{col: "started_at", typ: "bigint", arg: func(s *store.JobSet) (any, bool) { return optional(s.StartedAt, timeArg) }},
	{col: "finished_at", typ: "bigint", arg: func(s *store.JobSet) (any, bool) { return optional(s.FinishedAt, timeArg) }},
	{col: "run_at", typ: "bigint", arg: func(s *store.JobSet) (any, bool) { return optional(s.RunAt, timeArg) }},
	{col: "cancel_requested", typ: "boolean", arg: func(s *store.JobSet) (any, bool) { return optional(s.CancelRequested, func(v bool) any { return v }) }},
	{col: "held", typ: "boolean", arg: func(s *store.JobSet) (any, bool) { return optional(s.Held, func(v bool) any { return v }) }},
	{col: "last_error", typ: "text", arg: func(s *store.JobSet) (any, bool) { return optional(s.LastError, strArg) }},
	{col: "exit_code", typ: "bigint", arg: func(s *store.JobSet) (any, bool) {
		if s.ClearExitCode {
			return nil, true
		}
		return optional(s.ExitCode, func(v int) any { return int64(v) })
	}},
	{col: "failure_class", typ: "text", arg: func(s *store.JobSet) (any, bool) {
		return optional(s.FailureClass, func(v store.FailureClass) any { return strArg(string(v)) })
	}},
	{col: "result", typ: "bytea", arg: func(s *store.JobSet) (any, bool) { return optional(s.Result, bytesArg) }},
	{col: "timeout_ms", typ: "bigint", arg: func(s *store.JobSet) (any, bool) { return optional(s.Timeout, msArg) }},
	{col: "expected_ms", typ: "bigint", arg: func(s *store.JobSet) (any, bool) { return optional(s.Expected, msArg) }},
	{col: "max_attempts", typ: "bigint", arg: func(s *store.JobSet) (any, bool) {
		return optional(s.MaxAttempts, func(v int) any { return int64(v) })
	}},
}, liveEventFields(liveLease, func(s *store.JobSet) *int64 { return s.LeaseEventID }), []setField{
	{col: "leased_at", typ: "bigint", arg: func(s *store.JobSet) (any, bool) { return optional(s.LeasedAt, timeArg) }},
}, liveEventFields(liveStart, func(s *store.JobSet) *int64 { return s.StartEventID }), []setField{
	{col: "start_event_at", typ: "bigint", arg: func(s *store.JobSet) (any, bool) { return optional(s.StartEventAt, timeArg) }},
	{col: "submit_priority", typ: "bigint", arg: func(s *store.JobSet) (any, bool) {
		return optional(s.SubmitPriority, func(v int) any { return int64(v) })
	}},
	heldField("attempt_outcome", "text", func(e *store.Execution) any { return strArg(string(e.Outcome)) }),
	heldField("attempt_wait_ms", "bigint", func(e *store.Execution) any { return waitArg(e) }),
	heldField("attempt_duration_ms", "bigint", func(e *store.Execution) any { return nonZero(msArg(e.Duration)) }),
	heldField("attempt_sla_met", "boolean", func(e *store.Execution) any { return boolPtrArg(e.SLAMet) }),
	heldField("attempt_sla_violation_pct", "double precision", func(e *store.Execution) any { return nonZero(e.SLAViolationPct) }),
	usageField("attempt_cpu_user_us", "bigint", func(u store.Usage) any { return u.CPUUser.Microseconds() }),
	usageField("attempt_cpu_system_us", "bigint", func(u store.Usage) any { return u.CPUSystem.Microseconds() }),
	usageField("attempt_peak_rss_bytes", "bigint", func(u store.Usage) any { return u.PeakRSSBytes }),
	usageField("attempt_usage_source", "text", func(u store.Usage) any { return u.Source }),
	heldField("end_event_id", "bigint", func(e *store.Execution) any { return idArg(e.EndEventID) }),
})

func optional[T, R any](p *T, conv func(T) R) (any, bool) {
	if p == nil {
		return nil, false
	}
	return conv(*p), true
}

// transitionShape identifies one form of the UPDATE that JobTransition
// runs: which columns it sets and which guards it has. Each shape is
// prepared once on the writer connection.
type transitionShape struct {
	fields       uint64 // bit i: setFields[i] is written
	guardAttempt bool
	fromStates   int // number of state placeholders
}

// maxShapes bounds the statement cache; beyond it, shapes run unprepared.
const maxShapes = 256

// transitionArgs returns the shape and the arguments of p's UPDATE, in the
// order of shape.sql's placeholders.
// They are appended to args; set is where p.Set is copied for setFields'
// calls, so that p itself does not escape to the heap through them.
func transitionArgs(p *store.JobTransitionParams, set *store.JobSet, args []any) (transitionShape, []any) {
	var sh transitionShape
	*set = p.Set
	args = append(args, timeArg(p.At))
	for i := range setFields {
		if v, ok := setFields[i].arg(set); ok {
			sh.fields |= 1 << i
			if setFields[i].expr == "" {
				args = append(args, v)
			}
		}
	}
	args = append(args, p.ID)
	if p.ExpectAttempt != store.AnyAttempt {
		sh.guardAttempt = true
		args = append(args, int64(p.ExpectAttempt))
	}
	from := fromStates(p.FromStates)
	sh.fromStates = len(from)
	for _, s := range from {
		args = append(args, string(s))
	}
	return sh, args
}

// fromStates is states sorted, without repeats, so that one set of
// states makes one shape: states itself when it is already (a
// transition's one or two states usually are), else a sorted copy.
func fromStates(states []store.State) []store.State {
	for i := 1; i < len(states); i++ {
		if states[i-1] >= states[i] { // out of order, or a repeat
			from := slices.Clone(states)
			slices.Sort(from)
			return slices.Compact(from)
		}
	}
	return states
}

// sql renders the shape's UPDATE.
func (sh transitionShape) sql(stateGuard string) string {
	var b strings.Builder
	b.WriteString("UPDATE jobs SET updated_at = ?")
	for i, f := range setFields {
		switch {
		case sh.fields&(1<<i) == 0:
		case f.expr != "":
			fmt.Fprintf(&b, ", %s = %s", f.col, f.expr)
		default:
			fmt.Fprintf(&b, ", %s = ?", f.col)
		}
	}
	b.WriteString(" WHERE id = ?")
	if sh.guardAttempt {
		b.WriteString(" AND attempt = ?")
	}
	if sh.fromStates > 0 {
		b.WriteString(" AND " + stateGuard + " IN (")
		b.WriteString(strings.TrimSuffix(strings.Repeat("?, ", sh.fromStates), ", "))
		b.WriteString(")")
	}
	return b.String()
}
