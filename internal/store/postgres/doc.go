// Package postgres is the PostgreSQL store: the same contract as SQLite's
// (both pass internal/store/storetest), for several server instances on
// one database.
//
// Connections: one writer connection, held for the store's life, on which
// Write runs its transactions one at a time (a mutex; the dispatcher is the
// one writer), and a read pool (8 connections by default) that never waits
// for the writer. Both use pgx through database/sql, so that the SQL is
// package sqlstore's, shared with SQLite; the dialect numbers the
// placeholders, reads new event ids with RETURNING (BIGSERIAL hands the
// rows of one INSERT increasing ids), and, because a failed statement
// aborts a PostgreSQL transaction, runs every operation that may break a
// constraint (an execution or log chunk of a job that is gone) in a
// savepoint, so that its sentinel error leaves the transaction usable.
// Guarded UPDATEs (fenced transitions) and INSERT ... ON CONFLICT report
// through the rows they changed and cannot fail.
//
// Durability: synchronous_commit stays on; a Write returns once COMMIT has
// returned, so acknowledged means committed and durable (WriteDeferred
// hands back a channel that is already closed).
//
// Fencing: WithFence runs a check first in every write transaction, on
// the writer connection. Package leader's Term.Fence takes the
// leadership row FOR SHARE and requires this instance's term to be
// current: a deposed leader commits nothing (see package leader).
//
// Migrations: embedded, versioned SQL files (migrations/NNNN_name.sql),
// recorded in schema_migrations and applied by Open or Migrate in one
// transaction that holds pg_advisory_xact_lock, so that servers starting
// together apply each once. fairway migrate status|up runs them ahead of
// a rollout. The encodings are sqlstore's (times as BIGINT unix
// microseconds, JSON as text), so list cursors mean the same on both
// drivers.
//
// Errors of the connection itself (the database down or unreachable) are
// wrapped as store.ErrUnavailable; the server answers them 503 with
// Retry-After, never a 2xx.
package postgres
