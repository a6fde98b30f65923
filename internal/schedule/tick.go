package schedule

import (
	"fmt"
	"time"
)

// Overlap is what a due slot does while a job of the same schedule has not
// finished.
type Overlap string

// Overlap policies (see the package doc).
const (
	OverlapSkip        Overlap = "skip"
	OverlapBufferOne   Overlap = "buffer_one"
	OverlapBufferAll   Overlap = "buffer_all"
	OverlapCancelOther Overlap = "cancel_other"
	OverlapAllowAll    Overlap = "allow_all"
)

// ParseOverlap checks a policy name; "" is the default, skip.
func ParseOverlap(name string) (Overlap, error) {
	switch o := Overlap(name); o {
	case "":
		return OverlapSkip, nil
	case OverlapSkip, OverlapBufferOne, OverlapBufferAll, OverlapCancelOther, OverlapAllowAll:
		return o, nil
	}
	return "", fieldErr("overlap", "unknown policy %q: skip, buffer_one, buffer_all, cancel_other or allow_all", name)
}

// Defaults and limits of the firing rules.
const (
	// DefaultCatchupWindow is how late a slot may still fire when the
	// schedule sets none: seed 003's threshold for running "within a
	// threshold of the scheduled time".
	DefaultCatchupWindow = 15 * time.Minute
	// MaxBuffered bounds the slots waiting behind a running job; past it
	// new slots are skipped (and recorded).
	MaxBuffered = 1000
	// MaxBackfill bounds the slots of one backfill request.
	MaxBackfill = 10000
	// maxMissedWalk bounds the slots walked one by one to count the missed
	// ones; past it the walk jumps to the catch-up window and the count is
	// a lower bound.
	maxMissedWalk = 1_000_000
)

// Policy is how a schedule treats due slots.
type Policy struct {
	Overlap       Overlap
	CatchupWindow time.Duration // 0: DefaultCatchupWindow
}

func (p Policy) window() time.Duration {
	if p.CatchupWindow <= 0 {
		return DefaultCatchupWindow
	}
	return p.CatchupWindow
}

// State is what the firing rules keep of a schedule between two ticks.
type State struct {
	Next     time.Time   // the next nominal time not yet handled; zero: none left
	Buffered []time.Time // slots waiting for the running job, oldest first
	Running  int         // the schedule's unfinished jobs (derived by the caller)
	Paused   bool
}

// Missed is a run of consecutive slots that were older than the catch-up
// window when they were looked at.
type Missed struct {
	From, To time.Time // the first and last missed nominal times
	Count    int
	AtLeast  bool // Count is a lower bound: the walk jumped
}

// Action is what a tick decided.
type Action struct {
	Fire          []time.Time // nominal times to create a job for now, in order
	Missed        []Missed
	Skipped       []time.Time // dropped by the overlap policy
	CancelRunning bool        // cancel the schedule's unfinished jobs; State.Buffered holds the slot that waits for them
	State         State       // to store with the fired jobs
}

// Tick decides what the schedule does at now: the due slots (nominal time
// at or before now) are handled in order, each either missed (older than
// the catch-up window), fired, buffered or skipped; a buffered slot fires
// once nothing of the schedule runs. A paused schedule does nothing: its
// slots stay due and meet the catch-up window when it resumes.
func Tick(spec *Spec, pol Policy, st State, now time.Time) Action {
	a := Action{State: st}
	a.State.Buffered = append([]time.Time(nil), st.Buffered...)
	if st.Paused {
		return a
	}
	a.releaseBuffered()
	oldest := now.Add(-pol.window())
	t := st.Next
	for !t.IsZero() && !t.After(now) {
		if t.Before(oldest) {
			t = a.miss(spec, t, oldest)
			continue
		}
		a.admit(t, pol.Overlap)
		t = spec.Next(t)
	}
	a.State.Next = t
	return a
}

// miss records the slots from t that are older than oldest and returns
// the first slot at or after oldest.
func (a *Action) miss(spec *Spec, t, oldest time.Time) time.Time {
	m := Missed{From: t}
	for !t.IsZero() && t.Before(oldest) {
		m.To, m.Count = t, m.Count+1
		if m.Count >= maxMissedWalk {
			m.AtLeast = true
			t = spec.Next(oldest.Add(-time.Nanosecond))
			break
		}
		t = spec.Next(t)
	}
	a.Missed = append(a.Missed, m)
	return t
}

// releaseBuffered fires the oldest buffered slot once nothing runs.
func (a *Action) releaseBuffered() {
	if a.State.Running == 0 && len(a.State.Buffered) > 0 {
		a.fire(a.State.Buffered[0])
		a.State.Buffered = a.State.Buffered[1:]
	}
}

func (a *Action) fire(t time.Time) {
	a.Fire = append(a.Fire, t)
	a.State.Running++
}

// admit applies the overlap policy to one due slot.
func (a *Action) admit(t time.Time, o Overlap) {
	busy := a.State.Running > 0 || len(a.State.Buffered) > 0
	switch {
	case !busy || o == OverlapAllowAll:
		a.fire(t)
	case o == OverlapCancelOther:
		a.cancelOthers(t)
	case o == OverlapBufferAll && len(a.State.Buffered) < MaxBuffered,
		o == OverlapBufferOne && len(a.State.Buffered) == 0:
		a.State.Buffered = append(a.State.Buffered, t)
	default:
		a.Skipped = append(a.Skipped, t)
	}
}

// cancelOthers makes room for cancel_other slot t. A slot fired earlier
// in this tick is not fired after all (it would be cancelled at once), and
// a slot waiting for cancelled runs is replaced by t: both count as
// skipped. When jobs of the schedule are unfinished they are cancelled and
// t waits, buffered, until they have stopped (Running drops to 0 as each
// one ends), so that the old and the new run never overlap; otherwise t
// fires now.
func (a *Action) cancelOthers(t time.Time) {
	a.Skipped = append(a.Skipped, a.Fire...)
	a.State.Running -= len(a.Fire)
	a.Fire = a.Fire[:0]
	a.Skipped = append(a.Skipped, a.State.Buffered...)
	a.State.Buffered = a.State.Buffered[:0]
	if a.State.Running > 0 {
		a.CancelRunning = true
		a.State.Buffered = append(a.State.Buffered, t)
		return
	}
	a.fire(t)
}

// CancelDone is called once the caller has cancelled the schedule's jobs
// (CancelRunning), with how many are still unfinished: jobs that were not
// running yet end at once, and when none is left, the slot that waited for
// them fires now instead of at a later tick.
func (a *Action) CancelDone(unfinished int) {
	if !a.CancelRunning || unfinished > 0 || len(a.State.Buffered) == 0 {
		return
	}
	a.Fire = append(a.Fire, a.State.Buffered...)
	a.State.Running = unfinished + len(a.Fire)
	a.State.Buffered = nil
}

// Trigger fires a slot at now, out of the spec's times, under the
// schedule's overlap policy (a buffered trigger waits like any slot).
func Trigger(pol Policy, st State, now time.Time) Action {
	a := Action{State: st}
	a.State.Buffered = append([]time.Time(nil), st.Buffered...)
	a.releaseBuffered()
	a.admit(now, pol.Overlap)
	return a
}

// Backfill fires the spec's slots in [from, to) as if each had come in
// turn, under overlap (the request's policy, not the schedule's): with
// skip only the first runs while it is unfinished, with buffer_all they
// run one after another. The catch-up window does not apply.
func Backfill(spec *Spec, overlap Overlap, st State, from, to time.Time) (Action, error) {
	switch {
	case !inRange(from):
		return Action{}, fieldErr("start_time", "must be between %s and %s, got %s", rfc(MinTime), rfc(MaxTime), rfc(from))
	case !inRange(to) && !to.Equal(MaxTime):
		return Action{}, fieldErr("end_time", "must be between %s and %s, got %s", rfc(MinTime), rfc(MaxTime), rfc(to))
	case !to.After(from):
		return Action{}, fieldErr("end_time", "must be after start_time")
	}
	var slots []time.Time
	for t := spec.Next(from.Add(-time.Nanosecond)); !t.IsZero() && t.Before(to); t = spec.Next(t) {
		if len(slots) == MaxBackfill {
			return Action{}, fieldErr("end_time", "the range holds more than %d slots; backfill it in parts", MaxBackfill)
		}
		slots = append(slots, t)
	}
	a := Action{State: st}
	a.State.Buffered = append([]time.Time(nil), st.Buffered...)
	a.releaseBuffered()
	for _, t := range slots {
		a.admit(t, overlap)
	}
	return a, nil
}

// SlotKey is the idempotency identity of a slot: a schedule's job for a
// nominal time is created once, whatever crashes and retries happen.
func SlotKey(scheduleID string, nominal time.Time) string {
	return fmt.Sprintf("schedule:%s:%d", scheduleID, nominal.UnixNano())
}
