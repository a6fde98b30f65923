package worker

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// MaxSnooze is the longest a handler may snooze a job: 30 days.
const MaxSnooze = time.Duration(api.MaxSnoozeMS) * time.Millisecond

// DefaultSnoozeExitCode is the exit code (EX_TEMPFAIL) with which a command
// snoozes its job, when it has written the delay to FAIRWAY_SNOOZE_FILE.
const DefaultSnoozeExitCode = 75

// Snooze is what a handler returns when its job is not ready yet: the job
// goes back to the queue, blocked until delay has passed, and runs again
// then, the attempt not charged against max_attempts (it counts in the
// job's snoozes, capped by max_snoozes). delay must be in (0, MaxSnooze];
// another delay fails the attempt, saying why.
//
//	if !ready {
//		return nil, worker.Snooze(5 * time.Minute)
//	}
func Snooze(delay time.Duration) error { return &SnoozeError{Delay: delay} }

// SnoozeError is the error Snooze returns.
type SnoozeError struct{ Delay time.Duration }

func (e *SnoozeError) Error() string { return "snoozed for " + e.Delay.String() }

// snoozed sets c to the snoozed outcome of err, when err is a snooze: a
// delay out of range makes it a failure that says so.
func snoozed(c *api.Completion, err error) bool {
	var s *SnoozeError
	if !errors.As(err, &s) {
		return false
	}
	if s.Delay <= 0 || s.Delay > MaxSnooze {
		c.Outcome, c.FailureClass = api.OutcomeFailed, api.FailExitCode
		c.Error = fmt.Sprintf("invalid snooze of %s: a snooze must be longer than 0 and at most %s", s.Delay, MaxSnooze)
		return true
	}
	c.Outcome, c.SnoozeMS = api.OutcomeSnoozed, max(s.Delay.Milliseconds(), 1)
	c.FailureClass, c.Error = "", s.Error()
	return true
}

// snoozeExitCode is opts' snooze exit code: its default for 0, none
// (never a process's code) for a negative one.
func (opts CommandOptions) snoozeExitCode() int {
	if opts.SnoozeExitCode == 0 {
		return DefaultSnoozeExitCode
	}
	return opts.SnoozeExitCode
}

// commandSnooze reads the delay a command that exited with the snooze
// exit code wrote to its FAIRWAY_SNOOZE_FILE: seconds ("300") or a Go
// duration ("5m"). ok is false when the file is empty (a plain exit
// code); a delay that does not parse is a failure that says so.
func commandSnooze(path string, code int) (err error, ok bool) {
	b, rerr := os.ReadFile(path)
	text := strings.TrimSpace(string(b))
	if rerr != nil || text == "" {
		return nil, false
	}
	if secs, perr := strconv.ParseFloat(text, 64); perr == nil {
		if secs > MaxSnooze.Seconds() || secs < 0 {
			return commandFailure(code, fmt.Errorf("exit code %d with FAIRWAY_SNOOZE_FILE %q: a snooze must be longer than 0 and at most %s", code, text, MaxSnooze)), true
		}
		return Snooze(time.Duration(secs * float64(time.Second))), true
	}
	d, perr := time.ParseDuration(text)
	if perr != nil {
		return commandFailure(code, fmt.Errorf("exit code %d with FAIRWAY_SNOOZE_FILE %q: write a delay such as 300 (seconds) or 5m", code, text)), true
	}
	return Snooze(d), true
}

func commandFailure(code int, err error) error {
	return &Failure{Class: api.FailExitCode, ExitCode: &code, Err: err}
}
