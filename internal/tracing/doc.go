// Package tracing records OpenTelemetry traces of jobs: a span for the
// submit, and for every attempt spans for its wait, its lease and its run,
// exported with OTLP over HTTP. It is off unless an endpoint is configured;
// off, a *Tracer is nil and every method is a no-op, so the hot path pays
// one nil check.
//
// # Where the trace comes from
//
// A submit carries a W3C trace context: the traceparent header (the Go
// client injects it from the caller's context) or the spec's traceparent
// field. With tracing on, the server starts the span fairway.submit as its
// child (or as a new trace's root) and stores the submit span's context
// with the job; with tracing off, it stores what the client sent, so the
// handler still runs in the caller's trace.
//
// # Spans of an attempt, written when it ends
//
// The attempt's times are in the execution record (ready, leased, started,
// finished), so the server writes the attempt's spans once, when the
// attempt ends, with those times: fairway.wait (ready to leased),
// fairway.lease (leased to started on the worker) and fairway.run (started
// to finished, with the outcome and failure class), all children of the
// job's stored context. Nothing is kept in memory between lease and end,
// and a leader that takes over writes the spans of the attempts it
// inherited.
//
// The run span's id is not random: it is derived from the job id and the
// attempt (AttemptSpanID). So the server can hand a worker the run span's
// context at lease (Lease.traceparent, then TRACEPARENT in a command's
// environment and the span context of a Go handler's ctx) before the span
// exists, and a handler's own spans are the run span's children. A retry's
// wait and run spans link to the run span of the attempt before it, by the
// same derivation.
package tracing
