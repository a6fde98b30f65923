package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
)

func init() {
	commands["status"] = command{summary: "show a job and its latest attempt", run: runStatus}
}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("status", "ID [flags]", "Shows a job: its spec as resolved by the server, its state and its latest attempt.", stdout, stderr)
	id, cl, code := c.oneJob(args)
	if code >= 0 {
		return code
	}
	r, err := cl.Get(ctx, id)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(r))
	}
	tw := c.table()
	writeFields(tw, jobFields(r.Job))
	if r.Execution != nil {
		writeFields(tw, executionFields(*r.Execution, r.Job))
	}
	return c.done(tw.Flush())
}

// field is one "name: value" line; empty values are left out.
type field struct{ name, value string }

func writeFields(w io.Writer, fields []field) {
	for _, f := range fields {
		if f.value != "" {
			tableRow(w, f.name+":", f.value)
		}
	}
}

func jobFields(j api.Job) []field {
	return []field{
		{"id", j.ID}, {"name", j.Name}, {"type", j.Type}, {"state", jobStateText(j)}, {"waits for", reasonText(j)},
		{"tenant", j.Tenant}, {"lane", j.Lane}, {"key", j.Key}, {"fairness key", j.FairnessKey},
		{"priority", strconv.Itoa(j.Priority) + onDemandText(j.OnDemand)},
		{"resources", resourcesText(j.Resources)}, {"labels", strings.Join(j.Labels, ",")}, {"tags", strings.Join(j.Tags, ",")},
		{"command", commandText(j.Command, j.Shell)}, {"dir", j.Dir}, {"result location", j.ResultLocation},
		{"attempts", attemptsLine(j)},
		{"timeout", msOrEmpty(j.TimeoutMS)}, {"expected", msOrEmpty(j.ExpectedMS)}, {"sla policy", j.SLAPolicy},
		{"depends on", depsText(j.DependsOn)}, runAtField(j),
		{"created", timeText(&j.CreatedAt)}, {"started", timeOrEmpty(j.StartedAt)}, {"finished", timeOrEmpty(j.FinishedAt)},
		{"worker", j.WorkerID}, {"lease expires", leaseText(j)},
		{"cancel requested", yesOrEmpty(j.CancelRequested)}, {"held", yesOrEmpty(j.Held)}, {"trace", j.TraceParent}, errorField(j),
	}
}

// reasonText is the explain code of a job that waits, with the command
// that says more.
func reasonText(j api.Job) string {
	if j.Reason == "" {
		return ""
	}
	return j.Reason + " (fairway explain " + j.ID + ")"
}

// runAtField is the job's start time as the user set it (--run-at), while
// the job has not run yet, or the time of its next retry in retry_wait. A
// retry's time is not shown as if the user had set it.
func runAtField(j api.Job) field {
	switch {
	case j.State == api.StateRetryWait:
		return field{"retry at", timeOrEmpty(j.RunAt)}
	case j.Attempt == 0:
		return field{"run at", timeOrEmpty(j.RunAt)}
	}
	return field{}
}

// errorField is the job's last error: the error of a job that ended, or
// the previous attempt's error of a job waiting to run again. A job that
// is running again has no error yet, so none is shown.
func errorField(j api.Job) field {
	switch {
	case j.LastError == "" || j.State == api.StateLeased || j.State == api.StateRunning || restatesExit(j.LastError, j.ExitCode):
		return field{}
	case api.Terminal(j.State):
		return field{"error", j.LastError}
	}
	return field{"previous error", j.LastError}
}

func executionFields(e api.Execution, j api.Job) []field {
	outcome := dashIfEmpty(e.Outcome)
	if e.Outcome == "" {
		outcome = "(in progress)"
	}
	last := fmt.Sprintf("attempt %d on %s: %s", e.Attempt, dashIfEmpty(e.WorkerID), outcome)
	if e.ExitCode != nil {
		last += fmt.Sprintf(", exit code %d", *e.ExitCode)
	}
	if e.DurationMS > 0 {
		last += ", " + msText(e.DurationMS)
	}
	if e.SLAMet != nil && !*e.SLAMet {
		last += fmt.Sprintf(", SLA violated by %.0f%%", e.SLAViolationPct)
	}
	attemptError := e.Error
	if attemptError == j.LastError && errorField(j).value != "" || restatesExit(attemptError, e.ExitCode) {
		attemptError = "" // said on the error line, or by the exit code
	}
	return []field{{"last attempt", last}, {"usage", usageText(e.Usage)}, {"failure", e.FailureClass}, {"attempt error", attemptError}, {"result", resultText(e)}}
}

// usageText is what an attempt's processes used, as its worker measured
// it: "cpu 1.2s user + 300ms system, peak 64.0 MiB (cgroup)"; "" when not
// measured.
func usageText(u *api.Usage) string {
	if u == nil {
		return ""
	}
	us := func(v int64) string { return (time.Duration(v) * time.Microsecond).Round(time.Millisecond).String() }
	text := "cpu " + us(u.CPUUserUS) + " user + " + us(u.CPUSystemUS) + " system"
	if u.PeakRSSBytes > 0 {
		text += fmt.Sprintf(", peak %.1f MiB", float64(u.PeakRSSBytes)/(1<<20))
	}
	return text + " (" + u.Source + ")"
}

// resultText says where the attempt's output went, or how its upload is
// getting on.
func resultText(e api.Execution) string {
	switch e.ResultState {
	case "written":
		return e.ResultURL
	case "pending":
		if e.ResultTries == 0 {
			return "being written to " + e.ResultURL
		}
		return fmt.Sprintf("not written yet (%d tries, next %s): %s", e.ResultTries, timeOrEmpty(e.ResultNextAt), e.ResultError)
	case "failed":
		return fmt.Sprintf("NOT written to %s after %d tries: %s", e.ResultURL, e.ResultTries, e.ResultError)
	}
	return ""
}

func onDemandText(on bool) string {
	if on {
		return " (on demand)"
	}
	return ""
}

func resourcesText(r api.Resources) string {
	var parts []string
	if r.CPU != 0 {
		parts = append(parts, strconv.FormatFloat(r.CPU, 'g', -1, 64)+" cpu")
	}
	if r.MemoryMB != 0 {
		parts = append(parts, strconv.FormatInt(r.MemoryMB, 10)+" MB")
	}
	if r.GPU != 0 {
		parts = append(parts, strconv.FormatInt(r.GPU, 10)+" gpu")
	}
	return strings.Join(parts, ", ")
}

// commandText shows argv with arguments quoted where needed.
func commandText(argv []string, shell bool) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") {
			q[i] = strconv.Quote(a)
		}
	}
	s := strings.Join(q, " ")
	if shell && s != "" {
		s += " (shell)"
	}
	return s
}

func depsText(deps []api.Dependency) string {
	parts := make([]string, len(deps))
	for i, d := range deps {
		parts[i] = d.JobID + ":" + firstNonEmpty(d.Condition, "success")
	}
	return strings.Join(parts, ", ")
}

func msOrEmpty(ms int64) string {
	if ms == 0 {
		return ""
	}
	return msText(ms)
}

func timeOrEmpty(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return timeText(t)
}

// leaseText is when the lease of a leased or running job expires; the
// store keeps the last lease's expiry after the attempt ends, which is not
// shown.
func leaseText(j api.Job) string {
	if j.State != api.StateLeased && j.State != api.StateRunning {
		return ""
	}
	return timeOrEmpty(j.LeaseExpiresAt)
}

func yesOrEmpty(b bool) string {
	if b {
		return "yes"
	}
	return ""
}

// attemptsLine is "N of M": the job's last attempt so far and the last
// it may have, numbered as everywhere (list, logs, events). M is
// max_attempts plus the leases handed back uncharged, which this line
// alone explains.
func attemptsLine(j api.Job) string {
	line := fmt.Sprintf("%d of %d", j.Attempt, max(lastAttempt(j), j.Attempt))
	if j.ReturnedLeases > 0 {
		line += fmt.Sprintf(" (max_attempts %d, plus %d lease(s) handed back uncharged: never received by the worker, or stopped by a shutdown; fairway logs %s names them)",
			j.MaxAttempts, j.ReturnedLeases, j.ID)
	}
	if j.Snoozes > 0 {
		line += fmt.Sprintf("; %d of them snoozed (of max_snoozes %d)", j.Snoozes, j.MaxSnoozes)
	}
	return line
}
