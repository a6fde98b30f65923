package sim

import (
	"math"
	"sort"
	"time"
)

// Summary is a run's statistics. Times are in seconds. See
// docs/simulator.md for the definitions.
type Summary struct {
	Jobs               int                      `json:"jobs"`      // arrived
	Admitted           int                      `json:"admitted"`  // = decisions
	Done               int                      `json:"done"`      // ran to completion
	Cancelled          int                      `json:"cancelled"` // pending or running
	Dropped            int                      `json:"dropped"`   // a dependency failed
	Pending            int                      `json:"pending"`   // not admitted when the clock stopped
	Running            int                      `json:"running"`   // still running when the clock stopped
	Makespan           float64                  `json:"makespan"`  // first arrival to end of clock
	CapacitySlots      int                      `json:"capacity_slots"`
	BusySlotSeconds    float64                  `json:"busy_slot_seconds"`
	Utilisation        float64                  `json:"utilisation"`
	JainIndex          float64                  `json:"jain_index"`
	Decisions          int                      `json:"decisions"`
	WallSeconds        float64                  `json:"wall_seconds"`
	DecisionsPerSecond float64                  `json:"decisions_per_second"`
	FairnessKeys       map[string]GroupStats    `json:"fairness_keys"`
	Lanes              map[string]GroupStats    `json:"lanes"`
	Schedules          map[string]ScheduleStats `json:"schedules,omitempty"`
	// Backfill: jobs that held a reservation at least once, the slot-seconds
	// left idle on reserved workers while they drained for them, and the
	// admissions that were backfills (docs/scheduling.md).
	Reservations        int     `json:"reservations"`
	HeldIdleSlotSeconds float64 `json:"held_idle_slot_seconds"`
	Backfilled          int     `json:"backfilled"`
	// Preemptions is the runs stopped for a waiting job (each queued
	// again with its age, its attempt not charged).
	Preemptions int `json:"preemptions"`
	// Snoozes is the runs that ended snoozed (each blocked for its delay,
	// then ready again).
	Snoozes int `json:"snoozes,omitempty"`
}

// GroupStats is the statistics of one fairness key or lane.
type GroupStats struct {
	Jobs            int     `json:"jobs"`
	Admitted        int     `json:"admitted"`
	MeanWait        float64 `json:"mean_wait"`
	P50Wait         float64 `json:"p50_wait"`
	P99Wait         float64 `json:"p99_wait"`
	MaxWait         float64 `json:"max_wait"`
	BusySlotSeconds float64 `json:"busy_slot_seconds"`
	CapacityShare   float64 `json:"capacity_share"`  // BusySlotSeconds / total busy slot-seconds
	BacklogSeconds  float64 `json:"backlog_seconds"` // time with at least one ready job not admitted
	ServiceRate     float64 `json:"service_rate"`    // slots held while backlogged / BacklogSeconds
}

// acc accumulates one fairness key's or lane's statistics. Its pending and
// running counts only change at its own events, so the backlog integrals
// are brought up to date lazily, at those events.
type acc struct {
	jobs, admitted   int
	waits            []float64
	busy             float64 // slot-seconds
	pending, running int
	last             int64
	backlog, service float64 // seconds backlogged; slot-seconds held meanwhile
}

func (a *acc) advance(now int64) {
	if a.pending > 0 {
		dt := float64(now-a.last) / 1e9
		a.backlog += dt
		a.service += float64(a.running) * dt
	}
	a.last = now
}

// collector keeps the per-key and per-lane accumulators and run totals.
type collector struct {
	keys, lanes                        map[string]*acc
	jobs, admitted, done, dropped      int
	cancelledPending, cancelledRunning int
	preempted                          int     // runs stopped by preemption (each queued again)
	snoozed                            int     // runs that ended snoozed (each blocked, then ready again)
	heldSlots                          int     // idle slots on reserved workers since the last instant
	held                               float64 // their slot-seconds so far
}

// hold integrates the idle reserved slots from the last instant to now,
// then takes the count after this instant's decisions.
func (c *collector) hold(prev, now int64, slots int) {
	c.held += float64(c.heldSlots) * float64(now-prev) / 1e9
	c.heldSlots = slots
}

func newCollector() *collector {
	return &collector{keys: map[string]*acc{}, lanes: map[string]*acc{}}
}

func get(m map[string]*acc, name string) *acc {
	a, ok := m[name]
	if !ok {
		a = &acc{}
		m[name] = a
	}
	return a
}

func (c *collector) key(name string) *acc  { return get(c.keys, name) }
func (c *collector) lane(name string) *acc { return get(c.lanes, name) }

func (c *collector) arrive(j *simJob) {
	c.jobs++
	j.fkAcc.jobs++
	j.laneAcc.jobs++
}

func (c *collector) ready(j *simJob, now int64) {
	for _, a := range [2]*acc{j.fkAcc, j.laneAcc} {
		a.advance(now)
		a.pending++
	}
}

func (c *collector) unqueue(j *simJob, now int64) {
	for _, a := range [2]*acc{j.fkAcc, j.laneAcc} {
		a.advance(now)
		a.pending--
	}
}

func (c *collector) admit(j *simJob, now int64) {
	c.admitted++
	w := float64(now-j.ready) / 1e9
	for _, a := range [2]*acc{j.fkAcc, j.laneAcc} {
		a.advance(now)
		a.pending--
		a.running++
		a.admitted++
		a.waits = append(a.waits, w)
	}
}

// chargeRunning adds a still-running job's busy time up to now.
func (c *collector) chargeRunning(j *simJob, now int64) {
	ran := float64(now-j.admit) / 1e9
	for _, a := range [2]*acc{j.fkAcc, j.laneAcc} {
		a.advance(now)
		a.busy += ran
	}
}

func (c *collector) stopRunning(j *simJob, now int64) {
	ran := float64(now-j.admit) / 1e9
	for _, a := range [2]*acc{j.fkAcc, j.laneAcc} {
		a.advance(now)
		a.running--
		a.busy += ran
	}
}

// summary closes the books at r.end: jobs still running are charged their
// busy time up to the end of the clock.
func (r *runner) summary(wall time.Duration) Summary {
	c := r.stats
	for _, j := range r.running.items {
		if j.state == stRunning {
			c.chargeRunning(j, r.end)
		}
	}
	_, slots := r.eng.Capacity()
	s := Summary{
		Jobs: c.jobs, Admitted: c.admitted, Done: c.done, Cancelled: c.cancelledPending + c.cancelledRunning,
		Dropped: c.dropped, CapacitySlots: slots, Decisions: c.admitted, WallSeconds: wall.Seconds(),
		Running: c.admitted - c.done - c.cancelledRunning - c.preempted - c.snoozed,
		Pending: c.jobs - c.admitted + c.preempted + c.snoozed - c.cancelledPending - c.dropped,
	}
	if r.arrived {
		s.Makespan = float64(r.end-r.first) / 1e9
	}
	s.FairnessKeys, s.BusySlotSeconds = groups(c.keys, r.end)
	s.Lanes, _ = groups(c.lanes, r.end)
	shares(s.FairnessKeys, s.BusySlotSeconds)
	shares(s.Lanes, s.BusySlotSeconds)
	if s.Makespan > 0 && slots > 0 {
		s.Utilisation = s.BusySlotSeconds / (float64(slots) * s.Makespan)
	}
	s.JainIndex = jain(s.FairnessKeys)
	s.Schedules = r.scheduleStats()
	c.hold(r.now, r.end, 0)
	bf := r.eng.BackfillStats()
	s.Reservations, s.Backfilled, s.HeldIdleSlotSeconds = bf.Reserved, bf.Backfilled, c.held
	s.Preemptions, s.Snoozes = c.preempted, c.snoozed
	if wall > 0 {
		s.DecisionsPerSecond = float64(s.Decisions) / wall.Seconds()
	}
	return s
}

// groups turns accumulators into statistics, returning the total busy time.
func groups(m map[string]*acc, end int64) (map[string]GroupStats, float64) {
	out := make(map[string]GroupStats, len(m))
	var busy float64
	for _, name := range sortedKeys(m) {
		a := m[name]
		a.advance(end)
		g := GroupStats{
			Jobs: a.jobs, Admitted: a.admitted, BusySlotSeconds: a.busy, BacklogSeconds: a.backlog,
		}
		if a.backlog > 0 {
			g.ServiceRate = a.service / a.backlog
		}
		g.MeanWait, g.P50Wait, g.P99Wait, g.MaxWait = waitStats(a.waits)
		busy += a.busy
		out[name] = g
	}
	return out, busy
}

func shares(m map[string]GroupStats, total float64) {
	if total <= 0 {
		return
	}
	for name, g := range m {
		g.CapacityShare = g.BusySlotSeconds / total
		m[name] = g
	}
}

// waitStats returns mean, p50, p99 and max; percentiles are nearest-rank.
func waitStats(w []float64) (mean, p50, p99, maxW float64) {
	if len(w) == 0 {
		return 0, 0, 0, 0
	}
	sort.Float64s(w)
	var sum float64
	for _, x := range w {
		sum += x
	}
	return sum / float64(len(w)), nearestRank(w, 50), nearestRank(w, 99), w[len(w)-1]
}

func nearestRank(sorted []float64, p float64) float64 {
	k := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(k, 1)-1]
}

// jain is Jain's index (Σx)²/(n·Σx²) over the service rates of the keys
// that were ever backlogged; 1 when there are none or all rates are zero.
func jain(keys map[string]GroupStats) float64 {
	var sum, sq float64
	n := 0
	for _, name := range sortedKeys(keys) {
		g := keys[name]
		if g.BacklogSeconds <= 0 {
			continue
		}
		n++
		sum += g.ServiceRate
		sq += g.ServiceRate * g.ServiceRate
	}
	if n == 0 || sq == 0 {
		return 1
	}
	return sum * sum / (float64(n) * sq)
}
