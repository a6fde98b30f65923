package policy

import (
	"errors"
	"slices"
	"testing"
)

// A paused lane admits nothing while the other lanes go on; its running
// job finishes; explain says lane_paused; resumed, its jobs run in the
// order they would have.
func TestAPausedLaneAdmitsNothing(t *testing.T) {
	cfg := Config{Lanes: map[string]LaneConfig{"batch": lc().L(), "web": lc().L()}}
	e := newTestEngine(t, cfg, wrk("w").slots(1).W())
	submitAll(t, e, at(0), job("b1").lane("batch"))
	if got := admittedIDs(e, at(0)); !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("admitted %v, want b1", got)
	}
	if changed, err := e.PauseLane("batch", true); !changed || err != nil {
		t.Fatalf("PauseLane: %v %v", changed, err)
	}
	if changed, err := e.PauseLane("batch", true); changed || err != nil {
		t.Errorf("pausing a paused lane: %v %v", changed, err)
	}
	submitAll(t, e, at(1), job("b2").lane("batch").prio(900), job("b3").lane("batch"), job("w1").lane("web"))
	finishOK(t, e, "b1", at(2), Succeeded) // the running job finished while its lane was paused
	if got := admittedIDs(e, at(2)); !slices.Equal(got, []string{"w1"}) {
		t.Fatalf("admitted %v with batch paused, want only w1", got)
	}
	finishOK(t, e, "w1", at(3), Succeeded)
	if got := admittedIDs(e, at(3)); len(got) != 0 {
		t.Fatalf("admitted %v from a paused lane", got)
	}
	x, err := e.Explain("b2", at(3))
	if r, _ := e.Reason("b2", at(3)); err != nil || x.Code != CodeLanePaused || r != CodeLanePaused {
		t.Errorf("Explain(b2) = %+v, %v; Reason %s", x, err, r)
	}
	if st := e.Lanes(); !st[0].Paused || st[1].Paused {
		t.Errorf("Lanes() = %+v, want batch paused", st)
	}
	if changed, err := e.PauseLane("batch", false); !changed || err != nil {
		t.Fatalf("resume: %v %v", changed, err)
	}
	if got := admittedIDs(e, at(4)); !slices.Equal(got, []string{"b2"}) {
		t.Fatalf("admitted %v after resume, want b2 (the higher priority)", got)
	}
	if _, err := e.PauseLane("nope", true); !errors.Is(err, ErrUnknownLane) {
		t.Errorf("unknown lane: %v", err)
	}
}
