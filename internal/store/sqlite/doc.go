// Package sqlite is the SQLite driver of package store: one file, zero
// set-up, the default store of a single fairway server. It uses
// github.com/mattn/go-sqlite3 (cgo) through database/sql.
//
// # Connections
//
// Open makes three pools on one database file:
//
//   - the writer: exactly one connection, held for the Store's life as a
//     *sql.Conn. Write runs BEGIN IMMEDIATE (the write lock up front),
//     fn, then COMMIT on it. Every fixed statement is prepared on it once at
//     Open; JobTransition's UPDATE is built from the fields it sets and its
//     guards, and each such shape is prepared on first use and cached (up to
//     256 shapes). Statements run with a non-cancellable context: the driver
//     would otherwise start a goroutine per statement; each operation checks
//     its ctx first and Write checks its own before COMMIT.
//   - the readers: a pool (default max(4, GOMAXPROCS)) opened with
//     query_only, each with a per-connection statement cache. In WAL mode
//     readers see the last committed state and never wait for the writer.
//   - the checkpointer: one connection that runs PRAGMA
//     wal_checkpoint(PASSIVE) in the background (at most every 100 ms, after
//     commits), so that a commit pays for its WAL fsync and never for a
//     checkpoint. The writer keeps SQLite's automatic checkpoint as a
//     backstop at 16384 pages.
//
// Every connection opens the file through the fairway-walbuf VFS (URI
// parameter vfs, dsn), a shim over SQLite's unix VFS (walbuf.c) that
// writes a commit's WAL frames with one pwrite instead of two per frame
// (a header, then the page), and otherwise passes every call through; it
// writes its buffer out before SQLite reads, syncs or sizes the WAL, right
// after a commit's last frame, and before any wal-index call of the same
// connection, so what a reader, a checkpoint, the syncer or a crash sees
// is what SQLite wrote (walbuf.go has the argument).
//
// A database opened without a WAL file gets one before the writer opens
// it: walPreallocBytes of zeros (about 64 MiB, the size the WAL reaches
// under continuous writes before it restarts), written and synced, so that
// the commits of the WAL's first pass overwrite blocks the file has and
// their fdatasync writes no new size; SQLite reads a log of zeros as empty
// (walprealloc.go has the argument).
//
// The writer's prepared statements (transitions, batched inserts) run
// through boundexec.c: one cgo call binds every argument from one
// pointer-free buffer (SQLITE_STATIC), steps and resets the statement,
// so SQLite holds no pointer into Go memory after it returns; go-sqlite3
// would cross into C once per argument. It uses go-sqlite3's own
// statement, found and checked by its SQL text and parameter count, or
// leaves the statement to the driver (boundexec.go).
//
// Pragmas: journal_mode=WAL, synchronous=NORMAL (COMMIT appends to the WAL
// without an fsync) with the store's own syncer fsyncing the WAL behind the
// writer: Write returns, and WriteDeferred's channel reports, only once an
// fsync begun after the commit has returned, so acknowledged = durable,
// also across power loss, as with synchronous=FULL; see durable.go.
// foreign_keys=ON, busy_timeout=10s (another process holding the lock), a
// 32 MiB page cache per reader and 4 MiB for the writer (below). The
// writer has temp_store=MEMORY: a
// statement that changes many rows inside a transaction that already
// wrote (the applier's multi-row inserts and batched transitions), and a
// SAVEPOINT, keep the pages they change as they were, for a
// statement-level rollback, and with the default temp_store that journal
// spilled past 64 KiB into a temporary file opened, written, unlinked and
// closed inside the transaction (bench steady on the server, strace: 268
// such files in 5 s, about 13 system calls each, on one commit in 13;
// none after). It is never read after a crash: durability is unchanged. Every connection is opened in SQLite's
// multi-thread mode (no mutex of its own) and SQLite keeps no memory
// statistics, whose global mutex every allocation would take: database/sql
// never uses a connection from two goroutines at once (mutexes.go).
//
// Page size: a file the store creates has 4 KiB pages (pageSize; set
// before the switch to WAL writes the first page). A commit's fsync
// covers one WAL frame, one page, for every page the commit changed: a
// steady commit changes a page or so in each of about 11 B-trees (the
// job's row and its indexes, its spec), so the page size sets how many
// bytes each acknowledged write waits for. On 2026-11-27's machine 4 KiB
// pages gave 1.10-1.15x the steady throughput of 8 KiB, 0.86x the
// server's latency p99, and the same drain; on 2026-11-25's, where a
// system call was dear (two per WAL frame, before the shim), 8 KiB had drained 17-56% more
// jobs per second (docs/benchmarks.md has both). A file that exists keeps
// the page size it has; VACUUM converts it (docs/operations.md).
//
// # The writer's page cache
//
// When an insert splits a B-tree page, SQLite (balance_nonroot) puts the
// new pages in page-number order by swapping their numbers through a
// temporary one, the page at the 1 GiB lock byte (page 262,145 with 4 KiB
// pages). Its page cache then holds a key far past the end of the file,
// and the COMMIT that follows (pager_end_transaction truncating the
// cache to the file's size) walks the whole cache, every page's header,
// instead of the few slots past the end. `perf probe` on
// pcache1TruncateUnsafe showed that walk after most commits of a drain,
// over 3,700 pages with a 32 MiB cache (the whole 15 MB file), and 2-5%
// of the process's CPU in it. The walk costs what the cache holds, so the
// writer's cache is 4 MiB (1,024 pages): what it touches is the paths to
// the pages its rows go to, the right edges of time-ordered indexes and
// the rows of jobs in flight. A smaller cache read few more pages (pread
// calls in a 50,000-job drain: 17,000 with 32 MiB, 21,000-23,000 with 1
// to 8 MiB, most of them the checkpointer's and the readers'). Readers
// keep 32 MiB: they never write, so they never walk.
//
// # CHECK constraints
//
// The hot tables' checks are comparisons (state = 'blocked' OR state =
// 'pending' ...), not IN lists (migration 0028). SQLite evaluates `x IN
// (<three constants or more>)` by building an ephemeral B-tree of the
// constants, with its own page cache, and inserting each constant, every
// time the check runs: at every INSERT, and at every UPDATE that writes
// the column. A drained job paid for several (its insert checks state,
// final_state and attempt_outcome; its lease state; its finish all
// three); `perf probe` counted four page caches created and destroyed a
// job. The comparisons refuse exactly what the lists refused (a NULL
// passes both). TestHotChecksBuildNoTableOfConstants reads the programs
// (EXPLAIN) of the hot statements and fails on an OpenEphemeral.
//
// SQLite cannot change a CHECK with ALTER TABLE; migration 0028 edits the
// tables' definitions in sqlite_schema under writable_schema, the way
// SQLite's documentation allows for a change every existing row already
// satisfies, instead of rebuilding the jobs table. It is one transaction:
// a definition that did not parse would fail it and roll it back.
//
// A writer operation that fails with a constraint the store reports as a
// sentinel (duplicate key, missing job) is undone by SQLite's
// statement-level rollback; operations of several statements (a
// multi-chunk log append, a multi-event append, a deletion of finished
// jobs) run inside a SAVEPOINT, so each is
// all-or-nothing while the batch goes on. A keyed insert is two statements
// and no savepoint: the claim, which claims only if no job has the id
// (package sqlstore, keyed.go), then the insert, which under the write
// lock cannot find the id taken; JobInsertBatched holds the keyed row for
// the multi-row insert once its claim is made. Any other error marks the transaction broken: later operations
// fail and Write rolls back (SQLite may already have rolled back on its own
// after I/O errors; Write also checks that it is still in a transaction
// before COMMIT).
//
// # Queued writes: the transaction off the caller's goroutine
//
// The server's dispatcher is one goroutine, and measured under load two
// thirds of its time went into SQLite executing the statements of its own
// transactions: the statements, not the fsync (already behind the writer,
// durable.go), made it the bottleneck, while the second core idled. So
// WriteDeferred does not run the transaction on the caller's goroutine
// when it need not (package queued, shared with PostgreSQL since; the
// driver's part is queue.go):
//
//  1. fn runs on a recording Writer, with no transaction open. Every
//     operation whose contract lets a failure surface at the commit —
//     JobInsertBatched without an idempotency key, JobInsertFreeKey
//     (whose claim fails the transaction if the key is held: store
//     doc.go, "Keyed inserts on the deferred path"), JobTransitionBatched,
//     ExecutionUpsertMany, EventAppend, WorkerUpsert, ScheduleUpsert,
//     LaneStateSet — is checked at once (ErrInvalid answers at once, as
//     before) and recorded with a copy of its arguments.
//  2. If fn returns nil with only such operations, the recorded batch is
//     queued and WriteDeferred returns its durable channel at once. The
//     applier goroutine takes every queued batch, runs their operations in
//     order in one BEGIN IMMEDIATE ... COMMIT on the writer connection,
//     registers the commit with the syncer, and the syncer reports each
//     batch durable after an fsync begun after that commit.
//  3. The first operation that must answer (JobInsert, JobInsertBatched
//     with an idempotency key — the dispatcher's one-job keyed submit
//     when nothing is in flight, store doc.go, "Claims in place" —,
//     JobTransition, deletions, purges, log appends,
//     result updates, key and webhook changes) turns the Write direct: it
//     waits until the applier has committed everything queued, begins the
//     transaction, replays what this Write recorded so far, and runs the
//     rest on the writer connection as before.
//
// At most one batch waits for the applier (a second WriteDeferred waits
// for the applier to take the first). Ready tells the caller when to hand
// over its next batch: when none waits and no fsync runs. So a caller
// with work in flight forms batch n+1 while the applier runs batch n and
// the disk syncs batch n-1, and while the disk works it gathers commands
// whose answers would wait for the next fsync anyway, in one transaction
// rather than many small ones — when commands do arrive meanwhile. The
// store also says when it would be ready but for the fsync
// (store.SyncGathering, ReadyUnlessSyncing), and a dispatcher whose recent
// waits for the fsync gathered less than one command each on average hands
// its batch over then (package dispatch, gather.go): in a drain the
// workers' reports are all on their way already, and waiting only kept
// the dispatcher's step and the next transaction behind the fsync.
// Ready and Resume are store.Queueing's: a
// wrapper of this store that hides them (as instance.OpenedStore did
// until 2026-11-26) leaves the dispatcher forming each batch only once
// the previous one is durable, so that step, transaction and fsync run
// one after the other (an execution trace of an embedded drain showed
// the applier idle 41% of the time and a worker's report waiting a
// median 4.9 ms in the dispatcher's queue; 2.1 ms between
// transactions), and never resuming the store after a failed queued
// transaction.
//
// What each guarantee rests on:
//
//   - Acknowledged = durable: unchanged. A batch's channel says nil only
//     after the transaction holding it committed and an fsync begun after
//     that commit returned; the dispatcher answers nobody and lets no
//     lease leave before.
//   - Order: batches commit in the order of their WriteDeferred calls (one
//     queue, one applier; a direct Write starts only on an empty queue),
//     and the syncer reports in commit order.
//   - Atomicity: a batch is applied whole inside one transaction (several
//     batches may share it, all or nothing together).
//   - Fencing: the same guarded statements run, only later. A guard that
//     misses, or any other failure of the applier's transaction, rolls it
//     back; each of its batches' channels, and every later one's, gets the
//     error, and the store refuses writes: the caller's state had run ahead
//     of the database. The caller rebuilds its state from what the database
//     holds and calls Resume (the dispatcher does; it did the same when the
//     miss surfaced inside its own transaction). Nothing of the failed
//     transaction or of any later one was acknowledged.
//   - Reads: every read first waits until the applier has committed what
//     was queued when the read began (readBarrier), so a read sees every
//     Write whose WriteDeferred returned, as store.Store promises.
//   - Crash: nothing new is kept on disk. A crash loses batches that were
//     queued, or committed but not yet fsync'd; none was acknowledged, and
//     none of their leases left the server. Restart opens the database and
//     rebuilds from it exactly as before: there is no second log to replay.
//
// # Schema
//
// Migrations are the files migrations/NNNN_name.sql, embedded in the
// binary and applied in order at Open, each in its own IMMEDIATE
// transaction that first re-reads schema_migrations (version, name,
// applied_at), so two processes opening one new file apply each once. A
// database whose version is above the binary's is refused
// (ErrSchemaTooNew). All tables are STRICT. Times are INTEGER unix
// microseconds (UTC), NULL when unset; durations are INTEGER milliseconds
// (*_ms); JSON is TEXT; booleans are INTEGER 0/1.
//
//	jobs              one row per job: what identifies and places it, state,
//	                  attempt (fencing token), latest attempt's bookkeeping.
//	                  PRIMARY KEY id; indexes (created_at, id),
//	                  (tenant, created_at, id) for listing newest first;
//	                  (created_at, id) where final_state is NULL for the
//	                  unfinished scan; (final_state, created_at, id) and
//	                  (tenant, final_state, created_at, id) where
//	                  final_state is set, for listing finished jobs by
//	                  state; (schedule_id, created_at) where schedule_id is
//	                  set; finished_at where set, for retention's
//	                  oldest-first chunks. No index holds a column that a
//	                  lease or a start changes (store doc.go, "The hot row
//	                  and its indexes"). state and final_state are CHECKed.
//	job_specs         one row per job, written with it: its spec (command,
//	                  env, payload, labels, retry policy, depends_on, tags,
//	                  ...), which no state change writes (store doc.go, "The
//	                  hot row and its indexes"). PRIMARY KEY job_id, FK jobs
//	                  ON DELETE CASCADE; a rowid table.
//	idempotency_keys  (tenant, key) PRIMARY KEY -> job_id, created_at; a claim
//	                  older than the window is overwritten by an upsert
//	                  ... ON CONFLICT DO UPDATE ... WHERE created_at <= cutoff.
//	                  No FK: a claim outlives its job (retention).
//	unique_claims     (tenant, unique_hash) PRIMARY KEY -> job_id, created_at;
//	                  the last job that claimed a unique rule's hash. FK jobs
//	                  ON DELETE CASCADE (index on job_id); job_specs.unique_rule
//	                  keeps the rule as JSON (store doc, "Unique jobs").
//	executions        PRIMARY KEY (job_id, attempt), FK jobs ON DELETE
//	                  CASCADE; outcome NULL while the attempt runs; index on
//	                  finished_at for summaries. lease_event_id,
//	                  start_event_id (start_event_at), end_event_id: the
//	                  attempt's events it holds (package store, "Attempt
//	                  history in the execution row"), each with a partial
//	                  index for the audit feed. The job row holds the live
//	                  attempt's (live_lease_event_id, leased_at,
//	                  live_start_event_id, start_event_at: no index, so
//	                  a lease or start writes none; store doc, "The hot
//	                  row and its indexes"); the write that finishes the
//	                  job moves them to lease_event_id and start_event_id
//	                  (partial indexes jobs_live_events, jobs_start_event).
//	                  A terminal job's row may hold its last attempt
//	                  instead of an execution row (attempt_outcome set,
//	                  attempt_* columns, end_event_id; partial indexes
//	                  jobs_start_event, jobs_end_event; a start reported
//	                  with the completion one id before the outcome is
//	                  found through jobs_end_event, migration 0029; store
//	                  doc, "The finished attempt in the job row").
//	                  The job row also holds its submitted event
//	                  (submit_event_id, submit_actor, submit_priority;
//	                  partial index jobs_submit_event; store doc, "The
//	                  submitted event in the job row").
//	log_chunks        PRIMARY KEY (job_id, attempt, seq), FK jobs ON DELETE
//	                  CASCADE; a resent chunk is ignored (ON CONFLICT DO
//	                  NOTHING).
//	events            id INTEGER PRIMARY KEY AUTOINCREMENT (never reused),
//	                  job_id (NULL for non-job events), attempt, tenant, type,
//	                  at, actor, detail JSON; indexes (job_id, id),
//	                  (tenant, id). No FK: the audit trail outlives jobs;
//	                  events_retention deletes it oldest id first. Ids also
//	                  number the synthesised attempt and submitted events:
//	                  the writer raises sqlite_sequence past them.
//	workers           PRIMARY KEY id; types/labels JSON, slots, resources,
//	                  state, registered_at, last_seen_at.
//	schedules         PRIMARY KEY id; spec, timezone, template JSON,
//	                  overlap, catch-up window, jitter, start/end, enabled
//	                  (paused when 0) with a note, buffered slots JSON,
//	                  next/last run; index on
//	                  next_run_at where enabled.
//	api_keys          PRIMARY KEY key_hash; tenant, role (CHECKed), name.
//
// migrations/0001_init.sql has every column.
package sqlite
