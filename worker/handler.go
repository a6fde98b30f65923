package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Handler runs one attempt of a job. It returns the job's result (any JSON
// value, or nil) or an error. The context is cancelled when the job is
// cancelled, its lease is revoked, its strict timeout expires or the worker
// stops waiting for it, or a job of higher priority preempts it;
// context.Cause tells which (ErrCancelled, ErrRevoked, ErrTimeout,
// ErrShutdown, ErrPreempted). A handler should return promptly once it is.
//
// A nil error reports the attempt succeeded. A *Failure (see Fail) chooses
// the failure class and exit code; any other error is reported as a failure
// of class exit_code (the handler's equivalent of a non-zero exit).
type Handler interface {
	Run(ctx context.Context, job Job) (result json.RawMessage, err error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, job Job) (json.RawMessage, error)

// Run calls f.
func (f HandlerFunc) Run(ctx context.Context, job Job) (json.RawMessage, error) { return f(ctx, job) }

// Typed adapts a function taking the job's payload decoded into T. The
// value fn returns is encoded as the job's result (nil: no result). A
// payload that does not decode fails the attempt with class start_error.
func Typed[T any](fn func(ctx context.Context, job Job, payload T) (any, error)) Handler {
	return HandlerFunc(func(ctx context.Context, job Job) (json.RawMessage, error) {
		var payload T
		if len(job.Payload) > 0 {
			if err := json.Unmarshal(job.Payload, &payload); err != nil {
				return nil, Fail(api.FailStartError, fmt.Errorf("decode payload: %w", err))
			}
		}
		v, err := fn(ctx, job, payload)
		if err != nil || v == nil {
			return nil, err
		}
		res, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode result: %w", err)
		}
		return res, nil
	})
}

// Job is one leased attempt of a job, as a handler sees it. Job.Attempt is
// the attempt being run (the fencing token).
type Job struct {
	api.Job
	// WorkerID is the worker's identity for this attempt.
	WorkerID string
	// LeaseExpiresAt is when the lease expired as of the lease; heartbeats
	// extend it.
	LeaseExpiresAt time.Time

	stdout, stderr io.Writer
	t              *task // nil outside the engine (NewJob)
}

// NewJob returns a Job for calling a handler outside a worker, e.g. in a
// test. Nil writers discard the output.
func NewJob(j api.Job, stdout, stderr io.Writer) Job {
	return Job{Job: j, stdout: stdout, stderr: stderr}
}

// Stdout returns a writer whose bytes are shipped as the job's stdout log.
// Writes never fail; writes after the handler has returned are discarded.
func (j Job) Stdout() io.Writer { return orDiscard(j.stdout) }

// Stderr is Stdout for the stderr stream.
func (j Job) Stderr() io.Writer { return orDiscard(j.stderr) }

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// setPreemptFile names the file written when the attempt is preempted.
func (j Job) setPreemptFile(path string) {
	if j.t != nil {
		j.t.setPreemptFile(path)
	}
}

// setExitCode records a process exit code to report with the attempt's
// outcome, whatever it is.
func (j Job) setExitCode(code int) {
	if j.t != nil {
		j.t.setExitCode(code)
	}
}

// setUsage records what the attempt's processes used, reported with its
// outcome.
func (j Job) setUsage(u api.Usage) {
	if j.t != nil {
		j.t.setUsage(u)
	}
}

// Reasons a handler's context is cancelled, as context.Cause reports them.
var (
	ErrCancelled = errors.New("worker: job cancelled")
	ErrRevoked   = errors.New("worker: lease revoked")
	ErrTimeout   = errors.New("worker: job timed out")
	ErrShutdown  = errors.New("worker: shutting down")
	// ErrPreempted: the server takes the job's capacity for a job of
	// higher priority; the job is queued again and runs later.
	ErrPreempted = errors.New("worker: job preempted")
)

// Failure is an error that says how an attempt failed.
type Failure struct {
	// Class is a failure class (api.FailExitCode, api.FailTimeout, ...);
	// "" means api.FailExitCode. api.FailCancelled reports the outcome
	// cancelled rather than failed.
	Class string
	// ExitCode is the process exit code, if there was a process.
	ExitCode *int
	Err      error
}

// Fail returns a *Failure of the given class.
func Fail(class string, err error) error { return &Failure{Class: class, Err: err} }

func (f *Failure) Error() string {
	if f.Err == nil {
		return "failed: " + f.class()
	}
	return f.Err.Error()
}

// Unwrap returns the cause.
func (f *Failure) Unwrap() error { return f.Err }

func (f *Failure) class() string {
	if f.Class == "" {
		return api.FailExitCode
	}
	return f.Class
}
