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
