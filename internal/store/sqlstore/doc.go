// Package sqlstore is the SQL the store drivers share: every read of
// store.Reader and every operation of store.Writer, written once over
// database/sql, with a Dialect for what differs (placeholders, constraint
// errors, JSON array filters, whether a failed statement spoils the
// transaction, how new event ids are read back).
//
// A driver (packages sqlite and postgres) opens the connections, applies
// its migrations, and owns the write transaction: it begins it on the
// writer connection Core.WConn, runs the caller's function with a Writer
// from NewWriter, and commits or rolls back. The Writer's operations each
// report their own outcome (store.ErrConflict, ErrNotFound, ...) without
// spoiling the transaction: guarded UPDATEs and INSERT ... ON CONFLICT
// report through the rows they changed, and an operation of several
// statements, or one that may break a constraint on a database where that
// aborts the transaction, runs in a savepoint. A keyed insert needs none:
// its claim checks the job id in the same statement (keyed.go).
//
// Times are unix microseconds (BIGINT), durations milliseconds, JSON
// documents text: the same encoding in every driver, so a list cursor
// means the same in each.
package sqlstore
