// Package wire renders the store's records as the API's wire types (package
// api): the one place where a stored job, execution or policy becomes what
// clients read. The dispatcher and the HTTP API both answer with them.
package wire

import (
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
)

// TimePtr is t in UTC, or nil for the zero time.
func TimePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// Job renders a stored job for the API.
func Job(j store.Job) api.Job {
	out := api.Job{
		ID: j.ID, Type: j.Type, Tenant: j.Tenant, Name: j.Name, Lane: j.Lane, Key: j.Key,
		FairnessKey: j.FairnessKey, Priority: j.Priority, OnDemand: j.OnDemand, NotPreemptible: j.NotPreemptible,
		Resources: Resources(j.Resources), Labels: j.Labels, Tags: j.Tags, Command: j.Command,
		Env: j.Env, Dir: j.Dir, Payload: RawJSON(j.Payload), IdempotencyKey: j.IdempotencyKey, TraceParent: j.TraceParent,
		MaxAttempts: j.MaxAttempts, Retry: Retry(j.Retry),
		TimeoutMS: j.Timeout.Milliseconds(), ExpectedMS: j.Expected.Milliseconds(),
		SLAPolicy: string(j.SLAPolicy), RunAt: TimePtr(j.RunAt),
		State: string(j.State), Attempt: j.Attempt, ReturnedLeases: j.ReturnedLeases,
		CreatedAt: j.CreatedAt.UTC(), UpdatedAt: j.UpdatedAt.UTC(),
		EnqueuedAt: TimePtr(j.EnqueuedAt), StartedAt: TimePtr(j.StartedAt), FinishedAt: TimePtr(j.FinishedAt),
		WorkerID: j.WorkerID, LeaseExpiresAt: TimePtr(j.LeaseExpiresAt),
		CancelRequested: j.CancelRequested, Held: j.Held, LastError: j.LastError, ExitCode: j.ExitCode,
		FailureClass: string(j.FailureClass), Result: RawJSON(j.Result),
		OutputLimitBytes: j.OutputLimit, ResultLocation: j.ResultLocation,
		ScheduleID: j.ScheduleID, ScheduledFor: TimePtr(j.ScheduledFor),
	}
	for _, dep := range j.DependsOn {
		out.DependsOn = append(out.DependsOn, api.Dependency{JobID: dep.JobID, Condition: string(dep.Condition)})
	}
	out.Shell = j.Shell
	out.Unique = UniqueRule(j.Unique)
	out.Snoozes, out.MaxSnoozes = j.Snoozes, j.MaxSnoozes
	return out
}

// UniqueRule renders a job's unique rule; nil for none.
func UniqueRule(r *store.UniqueRule) *api.UniqueRule {
	if r == nil {
		return nil
	}
	out := &api.UniqueRule{}
	for _, f := range r.By {
		out.By = append(out.By, string(f))
	}
	for _, s := range r.States {
		out.States = append(out.States, string(s))
	}
	if r.Period > 0 {
		out.PeriodMS = store.Ptr(r.Period.Milliseconds())
	}
	return out
}

// RawJSON is b, or nil when it is empty (so that the field is left out).
func RawJSON(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// Resources renders a resource demand: cpu in cores.
func Resources(r policy.Resources) api.Resources {
	return api.Resources{CPU: float64(r.MilliCPU) / 1000, MemoryMB: r.MemoryMB, GPU: r.GPU}
}

// Retry renders a retry policy.
func Retry(r store.RetryPolicy) api.RetryPolicy {
	out := api.RetryPolicy{Kind: string(r.Kind), DelayMS: r.Delay.Milliseconds(), MaxDelayMS: r.MaxDelay.Milliseconds(), Jitter: r.Jitter}
	for _, c := range r.RetryOn {
		out.RetryOn = append(out.RetryOn, string(c))
	}
	return out
}

// Execution renders one attempt's record.
func Execution(e store.Execution) api.Execution {
	return api.Execution{
		JobID: e.JobID, Attempt: e.Attempt, WorkerID: e.WorkerID,
		LeasedAt: TimePtr(e.LeasedAt), StartedAt: TimePtr(e.StartedAt), FinishedAt: TimePtr(e.FinishedAt),
		Outcome: outcome(e), ExitCode: e.ExitCode, FailureClass: string(e.FailureClass),
		Error: e.Error, DurationMS: e.Duration.Milliseconds(), SLAMet: e.SLAMet, SLAViolationPct: e.SLAViolationPct,
		ResultState: string(e.ResultState), ResultURL: e.ResultURL, ResultError: e.ResultError,
		ResultTries: e.ResultTries, ResultNextAt: TimePtr(e.ResultNextAt), Usage: Usage(e.Usage),
	}
}

// Usage renders what an attempt used; nil when it was not measured.
func Usage(u store.Usage) *api.Usage {
	if !u.Measured() {
		return nil
	}
	return &api.Usage{
		CPUUserUS: u.CPUUser.Microseconds(), CPUSystemUS: u.CPUSystem.Microseconds(),
		PeakRSSBytes: u.PeakRSSBytes, Source: u.Source,
	}
}

// outcome is the execution's outcome as clients see it: a preempted
// (snoozed) attempt is stored as cancelled with the failure class
// preempted (snoozed).
func outcome(e store.Execution) string {
	switch e.FailureClass {
	case store.FailPreempted:
		return api.OutcomePreempted
	case store.FailSnoozed:
		return api.OutcomeSnoozed
	}
	return string(e.Outcome)
}

// Event renders one audit-trail entry.
func Event(e store.Event) api.Event {
	return api.Event{
		ID: e.ID, JobID: e.JobID, Attempt: e.Attempt, Type: string(e.Type), At: e.At.UTC(), Actor: e.Actor,
		Detail: RawJSON(e.Detail), ScheduleID: e.ScheduleID, Tenant: e.Tenant,
	}
}
