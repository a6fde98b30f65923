package gcfloor

import (
	"math"
	"os"
	"path/filepath"
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

func TestCapFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name                    string
		floor, goLimit, cgLimit int64
		want                    int64
		why                     string
	}{
		{"no limits", 256 * mib, math.MaxInt64, 0, 256 * mib, ""},
		{"roomy container", 256 * mib, math.MaxInt64, 4096 * mib, 256 * mib, ""},
		{"small container", 256 * mib, math.MaxInt64, 512 * mib, 128 * mib, "a quarter of the cgroup memory limit"},
		{"GOMEMLIMIT", 256 * mib, 300 * mib, 0, 150 * mib, "half of GOMEMLIMIT"},
		{"both, the cgroup lower", 256 * mib, 300 * mib, 400 * mib, 100 * mib, "a quarter of the cgroup memory limit"},
		{"floor off stays off", 0, 300 * mib, 400 * mib, 0, ""},
	} {
		got, why := capFor(tc.floor, tc.goLimit, tc.cgLimit)
		if got != tc.want || why != tc.why {
			t.Errorf("%s: capFor = %d MiB (%q), want %d MiB (%q)", tc.name, got/mib, why, tc.want/mib, tc.why)
		}
	}
}

func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		file   string
		want   int64
		wantOK bool
	}{
		{write("v2-max", "max\n"), 0, true},
		{write("v2-set", "536870912\n"), 512 << 20, true},
		{write("v1-unlimited", "9223372036854771712\n"), 0, true},
		{filepath.Join(dir, "absent"), 0, false},
	} {
		if got, ok := readLimit(tc.file); got != tc.want || ok != tc.wantOK {
			t.Errorf("readLimit(%s) = %d, %v; want %d, %v", filepath.Base(tc.file), got, ok, tc.want, tc.wantOK)
		}
	}
	cg := write("cgroup", "12:memory:/x\n0::/system.slice/fairway.service\n")
	if got := cgroupV2Path(cg); got != "/system.slice/fairway.service" {
		t.Errorf("cgroupV2Path = %q", got)
	}
	if got := cgroupV2Path(write("cgroup-v1", "12:memory:/x\n")); got != "" {
		t.Errorf("cgroupV2Path of a v1-only file = %q, want empty", got)
	}
	if n := cgroupMemoryLimit(); n < 0 {
		t.Errorf("cgroupMemoryLimit() = %d on this machine", n)
	}
}
