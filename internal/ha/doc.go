// Package ha runs the job server as one of several instances on one
// PostgreSQL database: active and standby, with one leader fenced by its
// term (package leader).
//
// A Node listens from the start. While it does not lead it is a standby:
// /healthz answers 200, /readyz 503 with role "standby" and the leader's
// address; reads of jobs, logs, events, reports and schedules are answered
// from the database by a read-only server (no dispatcher), but for a job
// list of an unfinished state, which the leader answers from its
// dispatcher's memory (the database keeps no index on an unfinished job's
// state: store doc.go, "The hot row and its indexes"; with no leader the
// read-only server answers it, slower); every other
// request is forwarded to the leader and its answer copied back
// (forward.go), so that clients and workers may talk to any instance;
// with no leader it gets 503 not_leader with Retry-After. A load balancer
// checking /readyz can send traffic to the leader directly. When
// the Node wins a term it opens the store with every write transaction
// fenced by that term, rebuilds the dispatcher's state from the database
// (jobs, leases, workers, schedules: as after a restart) and serves the
// API; /readyz answers 200 with role "leader" and the term. When the term
// ends (the lease could not be renewed, or another instance took it) the
// server stops and the Node is a standby again; nothing it had not
// committed was acknowledged.
//
// The standby's view of the leader is read from the leadership row every
// TTL/3 by a watch (watch.go; with jittered back-off, capped at TTL,
// while the database cannot be reached) and served from memory: /readyz
// never waits for the database, and forwarding does so only when the view
// is stale or names no live leader (it then asks for a read and waits up
// to TTL/3 for it; such reads come at most every TTL/10, and not while
// reads fail), so an instance cut off from the database does not dial it
// for every request: each failed dial may leave a half-open connection
// that the database counts against max_connections until its keepalive.
//
// # Partitions: silence, not just crashes
//
// A leader cut off from the database by silence (packets dropped,
// connections left open) must neither stall the fleet nor fail finished
// work. What bounds it:
//
//   - Step-down. The leader stops leading TTL − SkewAllowance (4/5 of
//     leader_ttl) after it sent its last successful renewal, on its own
//     clock, whatever a renewal in flight does (package leader); the
//     others can take the lease only at TTL after that renewal ran, on the
//     database's clock. /readyz says "standby" from that moment.
//   - Everything the term started ends with it. Requests served under the
//     term run under a context that ends with the term; one that has not
//     reached the dispatcher answers 503 at once. A command already handed
//     to the dispatcher waits for its commit, and every round trip on a
//     term's writer connections is given up when the term ends
//     (postgres.WithLifetime), and within a term bounded by
//     StatementTimeout (2·TTL, at least 5 s): it answers 503 unavailable,
//     or 503 maybe_applied when its COMMIT was sent. Once a writer
//     connection has failed, the term's store fails every write at once
//     (Broken) and the term ends. The database connections also have a
//     connect timeout, TCP keepalive and TCP_USER_TIMEOUT
//     (postgres.OpenDB).
//   - Clients and workers move on. The Go client (and so the CLI and the
//     worker) retries a 503 not_leader or unavailable at once on the next
//     instance, retries a maybe_applied answer or a request timeout when
//     the call is safe to repeat (log appends, reads, submits, which
//     always carry an idempotency key; not a heartbeat, whose list of held
//     attempts a late copy would make stale), and gives each attempt a
//     request timeout (10 s; a long poll its wait plus 5 s) as a
//     backstop; after a failed call the next goes to another instance.
//
// The rule: no worker is declared lost, and no attempt failed, for the
// time the leader could not hear it. A new term counts lease_ttl from its
// own start for every worker and lease it inherits (the rebuild sets each
// worker's last contact to the term's start, whatever the old leader last
// heard); a heartbeat or completion for an attempt that is still the
// worker's is accepted by the new leader as the old one would have,
// because the attempt (the fencing token) is in the database.
//
// The bound: with the defaults (leader_ttl 2 s), a leader cut off at time
// C stops leading by C + 0.8·leader_ttl, and its held requests answer 503
// then; a worker's next call reaches another instance at once, and the
// new leader (elected by about C + leader_ttl + leader_ttl/3) declares it
// lost no earlier than lease_ttl after its term began. Where the leader's
// own answer never comes (its host is silent too), the worker's request
// timeout (10 s; a held heartbeat its wait, lease_ttl/3, plus 5 s) frees
// it. So a lease_ttl of 10 s or more is not outrun by a partition of the
// leader. Measured (internal/e2e, TestABlackholedLeaderStallsNothingAndFailsNothing,
// the matrix of 15 s and 45 s cuts with lease_ttl 10 s and 30 s):
// no lease expired, no worker lost, no job failed; the first lease after
// the cut came after about 2 s, once after 10 s (docs/operations.md).
package ha
