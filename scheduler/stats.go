package scheduler

// Stats is a snapshot of the scheduler's load.
type Stats struct {
	Pending int // submitted, not yet started
	Running int // started, fn not yet returned
	ByType  map[JobType]TypeStats
}

// TypeStats is one job type's share of Stats. Types with no pending or
// running job are absent.
type TypeStats struct {
	Pending int
	Running int
}

// Stats returns the current number of pending and running jobs, in total
// and per type.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Pending: s.pending, Running: s.running, ByType: make(map[JobType]TypeStats, len(s.stats))}
	for t, ts := range s.stats {
		st.ByType[t] = *ts
	}
	return st
}

// AccumulatedCost is the cost charged so far to fairnessKey: the sum of
// the estimated costs of its admitted jobs, in seconds. A key idle for
// longer than Options.KeyTTL is forgotten (back to 0).
func (s *Scheduler) AccumulatedCost(fairnessKey string) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eng.AccumulatedCostAt(fairnessKey, s.clock.Now())
}

// EstimatedCost is the cost, in seconds, the next job of type t on jobID
// will be charged. ok reports whether it was learned from earlier runs;
// when it was not, the type's DefaultCost is returned (0 for an unknown
// type).
func (s *Scheduler) EstimatedCost(t JobType, jobID string) (cost float64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.eng.Estimate(string(t), jobID); ok {
		return c, true
	}
	cfg, known := s.types[t]
	switch {
	case !known:
		return 0, false
	case cfg.DefaultCost == 0:
		return 1, false
	}
	return float64(cfg.DefaultCost), false
}

func (s *Scheduler) countPending(t JobType, d int) {
	s.pending += d
	s.count(t, d, 0)
}

func (s *Scheduler) countRunning(t JobType, d int) {
	s.running += d
	s.count(t, 0, d)
}

// count adjusts t's counters, dropping them when they reach zero so that
// Stats.ByType lists only types with work.
func (s *Scheduler) count(t JobType, pending, running int) {
	ts, ok := s.stats[t]
	if !ok {
		ts = &TypeStats{}
		s.stats[t] = ts
	}
	ts.Pending += pending
	ts.Running += running
	if *ts == (TypeStats{}) {
		delete(s.stats, t)
	}
}
