package sim

import (
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/internal/schedule"
)

// ScheduleSpec is a recurring source of jobs: at each slot of Spec (any
// form internal/schedule reads: a cron expression, "every 30s offset 5s",
// "at ..."), between Start and Until seconds, one job from the Job
// template arrives, subject to the overlap policy, as the server fires a
// schedule. Times are seconds from the start of the simulation.
type ScheduleSpec struct {
	ID            string  `yaml:"id"`
	Spec          string  `yaml:"spec"`
	Timezone      string  `yaml:"timezone"`
	Overlap       string  `yaml:"overlap"`
	CatchupWindow float64 `yaml:"catchup_window"`
	Jitter        float64 `yaml:"jitter"`
	Start         float64 `yaml:"start"`
	Until         float64 `yaml:"until"`
	Job           JobSpec `yaml:"job"`
}

// ScheduleStats is what became of one schedule's slots; lags are in
// seconds from the nominal time to the admission of the slot's job.
type ScheduleStats struct {
	Slots   int     `json:"slots"`   // nominal times reached
	Fired   int     `json:"fired"`   // jobs created
	Skipped int     `json:"skipped"` // dropped by the overlap policy
	Missed  int     `json:"missed"`  // older than the catch-up window
	MeanLag float64 `json:"mean_lag"`
	P50Lag  float64 `json:"p50_lag"`
	P99Lag  float64 `json:"p99_lag"`
	MaxLag  float64 `json:"max_lag"`
}

// simSched is a compiled schedule and its state during a run.
type simSched struct {
	id    string
	spec  *schedule.Spec
	pol   schedule.Policy
	g     *jobGen
	first time.Time // the first slot

	st    schedule.State
	live  []*simJob // its jobs not yet ended, in firing order
	stats ScheduleStats
	lags  []float64
}

func (c *compiled) compileSchedules(s *Scenario, lanes map[string]bool) error {
	seen := map[string]bool{}
	for k, ss := range s.Schedules {
		field := fmt.Sprintf("schedules[%d]", k)
		switch {
		case ss.ID == "":
			return fieldErr(field+".id", "required")
		case seen[ss.ID]:
			return fieldErr(field+".id", "duplicate schedule id %q", ss.ID)
		case ss.Until <= ss.Start || ss.Until > maxSeconds:
			return fieldErr(field+".until", "required: the second the schedule stops, after start and at most %g", float64(maxSeconds))
		}
		seen[ss.ID] = true
		if err := checkScheduleJob(field+".job", ss.Job); err != nil {
			return err
		}
		sc, err := compileSchedule(field, ss)
		if err != nil {
			return err
		}
		if sc.g, err = compileJob(field+".job", len(s.Jobs)+k, ss.Job, s.Types, lanes); err != nil {
			return err
		}
		c.scheds = append(c.scheds, sc)
	}
	return nil
}

func compileSchedule(field string, ss ScheduleSpec) (*simSched, error) {
	start, until := Epoch.Add(seconds(ss.Start)), Epoch.Add(seconds(ss.Until))
	spec, err := schedule.Parse(ss.Spec, schedule.Options{Zone: ss.Timezone, Start: start, End: until, Jitter: seconds(ss.Jitter)})
	if fe, ok := err.(*schedule.FieldError); ok {
		name := map[string]string{"timezone": "timezone", "jitter_ms": "jitter", "end_at": "until", "start_at": "start"}[fe.Field]
		if name == "" {
			name = "spec"
		}
		return nil, fieldErr(field+"."+name, "%s", fe.Msg)
	}
	overlap, err := schedule.ParseOverlap(ss.Overlap)
	if err != nil {
		return nil, fieldErr(field+".overlap", "%s", err.(*schedule.FieldError).Msg)
	}
	if ss.CatchupWindow < 0 {
		return nil, fieldErr(field+".catchup_window", "must be >= 0")
	}
	sc := &simSched{id: ss.ID, spec: spec, pol: schedule.Policy{Overlap: overlap, CatchupWindow: seconds(ss.CatchupWindow)}}
	sc.first = spec.Next(start.Add(-time.Nanosecond))
	return sc, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// checkScheduleJob refuses the job fields that say when a job arrives or
// what it waits for: the schedule decides those.
func checkScheduleJob(field string, js JobSpec) error {
	for name, set := range map[string]bool{
		"id": js.ID != "", "at": js.At != 0, "count": js.Count != nil, "every": js.Every != 0,
		"run_at": js.RunAt != nil, "cancel_at": js.CancelAt != nil, "reprioritize": js.Reprioritize != nil,
		"depends_on": len(js.DependsOn) > 0,
	} {
		if set {
			return fieldErr(field+"."+name, "not allowed in a schedule's job: the schedule decides when its jobs arrive")
		}
	}
	return nil
}

// startSchedules sets each schedule's first slot.
func (r *runner) startSchedules() {
	for _, sc := range r.c.scheds {
		sc.st = schedule.State{Next: sc.first}
		sc.live, sc.stats, sc.lags = nil, ScheduleStats{}, nil
	}
}

// schedules fires the slots that are due now and the buffered slots whose
// schedule has nothing running any more.
func (r *runner) schedules() error {
	now := r.at()
	for _, sc := range r.c.scheds {
		due := !sc.st.Next.IsZero() && !sc.st.Next.After(now)
		if !due && (len(sc.st.Buffered) == 0 || len(sc.live) > 0) {
			continue
		}
		sc.st.Running = len(sc.live)
		sc.countSlots(now)
		a := schedule.Tick(sc.spec, sc.pol, sc.st, now)
		if a.CancelRunning {
			if err := r.cancelSchedule(sc); err != nil {
				return err
			}
			a.CancelDone(len(sc.live))
		}
		for _, nominal := range a.Fire {
			if err := r.fireSlot(sc, nominal); err != nil {
				return err
			}
		}
		for _, m := range a.Missed {
			sc.stats.Missed += m.Count
		}
		sc.stats.Skipped += len(a.Skipped)
		sc.st = a.State
	}
	return nil
}

// countSlots counts the nominal times reached by now that Tick is about
// to handle (it moves Next past them).
func (sc *simSched) countSlots(now time.Time) {
	for t := sc.st.Next; !t.IsZero() && !t.After(now); t = sc.spec.Next(t) {
		sc.stats.Slots++
	}
}

// cancelSchedule cancels the schedule's jobs that have not ended.
func (r *runner) cancelSchedule(sc *simSched) error {
	for _, j := range append([]*simJob(nil), sc.live...) {
		if err := r.cancel(j); err != nil {
			return err
		}
	}
	return nil
}

// fireSlot submits the job of one slot: it arrives now and is ready at
// its nominal time plus the schedule's jitter.
func (r *runner) fireSlot(sc *simSched, nominal time.Time) error {
	j := r.newJob(sc.g, sc.stats.Fired)
	j.id = fmt.Sprintf("%s@%.3f", sc.id, nominal.Sub(Epoch).Seconds())
	j.sched, j.nominal = sc, int64(nominal.Sub(Epoch))
	j.ready = max(r.now, j.nominal+int64(sc.spec.JitterFor(sc.id, nominal)))
	if !r.arrived {
		r.first, r.arrived = r.now, true
	}
	r.stats.arrive(j)
	if sc.g.hasCost {
		r.eng.SetEstimate(sc.g.typ, j.key, sc.g.cost, r.at())
	}
	if err := r.eng.Submit(r.policyJob(j, nil), r.at()); err != nil {
		return fmt.Errorf("%w: schedule %q slot %s: %w", ErrScenario, sc.id, nominal.Format(time.RFC3339), err)
	}
	r.jobs[j.id] = j
	sc.live = append(sc.live, j)
	sc.stats.Fired++
	if err := r.emitJob(j, Arrive); err != nil {
		return err
	}
	r.armTimers(j, 0)
	return nil
}

// scheduledEnded takes an ended job off its schedule's live list.
func (sc *simSched) scheduledEnded(j *simJob) {
	for i, l := range sc.live {
		if l == j {
			sc.live = append(sc.live[:i], sc.live[i+1:]...)
			return
		}
	}
}

// scheduledAdmitted records the lag of a schedule's job.
func (sc *simSched) scheduledAdmitted(j *simJob, now int64) {
	sc.lags = append(sc.lags, float64(now-j.nominal)/1e9)
}

// nextSlot is the earliest slot of any schedule after now.
func (r *runner) nextSlot() (int64, bool) {
	var t int64
	found := false
	for _, sc := range r.c.scheds {
		if sc.st.Next.IsZero() {
			continue
		}
		if d := int64(sc.st.Next.Sub(Epoch)); !found || d < t {
			t, found = d, true
		}
	}
	return t, found
}

// scheduleStats closes each schedule's books.
func (r *runner) scheduleStats() map[string]ScheduleStats {
	if len(r.c.scheds) == 0 {
		return nil
	}
	out := make(map[string]ScheduleStats, len(r.c.scheds))
	for _, sc := range r.c.scheds {
		s := sc.stats
		s.MeanLag, s.P50Lag, s.P99Lag, s.MaxLag = waitStats(sc.lags)
		out[sc.id] = s
	}
	return out
}
