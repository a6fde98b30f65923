package runner

import (
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// FailureClass says why a run did not succeed; "" means success.
type FailureClass string

// Failure classes. They are stable strings: the worker reports them to the
// server, which bases retry decisions on them.
const (
	ClassNone       FailureClass = ""
	ClassExitCode   FailureClass = "exit_code"   // exited with a non-zero status
	ClassTimeout    FailureClass = "timeout"     // Spec.Timeout expired; the group was killed
	ClassKilled     FailureClass = "killed"      // ctx was cancelled, or SIGKILL from elsewhere without OOM evidence
	ClassOOM        FailureClass = "oom"         // SIGKILL (or exit 137) while the cgroup's oom_kill counter rose
	ClassSignal     FailureClass = "signal"      // died of another signal (SIGSEGV, SIGABRT, ...)
	ClassStartError FailureClass = "start_error" // never started: bad spec, binary missing, not executable, bad Dir
)

// Sentinel errors; Result.Err wraps exactly one of them when Class != "".
var (
	ErrStart   = errors.New("runner: start failed")
	ErrExit    = errors.New("runner: non-zero exit status")
	ErrTimeout = errors.New("runner: timed out")
	ErrOOM     = errors.New("runner: killed by the OOM killer")
	ErrSignal  = errors.New("runner: killed by a signal")
	ErrKilled  = errors.New("runner: killed")

	errNotFound = exec.ErrNotFound
)

// Result is the outcome of one Run.
type Result struct {
	Pid      int    // 0 when the process never started
	ExitCode int    // -1 when killed by a signal or never started
	Signal   string // the fatal signal's name ("killed", "terminated"), if any
	Class    FailureClass
	// Err is nil on success. Otherwise it wraps the sentinel matching Class
	// and, where relevant, the cause: the ctx's cause for ClassKilled,
	// exec.ErrNotFound or an fs error for ClassStartError.
	Err error
	// Started is when the process was started (or the start attempted);
	// Finished is when its exit was observed, before output was drained.
	Started, Finished time.Time
	// OutputIncomplete is set when stdout/stderr were still held open by a
	// process outside the group DrainTimeout after the group was gone: the
	// pipes were closed and later output, if any, was lost.
	OutputIncomplete bool
	// Usage is what the run's processes used. Zero when it never started.
	Usage Usage
}

// UsageSource says where Usage comes from.
type UsageSource string

const (
	// UsageCgroup: the job's own cgroup (cpu.stat, memory.peak): every
	// process the job started, whatever became of it.
	UsageCgroup UsageSource = "cgroup"
	// UsageRusage: wait4's rusage of the child, which includes the
	// descendants it waited for, plus the descendants that left its
	// process group and were killed and reaped by the runner. A descendant
	// that escaped both (it cleared its environment) is not counted.
	UsageRusage UsageSource = "rusage"
)

// Usage is the resources a run's processes used.
type Usage struct {
	User, System time.Duration // CPU time in user and kernel mode, summed over the processes
	// PeakRSSBytes is the memory high-water mark: the cgroup's memory.peak
	// (all processes together) where available, else the largest
	// ru_maxrss of a single process. 0 if unknown.
	PeakRSSBytes int64
	Source       UsageSource
}

// CPU is User + System.
func (u Usage) CPU() time.Duration { return u.User + u.System }

// Duration is the run time, Finished - Started.
func (r Result) Duration() time.Duration { return r.Finished.Sub(r.Started) }

func startFailure(at time.Time, err error) Result {
	return Result{
		ExitCode: -1,
		Class:    ClassStartError,
		Err:      fmt.Errorf("%w: %w", ErrStart, err),
		Started:  at,
		Finished: at,
	}
}

// exitInfo is how the process ended, decoded from its wait status.
type exitInfo struct {
	code    int    // -1 when signalled or unknown
	signal  string // "" unless signalled
	killed  bool   // signalled by SIGKILL
	waitErr error  // set when the status could not be collected
}

// mayBeOOM reports whether the process ended as the OOM killer ends one:
// SIGKILL, or the 137 a shell reports for a SIGKILLed child.
func (e exitInfo) mayBeOOM() bool { return e.killed || e.code == 128+9 }

// outcome is what supervise observed.
type outcome struct {
	stopped  FailureClass // ClassTimeout or ClassKilled if Run signalled the group, else ""
	cause    error        // context.Cause(ctx) when stopped == ClassKilled
	exitedAt time.Time
	cut      bool // output cut off after DrainTimeout
	exit     exitInfo
	oomRose  bool // the cgroup's oom_kill counter rose during the run
	usage    Usage
}

// verdict decides the class. Once Run has signalled the group the outcome is
// the class of that signal (timeout or killed), whatever the exit status: a
// child that handles SIGTERM and exits 0 was still stopped.
func verdict(o outcome) (FailureClass, error) {
	ex := o.exit
	switch {
	case o.stopped == ClassTimeout:
		return ClassTimeout, ErrTimeout
	case o.stopped == ClassKilled:
		return ClassKilled, fmt.Errorf("%w: cancelled: %w", ErrKilled, o.cause)
	case ex.waitErr != nil:
		return ClassExitCode, fmt.Errorf("%w: status unknown: %w", ErrExit, ex.waitErr)
	case o.oomRose && ex.mayBeOOM():
		return ClassOOM, ErrOOM
	case ex.killed:
		return ClassKilled, fmt.Errorf("%w: SIGKILL from outside the runner", ErrKilled)
	case ex.signal != "":
		return ClassSignal, fmt.Errorf("%w: %s", ErrSignal, ex.signal)
	case ex.code != 0:
		return ClassExitCode, fmt.Errorf("%w %d", ErrExit, ex.code)
	}
	return ClassNone, nil
}

// result assembles the Result of a started run.
func (o outcome) result(pid int, started time.Time) Result {
	class, err := verdict(o)
	return Result{
		Pid:              pid,
		ExitCode:         o.exit.code,
		Signal:           o.exit.signal,
		Class:            class,
		Err:              err,
		Started:          started,
		Finished:         o.exitedAt,
		OutputIncomplete: o.cut,
		Usage:            o.usage,
	}
}
