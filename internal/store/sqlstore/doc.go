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
// A job is two rows: its hot row in jobs, which state changes write, and
// its spec in job_specs, written once with it (jobs.go; store doc.go,
// "The hot row and its indexes"); every job read joins them.
//
// The batched job inserts and the execution upserts bind only the
// columns a row sets (shapes.go): a column left out takes its DEFAULT,
// which is what binding its zero would have stored, and each parameter
// not bound is a call into the driver saved (on SQLite, one cgo call).
// Rows of one statement share a column list, so the writer groups them by
// the set of columns they write and prepares a statement per set.
//
// A batch is one multi-row statement, a VALUES list of rows × columns
// parameters, cut into chunks of 256, 64, 16, 4 and 1 rows so that few
// statement texts are prepared (batch.go). Where the dialect says so
// (Dialect.ArrayBatches: PostgreSQL), a pipelined batch of
// MinArrayRows rows or more passes instead each column as one array
// parameter and reads its rows with unnest (arrays.go): one statement
// text a shape whatever its rows, a parameter a column. The job inserts
// and their specs, the transitions, the execution upserts, the events and
// the held key claims all do; a guard that misses is still a row fewer
// changed, which the statement's count fails with ErrConflict.
//
// A transition of a job whose insert the Writer still holds (a job
// submitted and leased in one transaction, when a worker waits) is
// applied to the held row instead of an UPDATE of the row just inserted
// (fold.go): each column the transition sets takes the value the UPDATE
// would bind, so the row inserted is the one the INSERT and the UPDATE
// would leave, through the same insert shapes (and arrays). Its guard is
// checked against the held state and attempt; a miss, or a transition
// the row cannot take alone (a held attempt's columns, a value computed
// from the row, a move that may leave a terminal state), flushes the
// insert and runs the UPDATE as before. Nothing changes for recovery: the
// folded row is written by the same transaction's flush, before COMMIT,
// or not at all.
//
// Times are unix microseconds (BIGINT), durations milliseconds, JSON
// documents text: the same encoding in every driver, so a list cursor
// means the same in each.
package sqlstore
