package policy

import (
	"fmt"
	"time"
)

// Hold sets a pending job aside: it is in no queue and is never admitted
// until Release. A job waiting on dependencies keeps waiting; once they
// are met it is held instead of queued. Holding a held job does nothing; a
// running job cannot be held (ErrNotPending). The job keeps its enqueue
// time, as a reprioritized one does.
func (e *Engine) Hold(id string, now time.Time) error {
	en, ok := e.jobs[id]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	switch en.state {
	case stateRunning:
		return fmt.Errorf("%w: %s is running", ErrNotPending, id)
	case stateHeld:
		return nil
	case stateWaiting:
		en.held = true
		return nil
	}
	e.advance(now)
	fresh := *en
	fresh.cls, fresh.grp, fresh.heapIdx, fresh.pq = nil, nil, -1, nil
	e.unlink(en, now) // a tombstone where it was queued, parked or delayed
	fresh.state, fresh.held = stateHeld, true
	e.jobs[id] = &fresh
	return nil
}

// Release puts a held job back: queued, parked behind a conflict or
// delayed until its RunAt, as a newly runnable job would be. Releasing a
// job that is not held does nothing.
func (e *Engine) Release(id string, now time.Time) error {
	en, ok := e.jobs[id]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if !en.held {
		return nil
	}
	en.held = false
	if en.state != stateHeld {
		return nil // still waiting on its dependencies
	}
	e.makeRunnable(en, now)
	if en.state != stateDelayed {
		e.noteReleased(en)
	}
	return nil
}
