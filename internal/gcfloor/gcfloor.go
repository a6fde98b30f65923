package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// runtimeMinHeap is the Go runtime's minimum heap goal at GOGC=100
// (defaultHeapMinimum); the runtime scales it by GOGC/100.
const runtimeMinHeap = 4 << 20

// liveMetric is the runtime/metrics name of the heap the last cycle
// found live.
const liveMetric = "/gc/heap/live:bytes"

var (
	mu      sync.Mutex
	current *floor // the active floor; nil when none
)

// floor is one Start's state. Its finalizer chain ends when stopped is set.
type floor struct {
	bytes   uint64
	base    int
	stopped bool // guarded by mu

	// adjusted, when set (tests), is called after each adjustment with
	// the live heap seen and the percent set.
	adjusted func(live uint64, percent int)
}

// Start keeps the collector's heap goal at or above floorBytes until the
// returned stop is called, which puts GOGC back as it was. A floor of 0
// or less, or GOGC=off, starts nothing. A second Start replaces the first
// floor.
func Start(floorBytes int64) (stop func()) {
	return start(floorBytes, nil)
}

func start(floorBytes int64, adjusted func(live uint64, percent int)) (stop func()) {
	mu.Lock()
	defer mu.Unlock()
	base := debug.SetGCPercent(100)
	if current != nil {
		current.stopped = true
		base = current.base
	}
	debug.SetGCPercent(base)
	current = nil
	if floorBytes <= 0 || base < 0 {
		return func() {}
	}
	f := &floor{bytes: uint64(floorBytes), base: base, adjusted: adjusted}
	current = f
	f.adjustLocked()
	f.arm()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if f.stopped {
			return
		}
		f.stopped = true
		current = nil
		debug.SetGCPercent(f.base)
	}
}

// sentinel is the object whose finalizer runs after each cycle. It is
// larger than the tiny allocator's 16-byte blocks, which may never be
// finalized.
type sentinel struct {
	f *floor
	_ [32]byte
}

func (f *floor) arm() {
	runtime.SetFinalizer(&sentinel{f: f}, afterCycle)
}

func afterCycle(s *sentinel) {
	f := s.f
	mu.Lock()
	defer mu.Unlock()
	if f.stopped {
		return
	}
	f.adjustLocked()
	f.arm()
}

// adjustLocked sets GOGC for the live heap of the last cycle. The caller
// holds mu.
func (f *floor) adjustLocked() {
	sample := []metrics.Sample{{Name: liveMetric}}
	metrics.Read(sample)
	var live uint64
	if sample[0].Value.Kind() == metrics.KindUint64 {
		live = sample[0].Value.Uint64()
	}
	p := percentFor(live, f.bytes, f.base)
	debug.SetGCPercent(p)
	if f.adjusted != nil {
		f.adjusted(live, p)
	}
}

// percentFor is the GOGC that puts the heap goal of a live heap at the
// floor, never below base, and capped so that the runtime's scaled
// minimum goal stays at or below the floor. A live heap not yet measured
// (0, before the first cycle) counts as the runtime's minimum.
func percentFor(live, floorBytes uint64, base int) int {
	if live == 0 {
		live = runtimeMinHeap
	}
	if live >= floorBytes {
		return base
	}
	p := (floorBytes - live) * 100 / live
	ceiling := floorBytes * 100 / runtimeMinHeap
	p = min(p, ceiling)
	return max(int(p), base)
}
