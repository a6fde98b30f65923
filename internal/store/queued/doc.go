// Package queued runs a store's write transactions off the caller's
// goroutine: the queued writes that packages sqlite and postgres share.
//
// A driver's WriteDeferred (through Applier.Write) runs the caller's
// function on a Recorder, a store.Writer with no transaction open. Every
// operation whose contract lets a failure surface at the commit —
// JobInsertBatched without an idempotency key or unique rule,
// JobInsertFreeKey without a unique rule (store doc.go, "Keyed inserts on
// the deferred path"), JobTransitionBatched,
// ExecutionUpsertMany, EventAppend, WorkerUpsert — is checked at once (store.ErrInvalid still answers at
// once) and recorded with a copy of its arguments. If the function returns
// with only such operations, the driver hands them to the Applier and
// returns the Write's durable channel at once. The Applier's goroutine
// takes every Write queued so far and has the driver run their operations,
// in order, in one transaction (Apply); the driver reports each Write's
// channel once the commit is durable (SQLite: after an fsync begun after
// it; PostgreSQL: when COMMIT returns).
//
// The first operation that must answer (JobInsert, JobInsertBatched with
// an idempotency key, JobTransition, deletions, purges, logs, result updates,
// keys, webhooks) turns the Write direct: Applier.Write waits until the
// Applier has committed everything queued (Drain), has the driver begin a
// transaction on the caller's goroutine (a Direct), and the Recorder
// replays what it recorded into it and runs the rest there; the Direct's
// End commits it and returns its durable channel.
//
// At most one Write waits for the Applier; Ready (see Readiness) tells the
// caller when to hand over the next one, so that the caller forms batch
// n+1 while the store runs batch n. The caller finds Ready and Resume
// through store.Queueing: whatever wraps a driver's store on the way to
// the dispatcher must keep them (instance.OpenedStore does). Without
// Ready the dispatcher forms batch n+1 only once batch n is durable, and
// the drain becomes a chain: step, transaction, fsync, answer, one after
// the other; without Resume a failed queued transaction leaves the store
// refusing writes until restart.
//
// A transaction of the Applier that fails (a fenced guard that misses: the
// caller's state ran ahead of the database; a fence that refuses; the
// database gone) fails its Writes' channels and every later one's, and the
// Applier refuses writes (Failed) until the caller, having rebuilt its
// state from the database, calls Resume. Nothing of the failed
// transaction or of a later one was acknowledged.
//
// Reads wait for what was queued when they began (Barrier): a read sees
// every Write whose WriteDeferred returned.
//
// Start runs one transaction at a time (SQLite: one writer).
// StartConcurrent (PostgreSQL) runs up to two, each on a connection of
// its own, and commits them in order; a batch that touches a row a batch
// in flight touches waits for it (the Recorder notes which jobs, workers
// and idempotency keys each Write inserts or changes, for this Applier
// only), and a failure fails every
// batch after it. The rules and why they suffice are in package
// postgres's doc.go ("Concurrent transactions"). Its Ready is open only
// while a slot is free as well: with both taken, a batch handed over
// would wait in the queue for a slot while the commands that arrive
// meanwhile wait for the batch after it; held back, the caller gathers
// them into this one (bench steady on PostgreSQL, alternating pairs:
// completed/s 1.14× served, 1.07× embedded, at the median; the drain
// 1.01×).
//
// The design and its crash argument are in package sqlite's doc.go
// ("Queued writes"), where it was first built; PostgreSQL's part is in
// package postgres's doc.go.
package queued
