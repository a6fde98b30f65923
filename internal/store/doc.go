// Package store is the durable state of the fairway job server: the types
// it keeps (Job, Execution, LogChunk, Event, Worker, Schedule, APIKey), the
// Store interface every driver implements, and the rules they share.
// Drivers live in subpackages (sqlite; PostgreSQL later) and all pass the
// conformance suite in storetest.
//
// # One writer, group commit
//
// The server has one writer goroutine, the dispatcher. It owns scheduling
// state in memory (the policy engine) and persists every state change
// through Store.Write:
//
//	err := st.Write(ctx, func(w store.Writer) error {
//		for _, req := range batch {
//			req.err = w.JobTransition(ctx, req.params) // per-request outcome
//		}
//		return nil // commit the whole batch
//	})
//	// only now answer the requests in batch
//
// One Write is one transaction and one durable commit (in SQLite, an fsync
// of the WAL), so batching the transitions of many concurrent requests into
// one Write ("group commit") is what makes the writer fast: the fsync is
// paid once per batch, not per request. A request is answered only after
// its Write returned nil: acknowledged means durable.
//
// WriteDeferred goes one step further: it returns at the commit, with a
// channel that reports durability, so the writer can run its next batch
// while the disk works; the caller holds every answer of the batch until
// the channel says the commit is durable.
//
// Inside a Write every operation is all-or-nothing on its own and reports
// its own outcome. ErrConflict, ErrDuplicate, ErrNotFound, ErrExists and
// ErrInvalid concern that operation only: nothing of it was applied, and
// the transaction goes on. Any other error means the transaction cannot
// continue (an I/O error, say); the driver then refuses further operations
// and Write rolls back. An error returned by fn rolls back everything.
// Write calls are serialized; reads never wait for the writer (SQLite: WAL
// and a separate read pool) and see only committed data.
//
// # Fencing
//
// A job's Attempt is its fencing token. The dispatcher increments it at
// every lease and every change of a leased or running job names the attempt
// it expects:
//
//	w.JobTransition(ctx, store.JobTransitionParams{
//		ID: id, ExpectAttempt: 3, FromStates: []store.State{store.StateRunning},
//		At: now, Set: store.JobSet{State: store.Ptr(store.StateSucceeded), ...},
//	})
//
// runs as UPDATE ... WHERE id = ? AND attempt = ? AND state IN (...). If the
// job moved on (a newer attempt, a cancel, an expired lease) the guard
// misses and the operation returns ErrConflict with nothing changed; a
// zombie worker's report can never overwrite its successor's. ExpectAttempt
// AnyAttempt (-1) drops the attempt guard, an empty FromStates the state
// guard. Note that ExpectAttempt's zero value is a real guard (attempt 0:
// never leased).
//
// # Idempotency window
//
// A job submitted with an IdempotencyKey claims (Tenant, IdempotencyKey) in
// a separate claims table, in the same operation as the insert. The claim
// holds for IdempotencyWindow (24 h) after the job's CreatedAt: a second
// JobInsert with the same tenant and key and a CreatedAt inside that window
// stores nothing and returns a *DuplicateError naming the original job (in
// the same batch too, and with concurrent Writes exactly one wins). From
// CreatedAt+window on, the key is free again: the next claim overwrites the
// expired one atomically, so expired keys never block reuse even if
// IdempotencyPurge (which only deletes expired claims to keep the table
// small) never ran. The job row keeps its key as data. A claim outlives
// its job: JobDeleteFinished (retention) leaves it, so a key stays bound
// for its whole window, and IdempotencyHolder names the job that claimed
// it even once the job is gone.
// JobGetByIdempotencyKey(tenant, key, now-IdempotencyWindow) finds the
// holder for a "return the original job" answer.
//
// # Unique jobs
//
// A job with a UniqueRule {By, States, Period} is unique among its
// tenant's jobs that have the same values of the By fields (type, key,
// lane, payload; tenant is always part of it). JobInsert claims the key
// (Tenant, UniqueHash) in the unique_claims table, in the same operation
// as the insert: a row keyed by (tenant, hash), holding the id and
// creation time of the job that claimed it last. No state change ever
// writes that table: whether a claim still binds is decided by the next
// job that claims the key, from the holder's current state and creation
// time, under the new job's rule (UniqueRule.Holds): the holder binds if
// it is in one of the rule's States and, when the rule has a Period, was
// created less than Period before the new job. A job that binds is
// returned as a *UniqueError naming it and nothing is stored (nor the
// new job's idempotency claim); otherwise the new job takes the row over.
// So a job "releases" its claim in the very write that moves it out of
// the rule's states, without that write knowing of it, and a rule costs
// nothing on the hot path: one primary-key insert when the key is free,
// and a read of the claim joined to its holder's row plus an update of
// the claim when it is held. A claim is deleted with its job (ON DELETE
// CASCADE): a job that retention deleted binds nothing.
//
// Atomicity. The take-over is a compare-and-swap on the row's job_id,
// and the first claim an INSERT ... ON CONFLICT DO NOTHING: of two
// transactions that race for one key (two instances that both believe
// they lead, or concurrent Writes), the second waits on the first's row
// lock (PostgreSQL) or on the single writer (SQLite), then sees its
// claim and its job, and reports the duplicate; the loser never commits a
// second claim. The same holds inside one transaction and one batch.
//
// The hash is a SHA-256 over the rule's field names and values,
// length-prefixed, with the payload canonical (JSON object keys sorted,
// numbers as written). The rule itself is kept on the job (jobs.unique_rule
// as JSON) for the API and the UI.
//
// # Ids, times, cursors
//
// Job ids are chosen by the caller; NewID makes ULIDs (26 characters,
// millisecond timestamp then randomness, strictly increasing within a
// process) so ids sort by creation time. Times are stored with microsecond
// precision (drivers truncate) and returned in UTC; the zero time is NULL.
// Durations are stored in milliseconds. JobList pages newest first by
// (CreatedAt, ID) with keyset pagination: the cursor is the last row's
// position, so rows inserted while a client pages are never returned twice
// and rows present when paging began are never skipped. Its format is the
// same for every driver (see JobCursor).
//
// # Schema
//
// Each driver embeds its versioned migrations and applies them at open,
// recording them in schema_migrations; a database migrated by a newer
// binary is refused. The tables are jobs, idempotency_keys, executions (one
// row per attempt), log_chunks, events (the audit trail, append-only, with
// increasing ids), workers, schedules and api_keys; the sqlite package
// documents the columns.
package store
