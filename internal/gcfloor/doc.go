// Package gcfloor puts a floor under the Go garbage collector's heap goal,
// so that a process whose live heap is small does not collect every few
// megabytes of allocation.
//
// # Why
//
// With the default GOGC of 100 the collector starts a cycle when the heap
// reaches twice what the last cycle found live. A job server with a few
// thousand unfinished jobs holds a live heap of some tens of megabytes
// and allocates that much in well under a second (request decoding,
// store rows, events), so it collects several times a second. Each cycle
// takes a quarter of the CPU for its marking and makes allocating
// goroutines assist; on a small machine that lands on the dispatcher or
// on a request in flight, and it is most of the tail of submit-to-start
// latency (docs/benchmarks.md, "A floor under the GC heap goal").
//
// # Mechanism
//
// After every cycle the package reads the live heap the cycle found
// (runtime/metrics "/gc/heap/live:bytes") and sets GOGC
// (debug.SetGCPercent) so that the next goal is the floor:
//
//	percent = max(base, 100 × (floor − live) / live)
//
// where base is the GOGC the process had when Start was called. Once the
// live heap passes half the floor the base percent gives a goal above the
// floor by itself and the package changes nothing: a large heap is
// collected exactly as without it. The runtime scales its own minimum
// heap goal (4 MiB) by GOGC, so the percent is also capped at
// 100 × floor / 4 MiB, or a tiny heap would get a goal above the floor.
//
// "After every cycle" is a finalizer on an otherwise unreachable sentinel
// object, which the collector queues when the cycle that found it
// unreachable ends; the finalizer adjusts GOGC and arms a new sentinel.
// The adjustment lags the cycle by the time the finalizer goroutine takes
// to run it, which only matters for a heap that changes size by a large
// factor within one cycle.
//
// A memory limit (GOMEMLIMIT, debug.SetMemoryLimit) still applies: the
// collector runs when the process nears it whatever the goal. GOGC=off
// turns the package off (base < 0), as does a floor of 0. Capped lowers a
// configured floor to half of GOMEMLIMIT and to a quarter of the cgroup's
// memory limit (v2 memory.max, v1 memory.limit_in_bytes), so that a server
// in a small container is not pushed towards its limit by the floor.
package gcfloor
