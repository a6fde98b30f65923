package policy

import "time"

// LaneStats is a lane's load at a moment.
type LaneStats struct {
	Name          string
	Weight        float64
	Pending       int // not running: queued, parked, delayed, waiting
	Queued        int // runnable now
	Running       int
	Usage         Resources
	DominantShare float64 // weighted, as DRF compares it
	Paused        bool    // admits nothing (PauseLane)
}

// Lanes returns every lane's load, sorted by name.
func (e *Engine) Lanes() []LaneStats {
	out := make([]LaneStats, 0, len(e.laneList))
	for _, l := range e.laneList {
		out = append(out, LaneStats{
			Name: l.name, Weight: l.cfg.Weight, Pending: l.pending, Queued: l.queued + l.freeParked,
			Running: l.slots, Usage: l.usage,
			DominantShare: dominantShare(l.usage, l.slots, e.capacity, e.capSlots, l.cfg.Weight),
			Paused:        l.paused,
		})
	}
	return out
}

// Capacity returns the pool's total resources and slots.
func (e *Engine) Capacity() (Resources, int) { return e.capacity, e.capSlots }

// FreeSlots returns the free slots over all workers.
func (e *Engine) FreeSlots() int { return e.free }

// Len returns the number of jobs the engine holds, and how many run.
func (e *Engine) Len() (total, running int) { return len(e.jobs), e.running }

// JobState describes a job the engine holds.
type JobState struct {
	State      string // waiting, delayed, queued, conflict, running
	Worker     string
	AdmittedAt time.Time
	Cost       float64
	Priority   int
	Lane       string
}

// Job returns what the engine knows of a job.
func (e *Engine) Job(id string) (JobState, bool) {
	en, ok := e.jobs[id]
	if !ok {
		return JobState{}, false
	}
	st := JobState{State: en.state.String(), Priority: en.job.Priority, Lane: en.ln.name}
	if en.state == stateConflict && e.heldConflict(en) == nil {
		st.State = stateQueued.String() // behind its class's representative, not a holder (conflict.go)
	}
	if en.state == stateRunning {
		st.Worker, st.AdmittedAt, st.Cost = en.wk.ID, en.admittedAt, en.cost
	}
	return st, true
}

// NextDue returns the earliest RunAt among delayed jobs, if any: the time an
// owner should next call Next even if nothing else happens.
func (e *Engine) NextDue() (time.Time, bool) {
	for len(e.delayed) > 0 {
		if e.delayed[0].state == stateDelayed {
			return e.delayed[0].job.RunAt, true
		}
		e.delayed.pop()
	}
	return time.Time{}, false
}

// TrackReleased turns on the record TakeReleased returns (off by default,
// so that an owner that never drains it does not accumulate it).
func (e *Engine) TrackReleased(on bool) { e.track = on }

func (e *Engine) noteReleased(en *entry) {
	if e.track {
		e.released = append(e.released, en.job.ID)
	}
}

// TakeReleased returns, and forgets, the jobs that became runnable since the
// last call because their RunAt came or their dependencies were met; a job
// submitted runnable is not listed. The server records these transitions.
// It needs TrackReleased(true).
func (e *Engine) TakeReleased() []string {
	out := e.released
	e.released = nil
	return out
}
