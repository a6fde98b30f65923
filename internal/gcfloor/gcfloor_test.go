package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name        string
		live, floor uint64
		base, want  int
	}{
		{"small heap reaches the floor", 16 * mib, 256 * mib, 100, 1500},
		{"not measured yet counts as 4 MiB, capped by the runtime minimum", 0, 256 * mib, 100, 6300},
		{"a tiny heap is capped so that 4 MiB x GOGC/100 stays at the floor", 1 * mib, 256 * mib, 100, 6400},
		{"half the floor: base gives the floor itself", 128 * mib, 256 * mib, 100, 100},
		{"above half the floor: base", 200 * mib, 256 * mib, 100, 100},
		{"above the floor: base", 512 * mib, 256 * mib, 100, 100},
		{"a higher base is kept", 64 * mib, 256 * mib, 400, 400},
		{"a lower base is raised", 64 * mib, 256 * mib, 50, 300},
	} {
		if got := percentFor(tc.live, tc.floor, tc.base); got != tc.want {
			t.Errorf("%s: percentFor(%d MiB, %d MiB, %d) = %d, want %d",
				tc.name, tc.live/mib, tc.floor/mib, tc.base, got, tc.want)
		}
	}
}

var sink []byte

// allocate makes n MiB of garbage, a MiB at a time, and returns how many
// collections ran meanwhile.
func allocate(n int) uint64 {
	before := cycles()
	for range n {
		sink = make([]byte, 1<<20)
	}
	sink = nil
	return cycles() - before
}

func cycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func TestFloorDefersCollections(t *testing.T) {
	base := debug.SetGCPercent(100)
	defer debug.SetGCPercent(base)

	adjusted := make(chan int, 64)
	stop := start(128<<20, func(_ uint64, p int) {
		select {
		case adjusted <- p:
		default:
		}
	})
	<-adjusted // Start adjusts at once
	runtime.GC()
	select {
	case p := <-adjusted:
		if p <= 100 {
			t.Fatalf("after a cycle of a small heap GOGC = %d, want above 100", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no adjustment within 10s of a collection: the finalizer chain is broken")
	}
	withFloor := allocate(48)

	stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after stop GOGC = %d, want the base 100 back", got)
	}
	runtime.GC()
	without := allocate(48)

	t.Logf("collections while allocating 48 MiB: %d with a 128 MiB floor, %d without", withFloor, without)
	if withFloor > 1 || without < 3 {
		t.Errorf("collections: %d with the floor (want at most 1), %d without (want 3 or more)", withFloor, without)
	}
}

func TestStopEndsTheChain(t *testing.T) {
	base := debug.SetGCPercent(100)
	defer debug.SetGCPercent(base)
	calls := make(chan int, 64)
	stop := start(64<<20, func(_ uint64, p int) { calls <- p })
	<-calls
	stop()
	finalizersRun(t) // a sentinel armed before stop has run by now
	finalizersRun(t)
	select {
	case p := <-calls:
		t.Fatalf("adjusted GOGC to %d after stop", p)
	default:
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC = %d after stop, want 100", got)
	}
}

// finalizersRun collects and waits until a probe's finalizer, queued in
// that cycle, has run on the finalizer goroutine.
func finalizersRun(t *testing.T) {
	t.Helper()
	done := make(chan struct{})
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) { close(done) })
	runtime.GC()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a finalizer did not run within 10s of a collection")
	}
}

func TestOffWhenGOGCIsOff(t *testing.T) {
	base := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(base)
	called := false
	stop := start(64<<20, func(uint64, int) { called = true })
	defer stop()
	if called {
		t.Error("adjusted GOGC although it was off")
	}
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("GOGC = %d, want it left off (-1)", got)
	}
}

func TestZeroFloorStartsNothing(t *testing.T) {
	base := debug.SetGCPercent(100)
	defer debug.SetGCPercent(base)
	stop := start(0, func(uint64, int) { t.Error("adjusted with a zero floor") })
	defer stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC = %d, want 100", got)
	}
}
