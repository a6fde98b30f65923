package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/runner"
)

// CommandOptions configure CommandHandler.
type CommandOptions struct {
	// AllowShell lets jobs with shell=true run through /bin/sh -c; without
	// it they fail with class start_error.
	AllowShell bool
	// InheritEnv gives jobs the worker's whole environment rather than
	// PATH, HOME, LANG and TMPDIR only (plus the job's env either way).
	InheritEnv bool
	// KillGrace is how long a stopped job's processes have between SIGTERM
	// and SIGKILL; default 5s.
	KillGrace time.Duration
	// CgroupParent, if set, runs each job in a cgroup of its own created
	// under this cgroup v2 directory (see runner.JobCgroupParent): every
	// process the job starts is killed at its end, and its usage is the
	// cgroup's. Empty: the job's process group, and the orphans that carry
	// its marker, are killed.
	CgroupParent string
	// SnoozeExitCode is the exit code with which a command that wrote a
	// delay to its FAIRWAY_SNOOZE_FILE snoozes its job (see Snooze);
	// 0 means DefaultSnoozeExitCode (75), a negative code turns it off.
	SnoozeExitCode int
}

// CommandHandler returns the handler of `fairway worker`: it runs the job's
// command (argv, env, dir) as a child process in its own process group,
// streams its stdout and stderr as the job's logs and reports its exit
// code. Cancelling the context (job cancelled, strict timeout, shutdown)
// terminates the whole group. A job without a command fails with class
// start_error.
func CommandHandler(opts CommandOptions) Handler {
	return commandHandler{opts: opts}
}

type commandHandler struct{ opts CommandOptions }

// commandFreeTypes are the types of handlers that run jobs without a
// command: every handler but CommandHandler's. The server refuses a job
// without a command that no worker could run so. Never nil: an empty list
// says "commands only".
func commandFreeTypes(handlers map[string]Handler) []string {
	types := []string{}
	for typ, h := range handlers {
		if _, runsCommands := h.(commandHandler); !runsCommands {
			types = append(types, typ)
		}
	}
	slices.Sort(types)
	return types
}

var (
	errNoCommand = errors.New("job has no command")
	errNoShell   = errors.New("shell jobs are refused by this worker (start it with --allow-shell)")
)

func (h commandHandler) Run(ctx context.Context, job Job) (json.RawMessage, error) {
	switch {
	case len(job.Command) == 0:
		return nil, Fail(api.FailStartError, errNoCommand)
	case job.Shell && !h.opts.AllowShell:
		return nil, Fail(api.FailStartError, errNoShell)
	}
	env := jobEnv(job)
	if f, err := os.CreateTemp("", "fairway-preempted-*"); err == nil {
		_ = f.Close()
		defer os.Remove(f.Name())
		env["FAIRWAY_PREEMPTED_FILE"] = f.Name()
		job.setPreemptFile(f.Name())
	}
	if f, err := os.CreateTemp("", "fairway-snooze-*"); err == nil {
		_ = f.Close()
		defer os.Remove(f.Name())
		env["FAIRWAY_SNOOZE_FILE"] = f.Name()
	}
	spec := runner.Spec{
		Argv: job.Command, Env: env, Dir: job.Dir, Shell: job.Shell,
		InheritEnv: h.opts.InheritEnv, KillGrace: h.opts.KillGrace,
		CgroupParent: h.opts.CgroupParent,
	}
	stdout, stderr := job.Stdout(), job.Stderr()
	res := runner.Run(ctx, spec, runner.OutputFunc(func(s runner.Stream, p []byte) {
		if s == runner.Stderr {
			_, _ = stderr.Write(p) // log writers never fail
			return
		}
		_, _ = stdout.Write(p)
	}))
	if res.ExitCode >= 0 && res.Pid != 0 {
		job.setExitCode(res.ExitCode)
	}
	if res.Pid != 0 && res.Usage.Source != "" {
		job.setUsage(apiUsage(res.Usage))
	}
	if res.Class == runner.ClassExitCode && res.ExitCode == h.opts.snoozeExitCode() && env["FAIRWAY_SNOOZE_FILE"] != "" {
		if err, ok := commandSnooze(env["FAIRWAY_SNOOZE_FILE"], res.ExitCode); ok {
			return nil, err
		}
	}
	return nil, runFailure(res)
}

// jobEnv is the job's environment plus what it may want to know of
// itself: FAIRWAY_JOB_ID, FAIRWAY_ATTEMPT, TRACEPARENT (the attempt's W3C
// trace context, when the job has one), (set by Run) FAIRWAY_PREEMPTED_FILE,
// an empty file that holds "1" once the attempt is preempted, and
// FAIRWAY_SNOOZE_FILE, an empty file where the command may write a delay
// before it exits with the snooze exit code (75), and for a
// schedule's job
// FAIRWAY_SCHEDULE_ID and FAIRWAY_SCHEDULED_FOR (RFC 3339, UTC). The
// job's own env wins.
func jobEnv(job Job) map[string]string {
	env := map[string]string{"FAIRWAY_JOB_ID": job.ID, "FAIRWAY_ATTEMPT": strconv.Itoa(job.Attempt)}
	if job.TraceParent != "" {
		env["TRACEPARENT"] = job.TraceParent
	}
	if job.ScheduleID != "" {
		env["FAIRWAY_SCHEDULE_ID"] = job.ScheduleID
	}
	if job.ScheduledFor != nil {
		env["FAIRWAY_SCHEDULED_FOR"] = job.ScheduledFor.UTC().Format(time.RFC3339Nano)
	}
	maps.Copy(env, job.Env)
	return env
}

// apiUsage is the wire form of what a run used.
func apiUsage(u runner.Usage) api.Usage {
	return api.Usage{
		CPUUserUS: u.User.Microseconds(), CPUSystemUS: u.System.Microseconds(),
		PeakRSSBytes: u.PeakRSSBytes, Source: string(u.Source),
	}
}

// runFailure maps a runner result to the error a handler returns.
func runFailure(res runner.Result) error {
	if res.Class == runner.ClassNone {
		return nil
	}
	f := &Failure{Class: runnerClass(res.Class), Err: res.Err}
	if res.ExitCode >= 0 && res.Pid != 0 {
		code := res.ExitCode
		f.ExitCode = &code
		if res.Class == runner.ClassExitCode {
			f.Err = exitError{code: code, cause: res.Err}
		}
	}
	return f
}

// exitError is a plain non-zero exit, said once: "exit code 3".
type exitError struct {
	code  int
	cause error
}

func (e exitError) Error() string { return fmt.Sprintf("exit code %d", e.code) }
func (e exitError) Unwrap() error { return e.cause }

func runnerClass(c runner.FailureClass) string {
	switch c {
	case runner.ClassExitCode:
		return api.FailExitCode
	case runner.ClassTimeout:
		return api.FailTimeout
	case runner.ClassOOM:
		return api.FailOOM
	case runner.ClassStartError:
		return api.FailStartError
	}
	return api.FailKilled // killed, or died of another signal
}
