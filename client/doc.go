// Package client is the Go SDK for a fairway server's HTTP API
// (docs/api.md): submit, inspect, cancel and follow jobs, read the
// reports, and speak the worker protocol. The request and answer types are
// those of package api.
//
//	c, err := client.New("http://127.0.0.1:7070", client.WithAPIKey(key))
//	res, err := c.Submit(ctx, api.JobSpec{Type: "report", Command: []string{"./report.sh"}})
//	job, err := c.Wait(ctx, res.Job.ID)
//
// # Connections and timeouts
//
// A Client is safe for concurrent use and keeps one http.Client whose
// transport holds a large pool of idle connections per host, so hundreds of
// goroutines can share it without dialling. It sets no overall timeout on
// the http.Client: each attempt of a call is bounded instead by the
// request timeout (WithRequestTimeout, default 10 s); a long poll (Lease,
// HeartbeatWait, SubmitWait) by its wait plus a margin (5 s). A
// stream (FollowLogs, Wait) must get its answer's headers within the
// request timeout, and is then bounded by its context, except that a
// stream silent for 45 s (the server sends a comment every 15 s) is taken
// for dropped and reopened. An attempt that runs out of its time fails
// with ErrRequestTimeout.
//
// # Failover, timeouts and retries
//
// New takes one URL or several (the instances of one server on
// PostgreSQL). A call is tried again, for up to the retry deadline
// (WithRetryDeadline, default 30 s; ctx may end it sooner), when it failed
// in a way another attempt may not:
//
//   - 503 not_leader or unavailable (nothing was changed): always; a
//     standby's X-Fairway-Leader is followed, else the next instance is
//     tried;
//   - a refused connection (nothing was sent): with several instances;
//   - 503 maybe_applied, a proxy's 502/503/504, a request timeout or a
//     connection that broke after the request went out: only for calls
//     that are safe to send again (reads, PUT, submits, which always carry
//     an idempotency key, a worker's log appends). A heartbeat is never
//     resent after a pause or a timeout: its list of held attempts would
//     be stale (HeartbeatWait).
//
// Another instance is tried at once; after each round of them the client
// pauses with jittered back-off (50 ms doubling to 2 s). Submit and
// SubmitBatch send every call that carries a spec without an idempotency
// key with a submit token drawn for that call (api.SubmitTokenHeader):
// the server answers a copy sent within two minutes with the first one's
// jobs, so their retries never run a job twice, and they are not resent
// past SubmitTokenResendLimit (a minute) after the first attempt.
// SubmitWait, whose answer may take longer than that, gives a spec
// without an idempotency key one of its own (GeneratedKeyPrefix) instead.
// WithoutGeneratedKeys sends neither, trading that safety for a cheaper
// submit. overloaded and rate_limited are returned to the caller,
// with RetryAfter. After a call fails for want of an answer, the next call
// goes to another instance.
//
// # Errors
//
// A 4xx or 5xx answer is returned as an *api.Error (wrapped: use
// errors.As, or APIError) carrying the HTTP status, the API's stable error
// code, its message and field, and Retry-After in seconds. IsNotFound,
// IsStaleAttempt and IsRetryable answer the usual questions; a network
// failure is retryable, a cancelled context is not. A URL at which
// something other than fairway answers (a web page where the API's JSON
// was due) gives ErrNotFairway, naming the URL.
//
// # Waiting for a job
//
// Wait follows the job's log event stream filtered to an attempt no job
// reaches, so no log data flows and the stream's end event (sent when the
// job is terminal) wakes it without polling; a dropped stream is reopened.
// Only a server that refuses that stream is polled, with a delay growing
// from 50 ms to 2 s. SubmitWait instead lets the server hold the submit
// request until the job ends (on-demand jobs).
//
// # Following logs
//
// A job's output is a sequence of api.LogChunk ordered by (attempt, seq).
// Logs reads one page, LogsAll every page. FollowLogs reads Server-Sent
// Events from GET /jobs/{id}/logs?follow=true: "log" events carry a chunk,
// the final "end" event an api.LogEnd. If the connection drops, it
// reconnects from the last chunk it delivered (after_attempt, after_seq)
// and skips chunks it has seen, so none is lost or repeated.
package client
