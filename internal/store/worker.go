package store

import (
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

// WorkerState is a registered worker's standing.
type WorkerState string

// Worker states.
const (
	WorkerActive   WorkerState = "active"
	WorkerDraining WorkerState = "draining" // finishes its jobs, takes no new ones
	WorkerGone     WorkerState = "gone"     // deregistered or lost
)

// Worker is a registered executor.
type Worker struct {
	ID           string
	Name         string
	Types        []string // job types it runs; empty = every type
	Handlers     []string // types it runs without a command ("*": every type); nil = not reported
	Labels       []string
	Slots        int
	Resources    policy.Resources
	State        WorkerState
	RegisteredAt time.Time
	LastSeenAt   time.Time
}

// Validate checks the id and the state.
func (w *Worker) Validate() error {
	switch {
	case w.ID == "":
		return fmt.Errorf("%w: worker: empty id", ErrInvalid)
	case w.State != WorkerActive && w.State != WorkerDraining && w.State != WorkerGone:
		return fmt.Errorf("%w: worker %s: unknown state %q", ErrInvalid, w.ID, w.State)
	case w.Slots < 0:
		return fmt.Errorf("%w: worker %s: slots %d", ErrInvalid, w.ID, w.Slots)
	}
	return nil
}
