package store

import (
	"encoding/json"
	"time"

	segjson "github.com/segmentio/encoding/json"
)

// The events an attempt's rows hold instead of event rows (see "Attempt
// history in the execution row" in doc.go), and the submitted event the
// job row holds ("The submitted event in the job row"). The dispatcher
// builds the events it records with these functions' counterparts and
// keeps a row whenever they differ from what these give back; EventList
// synthesises with them. So a change here changes both sides at once.

// LeasedEvent is the event of an attempt's lease at `at` on worker.
func LeasedEvent(id int64, jobID string, attempt int, tenant string, at time.Time, worker string) Event {
	return Event{ID: id, JobID: jobID, Attempt: attempt, Tenant: tenant, Type: EventLeased, At: at,
		Actor: "system", Detail: marshalDetail(map[string]string{"worker": worker})}
}

// StartedEvent is the event of an attempt's start, recorded at `at`. A
// start reported on its own has no detail (lateStart zero); one reported
// with the completion carries the worker's start time, lateStart.
func StartedEvent(id int64, jobID string, attempt int, tenant string, at time.Time, worker string, lateStart time.Time) Event {
	e := Event{ID: id, JobID: jobID, Attempt: attempt, Tenant: tenant, Type: EventStarted, At: at, Actor: "worker:" + worker}
	if !lateStart.IsZero() {
		e.Detail = marshalDetail(map[string]any{"started_at": lateStart.UTC()})
	}
	return e
}

// OutcomeEventType is the type of the event that ends a job with an
// attempt that ended so.
func OutcomeEventType(o Outcome) EventType {
	switch o {
	case OutcomeSucceeded:
		return EventSucceeded
	case OutcomeCancelled:
		return EventCancelled
	}
	return EventFailed
}

// OutcomeEvent is the event a worker's completion records when it ends
// the job (succeeded, cancelled, failed for good), from the attempt's
// execution row.
func OutcomeEvent(id int64, tenant string, e Execution) Event {
	return Event{ID: id, JobID: e.JobID, Attempt: e.Attempt, Tenant: tenant, Type: OutcomeEventType(e.Outcome),
		At: e.FinishedAt, Actor: "worker:" + e.WorkerID, Detail: OutcomeDetail(e.FailureClass, e.ExitCode, e.Error)}
}

// OutcomeDetail is the detail of an attempt's outcome event: its failure
// class, exit code and error, each when it has one ("null" when none).
func OutcomeDetail(class FailureClass, exitCode *int, errText string) json.RawMessage {
	m := map[string]any{}
	if class != "" {
		m["class"] = class
	}
	if exitCode != nil {
		m["exit_code"] = *exitCode
	}
	if errText != "" {
		m["error"] = errText
	}
	if len(m) == 0 {
		return marshalDetail(map[string]any(nil))
	}
	return marshalDetail(m)
}

// AttemptEvents returns the events an execution row holds, in id order.
func AttemptEvents(tenant string, e Execution) []Event {
	var out []Event
	if e.LeaseEventID != 0 {
		out = append(out, LeasedEvent(e.LeaseEventID, e.JobID, e.Attempt, tenant, e.LeasedAt, e.WorkerID))
	}
	if e.StartEventID != 0 {
		out = append(out, executionStarted(tenant, e))
	}
	if e.EndEventID != 0 {
		out = append(out, OutcomeEvent(e.EndEventID, tenant, e))
	}
	return out
}

func executionStarted(tenant string, e Execution) Event {
	if e.StartEventAt.IsZero() {
		return StartedEvent(e.StartEventID, e.JobID, e.Attempt, tenant, e.FinishedAt, e.WorkerID, e.StartedAt)
	}
	return StartedEvent(e.StartEventID, e.JobID, e.Attempt, tenant, e.StartEventAt, e.WorkerID, time.Time{})
}

// LiveAttemptEvents returns the events a job row holds for its live
// attempt, in id order.
func LiveAttemptEvents(j Job) []Event {
	var out []Event
	if j.LeaseEventID != 0 {
		out = append(out, LeasedEvent(j.LeaseEventID, j.ID, j.Attempt, j.Tenant, j.LeasedAt, j.WorkerID))
	}
	if j.StartEventID != 0 && !j.StartEventAt.IsZero() {
		out = append(out, StartedEvent(j.StartEventID, j.ID, j.Attempt, j.Tenant, j.StartEventAt, j.WorkerID, time.Time{}))
	}
	return out
}

// MarshalDetail is an event's detail as JSON: the bytes of
// encoding/json's Marshal (HTML escaped, map keys sorted), made by
// github.com/segmentio/encoding/json in a third of the CPU
// (TestMarshalDetailAsEncodingJSON). Every drained job records three or
// four events, and the dispatcher's events must read back byte for byte
// as these functions synthesise them.
func MarshalDetail(v any) (json.RawMessage, error) { return segjson.Marshal(v) }

// SubmittedEvent is the event of a job's submission by actor at `at`:
// its detail is the job's type, lane and priority at submission.
func SubmittedEvent(id int64, jobID, tenant string, at time.Time, actor, typ, lane string, priority int) Event {
	return Event{ID: id, JobID: jobID, Tenant: tenant, Type: EventSubmitted, At: at, Actor: actor,
		Detail: marshalDetail(map[string]any{"type": typ, "lane": lane, "priority": priority})}
}

// JobSubmittedEvent is the submitted event j's row holds (package store,
// "The submitted event in the job row"); meaningful when j.SubmitEventID
// is set.
func JobSubmittedEvent(j Job) Event {
	priority := j.Priority
	if j.SubmitPriority != nil {
		priority = *j.SubmitPriority
	}
	return SubmittedEvent(j.SubmitEventID, j.ID, j.Tenant, j.CreatedAt, j.SubmitActor, j.Type, j.Lane, priority)
}

func marshalDetail(v any) json.RawMessage {
	raw, err := MarshalDetail(v)
	if err != nil {
		panic(err) // maps of strings, numbers and times always encode
	}
	return raw
}
