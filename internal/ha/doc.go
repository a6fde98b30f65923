// Package ha runs the job server as one of several instances on one
// PostgreSQL database: active and standby, with one leader fenced by its
// term (package leader).
//
// A Node listens from the start. While it does not lead it is a standby:
// /healthz answers 200, /readyz 503 with role "standby" and the leader's
// address; reads of jobs, logs, events, reports and schedules are answered
// from the database by a read-only server (no dispatcher); every other
// request is forwarded to the leader and its answer copied back
// (forward.go), so that clients and workers may talk to any instance;
// with no leader it gets 503 not_leader with Retry-After. A load balancer
// checking /readyz can send traffic to the leader directly. When
// the Node wins a term it opens the store with every write transaction
// fenced by that term, rebuilds the dispatcher's state from the database
// (jobs, leases, workers, schedules: as after a restart) and serves the
// API; /readyz answers 200 with role "leader" and the term. When the term
// ends (the lease could not be renewed, or another instance took it) the
// server stops and the Node is a standby again; its in-flight requests
// fail, and nothing it had not committed was acknowledged.
//
// Workers keep running their jobs through a change of leader: their
// heartbeats and completions carry the attempt (the fencing token), which
// the new leader finds in the database, so it accepts them as the old one
// would have.
package ha
