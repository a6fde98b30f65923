// Package worker is fairway's pull worker: it registers with a fairway
// server, long-polls for leases, runs each job with a Handler and reports
// the outcome, fenced by the job's attempt. `fairway worker` is this
// package running commands (CommandHandler); a Go program becomes a worker
// with typed handlers (Typed).
//
//	w, err := worker.New(worker.Options{
//		Client:   c, // *client.Client
//		Slots:    8,
//		Handlers: map[string]worker.Handler{"resize": worker.Typed(resize)},
//	})
//	...
//	err = w.Run(ctx) // until ctx is done, then a graceful stop
//
// The worker reaches the server through a Transport: Options.Client, the
// HTTP API, or Options.Transport, any other implementation, such as the
// in-process one of package embedded, which calls the dispatcher of a
// fairway running in the same program. Both answer the same results and
// errors (*api.Error with the HTTP API's status and code), so everything
// below holds for both.
//
// # Protocol
//
// Run registers (a fresh identity per Run) and keeps one lease request
// open, asking for as many jobs as it has free slots. A slot is free again
// once its job's handler has returned and the server has acknowledged the
// report, which is when the server counts the slot free too; the report
// itself asks for that many new leases, and the jobs the server leased to
// this worker in the same batch come back with its answer. The jobs of
// one lease answer start in priority order: a job's handler does not start
// before those of the higher-priority jobs leased with it. For each lease
// it:
//
//   - sends no start report: the server counts the job running from its
//     lease, and the worker tells it the real start with the attempt's
//     completion and, once it has run half a heartbeat interval, with its
//     heartbeats (started_at of the attempt listed);
//   - runs the handler with a context cancelled when the job is cancelled
//     (ErrCancelled) or preempted (ErrPreempted, reported preempted), its
//     lease revoked (ErrRevoked), its timeout passes
//     under the strict SLA policy (ErrTimeout) or the worker stops waiting
//     for it (ErrShutdown), as context.Cause says;
//   - ships what the handler writes to Job.Stdout and Job.Stderr as log
//     chunks: consecutive writes to a stream share a chunk (at most 64
//     KiB, never splitting a UTF-8 character), seq counts a job attempt's
//     chunks from 1 across both streams, and the buffer is sent
//     Options.LogFlushInterval (default 100ms) after it fills, or at once
//     when it holds 64 KiB, and always before the job's completion;
//   - reports the completion: completions within Options.BatchWindow share
//     one request, sent early when no job is left running, and at once
//     while every slot is taken (the lease loop waits for a slot, and the
//     report, which asks for as many leases as it frees slots, is what
//     brings the next jobs; reports sent at once still batch what ends
//     while one is in flight). Up to three reports are in flight at once:
//     a second and a third leave only while 32 completions or more wait
//     behind the ones on the server (reportsInFlight). CommandHandler's
//     completions carry the command's measured usage (CPU user and system,
//     peak RSS, from the job's cgroup or rusage: package runner) as
//     Completion.Usage; other handlers' carry none. A handler that
//     returns Snooze(d) (a command: exit code 75 with the delay in
//     FAIRWAY_SNOOZE_FILE) reports the outcome snoozed with d, checked
//     first: a delay out of (0, MaxSnooze] is reported as a failure.
//
// Every heartbeat_interval_ms (as the server said at registration), a
// heartbeat names every attempt the worker holds (running, or done and not
// yet acknowledged). Its answer's cancel list stops those jobs and reports
// them cancelled; its revoked list stops them and reports nothing.
//
// # Failures
//
// Requests that fail without an answer, or with 408, 429 or 5xx, are
// retried with capped exponential back-off and jitter (Options.MinBackoff
// to MaxBackoff, at least Retry-After). A completion is retried until the
// server acknowledges it or refuses it (stale attempt); a request refused
// as a whole is retried one completion at a time so that one bad item
// cannot lose the others. A 404 on any worker call means the server no
// longer knows the worker: it registers again and drops every attempt it
// held, which the server has revoked. A registration or lease refused for
// good (401, 403, 400), or a heartbeat, stops the worker (gracefully) and
// Run returns the error.
//
// # Stopping
//
// When Run's ctx is done, or Stop is called, the worker leases no more,
// waits for the running jobs (up to Options.DrainTimeout, or until Stop's
// ctx is done), cancels the others with ErrShutdown, delivers the
// outstanding completions and output, and deregisters. Jobs it cancelled
// are not reported (unless their handler still succeeds): deregistering
// hands them back to the server for another attempt.
package worker
