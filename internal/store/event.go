package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventType names an audit event.
type EventType string

// Event types. The list is open: the store accepts any non-empty type.
const (
	EventSubmitted       EventType = "submitted"
	EventDeduplicated    EventType = "deduplicated"
	EventBlocked         EventType = "blocked"
	EventUnblocked       EventType = "unblocked"
	EventLeased          EventType = "leased"
	EventUnleased        EventType = "unleased"
	EventLeaseReturned   EventType = "lease_returned" // handed back unrun, attempt not charged
	EventStarted         EventType = "started"
	EventHeartbeatCancel EventType = "heartbeat_cancel"
	EventSucceeded       EventType = "succeeded"
	EventFailed          EventType = "failed"
	EventRetryScheduled  EventType = "retry_scheduled"
	EventLeaseExpired    EventType = "lease_expired"
	EventCancelled       EventType = "cancelled"
	EventCancelRequested EventType = "cancel_requested"
	// EventPreemptRequested: the engine chose the running job as a victim
	// for a waiting one (detail: for, worker, grace_ends).
	EventPreemptRequested EventType = "preempt_requested"
	// EventPreempted: the victim stopped and is queued again with its age,
	// the attempt not charged (detail: for, worker).
	EventPreempted        EventType = "preempted"
	EventSnoozed          EventType = "snoozed" // the handler asked to run again later: blocked until run_at, uncharged
	EventReprioritized    EventType = "reprioritized"
	EventHeld             EventType = "held"
	EventReleased         EventType = "released"
	EventRetried          EventType = "retried" // an ended job sent back to the queue by hand
	EventSLAWarning       EventType = "sla_warning"
	EventSLAViolation     EventType = "sla_violation"
	EventSLAExtended      EventType = "sla_extended"
	EventOutputTruncated  EventType = "output_truncated" // output past the job's limit was dropped
	EventDependencyFailed EventType = "dependency_failed"
	EventWorkerRegistered EventType = "worker_registered"
	EventWorkerLost       EventType = "worker_lost"
	EventWorkerDrained    EventType = "worker_drained"
	EventScheduleFired    EventType = "schedule_fired"
	EventScheduleMisfired EventType = "schedule_misfired"
	EventScheduleMissed   EventType = "schedule_missed"  // slots older than the catch-up window
	EventScheduleSkipped  EventType = "schedule_skipped" // slots dropped by the overlap policy
	EventScheduleFailed   EventType = "schedule_failed"  // a slot's job could not be created
	EventConfigLoaded     EventType = "config_loaded"    // a server started leading with this policy
	EventKeyCreated       EventType = "key_created"      // an API key was created through the admin API
	EventAlertDelivered   EventType = "alert_delivered"  // a webhook took an alert (package alerts)
	EventAlertFailed      EventType = "alert_failed"     // it did not, after its last try
	EventWebhookCreated   EventType = "webhook_created"
	EventWebhookDeleted   EventType = "webhook_deleted"
	EventKeyRevoked       EventType = "key_revoked"
	EventLanePaused       EventType = "lane_paused"
	EventLaneResumed      EventType = "lane_resumed"
	EventScheduleCreated  EventType = "schedule_created"
	EventScheduleUpdated  EventType = "schedule_updated"
	EventSchedulePaused   EventType = "schedule_paused"
	EventScheduleResumed  EventType = "schedule_resumed"
	EventScheduleDeleted  EventType = "schedule_deleted"
	EventResultWritten    EventType = "result_written"      // an attempt's output reached its result location
	EventResultFailed     EventType = "result_write_failed" // a try to write it failed (retried unless final)
)

// Event is one entry of the audit trail. ID is assigned by EventAppend and
// grows with every append, so "events after ID n" never misses a committed
// event (there is one writer). JobID is "" for events about no job.
type Event struct {
	ID      int64
	JobID   string
	Attempt int
	Tenant  string
	Type    EventType
	At      time.Time
	Actor   string          // "admin key ID (NAME)", "tenant:NAME key ID (NAME)", "worker:ID", "system", ...
	Detail  json.RawMessage // JSON object or nil
	// ScheduleID names the schedule of a schedule's event (created,
	// paused, fired, missed, ...); "" otherwise.
	ScheduleID string
	// Synthesised: the event is held by its attempt's job or execution
	// row, which the same transaction writes; EventAppend stores no row
	// for it (package store, "Attempt history in the execution row").
	// Its ID must be set.
	Synthesised bool
}

// Validate checks the type, time and detail. The detail is parsed only
// if EventAppend stores it: a synthesised event's row holds none (its
// reader rebuilds it), and the leased, started and outcome events of a
// drained job usually are, each checked by the recorder and again by the
// writer.
func (e *Event) Validate() error {
	switch {
	case e.Type == "":
		return fmt.Errorf("%w: event: empty type", ErrInvalid)
	case e.At.IsZero():
		return fmt.Errorf("%w: event %s: zero At", ErrInvalid, e.Type)
	case !e.Synthesised && len(e.Detail) > 0 && !json.Valid(e.Detail):
		return fmt.Errorf("%w: event %s: detail is not JSON", ErrInvalid, e.Type)
	case e.Synthesised && e.ID <= 0:
		return fmt.Errorf("%w: event %s: synthesised without an id", ErrInvalid, e.Type)
	case e.ID < 0:
		return fmt.Errorf("%w: event %s: id %d", ErrInvalid, e.Type, e.ID)
	}
	return nil
}

// EventListParams selects events in ID order. Zero fields do not filter.
type EventListParams struct {
	JobID      string
	ScheduleID string
	Tenant     string
	Types      []EventType
	Actor      string    // events by this actor: itself ("worker:w1", "system"), a role's keys ("admin", "tenant:acme"), or a key by id
	Since      time.Time // at >= Since
	Until      time.Time // at < Until
	AfterID    int64
	Limit      int  // 0 = DefaultListLimit; capped at MaxListLimit
	Newest     bool // newest first (default: oldest first)
	// UpToID, if not 0: only events with ids up to it.
	UpToID int64
	// NoLive leaves out the leased and started events of the live attempts
	// of unfinished jobs, which the caller answers from the leader's
	// dispatcher (store doc.go, "The hot row and its indexes").
	NoLive bool
}
