package policy

import (
	"errors"
	"slices"
	"testing"
)

// An offline worker gets nothing new; its running job finishes and its
// slots stay out of the pool; back online, it is offered work again.
func TestAnOfflineWorkerIsOfferedNothing(t *testing.T) {
	e := newTestEngine(t, Config{}, wrk("a").slots(2).W(), wrk("b").slots(1).W())
	submitAll(t, e, at(0), job("j1"))
	if got := admittedIDs(e, at(0)); !slices.Equal(got, []string{"j1"}) {
		t.Fatalf("admitted %v, want j1", got)
	}
	running := e.jobs["j1"].wk.ID
	other := map[string]string{"a": "b", "b": "a"}[running]
	if changed, err := e.SetWorkerOffline(running, true); !changed || err != nil {
		t.Fatalf("SetWorkerOffline: %v %v", changed, err)
	}
	if changed, _ := e.SetWorkerOffline(running, true); changed {
		t.Error("setting an offline worker offline changed something")
	}
	freeOther := e.workers[other].freeSlots
	if e.FreeSlots() != freeOther {
		t.Fatalf("FreeSlots %d with %s offline, want %d (%s's)", e.FreeSlots(), running, freeOther, other)
	}
	submitAll(t, e, at(1), job("j2"), job("j3"), job("j4"))
	got := admittedIDs(e, at(1))
	if len(got) != freeOther {
		t.Fatalf("admitted %v, want %d (the online worker's free slots)", got, freeOther)
	}
	for _, id := range got {
		if w := e.jobs[id].wk.ID; w != other {
			t.Fatalf("%s admitted on %s, which is offline", id, w)
		}
	}
	finishOK(t, e, "j1", at(2), Succeeded)
	if left := admittedIDs(e, at(2)); len(left) != 0 || e.FreeSlots() != 0 {
		t.Fatalf("after the offline worker's job ended: admitted %v, %d free slots; want nothing", left, e.FreeSlots())
	}
	if changed, err := e.SetWorkerOffline(running, false); !changed || err != nil {
		t.Fatalf("back online: %v %v", changed, err)
	}
	if left := admittedIDs(e, at(3)); len(left) == 0 {
		t.Fatal("nothing admitted once the worker is back online")
	}
	if _, err := e.SetWorkerOffline("nope", true); !errors.Is(err, ErrUnknownWorker) {
		t.Errorf("unknown worker: %v", err)
	}
}
