// Package bench is `fairway bench`: the four job-queue workloads of the
// project's shared harness, peerbench (drain, steady, latency, priority),
// run against a real fairway server (internal/server on the SQLite store,
// WAL, fsync'd before every answer) with real workers (package worker) and
// producers (package client) talking HTTP over 127.0.0.1, all in one
// process. It prints peerbench's key=value summary line with
// system=fairway, so that the lines can be compared side by side.
//
// The workloads, the statistics and the line format are peerbench's, ported
// unchanged (workloads.go, stats.go); System (system.go) is peerbench's
// contract and fairway.go its only implementation. Main is the command.
// docs/benchmarks.md describes the flags, the choices made and the figures.
//
// With --embedded (embedded.go) the same workloads run on fairway embedded
// in the process (package embedded): the same store, dispatcher and
// worker, but producers and workers call the dispatcher directly, with no
// HTTP, as River's run against their database in process.
package bench
