package api

import (
	"encoding/json"
	"time"
)

// Resources is a job's demand or a worker's capacity.
type Resources struct {
	CPU      float64 `json:"cpu,omitempty"`
	MemoryMB int64   `json:"memory_mb,omitempty"`
	GPU      int64   `json:"gpu,omitempty"`
}

// Dependency names a job that must end before this one runs.
type Dependency struct {
	JobID     string `json:"job_id"`
	Condition string `json:"condition,omitempty"` // success (default) | failure | any
}

// RetryPolicy says when and how a failed attempt is retried.
type RetryPolicy struct {
	Kind       string   `json:"kind,omitempty"` // fixed | exponential | immediate
	DelayMS    int64    `json:"delay_ms,omitempty"`
	MaxDelayMS int64    `json:"max_delay_ms,omitempty"`
	Jitter     bool     `json:"jitter,omitempty"`
	RetryOn    []string `json:"retry_on,omitempty"` // failure classes
}

// JobSpec is what a client submits.
type JobSpec struct {
	Type        string `json:"type"`
	Tenant      string `json:"tenant,omitempty"`
	Name        string `json:"name,omitempty"`
	Lane        string `json:"lane,omitempty"`
	Key         string `json:"key,omitempty"`
	FairnessKey string `json:"fairness_key,omitempty"`
	Priority    *int   `json:"priority,omitempty"`
	OnDemand    bool   `json:"on_demand,omitempty"`
	// Preemptible false keeps the job, once running, from being stopped
	// for a job of higher priority (docs/scheduling.md, "Preemption").
	// Default true.
	Preemptible    *bool             `json:"preemptible,omitempty"`
	Resources      *Resources        `json:"resources,omitempty"`
	Labels         []string          `json:"labels,omitempty"`
	Tags           []string          `json:"tags,omitempty"` // free-form, for people and list filters
	Command        []string          `json:"command,omitempty"`
	Shell          bool              `json:"shell,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	Dir            string            `json:"dir,omitempty"`
	Payload        json.RawMessage   `json:"payload,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	// TraceParent is a W3C trace context (traceparent) the job's spans and
	// handler join; the traceparent header of the submit does the same.
	TraceParent string       `json:"traceparent,omitempty"`
	Unique      *UniqueRule  `json:"unique,omitempty"` // docs/concepts.md, "Unique jobs"
	MaxSnoozes  int          `json:"max_snoozes,omitempty"`
	MaxAttempts int          `json:"max_attempts,omitempty"`
	Retry       *RetryPolicy `json:"retry,omitempty"`
	TimeoutMS   int64        `json:"timeout_ms,omitempty"`
	ExpectedMS  int64        `json:"expected_ms,omitempty"`
	SLAPolicy   string       `json:"sla_policy,omitempty"`
	RunAt       *time.Time   `json:"run_at,omitempty"`
	DependsOn   []Dependency `json:"depends_on,omitempty"`
	// OutputLimitBytes caps the output kept of an attempt (stdout and
	// stderr together); past it the head and the tail are kept. 0: the
	// type's, else the server's.
	OutputLimitBytes int64 `json:"output_limit_bytes,omitempty"`
	// ResultLocation is where every ended attempt's output and result go:
	// file:///a/directory or s3://bucket/prefix (see docs/results.md).
	ResultLocation string `json:"result_location,omitempty"`
}

// Job states.
const (
	StateBlocked   = "blocked"
	StatePending   = "pending"
	StateLeased    = "leased"
	StateRunning   = "running"
	StateRetryWait = "retry_wait"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
	StateCancelled = "cancelled"
)

// Terminal reports whether a job in state s will never change again.
func Terminal(s string) bool {
	return s == StateSucceeded || s == StateFailed || s == StateCancelled
}

// Job is a job as the server reports it: the resolved spec and its state.
type Job struct {
	ID             string            `json:"id"`
	Type           string            `json:"type"`
	Tenant         string            `json:"tenant"`
	Name           string            `json:"name,omitempty"`
	Lane           string            `json:"lane"`
	Key            string            `json:"key,omitempty"`
	FairnessKey    string            `json:"fairness_key,omitempty"`
	Priority       int               `json:"priority"`
	OnDemand       bool              `json:"on_demand,omitempty"`
	NotPreemptible bool              `json:"not_preemptible,omitempty"` // submitted with preemptible: false
	Resources      Resources         `json:"resources"`
	Labels         []string          `json:"labels,omitempty"`
	Tags           []string          `json:"tags,omitempty"` // free-form, for people and list filters
	Command        []string          `json:"command,omitempty"`
	Shell          bool              `json:"shell,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	Dir            string            `json:"dir,omitempty"`
	Payload        json.RawMessage   `json:"payload,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	TraceParent    string            `json:"traceparent,omitempty"` // the job's trace context (docs/tracing.md)
	Unique         *UniqueRule       `json:"unique,omitempty"`      // as resolved: states filled in
	MaxAttempts    int               `json:"max_attempts"`
	Retry          RetryPolicy       `json:"retry"`
	TimeoutMS      int64             `json:"timeout_ms,omitempty"`
	ExpectedMS     int64             `json:"expected_ms,omitempty"`
	SLAPolicy      string            `json:"sla_policy,omitempty"`
	RunAt          *time.Time        `json:"run_at,omitempty"`
	DependsOn      []Dependency      `json:"depends_on,omitempty"`
	// OutputLimitBytes is the output kept of an attempt: the first half
	// and the last half, with a marker naming what was dropped between.
	OutputLimitBytes int64  `json:"output_limit_bytes,omitempty"`
	ResultLocation   string `json:"result_location,omitempty"`

	State   string `json:"state"`
	Attempt int    `json:"attempt"`
	// ReturnedLeases counts leases handed back without the job having run
	// (not charged against max_attempts).
	ReturnedLeases  int             `json:"returned_leases,omitempty"`
	Snoozes         int             `json:"snoozes,omitempty"` // snoozed attempts (in returned_leases too)
	MaxSnoozes      int             `json:"max_snoozes,omitempty"`
	CreatedAt       time.Time       `json:"created_at"`
	UpdatedAt       time.Time       `json:"updated_at"`
	EnqueuedAt      *time.Time      `json:"enqueued_at,omitempty"`
	StartedAt       *time.Time      `json:"started_at,omitempty"`
	FinishedAt      *time.Time      `json:"finished_at,omitempty"`
	WorkerID        string          `json:"worker_id,omitempty"`
	LeaseExpiresAt  *time.Time      `json:"lease_expires_at,omitempty"`
	CancelRequested bool            `json:"cancel_requested,omitempty"`
	Held            bool            `json:"held,omitempty"` // set aside until released
	LastError       string          `json:"last_error,omitempty"`
	ExitCode        *int            `json:"exit_code,omitempty"`
	FailureClass    string          `json:"failure_class,omitempty"`
	Result          json.RawMessage `json:"result,omitempty"`
	// ScheduleID and ScheduledFor name the slot of a job a schedule
	// created: the schedule and the slot's nominal time.
	ScheduleID   string     `json:"schedule_id,omitempty"`
	ScheduledFor *time.Time `json:"scheduled_for,omitempty"`
	// Reason is why a job that waits (blocked, pending, retry_wait) is not
	// running: explain's code (not_yet_due, no_free_slot, conflict, ...).
	// Set in GET /jobs and GET /jobs/{id} answers.
	Reason string `json:"reason,omitempty"`
}

// SubmitTokenHeader carries a submit's token on POST /jobs and POST
// /jobs/batch: 32 hexadecimal characters (128 random bits) drawn for
// that one call, so that the call can be sent again when its answer was
// lost. The same token from the same tenant within two minutes
// (store.SubmitTokenWindow) is answered with the jobs of the first
// submit, deduplicated, and creates nothing. The Go client sends one with
// every Submit and SubmitBatch.
const SubmitTokenHeader = "Fairway-Submit-Token"

// SubmitResponse answers POST /jobs.
type SubmitResponse struct {
	Job            Job        `json:"job"`
	EstimatedStart *time.Time `json:"estimated_start,omitempty"`
	Deduplicated   bool       `json:"deduplicated"`
	// UniqueMatch, on a submit deduplicated by its unique rule, names the
	// rule and the existing job it matched.
	UniqueMatch *UniqueMatch `json:"unique_match,omitempty"`
	// Warnings say what the submitter may not expect: no registered
	// worker can run the job now (it is queued all the same).
	Warnings []string `json:"warnings,omitempty"`
}

// UniqueRule is a job's unique rule: while a job of the same tenant with
// the same values of By is in one of States and, with PeriodMS, was
// created less than PeriodMS ago, a submit returns it instead of adding
// a job.
type UniqueRule struct {
	// By lists the fields compared: type, key, payload, tenant, lane
	// (uniqueness is always within the tenant). Required.
	By []string `json:"by"`
	// States the existing job must be in; default blocked, pending,
	// leased, running, retry_wait (every unfinished state).
	States []string `json:"states,omitempty"`
	// PeriodMS bounds the existing job's age; absent: no bound. At most a
	// year.
	PeriodMS *int64 `json:"period_ms,omitempty"`
}

// Unique field names, for UniqueRule.By.
const (
	UniqueByType    = "type"
	UniqueByKey     = "key"
	UniqueByPayload = "payload"
	UniqueByTenant  = "tenant"
	UniqueByLane    = "lane"
)

// UniqueMatch says which rule made a submit a duplicate, and of which job.
type UniqueMatch struct {
	By       []string `json:"by"`
	States   []string `json:"states"`
	PeriodMS int64    `json:"period_ms,omitempty"`
	JobID    string   `json:"job_id"`
}

// BatchRequest is the body of POST /jobs/batch.
type BatchRequest struct {
	Jobs []JobSpec `json:"jobs"`
}

// BatchResponse answers POST /jobs/batch, one item per spec in order.
type BatchResponse struct {
	Jobs []SubmitResponse `json:"jobs"`
}

// JobResponse answers GET /jobs/{id} and POST /jobs/{id}/extend-sla.
type JobResponse struct {
	Job       Job        `json:"job"`
	Execution *Execution `json:"execution,omitempty"`
}

// JobList answers GET /jobs.
type JobList struct {
	Jobs       []Job  `json:"jobs"`
	NextCursor string `json:"next_cursor,omitempty"`
	// Total counts every job the filters match (all pages), when the
	// request asked with count=true.
	Total *int64 `json:"total,omitempty"`
}

// Cancel and reprioritize results.
const (
	ResultCancelled       = "cancelled"
	ResultCancelRequested = "cancel_requested"
	ResultAlreadyFinished = "already_finished"
	ResultReprioritized   = "reprioritized"
	ResultAlreadyRunning  = "already_running"
	ResultHeld            = "held"           // hold: set aside until released
	ResultAlreadyHeld     = "already_held"   // hold: nothing changed
	ResultReleased        = "released"       // release: runnable again
	ResultNotHeld         = "not_held"       // release: nothing changed
	ResultRetried         = "retried"        // retry: pending again, with one more attempt
	ResultNotFinished     = "not_finished"   // retry: the job has not ended
	ResultNotRetriable    = "not_retriable"  // retry: the job succeeded
	ResultNotFound        = "not_found"      // bulk retry: no such job (deleted by retention)
	ResultPaused          = "paused"         // lane pause
	ResultAlreadyPaused   = "already_paused" // lane pause: nothing changed
	ResultResumed         = "resumed"        // lane resume
	ResultNotPaused       = "not_paused"     // lane resume: nothing changed
)

// ActionResponse answers cancel and reprioritize.
type ActionResponse struct {
	Job    Job    `json:"job"`
	Result string `json:"result"`
}

// RetryRequest is the body of POST /jobs/retry: failed or cancelled jobs
// to send back to the queue, named (IDs) or matched by filters (the other
// fields), never both.
type RetryRequest struct {
	IDs          []string `json:"ids,omitempty"`
	State        string   `json:"state,omitempty"`         // "failed" (default) or "cancelled"
	Type         string   `json:"type,omitempty"`          // jobs of this type
	FailureClass string   `json:"failure_class,omitempty"` // failed jobs whose last attempt failed so
	Tenant       string   `json:"tenant,omitempty"`        // an admin's filter; a tenant key sees its own
	Lane         string   `json:"lane,omitempty"`
	Limit        int      `json:"limit,omitempty"` // jobs matched at most (default 100, at most 1000)
}

// RetryResponse is the answer of POST /jobs/retry: the jobs sent back to
// the queue, and the others with why (a RetryRequest's IDs only).
type RetryResponse struct {
	Retried []string       `json:"retried"`
	Skipped []RetrySkipped `json:"skipped"`
}

// RetrySkipped is a job a bulk retry left alone: Result is
// not_finished, not_retriable, not_found or conflict.
type RetrySkipped struct {
	ID     string `json:"id"`
	Result string `json:"result"`
}

// ReprioritizeRequest is the body of POST /jobs/{id}/reprioritize.
type ReprioritizeRequest struct {
	Priority *int `json:"priority"`
}

// ExtendSLARequest is the body of POST /jobs/{id}/extend-sla.
type ExtendSLARequest struct {
	ExtendMS int64 `json:"extend_ms"`
}

// Execution is one attempt of a job.
type Execution struct {
	JobID           string     `json:"job_id"`
	Attempt         int        `json:"attempt"`
	WorkerID        string     `json:"worker_id,omitempty"`
	LeasedAt        *time.Time `json:"leased_at,omitempty"`
	StartedAt       *time.Time `json:"started_at,omitempty"`
	FinishedAt      *time.Time `json:"finished_at,omitempty"`
	Outcome         string     `json:"outcome,omitempty"` // succeeded | failed | cancelled | lost | timeout ("" while running)
	ExitCode        *int       `json:"exit_code,omitempty"`
	FailureClass    string     `json:"failure_class,omitempty"`
	Error           string     `json:"error,omitempty"`
	DurationMS      int64      `json:"duration_ms,omitempty"`
	SLAMet          *bool      `json:"sla_met,omitempty"`
	SLAViolationPct float64    `json:"sla_violation_pct,omitempty"`
	// Usage is what the attempt's processes used, when its worker measured
	// it (command jobs run by fairway worker); absent otherwise.
	Usage *Usage `json:"usage,omitempty"`
	// The attempt's result upload, when its job has a result_location:
	// pending (to be tried at result_next_at), written, or failed (given
	// up after result_tries; result_error says why).
	ResultState  string     `json:"result_state,omitempty"`
	ResultURL    string     `json:"result_url,omitempty"`
	ResultError  string     `json:"result_error,omitempty"`
	ResultTries  int        `json:"result_tries,omitempty"`
	ResultNextAt *time.Time `json:"result_next_at,omitempty"`
}

// ExecutionList answers GET /jobs/{id}/executions.
type ExecutionList struct {
	Executions []Execution `json:"executions"`
	// NextCursor, when set, is the cursor that reads the next page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// LogChunk is a piece of a job's output.
type LogChunk struct {
	JobID   string    `json:"job_id"`
	Attempt int       `json:"attempt"`
	Stream  string    `json:"stream"` // stdout | stderr
	Seq     int64     `json:"seq"`
	At      time.Time `json:"at"`
	Data    string    `json:"data"`
}

// LogList answers GET /jobs/{id}/logs.
type LogList struct {
	Chunks []LogChunk `json:"chunks"`
}

// LogEnd is the data of the final SSE event of a followed log.
type LogEnd struct {
	State string `json:"state"`
}

// Event is one audit-trail entry.
type Event struct {
	ID      int64           `json:"id"`
	JobID   string          `json:"job_id,omitempty"`
	Attempt int             `json:"attempt,omitempty"`
	Type    string          `json:"type"`
	At      time.Time       `json:"at"`
	Actor   string          `json:"actor,omitempty"`
	Detail  json.RawMessage `json:"detail,omitempty"`
	// ScheduleID names the schedule of a schedule's event.
	ScheduleID string `json:"schedule_id,omitempty"`
	// Tenant is the tenant of the job or schedule; "" for events of the
	// whole server (a worker registered, a lane paused).
	Tenant string `json:"tenant,omitempty"`
}

// EventList answers GET /events, /jobs/{id}/events and
// /schedules/{id}/events.
type EventList struct {
	Events []Event `json:"events"`
	// NextAfterID, when set, is the after_id that reads the next page.
	NextAfterID int64 `json:"next_after_id,omitempty"`
}

// Explanation answers GET /jobs/{id}/explain.
type Explanation struct {
	JobID          string     `json:"job_id"`
	State          string     `json:"state"`
	Code           string     `json:"code"`
	Message        string     `json:"message"`
	Blocker        string     `json:"blocker,omitempty"`
	Lane           string     `json:"lane,omitempty"`
	Score          int64      `json:"score,omitempty"`
	Position       int        `json:"position,omitempty"`
	Queued         int        `json:"queued,omitempty"`
	EstimatedStart *time.Time `json:"estimated_start,omitempty"`
	// EstimateBasis says how sure the estimate is: learned_cost (every run
	// time counted was learned), timeout (some only bounded by a timeout),
	// unknown (some guessed from the type's default cost), run_at.
	EstimateBasis string `json:"estimate_basis,omitempty"`
	// EstimateNote says why, when estimate_basis is unknown, there is no
	// estimated start: whose run time nothing bounds.
	EstimateNote string `json:"estimate_note,omitempty"`
	// Reservation is the job's own reservation (code reserved) or the one
	// whose capacity it may not take (code behind_reservation).
	Reservation *Reservation `json:"reservation,omitempty"`
	// RateLimit is set for code rate_limited, Quota for tenant_quota.
	RateLimit *RateLimitBlock `json:"rate_limit,omitempty"`
	Quota     *QuotaBlock     `json:"quota,omitempty"`
}

// Reservation is a queued job's claim on the worker where it fits first
// (docs/scheduling.md, "Reservations and backfill"): the worker drains for
// it, and other jobs use its freed capacity only when they are predicted
// to end before it starts or leave its demand free.
type Reservation struct {
	JobID    string `json:"job_id"`
	WorkerID string `json:"worker_id"`
	// StartsBy is when the running jobs it waits for are expected to have
	// ended; absent when one of their run times is not known.
	StartsBy *time.Time `json:"starts_by,omitempty"`
	// Basis is what the expected ends rest on: learned_cost, timeout or
	// unknown.
	Basis    string   `json:"basis"`
	WaitsFor []string `json:"waits_for"`
}

// FailureReport answers GET /failures: the failed side of the finished
// attempts matched. Seed 002's names map so: total_failures is failed,
// failure_breakdown is by_failure_class, recent_failures is recent (its
// execution_id is job_id and attempt, failed_at is finished_at,
// error_type is failure_class, error_message is error). A cancelled
// attempt (a user's cancel, a shutdown) is neither a success nor a
// failure: it is counted in cancelled only.
type FailureReport struct {
	Total       int64                    `json:"total"`        // attempts that succeeded or failed
	Failed      int64                    `json:"failed"`       // of them, failed, timed out or lost
	Cancelled   int64                    `json:"cancelled"`    // attempts cancelled, not in total
	Preempted   int64                    `json:"preempted"`    // attempts stopped for a job of higher priority and queued again, not in total
	Snoozed     int64                    `json:"snoozed"`      // attempts whose handler snoozed the job, not in total
	FailureRate float64                  `json:"failure_rate"` // failed / total, 0 when total is 0
	ByOutcome   map[string]int64         `json:"by_outcome"`   // failed, timeout, lost
	ByClass     map[string]int64         `json:"by_failure_class"`
	ByTenant    map[string]FailureCounts `json:"by_tenant"` // the same attempts, per tenant
	ByType      map[string]FailureCounts `json:"by_type"`   // and per job type
	Recent      []FailedAttempt          `json:"recent"`    // newest first, at most `limit` (default 20)
}

// FailureCounts is one tenant's or one type's part of a FailureReport.
type FailureCounts struct {
	Total       int64   `json:"total"`
	Failed      int64   `json:"failed"`
	Cancelled   int64   `json:"cancelled"`
	FailureRate float64 `json:"failure_rate"`
}

// FailedAttempt is one failed execution in a FailureReport.
type FailedAttempt struct {
	JobID        string    `json:"job_id"`
	Attempt      int       `json:"attempt"`
	Outcome      string    `json:"outcome"`
	FailureClass string    `json:"failure_class,omitempty"`
	ExitCode     *int      `json:"exit_code,omitempty"`
	Error        string    `json:"error,omitempty"`
	DurationMS   int64     `json:"duration_ms"` // how long the attempt ran
	FinishedAt   time.Time `json:"finished_at"`
}

// SuccessReport answers GET /successes: the succeeded side, with run-time
// percentiles of the succeeded executions. Seed 002's names map so:
// total_successes is succeeded, p50_execution_time_ms is p50_duration_ms
// (and p95, p99); avg_execution_time_ms is given under its own name.
type SuccessReport struct {
	Total              int64                    `json:"total"`        // attempts that succeeded or failed
	Succeeded          int64                    `json:"succeeded"`    // of them, succeeded
	Cancelled          int64                    `json:"cancelled"`    // attempts cancelled, not in total
	SuccessRate        float64                  `json:"success_rate"` // succeeded / total, 0 when total is 0
	AvgExecutionTimeMS float64                  `json:"avg_execution_time_ms"`
	MeanDurationMS     float64                  `json:"mean_duration_ms"` // the same as avg_execution_time_ms
	P50DurationMS      float64                  `json:"p50_duration_ms"`
	P95DurationMS      float64                  `json:"p95_duration_ms"`
	P99DurationMS      float64                  `json:"p99_duration_ms"`
	ByTenant           map[string]SuccessCounts `json:"by_tenant"` // the same attempts, per tenant
	ByType             map[string]SuccessCounts `json:"by_type"`   // and per job type
}

// SuccessCounts is one tenant's or one type's part of a SuccessReport.
type SuccessCounts struct {
	Total              int64   `json:"total"`
	Succeeded          int64   `json:"succeeded"`
	Cancelled          int64   `json:"cancelled"`
	SuccessRate        float64 `json:"success_rate"`
	AvgExecutionTimeMS float64 `json:"avg_execution_time_ms"` // of the succeeded ones
}

// Series answers GET /series: attempts over time, one point per step of
// [since, until), empty steps included. Finished counts the attempts that
// ended in the step, by outcome; the waits are of the attempts leased in
// it, from becoming ready (submitted, released, retried or unblocked, or
// its run-at time) to the lease. Percentiles are estimated from a
// histogram of the waits (as Prometheus's histogram_quantile does); mean
// and max are exact.
type Series struct {
	Since  time.Time     `json:"since"`
	Until  time.Time     `json:"until"`
	StepMS int64         `json:"step_ms"`
	Points []SeriesPoint `json:"points"`
}

// SeriesPoint is one step of a Series.
type SeriesPoint struct {
	Start      time.Time        `json:"start"`
	Finished   map[string]int64 `json:"finished"` // outcome -> attempts that ended
	Leased     int64            `json:"leased"`   // attempts leased, with a known wait
	WaitMeanMS float64          `json:"wait_mean_ms"`
	WaitP50MS  float64          `json:"wait_p50_ms"`
	WaitP95MS  float64          `json:"wait_p95_ms"`
	WaitMaxMS  float64          `json:"wait_max_ms"`
}

// SLAReport answers GET /sla-compliance: the finished attempts whose SLA
// was measured (they had an expected time or a limit). Seed 002's names
// map so: total_executions is total, sla_met_count met,
// sla_violated_count violated, sla_compliance_rate compliance.
type SLAReport struct {
	Period     ReportPeriod `json:"period"`
	Total      int64        `json:"total"`
	Met        int64        `json:"met"`
	Violated   int64        `json:"violated"`
	Compliance *float64     `json:"compliance"` // met / total; null when total is 0 (no data)
	// AvgExecutionTimeMS averages the run time of the measured attempts;
	// AvgSLAViolationPercentage how far past their expected time the
	// violated ones ran, in percent (0 when none was violated).
	AvgExecutionTimeMS        float64 `json:"avg_execution_time_ms"`
	AvgSLAViolationPercentage float64 `json:"avg_sla_violation_percentage"`
}

// ReportPeriod is the range a report covers: attempts that finished
// after start and before end; an open end is null.
type ReportPeriod struct {
	Start *time.Time `json:"start"`
	End   *time.Time `json:"end"`
}

// UsageReport answers GET /usage: per tenant or lane, what the attempts
// that finished in [since, until) used.
type UsageReport struct {
	Since time.Time  `json:"since"`
	Until time.Time  `json:"until"`
	By    string     `json:"by"` // tenant | lane
	Rows  []UsageRow `json:"rows"`
}

// UsageRow is one tenant's or lane's use. The requested figures are the
// job's requested resources × each attempt's wall time; the measured ones
// sum what workers measured (command jobs), over measured_attempts of the
// attempts.
type UsageRow struct {
	Key             string  `json:"key"`
	Jobs            int64   `json:"jobs"`
	Attempts        int64   `json:"attempts"`
	WallSeconds     float64 `json:"wall_seconds"`
	CoreSeconds     float64 `json:"core_seconds"`
	GPUSeconds      float64 `json:"gpu_seconds"`
	MemoryGBSeconds float64 `json:"memory_gb_seconds"`
	// MeasuredAttempts have a measured usage; CPUSeconds (user + system)
	// and PeakMemoryGBSeconds (peak RSS × wall time) sum theirs.
	MeasuredAttempts    int64   `json:"measured_attempts"`
	CPUSeconds          float64 `json:"cpu_seconds"`
	PeakMemoryGBSeconds float64 `json:"peak_memory_gb_seconds"`
}
