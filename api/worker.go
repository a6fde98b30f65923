package api

import (
	"encoding/json"
	"time"
)

// RegisterRequest is the body of POST /workers/register.
type RegisterRequest struct {
	Name  string   `json:"name"`
	Types []string `json:"types,omitempty"` // none: every type
	// Handlers are the types whose jobs this worker runs without a
	// command (SDK handlers); "*" is every type. Left out (null), the
	// worker may run any type without a command, as workers before this
	// field did; [] says it runs commands only.
	Handlers []string `json:"handlers"`
	Labels   []string `json:"labels,omitempty"`
	Slots    int      `json:"slots"`
	CPU      float64  `json:"cpu,omitempty"`
	MemoryMB int64    `json:"memory_mb,omitempty"`
	GPU      int64    `json:"gpu,omitempty"`
}

// RegisterResponse answers POST /workers/register.
type RegisterResponse struct {
	WorkerID            string `json:"worker_id"`
	LeaseTTLMS          int64  `json:"lease_ttl_ms"`
	HeartbeatIntervalMS int64  `json:"heartbeat_interval_ms"`
}

// LeaseRequest is the body of POST /workers/{id}/lease.
type LeaseRequest struct {
	Max    int   `json:"max"`
	WaitMS int64 `json:"wait_ms,omitempty"`
}

// Lease is one job handed to a worker, with its fencing token.
type Lease struct {
	Job            Job       `json:"job"`
	Attempt        int       `json:"attempt"`
	LeaseExpiresAt time.Time `json:"lease_expires_at"`
	// TraceParent is the trace context the attempt runs under: the run
	// span's when the server traces, else the job's (docs/tracing.md).
	TraceParent string `json:"traceparent,omitempty"`
}

// LeaseResponse answers POST /workers/{id}/lease.
type LeaseResponse struct {
	Leases []Lease `json:"leases"`
}

// JobAttempt names one attempt of a job.
type JobAttempt struct {
	JobID     string     `json:"job_id"`
	Attempt   int        `json:"attempt"`
	StartedAt *time.Time `json:"started_at,omitempty"` // start calls and heartbeats: the attempt's real start
}

// StartRequest is the body of POST /workers/{id}/start.
type StartRequest struct {
	Jobs []JobAttempt `json:"jobs"`
}

// HeartbeatRequest is the body of POST /workers/{id}/heartbeat.
type HeartbeatRequest struct {
	Jobs []JobAttempt `json:"jobs"`
	// WaitMS, when positive, lets the server hold the answer up to this
	// long (at most the heartbeat interval) while it has nothing new for
	// the worker: a cancel, a revoked attempt or a new deadline is then
	// answered the moment it is committed rather than at the next beat.
	WaitMS int64 `json:"wait_ms,omitempty"`
}

// HeartbeatResponse answers POST /workers/{id}/heartbeat.
type HeartbeatResponse struct {
	LeaseExpiresAt time.Time    `json:"lease_expires_at"`
	Cancel         []JobAttempt `json:"cancel,omitempty"`
	// Preempt lists attempts to stop because a job of higher priority
	// takes their capacity: the worker stops them as it would a cancel
	// (SIGTERM, then SIGKILL after its kill grace) and reports the outcome
	// preempted; the job is queued again, the attempt not charged.
	Preempt []JobAttempt `json:"preempt,omitempty"`
	Revoked []JobAttempt `json:"revoked,omitempty"`
	// Deadlines are new max run times of held attempts whose SLA was
	// extended since they were leased.
	Deadlines []Deadline `json:"deadlines,omitempty"`
}

// Deadline is an attempt's max run time, counted from its start.
type Deadline struct {
	JobID     string `json:"job_id"`
	Attempt   int    `json:"attempt"`
	TimeoutMS int64  `json:"timeout_ms"`
}

// Outcomes a worker reports.
const (
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
	// OutcomePreempted is reported for an attempt stopped because the
	// server asked (HeartbeatResponse.Preempt).
	OutcomePreempted = "preempted"
	// OutcomeSnoozed is reported for an attempt whose handler said "not
	// ready yet, come back in SnoozeMS": the job waits that long and runs
	// again, the attempt not charged (docs/worker.md, "Snooze").
	OutcomeSnoozed = "snoozed"
)

// MaxSnoozeMS is the longest snooze a completion may ask for: 30 days.
const MaxSnoozeMS = 30 * 24 * 3600 * 1000

// Failure classes.
const (
	FailExitCode   = "exit_code"
	FailTimeout    = "timeout"
	FailKilled     = "killed"
	FailOOM        = "oom"
	FailLostWorker = "lost_worker"
	FailCancelled  = "cancelled"
	FailPreempted  = "preempted"
	FailStartError = "start_error"
	// FailSnoozed is the class of a snoozed attempt (its execution is
	// stored as cancelled, and read back as snoozed).
	FailSnoozed = "snoozed"
	// FailSnoozeLimit ends a job that asked to snooze past its max_snoozes.
	FailSnoozeLimit = "snooze_limit"
)

// Completion is one finished attempt, as a worker reports it.
type Completion struct {
	JobID        string          `json:"job_id"`
	Attempt      int             `json:"attempt"`
	Outcome      string          `json:"outcome"`
	ExitCode     *int            `json:"exit_code,omitempty"`
	FailureClass string          `json:"failure_class,omitempty"`
	Error        string          `json:"error,omitempty"`
	StartedAt    *time.Time      `json:"started_at,omitempty"`
	FinishedAt   *time.Time      `json:"finished_at,omitempty"`
	Result       json.RawMessage `json:"result,omitempty"`
	// OutputDroppedBytes is how much of the attempt's output the worker
	// dropped from the middle to keep within the job's output limit.
	OutputDroppedBytes int64 `json:"output_dropped_bytes,omitempty"`
	// SnoozeMS is how long a snoozed attempt's job waits before it runs
	// again: 1 .. MaxSnoozeMS, with outcome snoozed only.
	SnoozeMS int64 `json:"snooze_ms,omitempty"`
	// Usage is what the attempt's processes used, when the worker measured
	// it (a command job); nil otherwise.
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is what an attempt's processes used, as its worker measured it.
// The run's wall time is the execution's duration_ms.
type Usage struct {
	CPUUserUS   int64 `json:"cpu_user_us"`   // user-mode CPU, microseconds, summed over the processes
	CPUSystemUS int64 `json:"cpu_system_us"` // kernel-mode CPU, microseconds
	// PeakRSSBytes is the memory high-water mark: of the job's cgroup (all
	// its processes together) with source "cgroup" where the worker has
	// the memory controller, else of its largest single process. 0: unknown.
	PeakRSSBytes int64 `json:"peak_rss_bytes,omitempty"`
	// Source is "cgroup" (the job's own cgroup: every process it started)
	// or "rusage" (wait4 of the command, with the descendants it waited
	// for, and of the processes that left its process group).
	Source string `json:"source"`
}

// CompleteRequest is the body of POST /workers/{id}/complete.
type CompleteRequest struct {
	Results []Completion `json:"results"`
	// LeaseMax, when positive (at most 1000), asks for up to that many new
	// leases in the answer: jobs the server leases to this worker in the
	// same batch (typically into the slots these results free), without
	// waiting for any. They come highest priority first, as from a lease
	// request.
	LeaseMax int `json:"lease_max,omitempty"`
}

// ItemResult is the server's answer for one item of a start or complete.
type ItemResult struct {
	JobID string     `json:"job_id"`
	OK    bool       `json:"ok"`
	Error *ErrorBody `json:"error,omitempty"`
}

// ItemResults answers start and complete.
type ItemResults struct {
	Results []ItemResult `json:"results"`
	// Leases answers CompleteRequest.LeaseMax.
	Leases []Lease `json:"leases,omitempty"`
}

// LogAppendRequest is the body of POST /workers/{id}/logs.
type LogAppendRequest struct {
	Chunks []LogChunk `json:"chunks"`
}

// LogAppendResponse answers POST /workers/{id}/logs.
type LogAppendResponse struct {
	Accepted int `json:"accepted"`
}

// WorkerInfo is a worker as GET /workers lists it.
type WorkerInfo struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Types        []string  `json:"types,omitempty"`
	Handlers     []string  `json:"handlers,omitempty"`
	Labels       []string  `json:"labels,omitempty"`
	Slots        int       `json:"slots"`
	CPU          float64   `json:"cpu,omitempty"`
	MemoryMB     int64     `json:"memory_mb,omitempty"`
	GPU          int64     `json:"gpu,omitempty"`
	State        string    `json:"state"`
	Running      int       `json:"running"`
	RegisteredAt time.Time `json:"registered_at"`
	LastSeenAt   time.Time `json:"last_seen_at"`
}

// WorkerList answers GET /workers.
type WorkerList struct {
	Workers []WorkerInfo `json:"workers"`
}

// LaneInfo is one lane as GET /lanes lists it.
type LaneInfo struct {
	Name          string    `json:"name"`
	Weight        float64   `json:"weight"`
	Pending       int       `json:"pending"`
	Queued        int       `json:"queued"`
	Running       int       `json:"running"`
	Usage         Resources `json:"usage"`
	DominantShare float64   `json:"dominant_share"`
	Paused        bool      `json:"paused"`               // leases nothing until resumed
	PauseNote     string    `json:"pause_note,omitempty"` // why, as the operator said
}

// PauseLaneRequest is the optional body of POST /lanes/{name}/pause.
type PauseLaneRequest struct {
	Note string `json:"note,omitempty"`
}

// LaneActionResponse answers POST /lanes/{name}/pause and /resume: Result
// is paused, already_paused, resumed or not_paused.
type LaneActionResponse struct {
	Lane   LaneInfo `json:"lane"`
	Result string   `json:"result"`
}

// Capacity is the pool's total.
type Capacity struct {
	Resources
	Slots int `json:"slots"`
}

// LaneList answers GET /lanes.
type LaneList struct {
	Lanes    []LaneInfo `json:"lanes"`
	Capacity Capacity   `json:"capacity"`
	// RateLimits are the configured limits on starts and their buckets.
	RateLimits []RateLimitInfo `json:"rate_limits,omitempty"`
	Costs      *Costs          `json:"costs,omitempty"` // with ?costs=true
}

// KeyRequest is the body of POST /keys: an API key to create. Role is
// tenant (Tenant required), worker or admin; ExpiresAt is optional.
type KeyRequest struct {
	Name      string     `json:"name,omitempty"`
	Role      string     `json:"role"`
	Tenant    string     `json:"tenant,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Key is a stored API key as the admin API shows it: never its secret
// nor its hash. ID names it for revocation.
type Key struct {
	ID        string     `json:"id"`
	Name      string     `json:"name,omitempty"`
	Role      string     `json:"role"`
	Tenant    string     `json:"tenant,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	CreatedBy string     `json:"created_by,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Expired   bool       `json:"expired,omitempty"`
}

// KeyCreated answers POST /keys. Secret is shown this once: only its hash
// is stored.
type KeyCreated struct {
	Key    Key    `json:"key"`
	Secret string `json:"secret"`
}

// KeyList answers GET /keys.
type KeyList struct {
	Keys []Key `json:"keys"`
}

// WebhookRequest is the body of POST /webhooks: an alert webhook (see
// docs/alerting.md). Kinds and Tenants empty: every kind, every tenant.
type WebhookRequest struct {
	Name    string   `json:"name"`
	URL     string   `json:"url"`
	Secret  string   `json:"secret"`
	Kinds   []string `json:"kinds,omitempty"`
	Tenants []string `json:"tenants,omitempty"`
}

// Webhook is an alert webhook as GET /webhooks shows it: never its
// secret. Source is "config" (the configuration file's, changed there) or
// "api".
type Webhook struct {
	Name      string     `json:"name"`
	URL       string     `json:"url"`
	Kinds     []string   `json:"kinds,omitempty"`
	Tenants   []string   `json:"tenants,omitempty"`
	Source    string     `json:"source"`
	CreatedAt *time.Time `json:"created_at,omitempty"`
	CreatedBy string     `json:"created_by,omitempty"`
}

// WebhookList answers GET /webhooks.
type WebhookList struct {
	Webhooks []Webhook `json:"webhooks"`
}

// TenantUsage is a tenant's load against its limits (GET /tenants): its
// unfinished jobs not running (pending) and running, with max_running and
// max_queued (0: unlimited). MaxQueued bounds pending + running.
type TenantUsage struct {
	Name       string `json:"name"`
	Pending    int    `json:"pending"`
	Running    int    `json:"running"`
	MaxRunning int    `json:"max_running"`
	MaxQueued  int    `json:"max_queued"`
	// Quota is the tenant's resource quota (absent: none); Held is what
	// its running jobs hold against it.
	Quota *Quota    `json:"quota,omitempty"`
	Held  Resources `json:"held"`
}

// TenantList answers GET /tenants.
type TenantList struct {
	Tenants []TenantUsage `json:"tenants"`
}
