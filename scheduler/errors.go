package scheduler

import (
	"errors"
	"fmt"
)

// Errors returned by the scheduler. Returned errors wrap them with detail;
// test with errors.Is.
var (
	// ErrClosed: the scheduler is shutting down or closed. Submissions are
	// refused, and a job still pending when Shutdown gave up or Close was
	// called never starts: its RunSync returns ErrClosed.
	ErrClosed = errors.New("scheduler: closed")
	// ErrInvalidJob: the job cannot be run (nil fn).
	ErrInvalidJob = errors.New("scheduler: invalid job")
	// ErrUnknownType: the job type was never registered.
	ErrUnknownType = errors.New("scheduler: unknown job type")
	// ErrInvalidOptions: New was given unusable options.
	ErrInvalidOptions = errors.New("scheduler: invalid options")
	// ErrInvalidType: RegisterType was given an unusable name or config.
	ErrInvalidType = errors.New("scheduler: invalid job type")
	// ErrTypeRegistered: RegisterType was called twice for one type.
	ErrTypeRegistered = errors.New("scheduler: job type already registered")
)

// PanicError is the error a job reports when its fn panicked. The panic is
// recovered so the scheduler keeps working.
type PanicError struct {
	Value any    // what fn panicked with
	Stack []byte // the goroutine's stack at the panic
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("scheduler: job panicked: %v", e.Value)
}
