package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// submit --wait prints the job's transitions from its audit trail, which
// records every one of them: reading the job's state now and then would
// miss those that happen between two reads (attempt 1 timing out and
// attempt 2 starting within a second).

// eventDetail is an event's detail, with the fields the lines use.
type eventDetail struct {
	Worker      string     `json:"worker"`
	Reason      string     `json:"reason"`
	Class       string     `json:"class"`
	ExitCode    *int       `json:"exit_code"`
	Error       string     `json:"error"`
	RunAt       *time.Time `json:"run_at"`
	RunningMS   int64      `json:"running_ms"`
	TimeoutMS   int64      `json:"timeout_ms"`
	ExpectedMS  int64      `json:"expected_ms"`
	Policy      string     `json:"policy"`
	ExtendMS    int64      `json:"extend_ms"`
	From        any        `json:"from"`
	To          any        `json:"to"`
	ForJob      string     `json:"for_job"`
	Dependency  string     `json:"dependency"`
	LimitBytes  int64      `json:"limit_bytes"`
	Tries       int        `json:"tries"`
	Final       bool       `json:"final"`
	NextTryAt   *time.Time `json:"next_try_at"`
	MaxAttempts int        `json:"max_attempts"`
	DelayMS     int64      `json:"delay_ms"`
}

// jobTrail turns a job's audit events into lines for people. It knows the
// job's attempt limit, and counts the hand-backs it sees, to number each
// attempt "N of M" as status does.
type jobTrail struct {
	job    api.Job // max attempts and hand-backs so far
	worker string  // the worker of the current attempt
}

// line is what e says, and the state key it leaves the job in ("" when
// it changes no state); an empty line is an event not worth one (the
// submit and the end, which submit --wait says itself).
func (t *jobTrail) line(e api.Event) (text, key string) {
	var d eventDetail
	if len(e.Detail) > 0 {
		_ = json.Unmarshal(e.Detail, &d) // a detail that does not fit leaves its fields empty
	}
	if d.ExitCode == nil {
		// a retry's detail names the exit code in its error only
		if m := exitRestatement.FindStringSubmatch(d.Error); m != nil {
			code, _ := strconv.Atoi(m[4])
			d.ExitCode = &code
		}
	}
	n := e.Attempt
	switch e.Type {
	case "submitted", "deduplicated", "succeeded", "failed", "cancelled", "lease_expired":
		// lease_expired: the retry_scheduled or failed that follows says why
		return "", ""
	case "leased":
		t.worker = d.Worker
		return fmt.Sprintf("leased (%s on worker %s)", t.attemptOf(n), d.Worker), keyOf(api.StateLeased, n)
	case "started":
		worker := firstNonEmpty(strings.TrimPrefix(e.Actor, "worker:"), t.worker)
		return fmt.Sprintf("running (%s on worker %s)", t.attemptOf(n), worker), keyOf(api.StateRunning, n)
	case "retry_scheduled":
		failed := api.Job{FailureClass: d.Class, ExitCode: d.ExitCode, LastError: d.Error}
		return fmt.Sprintf("retry_wait (%s failed%s; %s)", t.attemptOf(n), failureText(failed), t.nextAttempt(n, e.At, d.RunAt)),
			keyOf(api.StateRetryWait, n)
	case "lease_returned":
		t.job.ReturnedLeases++
		return fmt.Sprintf("pending (attempt %d handed back uncharged: %s; it does not count against max_attempts)",
			n, firstNonEmpty(d.Reason, "the worker did not run it")), keyOf(api.StatePending, n)
	case "snoozed":
		t.job.ReturnedLeases++
		return fmt.Sprintf("blocked (attempt %d snoozed for %s, uncharged: it runs again from %s)", n, msText(d.DelayMS), timeText(d.RunAt)),
			keyOf(api.StateBlocked, n)
	case "unleased":
		return fmt.Sprintf("pending (attempt %d withdrawn before it started, uncharged: its slot went to job %s)", n, d.ForJob),
			keyOf(api.StatePending, n)
	case "unblocked":
		return "pending (no longer blocked: its run time came or its dependencies ended)", keyOf(api.StatePending, n)
	case "retried":
		t.job.MaxAttempts = max(t.job.MaxAttempts, d.MaxAttempts)
		return fmt.Sprintf("pending (retried by %s: one more attempt allowed)", e.Actor), keyOf(api.StatePending, n)
	case "sla_warning":
		return fmt.Sprintf("attempt %d has run %s, past its expected %s (SLA warning)", n, msText(d.RunningMS), msText(d.ExpectedMS)), ""
	case "sla_violation":
		return fmt.Sprintf("attempt %d has run %s, past its timeout %s (SLA violation, policy %s)",
			n, msText(d.RunningMS), msText(d.TimeoutMS), firstNonEmpty(d.Policy, "strict")), ""
	case "sla_extended":
		return fmt.Sprintf("SLA of attempt %d extended by %s (by %s)", n, msText(d.ExtendMS), e.Actor), ""
	case "cancel_requested":
		return fmt.Sprintf("cancel requested by %s: its worker stops attempt %d", e.Actor, n), ""
	case "heartbeat_cancel":
		return fmt.Sprintf("its worker was told to stop attempt %d", n), ""
	case "held", "released":
		return fmt.Sprintf("%s by %s", e.Type, e.Actor), ""
	case "reprioritized":
		return fmt.Sprintf("priority %v -> %v (by %s)", d.From, d.To, e.Actor), ""
	case "dependency_failed":
		return fmt.Sprintf("its dependency %s ended in a way that lets it not run", d.Dependency), ""
	case "output_truncated":
		return fmt.Sprintf("attempt %d's output passed its limit of %d bytes: its head and tail are kept", n, d.LimitBytes), ""
	case "result_written":
		return fmt.Sprintf("attempt %d's output written to its result location", n), ""
	case "result_write_failed":
		if d.Final {
			return fmt.Sprintf("attempt %d's output NOT written to its result location after %d tries: %s", n, d.Tries, d.Error), ""
		}
		return fmt.Sprintf("attempt %d's output not written yet (try %d: %s); it is tried again", n, d.Tries, d.Error), ""
	}
	text = e.Type
	if len(e.Detail) > 0 {
		text += " " + string(e.Detail)
	}
	return text, ""
}

// attemptOf is "attempt N of M": M is the last attempt the job may have,
// its max_attempts plus the leases handed back uncharged.
func (t *jobTrail) attemptOf(n int) string {
	return attemptOfText(n, t.job)
}

// nextAttempt says when attempt n+1 starts.
func (t *jobTrail) nextAttempt(n int, at time.Time, runAt *time.Time) string {
	if runAt == nil || runAt.Sub(at) < time.Second {
		return fmt.Sprintf("attempt %d starts now", n+1)
	}
	return fmt.Sprintf("attempt %d at %s, in %s", n+1, timeText(runAt), runAt.Sub(at).Round(time.Second))
}

func keyOf(state string, attempt int) string {
	return fmt.Sprintf("%s/%d", state, attempt)
}

// lastAttempt is the number of the last attempt a job may have: its
// max_attempts plus the leases handed back uncharged, which do not count
// against it (0 when the job has no limit set).
func lastAttempt(j api.Job) int {
	if j.MaxAttempts <= 0 {
		return 0
	}
	return j.MaxAttempts + j.ReturnedLeases
}

// attemptOfText is "attempt N of M" (M: lastAttempt), or "attempt N" when
// the job has no limit.
func attemptOfText(n int, j api.Job) string {
	if m := lastAttempt(j); m >= n && m > 0 {
		return fmt.Sprintf("attempt %d of %d", n, m)
	}
	return fmt.Sprintf("attempt %d", n)
}
