package policy

// Minimal deterministic reproductions of engine bugs found by the property
// tests (property_test.go) or while writing them, kept as regression tests
// now that they are fixed.

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Restore charges caps "even beyond their limits", but a conflict slot
// remembers a single holder: when two running jobs of one conflict group
// and resource key are restored (for example after a restart under a config
// that gave their type a conflict group) and the one restored last finishes
// first, the key is released although the other still holds it, and a third
// job on the key is admitted next to it (property 2 broken). Fixed in
// 158eeed (conflictSlot.holders).
func TestRegressRestoredConflictHoldersBothHoldTheKey(t *testing.T) {
	cfg := Config{Lanes: oneLane(lc().L()), Types: map[string]TypeConfig{"sync": {ConflictGroup: "git"}}}
	e := newTestEngine(t, cfg, wrk("w").slots(3).W())
	must(t, e.Restore(job("a").typ("sync").key("r1").J(), "w", at(0), 1))
	must(t, e.Restore(job("b").typ("sync").key("r1").J(), "w", at(0), 1))
	submitAll(t, e, at(1), job("c").typ("sync").key("r1"))
	if got := admittedIDs(e, at(1)); len(got) != 0 {
		t.Fatalf("admitted %v while a and b hold git/r1", got)
	}
	finishOK(t, e, "b", at(2), Succeeded)
	if d := cmp.Diff([]string{}, admittedIDs(e, at(2))); d != "" {
		t.Errorf("admitted while a still holds git/r1 (-want +got):\n%s", d)
	}
	finishOK(t, e, "a", at(3), Succeeded)
	if d := cmp.Diff([]string{"c"}, admittedIDs(e, at(3))); d != "" {
		t.Errorf("after both holders ended (-want +got):\n%s", d)
	}
}

// Aging counts from Job.EnqueuedAt, which defaults to the submit time, so a
// job accrues aging while it is not runnable at all: while its run_at is in
// the future or while it waits on a dependency. When it becomes runnable it
// outranks work that has waited longer and has a higher priority; with the
// default lane, a priority-0 job scheduled an hour ahead arrives with 12000
// points of aging and beats a priority-1000 job submitted at the same
// instant. Seed 000 defines aging on enqueued_at, "last (re)insert into a
// queue", and DESIGN §3 / docs/scheduling.md count the time a job "waited";
// a job that is not runnable is not waiting in a queue. Fixed in 158eeed
// (promoteDue and resolveDependents move the age start).
func TestRegressAgingStartsWhenRunnable(t *testing.T) {
	tests := map[string]struct {
		setup func(t *testing.T, e *Engine) // leaves the only slot free at 3600 s
	}{
		"run_at an hour ahead": {
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(0), job("late").prio(0).fk("l").runAt(at(3600)))
			},
		},
		"dependency that ran for an hour": {
			setup: func(t *testing.T, e *Engine) {
				submitAll(t, e, at(0), job("parent").prio(1000).fk("p"), job("late").prio(0).fk("l").after("parent"))
				admittedIDs(e, at(0))
				finishOK(t, e, "parent", at(3600), Succeeded)
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newTestEngine(t, Config{Lanes: oneLane(DefaultLaneConfig())}, wrk("w").W())
			tc.setup(t, e)
			submitAll(t, e, at(3600), job("urgent").prio(1000).fk("u"))
			a, ok := e.Next(at(3600))
			if !ok {
				t.Fatal("nothing admitted")
			}
			if d := cmp.Diff("urgent", a.JobID); d != "" {
				t.Errorf("first admitted (-want +got):\n%s\n(score %d: the late job became runnable at the same instant as urgent)", d, a.Score)
			}
		})
	}
}

// The fix above applies max(EnqueuedAt, RunAt) only when a delayed job is
// promoted. A job submitted when its RunAt has already passed goes straight
// to its queue and ages from EnqueuedAt. The server's rebuild
// (internal/server/rebuild.go) re-submits pending jobs with their stored
// EnqueuedAt (their creation time) and RunAt, so after a restart past its
// run_at a job gets its whole delay back as aging: the same job, at the
// same instant, is ordered differently depending on whether the engine
// restarted. (Dependencies met before a restart have the same problem, but
// the engine cannot know when they were met; the server would have to
// store it.)
func TestRegressRunAtAgeSurvivesResubmit(t *testing.T) {
	tests := map[string]int{ // when the engine is given the job
		"submitted at creation":                  0,
		"re-submitted by a rebuild after run_at": 3600,
	}
	for name, submitAt := range tests {
		t.Run(name, func(t *testing.T) {
			e := newTestEngine(t, Config{Lanes: oneLane(DefaultLaneConfig())}, wrk("w").W())
			submitAll(t, e, at(submitAt), job("late").prio(0).fk("l").enq(at(0)).runAt(at(3600)))
			submitAll(t, e, at(3600), job("urgent").prio(1000).fk("u"))
			x, err := e.Explain("late", at(3600))
			if err != nil {
				t.Fatal(err)
			}
			a, ok := e.Next(at(3600))
			if !ok {
				t.Fatal("nothing admitted")
			}
			type result struct {
				LateScore int64
				First     string
			}
			if d := cmp.Diff(result{0, "urgent"}, result{x.Score, a.JobID}); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
