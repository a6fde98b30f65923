package store

import (
	"encoding/json"
	"strconv"
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
		Actor: "system", Detail: leasedDetail(worker)}
}

// leasedDetail is the detail of a lease on worker: {"worker": worker}.
func leasedDetail(worker string) json.RawMessage {
	b := make([]byte, 0, len(`{"worker":""}`)+len(worker))
	b = append(b, `{"worker":`...)
	b = appendDetailString(b, worker)
	return append(b, '}')
}

// StartedEvent is the event of an attempt's start, recorded at `at`. A
// start reported on its own has no detail (lateStart zero); one reported
// with the completion carries the worker's start time, lateStart.
func StartedEvent(id int64, jobID string, attempt int, tenant string, at time.Time, worker string, lateStart time.Time) Event {
	e := Event{ID: id, JobID: jobID, Attempt: attempt, Tenant: tenant, Type: EventStarted, At: at, Actor: "worker:" + worker}
	if !lateStart.IsZero() {
		e.Detail = startedDetail(lateStart.UTC())
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
	if class == "" && exitCode == nil && errText == "" {
		return json.RawMessage("null")
	}
	b := make([]byte, 0, len(`{"class":"","error":"","exit_code":-2147483648}`)+len(class)+len(errText))
	b = append(b, '{')
	sep := func() {
		if len(b) > 1 {
			b = append(b, ',')
		}
	}
	// encoding/json writes a map's keys sorted: class, error, exit_code.
	if class != "" {
		b = appendDetailString(append(b, `"class":`...), string(class))
	}
	if errText != "" {
		sep()
		b = appendDetailString(append(b, `"error":`...), errText)
	}
	if exitCode != nil {
		sep()
		b = strconv.AppendInt(append(b, `"exit_code":`...), int64(*exitCode), 10)
	}
	return append(b, '}')
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
// (TestMarshalDetailAsEncodingJSON). The dispatcher's events must read
// back byte for byte as these functions synthesise them; the details of
// the three or four events every drained job records are written without
// it (appendDetailString and the functions that use it).
func MarshalDetail(v any) (json.RawMessage, error) { return segjson.Marshal(v) }

// SubmittedEvent is the event of a job's submission by actor at `at`:
// its detail is the job's type, lane and priority at submission.
func SubmittedEvent(id int64, jobID, tenant string, at time.Time, actor, typ, lane string, priority int) Event {
	return Event{ID: id, JobID: jobID, Tenant: tenant, Type: EventSubmitted, At: at, Actor: actor,
		Detail: submittedDetail(typ, lane, priority)}
}

// submittedDetail is {"lane": lane, "priority": priority, "type": typ},
// keys sorted as encoding/json writes a map's.
func submittedDetail(typ, lane string, priority int) json.RawMessage {
	b := make([]byte, 0, len(`{"lane":"","priority":-2147483648,"type":""}`)+len(typ)+len(lane))
	b = appendDetailString(append(b, `{"lane":`...), lane)
	b = strconv.AppendInt(append(b, `,"priority":`...), int64(priority), 10)
	b = appendDetailString(append(b, `,"type":`...), typ)
	return append(b, '}')
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

// The details of the events every job records (leased, started, outcome,
// submitted) are written here without encoding/json, whose map encoding
// costs a map, reflection and a sort for a document of one to three known
// keys: the bytes are encoding/json's for the map each stands for
// (TestAttemptDetailsAsEncodingJSON), so events recorded and events
// synthesised compare equal as before.

// appendDetailString appends s quoted as encoding/json quotes a string: a
// string of printable ASCII with nothing to escape (no quote, backslash
// or HTML character <, >, &) as it is, any other through MarshalDetail.
func appendDetailString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return append(b, marshalDetail(s)...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// startedDetail is {"started_at": t}, t in UTC: time.Time's JSON, RFC
// 3339 with nanoseconds, for the years it encodes (0 to 9999).
func startedDetail(t time.Time) json.RawMessage {
	if y := t.Year(); y < 0 || y > 9999 {
		return marshalDetail(map[string]any{"started_at": t}) // panics as encoding/json fails
	}
	b := make([]byte, 0, len(`{"started_at":""}`)+len(time.RFC3339Nano))
	b = t.AppendFormat(append(b, `{"started_at":"`...), time.RFC3339Nano)
	return append(b, `"}`...)
}

func marshalDetail(v any) json.RawMessage {
	raw, err := MarshalDetail(v)
	if err != nil {
		panic(err) // maps of strings, numbers and times always encode
	}
	return raw
}
