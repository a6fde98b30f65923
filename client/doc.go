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
// goroutines can share it without dialling. It sets no overall timeout:
// long polls (Lease, SubmitWait, FollowLogs, Wait) legitimately answer late.
// Bound every call with its context instead.
//
// # Errors
//
// A 4xx or 5xx answer is returned as an *api.Error (wrapped: use
// errors.As, or APIError) carrying the HTTP status, the API's stable error
// code, its message and field, and Retry-After in seconds. IsNotFound,
// IsStaleAttempt and IsRetryable answer the usual questions; a network
// failure is retryable, a cancelled context is not. The client never
// retries on its own, except that FollowLogs reopens a dropped stream.
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
