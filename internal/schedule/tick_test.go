package schedule

import (
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func minutes(ts []time.Time) []int {
	out := []int{}
	for _, t := range ts {
		out = append(out, int(t.Sub(t0)/time.Minute))
	}
	return out
}

func everyMinute(t *testing.T) *Spec { return mustSpec(t, "every 1m", Options{}) }

func TestOnTimeSlotFiresAndAdvances(t *testing.T) {
	s := everyMinute(t)
	a := Tick(s, Policy{}, State{Next: at(0)}, at(0))
	if !slices.Equal(minutes(a.Fire), []int{0}) || !a.State.Next.Equal(at(1)) || a.State.Running != 1 {
		t.Fatalf("fire %v next %s running %d", minutes(a.Fire), a.State.Next, a.State.Running)
	}
	a = Tick(s, Policy{}, a.State, at(0).Add(30*time.Second))
	if len(a.Fire)+len(a.Skipped)+len(a.Missed) != 0 || !a.State.Next.Equal(at(1)) {
		t.Fatalf("nothing is due at 10:00:30: %+v", a)
	}
}

// Each overlap policy, with a job of the schedule still running and three
// slots due (a server that was down 3 minutes, inside the window).
func TestOverlapPolicies(t *testing.T) {
	s := everyMinute(t)
	cases := []struct {
		overlap              Overlap
		fire, skip, buffered []int
		cancel               bool
	}{
		{OverlapSkip, []int{}, []int{0, 1, 2}, []int{}, false},
		{OverlapBufferOne, []int{}, []int{1, 2}, []int{0}, false},
		{OverlapBufferAll, []int{}, []int{}, []int{0, 1, 2}, false},
		{OverlapCancelOther, []int{}, []int{0, 1}, []int{2}, true}, // 2 waits for the cancelled run to stop
		{OverlapAllowAll, []int{0, 1, 2}, []int{}, []int{}, false},
	}
	for _, c := range cases {
		a := Tick(s, Policy{Overlap: c.overlap}, State{Next: at(0), Running: 1}, at(2))
		if !slices.Equal(minutes(a.Fire), c.fire) || !slices.Equal(minutes(a.Skipped), c.skip) ||
			!slices.Equal(minutes(a.State.Buffered), c.buffered) || a.CancelRunning != c.cancel || !a.State.Next.Equal(at(3)) {
			t.Errorf("%s: fire %v skip %v buffered %v cancel %v next %s; want %v %v %v %v",
				c.overlap, minutes(a.Fire), minutes(a.Skipped), minutes(a.State.Buffered), a.CancelRunning, a.State.Next,
				c.fire, c.skip, c.buffered, c.cancel)
		}
	}
}

// Issue 28 item 35: a cancel_other slot does not start while the run it
// cancels has not stopped; it starts in the tick after that run ended,
// and a later slot meanwhile replaces it (one new run, the latest).
func TestCancelOtherStartsOnlyOnceTheCancelledRunStopped(t *testing.T) {
	s := everyMinute(t)
	pol := Policy{Overlap: OverlapCancelOther}
	a := Tick(s, pol, State{Next: at(1), Running: 1}, at(1))
	if len(a.Fire) != 0 || !a.CancelRunning || !slices.Equal(minutes(a.State.Buffered), []int{1}) {
		t.Fatalf("at 10:01 with a run unfinished: fire %v cancel %v buffered %v; want nothing fired, the run cancelled, 1 waiting",
			minutes(a.Fire), a.CancelRunning, minutes(a.State.Buffered))
	}
	st := a.State
	a = Tick(s, pol, st, at(1).Add(30*time.Second)) // the cancelled run has not stopped yet
	if len(a.Fire) != 0 || a.CancelRunning || len(a.State.Buffered) != 1 {
		t.Fatalf("the cancelled run still runs: fire %v cancel %v; want to wait", minutes(a.Fire), a.CancelRunning)
	}
	st = a.State
	a = Tick(s, pol, st, at(2)) // 10:02 comes while it still has not stopped
	if len(a.Fire) != 0 || !slices.Equal(minutes(a.Skipped), []int{1}) || !slices.Equal(minutes(a.State.Buffered), []int{2}) {
		t.Fatalf("at 10:02: fire %v skipped %v buffered %v; want 10:02 waiting in place of 10:01",
			minutes(a.Fire), minutes(a.Skipped), minutes(a.State.Buffered))
	}
	st = a.State
	st.Running = 0 // the cancelled run stopped
	a = Tick(s, pol, st, at(2).Add(time.Second))
	if !slices.Equal(minutes(a.Fire), []int{2}) || len(a.State.Buffered) != 0 || a.CancelRunning {
		t.Fatalf("after the run stopped: fire %v buffered %v; want 10:02 to start", minutes(a.Fire), minutes(a.State.Buffered))
	}
}

// Buffered slots run one after another as the running job finishes.
func TestBufferedSlotsRunInTurn(t *testing.T) {
	s := everyMinute(t)
	pol := Policy{Overlap: OverlapBufferAll}
	a := Tick(s, pol, State{Next: at(0), Running: 1}, at(2))
	var ran []int
	st := a.State
	for step := 0; step < 5; step++ {
		st.Running = 0 // the running job finished
		a = Tick(s, pol, st, at(2).Add(time.Duration(step+1)*time.Second))
		ran = append(ran, minutes(a.Fire)...)
		if len(a.Fire) > 1 {
			t.Fatalf("step %d fired %v at once", step, minutes(a.Fire))
		}
		st = a.State
	}
	if !slices.Equal(ran, []int{0, 1, 2}) || len(st.Buffered) != 0 {
		t.Errorf("ran %v, left %v", ran, minutes(st.Buffered))
	}
}

// A 3-hour outage with a 15-minute catch-up window: the slots older than
// the window are missed, counted exactly; the rest go through the overlap
// policy, never as a herd.
func TestCatchUpAfterAThreeHourOutage(t *testing.T) {
	s := everyMinute(t)
	now := at(180)
	cases := []struct {
		overlap        Overlap
		fired, skipped int
		buffered       int
	}{
		{OverlapSkip, 1, 15, 0},
		{OverlapBufferOne, 1, 14, 1},
		{OverlapBufferAll, 1, 0, 15},
		{OverlapCancelOther, 1, 15, 0},
		{OverlapAllowAll, 16, 0, 0},
	}
	for _, c := range cases {
		a := Tick(s, Policy{Overlap: c.overlap, CatchupWindow: 15 * time.Minute}, State{Next: at(0)}, now)
		if len(a.Missed) != 1 || a.Missed[0].Count != 165 || !a.Missed[0].From.Equal(at(0)) || !a.Missed[0].To.Equal(at(164)) || a.Missed[0].AtLeast {
			t.Fatalf("%s: missed %+v, want 165 slots 10:00..12:44", c.overlap, a.Missed)
		}
		if len(a.Fire) != c.fired || len(a.Skipped) != c.skipped || len(a.State.Buffered) != c.buffered || !a.State.Next.Equal(at(181)) {
			t.Errorf("%s: fired %d skipped %d buffered %d next %s; want %d %d %d",
				c.overlap, len(a.Fire), len(a.Skipped), len(a.State.Buffered), a.State.Next, c.fired, c.skipped, c.buffered)
		}
		if len(a.Fire) > 0 && !a.Fire[len(a.Fire)-1].After(at(164)) {
			t.Errorf("%s: fired a slot older than the window: %v", c.overlap, minutes(a.Fire))
		}
	}
	// Every slot is accounted for: missed + fired + skipped + buffered = 181.
	a := Tick(s, Policy{Overlap: OverlapBufferOne, CatchupWindow: 15 * time.Minute}, State{Next: at(0)}, now)
	if n := a.Missed[0].Count + len(a.Fire) + len(a.Skipped) + len(a.State.Buffered); n != 181 {
		t.Errorf("%d slots accounted for, want 181", n)
	}
}

func TestDefaultCatchupWindow(t *testing.T) {
	a := Tick(everyMinute(t), Policy{}, State{Next: at(0)}, at(20))
	if len(a.Missed) != 1 || a.Missed[0].Count != 5 { // 10:00..10:04 are older than 15 minutes
		t.Errorf("missed %+v, want 5 (default window %s)", a.Missed, DefaultCatchupWindow)
	}
}

func TestAPausedScheduleWaitsAndMeetsTheWindowOnResume(t *testing.T) {
	s := everyMinute(t)
	st := State{Next: at(0), Paused: true}
	a := Tick(s, Policy{}, st, at(60))
	if len(a.Fire)+len(a.Missed)+len(a.Skipped) != 0 || !a.State.Next.Equal(at(0)) {
		t.Fatalf("paused schedule acted: %+v", a)
	}
	st.Paused = false
	a = Tick(s, Policy{CatchupWindow: 10 * time.Minute}, st, at(60))
	if len(a.Missed) != 1 || a.Missed[0].Count != 50 || !slices.Equal(minutes(a.Fire), []int{50}) || len(a.Skipped) != 10 {
		t.Errorf("resume: missed %+v fire %v skipped %d", a.Missed, minutes(a.Fire), len(a.Skipped))
	}
}

func TestTrigger(t *testing.T) {
	now := at(7).Add(13 * time.Second)
	a := Trigger(Policy{}, State{}, now)
	if len(a.Fire) != 1 || !a.Fire[0].Equal(now) || a.State.Running != 1 {
		t.Errorf("trigger while idle: %+v", a)
	}
	a = Trigger(Policy{}, State{Running: 1}, now)
	if len(a.Fire) != 0 || len(a.Skipped) != 1 {
		t.Errorf("trigger under skip while running: %+v", a)
	}
	a = Trigger(Policy{Overlap: OverlapBufferOne}, State{Running: 1}, now)
	if len(a.State.Buffered) != 1 {
		t.Errorf("trigger under buffer_one while running: %+v", a)
	}
}

func TestBackfill(t *testing.T) {
	s := mustSpec(t, "every 10m", Options{})
	a, err := Backfill(s, OverlapBufferAll, State{}, at(0), at(60))
	if err != nil || !slices.Equal(minutes(a.Fire), []int{0}) || !slices.Equal(minutes(a.State.Buffered), []int{10, 20, 30, 40, 50}) {
		t.Fatalf("buffer_all backfill: %v, fire %v buffered %v", err, minutes(a.Fire), minutes(a.State.Buffered))
	}
	a, _ = Backfill(s, OverlapAllowAll, State{}, at(0), at(60))
	if !slices.Equal(minutes(a.Fire), []int{0, 10, 20, 30, 40, 50}) {
		t.Errorf("allow_all backfill fired %v", minutes(a.Fire))
	}
	a, _ = Backfill(s, OverlapSkip, State{}, at(0), at(60))
	if len(a.Fire) != 1 || len(a.Skipped) != 5 {
		t.Errorf("skip backfill: fire %v skipped %v", minutes(a.Fire), minutes(a.Skipped))
	}
	if _, err := Backfill(mustSpec(t, "every 1s", Options{}), OverlapAllowAll, State{}, at(0), at(600)); err == nil {
		t.Errorf("a backfill of 36,000 slots was taken")
	}
	if _, err := Backfill(s, OverlapSkip, State{}, at(60), at(0)); err == nil {
		t.Errorf("a backfill ending before it starts was taken")
	}
}

func TestAOneTimeScheduleFiresOnce(t *testing.T) {
	s := mustSpec(t, "at 2026-12-01T10:05:00Z", Options{})
	st := State{Next: s.Next(at(0))}
	a := Tick(s, Policy{}, st, at(6))
	if !slices.Equal(minutes(a.Fire), []int{5}) || !a.State.Next.IsZero() {
		t.Fatalf("fire %v next %s", minutes(a.Fire), a.State.Next)
	}
	a = Tick(s, Policy{}, State{Next: a.State.Next}, at(600))
	if len(a.Fire) != 0 {
		t.Errorf("fired again: %v", minutes(a.Fire))
	}
}

func TestParseOverlapAndSlotKey(t *testing.T) {
	if o, err := ParseOverlap(""); err != nil || o != OverlapSkip {
		t.Errorf(`ParseOverlap("") = %s, %v`, o, err)
	}
	if _, err := ParseOverlap("queue"); err == nil {
		t.Errorf("unknown overlap accepted")
	}
	if SlotKey("s1", at(0)) != SlotKey("s1", at(0).In(time.FixedZone("x", 3600))) || SlotKey("s1", at(0)) == SlotKey("s1", at(1)) {
		t.Errorf("slot keys must name the instant, whatever the zone")
	}
}

// A long outage of a frequent schedule is not walked slot by slot: the
// count stops at a bound and says so, and the walk jumps to the window.
func TestAVeryLongOutageIsBounded(t *testing.T) {
	s := mustSpec(t, "every 1s", Options{})
	now := t0.Add(30 * 24 * time.Hour)
	a := Tick(s, Policy{Overlap: OverlapSkip, CatchupWindow: time.Minute}, State{Next: t0}, now)
	if len(a.Missed) != 1 || !a.Missed[0].AtLeast || a.Missed[0].Count != maxMissedWalk {
		t.Fatalf("missed %+v", a.Missed)
	}
	if len(a.Fire) != 1 || a.Fire[0].Before(now.Add(-time.Minute)) || len(a.Skipped) != 60 {
		t.Errorf("fire %v, %d skipped", a.Fire, len(a.Skipped))
	}
}
