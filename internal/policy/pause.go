package policy

import "fmt"

// PauseLane stops (paused true) or resumes admissions from a lane. A
// paused lane's jobs stay queued, keep their age and rank, and are never
// admitted; its running jobs are not touched and finish. Explain and
// Reason say CodeLanePaused for its queued jobs. Pausing a paused lane
// does nothing; changed reports whether anything did.
func (e *Engine) PauseLane(name string, paused bool) (changed bool, err error) {
	l, ok := e.lanes[name]
	if !ok {
		return false, fmt.Errorf("%w: %q", ErrUnknownLane, name)
	}
	if l.paused == paused {
		return false, nil
	}
	l.paused = paused
	return true, nil
}

// LanePaused reports whether the lane is paused (false for an unknown one).
func (e *Engine) LanePaused(name string) bool {
	l, ok := e.lanes[name]
	return ok && l.paused
}
