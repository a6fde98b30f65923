package dispatch

import (
	"errors"
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// isOpError reports a store error that concerns only its own operation
// and leaves the transaction usable.
func isOpError(err error) bool {
	return errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrDuplicate) ||
		errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrInvalid)
}

// Clock is the dispatcher's source of now; tests inject one. Submits
// read it on their own goroutines too (prereadHolders): it must be safe
// for concurrent use.
type Clock interface{ Now() time.Time }

// ErrClosed is returned to operations sent after the dispatcher stopped.
var ErrClosed = errors.New("server closed")

// FieldError is a client error about one field of a submitted job.
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func badField(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// QuotaError refuses a submit past a queue limit; the client may retry
// later.
type QuotaError struct{ Msg string }

func (e *QuotaError) Error() string { return e.Msg }

// UnrunnableError refuses a job no registered worker could ever run.
type UnrunnableError struct{ Msg string }

func (e *UnrunnableError) Error() string { return e.Msg }

// KeyOfDeletedJobError refuses a submit whose idempotency key is held,
// inside its 24 h window, by a job that retention has since deleted:
// nothing is submitted, and the job that ran cannot be shown.
type KeyOfDeletedJobError struct{ Key, JobID string }

func (e *KeyOfDeletedJobError) Error() string {
	return fmt.Sprintf("idempotency key %q was used by job %s, which has finished and was deleted by retention (server.retention); "+
		"the key stays bound for %s after that job's submit, so nothing was submitted", e.Key, e.JobID, store.IdempotencyWindow)
}

// UnknownWorkerError answers a worker call from a worker the dispatcher
// does not know (expired, deregistered, or lost at a restart).
type UnknownWorkerError struct{ ID string }

func (e *UnknownWorkerError) Error() string { return "no worker " + e.ID + " (register again)" }

// UnknownLaneError is a lane the configuration does not define.
type UnknownLaneError struct{ Lane string }

func (e *UnknownLaneError) Error() string { return "no lane " + e.Lane + " in the configuration" }
