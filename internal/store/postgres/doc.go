// Package postgres is the PostgreSQL store: the same contract as SQLite's
// (both pass internal/store/storetest), for several server instances on
// one database.
//
// Connections: two writer connections, held for the store's life, on
// which the applier runs up to two transactions at once (see Concurrent
// transactions; a direct Write runs on the first, once the applier is
// idle; the dispatcher is the one writer), and a read pool (8 connections
// by default) that never waits for the writers. All use pgx through
// database/sql, so that the SQL is package sqlstore's, shared with
// SQLite; the dialect numbers the
// placeholders, reads new event ids with RETURNING (BIGSERIAL hands the
// rows of one INSERT increasing ids), and, because a failed statement
// aborts a PostgreSQL transaction, runs every operation that may break a
// constraint and reports it as its outcome (a log chunk of a job that is
// gone) in a savepoint, so that its sentinel error leaves the transaction
// usable.
//
// Pipelining: a transaction of the dispatcher costs one round trip. BEGIN,
// the fence, the batched job inserts and transitions, the executions, the
// events and COMMIT are queued (sqlstore.Pipeline) and sent together as a
// pgx.Batch, which pgx writes in pipeline mode: every statement, one Sync,
// then the results. The checks that used to read an answer run in the
// database and fail the statement instead (migration 0003): a batched
// transition's UPDATE ends in fairway_expect_rows(count, want), SQLSTATE
// FWCON, read as store.ErrConflict; a job insert has no ON CONFLICT, so a
// taken id is a unique violation, store.ErrExists; package leader's fence
// is fairway_fence(holder, term), SQLSTATE FWDEP, read as ErrDeposed. After
// a failed statement the database skips every later one up to the Sync, so
// the queued COMMIT never runs and Write rolls back. An operation that
// needs an answer (a single transition, a log append) sends the queue
// first and runs at once; the statements keep their order. A keyed
// insert is one statement, a data-modifying CTE (claim the key if the
// id is free and the key free or expired; insert the job if the claim
// returned a row; count the rows inserted), queued at the end of the
// queue and sent with it: one round trip instead of the five of a
// savepoint, claim, insert and release after the queue. Only a count of 0
// costs a second query, which tells a duplicate from a taken id
// (package sqlstore, keyed.go). Measured with fairway bench on this machine's PostgreSQL:
// drain 3.9-4.3k to 5.4-5.6k jobs/s, latency p99 5.8-6.6 to 4.2 ms.
// The dispatcher no longer uses that statement for a key it knows free
// (store doc.go, "Keyed inserts on the deferred path"): JobInsertFreeKey
// holds the claim with the row, and the claims of a transaction are one
// multi-row INSERT ... ON CONFLICT DO UPDATE (expired claims only) ending
// in fairway_expect_rows, queued before the jobs' insert; a held key is
// FWCON, which that statement names store.ErrKeyHeld (QueueCheck), and
// fails the transaction. A keyed Write is then queued like any
// other instead of waiting for the applier (Drain) and its own round trips.
//
// Columns as arrays (sqlstore.Dialect.ArrayBatches): the queued batches
// of 6 rows or more (sqlstore.MinArrayRows) pass each column as one
// array parameter, the rows read back with unnest, instead of a VALUES
// list of rows × columns parameters cut into chunks of 256, 64, 16, 4
// and 1 rows:
//
//	WITH changed AS (UPDATE jobs SET updated_at = v.u, state = v.c0, ...
//		FROM unnest($1::bigint[], $2::text[], ..., $9::text[], $10::bigint[], $11::text[])
//		AS v(u, c0, ..., id, att, s0)
//		WHERE jobs.id = v.id AND jobs.attempt = v.att AND (state || '') IN (v.s0)
//		RETURNING 1) SELECT fairway_expect_rows(count(*), $12) FROM changed
//
// pgx encodes a parameter a column instead of one a value, the server
// binds as few, and a shape is one prepared statement whatever its rows.
// Smaller batches keep their VALUES: unnest is a function a column, each
// with its own tuplestore, which costs more to start than it saves under
// 6 rows (the figures in package sqlstore, arrays.go). Measured with
// fairway bench drain --jobs 50000, three alternating pairs each against
// the VALUES lists: the database's CPU a drained job 0.87-0.92× (server)
// and 0.83-0.92× (embedded), the process's 0.89-0.97× and 0.91-0.99×,
// work jobs/s 1.04-1.07× and 1.05-1.26×; bench steady, whose
// transactions hold 2 or 3 jobs, unchanged (1.00×).
//
// Queued writes: as on SQLite (package queued; the design and its crash
// argument are in package sqlite's doc.go), WriteDeferred records the
// operations whose failure may surface at the commit and returns at once;
// an applier runs the recorded Writes, several at a time, in one
// pipelined transaction, and reports each Write's channel when COMMIT
// has returned. So the dispatcher forms its next batch during the round
// trip, where it used to wait for it. An
// operation that must answer makes the Write direct: it waits until the
// applier has committed what is queued and runs on the caller's
// goroutine. Every read waits for what was queued before it began. A
// failed transaction of the applier (a guard that misses, the fence of a
// deposed leader, the connection lost) fails its Writes' channels and
// every later one's, and the store refuses writes until the dispatcher
// has rebuilt its state from the database and called Resume; nothing of
// it, or after it, was acknowledged. Fencing is unchanged: the applier's
// transactions carry the fence like any other.
//
// Concurrent transactions (queued.StartConcurrent): the applier runs
// batch n+1 on the second writer connection while batch n's statements
// run or it commits, so that the database works on two transactions at
// once (in a drain the applier's transactions were nearly all statement
// time, 5 ms for about 30 jobs, while the machine's two cores stood a
// third idle). Four rules keep this equal to running the batches one
// after another:
//
//   - Commit order. n+1's COMMIT is sent only once n's has returned, and
//     not at all if n failed. The database therefore always holds a
//     prefix of the dispatcher's batches, as with one connection: an
//     acknowledged batch committed, and so did every batch before it; a
//     crash or a cut connection loses only batches nobody was answered
//     for, and the dispatcher rebuilds from that prefix.
//   - Rows in flight. A batch that inserts or changes a row that a batch
//     in flight inserts or changes (a job, a job's executions, a worker)
//     waits for that batch to finish before its statements run. Under
//     READ COMMITTED a guarded UPDATE compares the last committed version
//     of a row and skips it if the guard fails, without waiting for the
//     uncommitted change (row locks are waited for only by rows that
//     match), and a row inserted by a transaction in flight is invisible;
//     the priority workload failed its guards that way before this rule.
//     Batches that touch disjoint rows, most of a drain's, never wait for
//     each other's row locks, so they cannot deadlock.
//   - Event ids. A transaction that runs while another is in flight holds
//     its events' INSERT back (the pipeline's holdEvents) and sends it
//     with its COMMIT, after the one before has committed: event ids are
//     drawn in commit order, so a reader paging events by id never sees a
//     later id commit before an earlier one. The raise of the sequence
//     that numbers events appended without ids (EventRaise: read the
//     largest id, then setval) is held with them: run early, it missed
//     the ids of the transaction in flight and, not being atomic, could
//     set the sequence back under an id that transaction had just drawn,
//     a duplicate key on events_pkey at the commit (a flake of
//     TestQueuedWritesRunConcurrentlyAndInOrder under load). A
//     transaction with nothing in flight before it sends everything with
//     its COMMIT in one round trip, as before.
//   - The fence. fairway_fence takes a transaction-level advisory lock
//     shared (migration 0022), which two fenced transactions share
//     without waiting; a campaign, whose UPDATE changes term, takes it
//     exclusively in a trigger and so still waits for every fenced
//     transaction; a renewal takes none and waits for none (the argument
//     is in package leader's doc). Each connection counts its commits in
//     its own leader_terms row (slot), which no two transactions in
//     flight share (migration 0008, which keeps the previous release's
//     two-argument fence, as slot 0, for a leader still running it
//     during a rollout: it calls the same function, and a campaign of
//     the previous release fires the same trigger).
//
// A failure (a guard, the fence, the connection) fails its batch; the
// batch behind it is rolled back, its COMMIT never sent, and fails with
// it, with everything queued, and the store refuses writes until Resume.
//
// The writer's plans: every statement on the writer connection finds its
// rows by a key (a job's id, an execution's job and attempt, an event's
// id) or by an indexed prefix (retention's finished jobs). pgx prepares
// each statement once, and after five runs PostgreSQL keeps a generic plan
// built from the statistics of that moment; on a jobs table that has grown
// since its last ANALYZE (a fresh database, a burst of submissions before
// autovacuum's next pass) that plan was a hash join over a scan of the
// whole table, or a walk of a state index (since dropped: store doc.go,
// "The hot row and its indexes") past every job in the guarded state, for
// each batched transition: a cost that grew with the
// table, 2 ms a statement at 5,000 jobs. So the writer's session turns
// sequential scans, hash joins and merge joins off (writerPlanSettings;
// the planner then prices them out wherever an index serves, and still
// uses them where none does; JIT is off, since a plan that scans all the
// same then costs more than jit_above_cost and was compiled at every run,
// 0.66 s of CPU for the raise of the events' sequence), and a
// transition's state guard is an
// expression that no index matches, so that the row is found by jobs_pkey
// and the guard checked on it (SQLite's "+state"):
//
//	UPDATE jobs SET ... WHERE id = $1 AND attempt = $2 AND (state || '') IN ($3)
//
// Its plans are generic from a statement's first run (plan_cache_mode =
// force_generic_plan): the batches pass their columns as arrays
// (package sqlstore, arrays.go), whose custom plans the planner prices by
// the arrays' lengths and the generic one at 10 rows, so that a batch of
// fewer rows was planned again at every run (a plan of the writer is the
// same nested loop over jobs_pkey either way; TestTransitionsFindTheirJobByID,
// TestBatchesPassColumnsAsArrays).
//
// The read pool keeps the planner's defaults. Measured with fairway bench
// steady: 1.0k to 2.0k jobs/s, the writer's backend from 81% of a core to
// 60%.
//
// HOT updates: jobs has fillfactor 50 and no index on a column that a
// lease or a start changes (store doc.go, "The hot row and its indexes"),
// so those updates are heap-only: the new row version goes on the same
// page, no index gets an entry. How many fit depends on pruning: the
// versions a page's earlier transactions replaced are removed (and their
// room reused) once no transaction of the database may still see them;
// a long transaction anywhere in the database holds that back, and the
// versions a transaction replaces stay until it commits: a batch that
// leases every job of a page needs room for a new version of each, which
// is why the fillfactor is 50 (a drain of 20,000 jobs: 41% of the leases
// HOT at 70, 91% at 50).
// TestStateUpdatesAreHOT counts them (pg_stat_user_tables.n_tup_hot_upd).
// The leased and started event ids a lease and a start write go to
// live_lease_event_id and live_start_event_id, which no index holds, so
// they are HOT too; the finish moves them to lease_event_id and
// start_event_id (jobs_live_events, jobs_start_event) in its own UPDATE,
// which is not HOT anyway (store doc.go, "The hot row and its indexes").
// That update gives every index whose predicate the finished row meets an
// entry, so the finished row meets as few as the reads allow: a drained
// job's late start is found through jobs_end_event (jobs_start_event
// leaves it out: migration 0024), and a tenant's jobs by creation are
// indexed only while unfinished (jobs_tenant_unfinished, migration 0025;
// a finished job is in jobs_tenant_final). A drained job's finish writes
// seven entries: the key, jobs_final, jobs_tenant_final, jobs_finished,
// jobs_live_events, jobs_end_event and jobs_submit_event.
//
// Durability: synchronous_commit stays on; a Write's channel reports once
// COMMIT has returned, so acknowledged means committed and durable.
//
// Fencing: WithFence runs a statement first in every write transaction.
// Package leader's (fairway_fence) takes an advisory lock shared, which a
// new term takes exclusively before it begins, and requires this
// instance's term to be current: a deposed leader commits nothing (see
// package leader). The store passes the writer connection's slot (0 or 1)
// as the fence's last argument. Measured with fairway bench steady and
// log_min_duration_statement = 0: the fence's execute 149 µs (FOR KEY
// SHARE and an upsert of the witness) against 42 µs, and the COMMIT after
// it 225 µs against 107 µs.
//
// A small batch's jobs and their specs are one statement (package
// sqlstore, queueJobsWithSpecs): the jobs' INSERT a data-modifying CTE of
// the specs'.
//
// The spec without a foreign key: job_specs.job_id referenced jobs
// until migration 0023, which drops that constraint (found by its
// table and the table it references, not by a name) and no other:
// executions, log chunks and unique claims keep theirs, and their
// cascades. PostgreSQL checked it with a trigger at every spec inserted,
// an SPI query, SELECT 1 FROM ONLY jobs WHERE id = $1 FOR KEY SHARE,
// that locked the job's row the same statement had just inserted: a
// tuple lock, which writes WAL and dirties the page, about a twentieth of
// the writer backends' CPU in a profile of a drain. It refused nothing
// the store can do: a spec is inserted only with its job (the keyed
// insert's CTE inserts it only if the job's INSERT returned a row; the
// batched inserts queue the jobs' statement before the specs', and a
// taken id, a unique violation, aborts the transaction; JobInsert
// writes the spec only once the job's row is in, in its savepoint). The
// cascade's work, deleting a job's spec with the job, is retention's
// statement now (Dialect.JobDelete):
//
//	WITH spec AS (DELETE FROM job_specs WHERE job_id = $1) DELETE FROM jobs WHERE id = $1
//
// each row found by its primary key, in one statement, so that a crash,
// a failed statement or a rolled-back savepoint deletes both or neither.
// Two transactions in flight cannot make an orphan either: a spec's
// insert and a delete of the same id meet on job_specs' primary key as
// the job's do on jobs', and wait for each other the same way (and ids
// are not reused). No other statement writes job_specs.
// TestRetentionLeavesNoSpecBehind counts the specs without a job after
// retention, TestOnlyJobSpecsLostItsForeignKey the foreign keys left,
// and the conformance test JobDeleteFinishedTakesTheSpec inserts the
// deleted ids again. Measured with fairway bench, paired against the
// foreign key on a machine shared with another load (the CPU of this
// run's backends, read from /proc, a drained or steady job): drain
// 0.85-1.01x (median 0.99x, five pairs), embedded 0.85-1.05x (0.95x),
// steady embedded 0.77-1.03x (0.95x, four pairs); jobs/s and latency
// (p50 4.1 against 4.2 ms, p99 19.4 against 18.2) within that load's
// noise.
//
// CHECK constraints: PostgreSQL reads a table's checks from their stored
// trees and plans them again in every statement that inserts or updates
// it, whichever columns it sets (ExecConstraints: 12% of the writer's CPU
// in bench steady). The checks of jobs and executions hold their lists as
// one array constant (migration 0022), trees half the size.
//
// Migrations: embedded, versioned SQL files (migrations/NNNN_name.sql),
// recorded in schema_migrations and applied by Open or Migrate in one
// transaction that holds pg_advisory_xact_lock, so that servers starting
// together apply each once. fairway migrate status|up runs them ahead of
// a rollout. The encodings are sqlstore's (times as BIGINT unix
// microseconds, JSON as text), so list cursors mean the same on both
// drivers.
//
// Errors of the connection itself (the database down or unreachable, a
// connection closed or reset under a statement: io.ErrUnexpectedEOF, a
// network error or timeout) are wrapped as store.ErrUnavailable; the
// server answers them 503 with Retry-After, never a 2xx and never a 500.
// A connection that fails while a COMMIT is on its way (or its answer is)
// leaves the outcome unknown: that is store.ErrMaybeApplied, answered 503
// maybe_applied, to be retried only with the same idempotency key.
//
// # Silent networks
//
// A database that stops answering without closing anything (a partition)
// must not hold a writer forever. Every connection is opened by OpenDB
// with a connect timeout, TCP keepalive (probes after 5 s idle) and, on
// Linux, TCP_USER_TIMEOUT (10 s of unacknowledged data); with
// WithStatementTimeout each round trip on a writer connection (a
// transaction's statements, its COMMIT, a ROLLBACK) is bounded on this
// side too. WithLifetime (a leader's term) ends them all when it ends: the
// store turns Broken and both writer sockets are closed, so that a round
// trip in progress fails at once, a statement that runs outside the
// pipeline too (package sqlstore runs those with context.Background, so
// that a cancelled request cannot spoil a batch it shares: no context
// could end them); such a failure is store.ErrUnavailable, or
// store.ErrMaybeApplied for a batch whose COMMIT was sent. Close ends each
// writer session with a bounded Terminate, so that it costs no round trip
// per prepared statement (after the lifetime, the sockets are already
// closed and the database ends the sessions).
package postgres
