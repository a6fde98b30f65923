package policy

import (
	"errors"
	"slices"
	"testing"
)

// A held job is never admitted, whatever its state when held (queued,
// delayed, waiting on a dependency, parked behind a conflict); explain
// says held; released, it is runnable again as a new job would be.
func TestHoldAndRelease(t *testing.T) {
	e := newTestEngine(t, Config{Lanes: oneLane(lc().L())}, wrk("w").slots(8).W())
	submitAll(t, e, at(0),
		job("queued"), job("later").runAt(at(10)), job("parent"), job("child").after("parent"))
	for _, id := range []string{"queued", "later", "child"} {
		if err := e.Hold(id, at(1)); err != nil {
			t.Fatalf("Hold(%s): %v", id, err)
		}
	}
	if err := e.Hold("queued", at(1)); err != nil {
		t.Errorf("holding a held job: %v", err)
	}
	if got := admittedIDs(e, at(1)); !slices.Equal(got, []string{"parent"}) {
		t.Fatalf("admitted %v at 1s, want only parent", got)
	}
	finishOK(t, e, "parent", at(2), Succeeded)
	if got := admittedIDs(e, at(20)); len(got) != 0 {
		t.Fatalf("admitted %v at 20s: held jobs ran (the delayed one is due, the child's parent succeeded)", got)
	}
	for _, id := range []string{"queued", "later", "child"} {
		x, err := e.Explain(id, at(20))
		if r, _ := e.Reason(id, at(20)); err != nil || x.Code != CodeHeld || r != CodeHeld {
			t.Errorf("Explain(%s) = %+v, %v; Reason %s", id, x, err, r)
		}
	}
	for _, id := range []string{"queued", "later", "child"} {
		if err := e.Release(id, at(21)); err != nil {
			t.Fatalf("Release(%s): %v", id, err)
		}
	}
	got := admittedIDs(e, at(21))
	slices.Sort(got)
	if !slices.Equal(got, []string{"child", "later", "queued"}) {
		t.Errorf("admitted %v after the release, want all three", got)
	}
	if err := e.Hold("queued", at(22)); !errors.Is(err, ErrNotPending) {
		t.Errorf("holding a running job: %v, want ErrNotPending", err)
	}
	if err := e.Release("nope", at(22)); !errors.Is(err, ErrNotFound) {
		t.Errorf("releasing an unknown job: %v", err)
	}
}

// Holding a job parked behind a conflict frees its place; released, it
// parks again while the holder runs.
func TestHoldAParkedJob(t *testing.T) {
	cfg := Config{Lanes: oneLane(lc().L()), Types: map[string]TypeConfig{"clone": {ConflictGroup: "repo"}}}
	e := newTestEngine(t, cfg, wrk("w").slots(4).W())
	submitAll(t, e, at(0), job("a").typ("clone").key("r1"), job("b").typ("clone").key("r1"))
	if got := admittedIDs(e, at(0)); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("admitted %v", got)
	}
	if err := e.Hold("b", at(1)); err != nil {
		t.Fatal(err)
	}
	finishOK(t, e, "a", at(2), Succeeded)
	if got := admittedIDs(e, at(2)); len(got) != 0 {
		t.Fatalf("the held job ran once the conflict cleared: %v", got)
	}
	if err := e.Release("b", at(3)); err != nil {
		t.Fatal(err)
	}
	if got := admittedIDs(e, at(3)); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after the release: %v", got)
	}
}

// A held job can be cancelled.
func TestCancelAHeldJob(t *testing.T) {
	e := newTestEngine(t, Config{Lanes: oneLane(lc().L())}, wrk("w").slots(1).W())
	submitAll(t, e, at(0), job("a"))
	if err := e.Hold("a", at(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Cancel("a", at(1)); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Job("a"); ok {
		t.Errorf("a cancelled held job is still held by the engine")
	}
}
