// Package metrics is fairway's Prometheus instrumentation: the metric
// families the server exports at /metrics, named by Prometheus
// conventions (fairway_ prefix, _total for counters, _seconds for
// durations, base units).
//
// Where the numbers come from:
//
//   - Counters and histograms of jobs (submitted, started, attempts ended,
//     finished, lease expirations, schedule lag and missed slots) are
//     recorded by the dispatcher once the batch that made the change is
//     durable (its after-commit actions), so a batch that rolls back
//     counts nothing and a scrape after an answered request sees it.
//   - Timings of the dispatcher (the engine's admission pass, the store's
//     transaction, the wait for durability) are observed as they happen.
//   - Gauges of the current state (pending and running jobs per lane and
//     tenant, workers per state) are read from the dispatcher at scrape
//     time through a Snapshot function, so they never drift from its
//     index.
//   - HTTP requests are counted per route pattern (never the raw path, so
//     job ids do not become labels) and status code.
//
// Every method is safe on a nil *Metrics, which records nothing.
package metrics
