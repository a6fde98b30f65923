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
// the channel says the commit is durable. A store that queues its
// transactions (store.Queueing, both drivers) also tells the caller when
// to hand over the next batch (Ready), so that the caller forms batch n+1
// while the store runs batch n; whatever wraps a driver's store must keep
// those methods (package queued's doc.go says what is lost without them).
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
// # Submit tokens
//
// A submit token (Job.SubmitToken, api.SubmitTokenHeader) guards one
// client's retries of one submit call, for SubmitTokenWindow (2 min),
// where an idempotency key guards a name for 24 h. The store holds no
// claim for it: the token is a column of the job's spec (job_specs,
// written once with it; a batch's first job holds the token, its i-th
// "token:i", so that its jobs group by submit whatever their tenants),
// and no index holds it. Who answers a copy is the
// dispatcher, the store's one writer, from the tokens of the last window
// it keeps in memory (package dispatch, tokens.go); it learns a token when
// it applies the submit, before the commit, so that a copy is found
// whatever batch it reaches. SubmitTokens(IDFloor(now − window − skew))
// gives them back when the dispatcher rebuilds: a job's id is never older
// than its creation (store.IDGenerator draws ids from the creation time,
// later only when the clock went back), so the range of job_specs' primary
// key from that floor holds every job created in the window, and reading
// it costs the jobs of the last few minutes, not an index entry per job.
//
// Crash argument: a token is known to a dispatcher exactly when its jobs
// are. Its jobs and their token commit in one transaction; a dispatcher
// that learned a token whose batch then failed rebuilds from the store,
// forgetting it with the jobs; a new leader reads back every committed
// token of the window. An answer (first or copy) is given only once its
// batch is durable, and batches become durable in order, so a copy is
// never answered from a submit that is then lost.
//
// # Keyed inserts on the deferred path
//
// A claim that answers (JobInsert, JobInsertBatched) must run before the
// Write returns, so a queueing store (package queued) runs such a Write
// in a transaction of its own, after everything queued before it has
// committed, and on PostgreSQL pays a round trip per job for the answer.
// The dispatcher therefore does not ask the store whether a key is free:
// it knows, and asks only that the claim be made. JobInsertFreeKey claims
// a key its caller has found free with the insert, answers nothing before
// the commit, and fails the whole transaction with ErrKeyHeld (an
// ErrConflict) if the key is held after all (SQLite: the claim statement at once; PostgreSQL: one
// multi-row INSERT ... ON CONFLICT DO UPDATE for every held claim of the
// transaction, taking over expired claims only, whose count the database
// checks, queued with the jobs' insert). So a keyed Write stays deferred,
// and is applied with the other queued Writes in one transaction.
//
// What the dispatcher knows (package dispatch, claims.go), in order: the
// keys inserted earlier in the same submit; the keys its own batches
// claimed (kept in memory until a few dozen batches after the batch that
// claimed them is durable); and the committed holders of every key the
// batch's submits bring, read in one IdempotencyHolders query: by the
// submitting goroutine before it hands its submit to the dispatcher, or,
// for the submits whose read failed or is older than what the memory
// keeps, in one query per batch before its commands run. A key found in any of them is a duplicate,
// answered with its holder (the same answer, 200 and the original job,
// and the same deduplicated event as before), and nothing is written for
// it; a holder that retention deleted is refused as before. The window
// is the same on both sides: the read counts claims created after
// now - IdempotencyWindow, the claim takes over those created at or
// before it.
//
// Claims in place, when idle (ClaimsInPlace: SQLite). Deferring pays
// when other Writes are queued; with none in flight the read is a query
// on a reader connection (whose page cache the last commit emptied)
// before the batch, on the path of the submit's answer, and the Write
// would be its transaction's only one anyway. So a batch that the
// dispatcher begins with no Write in flight inserts a one-job keyed
// submit with JobInsertBatched, whose claim, one statement on the writer
// connection, answers a held key with its holder (a duplicate, or a
// holder retention deleted: refused); its key is not read first, and the
// Write runs direct, on the dispatcher's goroutine. Measured with fairway
// bench latency (one submit every 5 ms, 2 CPUs): the submit's batch, from
// its arrival at the dispatcher to the start of its fsync, a median 160-200
// µs with the read, 150-175 µs in place. Multi-job submits and every
// batch begun while another Write is in flight keep the read and the
// deferred Write. PostgreSQL's claim costs a round trip, as the read
// does: it always defers.
//
// Why the view is right. A claim of this dispatcher leaves its memory
// only once the batch that made it is durable, and some batches more
// (claims.go), which happens between batches: a submit's read is used
// only if it began after the last batch the memory no longer holds was
// durable, so a claim is either in memory or was committed before the
// read began, and the read sees it (reads see every committed
// transaction). Claims of anyone else
// (a former leader's last batches, a second instance that still believes
// it leads) were committed before the read or are in flight.
//
// Why it stays exactly one job per key when the view is wrong. The claim
// is made by the database, in the transaction that inserts the job: if
// another transaction holds or is making the claim, the INSERT ... ON
// CONFLICT waits for it and then sees it (or takes it over once expired,
// or makes it if it rolled back), as JobInsert's claim does; a held key
// fails the statement, the transaction rolls back, and nothing of its
// batch was acknowledged (acknowledged = committed). The queued store
// fails every Write after it too and refuses writes until the dispatcher
// has rebuilt from the store (as after a missed guard), and its claims
// memory is cleared with the rest; the requests of those Writes are
// answered 503 unavailable (package server: ErrKeyHeld, nothing was
// changed), not 500 as a missed guard is, and the client's retry then
// reads the holder and gets the duplicate answer. A crash loses only batches
// nobody was answered for, with their claims; the rebuilt dispatcher
// reads what committed. Two instances on one database: the standby
// forwards submits to the leader, and a deposed leader's transactions
// are fenced by term; while both write, the database's claim above is
// what decides, and the loser's batch fails as described. On PostgreSQL
// the concurrent applier counts a key as a row of its Write, so two
// batches in flight never claim one key at once.
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
// numbers as written). The rule itself is kept with the job's spec
// (job_specs.unique_rule as JSON) for the API and the UI.
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
// # The hot row and its indexes
//
// A job's row changes at every step of its life (lease, start, finish),
// and every index that holds a changed column is written again: on
// PostgreSQL a changed indexed column makes the update non-HOT, so the
// new row version gets an entry in every index of jobs; on SQLite the
// entries of the indexes that hold a changed column are deleted and
// inserted. So no index of jobs holds a column that changes while the
// job is unfinished:
//
//	jobs_pkey            (id)                       every write, JobGet
//	jobs_tenant_created  (tenant, created_at, id)   a tenant's listing, no state filter (SQLite)
//	jobs_tenant_unfinished (tenant, created_at, id) WHERE final_state IS NULL: the same (PostgreSQL, below)
//	jobs_schedule        (schedule_id, created_at)  WHERE schedule_id IS NOT NULL: a schedule's jobs
//	jobs_unfinished      (created_at, id)           WHERE final_state IS NULL: the rebuild at lead
//	jobs_final           (final_state, created_at, id)          WHERE final_state IS NOT NULL
//	jobs_tenant_final    (tenant, final_state, created_at, id)  WHERE final_state IS NOT NULL
//	jobs_finished        (finished_at)              WHERE finished_at IS NOT NULL (retention)
//	jobs_live_events     (lease_event_id)           WHERE lease_event_id IS NOT NULL (held attempts: below)
//	jobs_start_event     (start_event_id)           WHERE start_event_id IS NOT NULL, and not a late start
//	                                                one id before end_event_id (held attempts: below)
//	jobs_end_event       (end_event_id)             WHERE end_event_id IS NOT NULL (below)
//	jobs_submit_event    (submit_event_id)          WHERE submit_event_id IS NOT NULL (events)
//
// Each stays because a query needs it as an index range in its order,
// and no other index gives that range (the drivers' plan tests,
// PlannedQueries, show each plan and fail on an index no plan uses):
// JobList by tenant, by schedule, by terminal state (with and without a
// tenant); the rebuild and the unfinished listing of a server with no
// dispatcher; retention, oldest finished first. There is no index of all
// jobs by (created_at, id): a listing with no state, tenant or schedule
// merges the newest page of jobs_unfinished with the newest page of each
// terminal state in jobs_final (one index range each, 1+3 pages of at
// most limit+1 rows), which costs a read a little wider and saves an
// entry at every insert (on PostgreSQL, at every new row version that is
// not HOT). On PostgreSQL a tenant's listing with no state does the same
// with jobs_tenant_unfinished and jobs_tenant_final (sqlstore's
// Dialect.TenantUnfinished): the finish, not HOT, would otherwise give
// jobs_tenant_created an entry for every finished job. SQLite rewrites
// an index entry only when its columns change, so there the finish never
// writes jobs_tenant_created, and it stays. Of the executions, executions_pkey (job_id, attempt) finds a
// job's attempts, executions_finished (finished_at) lists and summarises
// finished attempts and serves retention, executions_leased (leased_at,
// wait_ms) the wait series, executions_results_due the result uploads
// (only pending ones), and executions_lease_event, _start_event and
// _end_event the audit feed's synthesised events ("Attempt history in the
// execution row"): each branch of the feed reads "ids after n, in order,
// a page" of one column, and no single index answers all three. One on the
// attempt's first id would miss the start or outcome events after n of
// an attempt leased before n; one on its last id gives every attempt with
// an event after n, but not in the order of the page: a feed read from
// its start would read every attempt for each page. One exception: a
// held attempt whose start was reported with its completion, when the
// finishing transition drew the started event's id just before the
// outcome's (every drained job), is found through jobs_end_event, its
// id one below (sqlstore's lateStartSource), so jobs_start_event leaves
// it out and its finish writes one entry fewer; the feed walks both and
// merges them like any other branch. idempotency_keys has
// its primary key (tenant, key) and a created_at index for the purge of
// expired claims; a job submitted without a key writes neither.
//
// final_state is the job's terminal state, NULL while it is unfinished.
// Every statement that writes state writes final_state in the same row
// (JobInsert, and every JobTransition that sets State: final_state =
// state if the state is terminal, else NULL), so the two never disagree:
// a row is written whole or not at all, and no other statement writes
// either column. A job's index entries are thus written twice in its
// life: at insert (id, created, tenant, unfinished) and at the update
// that finishes it (finished_at and final_state change; on PostgreSQL
// every index gets the new version, the partial unfinished index does
// not). Lease and start change no indexed column: on PostgreSQL the
// table has fillfactor 50, so the new version finds room on its page
// and the update is HOT (no index entry at all); on SQLite they write
// the row, and the lease, which assigns final_state = NULL, deletes and
// re-inserts the job's jobs_unfinished entry (SQLite rewrites every index
// that holds an assigned column or names it in its WHERE). Leaving
// final_state out of such a transition measured nothing (2026-11-28:
// embedded drain CPU a job 1.00x, six pairs), so the rule above has no
// exception. An operator's retry of a finished job clears
// final_state and writes the entries once more.
//
// The live attempt's events. The job row holds its live attempt's leased
// and started events ("Attempt history in the execution row"), and a
// finished job's row holds its last attempt's ("The finished attempt in
// the job row"), which the audit feed finds through jobs_live_events
// (lease_event_id) and jobs_start_event (start_event_id). A lease that
// wrote lease_event_id wrote an entry there and, on PostgreSQL, was not
// HOT: every index of jobs got an entry (measured with jobs_live_events
// dropped: 85% of the leases HOT, the database's CPU about 0.83x a
// drained job). So while a job is unfinished its live attempt's ids are
// in columns no index holds, live_lease_event_id and live_start_event_id
// (PostgreSQL migration 0020, SQLite 0026; sqlstore's liveEventCol), and
// lease_event_id and start_event_id are NULL; a finished job has them
// the other way round. The store keeps that by itself, whatever its
// caller sets (JobTransition, JobInsert):
//
//   - a JobSet that sets an id writes it to the live column, or, when the
//     same write makes the job terminal, to the indexed one, and the other
//     column NULL (already NULL while the job is unfinished, so the
//     lease's UPDATE changes no indexed value and stays HOT);
//   - the write that makes the job terminal and sets no id (the attempt
//     the row keeps, "The finished attempt in the job row") moves the
//     live ids to the indexed columns in the same UPDATE
//     (lease_event_id = COALESCE(live_lease_event_id, lease_event_id),
//     live_lease_event_id = NULL; the same for the start): one atomic
//     write, as before;
//   - an attempt that ends without ending the job (a retry, a lost or
//     handed back lease, a preemption, a snooze) or ends it with an
//     execution row gives its ids to that row (executions.lease_event_id,
//     start_event_id, written in the same transaction) or to event rows,
//     and its transition clears the job row's ids (both columns NULL), as
//     before;
//   - an insert of an unfinished job writes its ids to the live columns.
//
// Measured on 2026-11-26 (fairway bench drain --embedded --store, 50,000
// jobs, alternating runs against the commit before on a shared 2-core
// machine, so noisy): 0 of the 100,000 job updates HOT before, 42,000 of
// them after (84% of the leases; the rest found their page full). With a
// CHECKPOINT before each run, 4 pairs: the work phase 1.11x, 1.24x,
// 1.12x, 1.15x the jobs/s, the database's CPU 65 to 56, 69 to 56, 64 to
// 57 and 65 to 54 µs/job (about 0.85x), the machine's 107 to 98, 117 to
// 99, 107 to 99, 108 to 95; without, 9 pairs from 0.78x to 1.35x the
// jobs/s (median 1.05x), the loudest ones the machine's other load. On
// SQLite (the lease writes no index entry either, the finish one more)
// 4 pairs 1.05x, 1.22x, 1.10x, 1.04x the jobs/s, the CPU about 0.95x.
//
// Every read of a job reads COALESCE(live, indexed) as the id, so Job,
// the rebuild (JobListUnfinished) and held attempts are as before. One
// job's events (EventList with JobID) read its row by its key and
// synthesise the live events from the live columns. The audit feed
// (EventList without a job) cannot find them by an index: the leader
// answers them from its dispatcher, which holds every unfinished job
// (below), and asks the store for the rest (EventListParams.NoLive); the
// store alone (a standby with no leader, the store's tests) walks
// jobs_unfinished and filters on the live columns, correct but slower
// with many unfinished jobs, the trade the unfinished listing makes
// (standbys forward a feed read to the leader when there is one, and
// answer it themselves when not, as that listing). EventLastID reads the
// largest live id by the same walk (it runs at lead, beside the rebuild,
// and when events are appended without ids or purged). Event retention
// clears ids in the indexed columns only, as it never cleared a live
// attempt's.
//
// The merged feed. The server reads the dispatcher first: on its
// goroutine, between two commands, it lists the live events of its
// unfinished jobs that match the filters (tenant, types, actor, time
// range; a schedule's feed has none) after the page's id, with W, the
// last event id drawn so far, and answers once that batch is durable
// (as ListUnfinished). Then it reads the store with NoLive and UpToID
// W, merges the two in id order, keeps one copy of an id found in both
// (a job that finished between the two reads: its finishing batch was
// durable before the store's read, so the store has its events, and the
// memory had them too) and cuts the page. Without the bound, a job
// leased between the two reads (id above W, in neither answer's view of
// the memory) could be skipped by a client paging with after_id past
// the store's later ids; with it, every event in the page has an id at
// most W, every event with an id at most W is committed (durable batch)
// and is in one of the two reads (the memory's, if its job was still
// unfinished then; the store's otherwise, since ids are drawn and
// committed in order and a live id leaves the memory only with a
// committed finish), so "events after id n" keeps its promise.
//
// Crash recovery. The move is part of the UPDATE that finishes the job
// (or of the transaction that writes the execution row), so every
// committed state has each id in one place: the live column of an
// unfinished job, the indexed column of a finished one, an execution row
// or an event row. An acknowledged lease is a committed one; a restart
// rebuilds the dispatcher from the committed rows, reading COALESCE(live,
// indexed) (the same Job, lease id and time as before the restart), and
// reads the counter back with the live ids (EventLastID), so the feed
// and one job's events show the same history after it. The migration
// moves running jobs' ids to the live columns in its own transaction.
//
// A drained job (insert, lease, finish) thus writes, on SQLite, 3 job
// index entries at its insert (the key, jobs_tenant_created,
// jobs_unfinished) and its spec's row (job_specs and its key: below),
// none at its lease and 6 at its finish (jobs_unfinished loses it;
// jobs_final, jobs_tenant_final, jobs_finished, jobs_live_events and
// jobs_end_event gain it; jobs_start_event too when its start is an
// event the row holds), and no execution row: the job
// row holds its attempt ("The finished attempt in the job row"). An
// attempt that does not end its job writes an execution row, 5 or 6
// entries (the key, finished, leased and the event ids it has).
//
// The insert itself binds only the columns a job sets (package sqlstore,
// "insert shapes"): a column left out takes its DEFAULT, the value its
// zero would have stored, so the row is the one a full INSERT writes.
// WITHOUT ROWID for jobs on SQLite (one b-tree for the text key instead
// of the table and its key index) was measured and not kept: a scratch
// drain of 40,000 jobs (insert, lease, finish; WAL, synchronous=FULL,
// batches of 500) cost the same CPU per job (32-34 µs) either way, and
// the file grew by 5%. Measured again with today's indexes (the
// scratch test below), WITHOUT ROWID cost 18-26 µs more per job.
//
// The job's spec lives beside the hot row, in job_specs: one row a job,
// keyed by job_id (on SQLite a foreign key to jobs, ON DELETE CASCADE;
// on PostgreSQL no foreign key, below), holding
// the columns that no write after the insert changes and no index of
// jobs holds: name, key, fairness_key, on_demand, labels, command, env,
// dir, payload, idempotency_key, the retry policy (retry_kind, _delay_ms,
// _max_delay_ms, _jitter, retry_on), sla_policy, depends_on, shell,
// output_limit, scheduled_for, tags, result_location, not_preemptible,
// trace_parent, unique_rule and max_snoozes. SQLite rewrites a whole
// record at every UPDATE, so with the spec in the row every lease, start
// and finish copied the command, environment and payload again, and a
// record larger than a page spilled onto overflow pages that each update
// copied too. jobs keeps:
//
//   - every column some write after the insert sets: JobTransition's
//     (setFields: state, final_state, attempt, priority, the times, the
//     lease, the outcome, result, the live and held attempt's columns),
//     and the event ids that event retention clears;
//   - every column an index of jobs holds (tenant, created_at,
//     schedule_id, final_state, finished_at, the event ids);
//   - the small columns that reads of many jobs filter, group or
//     synthesise by without reading a spec: type and lane (JobList's
//     filters, the attempts' reports and series joined to their job,
//     the submitted event), milli_cpu, memory_mb and gpu (usage), and
//     submit_actor (the submitted event and its actor filter).
//
// The insert writes both rows in the same transaction (JobInsert: the
// job's row, then its spec's; the batched inserts: the held jobs' rows,
// then their specs', by shape; PostgreSQL's keyed insert: one statement,
// claim, row and spec), so a job is durable with its spec or not at all,
// and the crash and failover arguments are those of one row: what a
// restart rebuilds from (JobListUnfinished) is the committed rows, each
// read with its spec. Retention's delete of a job deletes its spec in
// the same statement: on SQLite by the foreign key's cascade; on
// PostgreSQL, whose job_specs has no foreign key (migration 0023), by
// the statement itself (sqlstore.Dialect.JobDelete: a data-modifying CTE
// that deletes the spec by its key, then the job by its). So no spec is
// ever without its job, foreign key or not: a spec is written only by a
// statement or transaction that writes its job, and only after the job's
// row is in (a job's INSERT that fails, a taken id, fails the
// transaction or returns before the spec's), and deleted only with it;
// nothing else writes job_specs. A crash keeps or loses a transaction
// whole, and each of these is one, so it leaves no half of either. On
// PostgreSQL the key was checked by a trigger at every spec inserted, a
// query that took the job's new row FOR KEY SHARE (a tuple lock, WAL, a
// dirtied page), about a twentieth of the writer's CPU: package
// postgres, "The spec without a foreign key", has the figures. On SQLite
// the check is a seek in jobs' key, and dropping it, which needs a
// rebuild of the table, measured nothing (inserting 500 jobs a Write:
// 0.92-1.13x CPU, median 1.00x, six pairs). Every read of jobs reads the two
// joined (sqlstore.JobFrom): a LEFT JOIN, so that the plan walks the index
// of jobs the query is made for and finds each spec by its key (on
// PostgreSQL a LATERAL subquery that is not flattened, so that the rebuild
// at lead never reads all of job_specs by a hash join; the plan tests
// check both). No state change reads a spec: the dispatcher holds every
// unfinished job, payload included, from its insert or the rebuild, and
// hands the lease from memory.
//
// The measurement before the move was a scratch Go test on an SQLite
// file (WAL, synchronous=FULL, 8 KiB pages, 50,000 jobs in batches of
// 500: an insert, a transaction of lease UPDATEs and one of finish
// UPDATEs, the statements of `bench drain --embedded`). The narrow rowid
// table saved about 3 µs of CPU a job with the drain's 31-byte payload
// (lease about 1.3 µs and finish about 2.5 µs cheaper, the insert about
// 0.6 µs dearer for its second row), about 6 µs with a 1 KiB payload, 28
// µs with 4 KiB, 75 µs with 8 KiB and 125 µs with 16 KiB: a larger record
// leaves fewer rows a page, so a batch of updates dirties and logs more
// pages, and past a page it spills onto overflow pages that every update
// copies (a lease UPDATE cost 73 µs on the wide row against 14 µs on the
// narrow one at 16 KiB). Both tables WITHOUT ROWID made it 13-21 µs
// dearer than rowid tables. The drain itself, paired alternating runs
// of `fairway bench drain --embedded --jobs 30000 --payload-bytes N`
// (process CPU per job; a shared 2-core machine, so the rates are
// noisy), on SQLite: with 8 KiB payloads CPU 544, 492, 424 µs/job before,
// 426, 420, 328 after (0.78x), the work phase 2.0x the jobs/s (3 pairs,
// machine quieter; 6 earlier pairs on a loaded machine: 0.89x, 1.10x);
// with 4 KiB 0.87x CPU and 1.45x (3 pairs, loaded); with the default
// 30-byte payload 161, 225, 197 before, 158, 213, 230 after (0.98x; 8
// earlier loaded pairs: 1.07x, within their noise). On PostgreSQL a value
// over about 2 KB is kept out of the row already (TOAST) and an update
// copies its pointer, so the narrow row saves less there, and the insert
// writes a second row: with 8 KiB payloads the work phase 1.23x and 0.88x
// the jobs/s, the process's CPU 0.99x and 1.08x, the server's (its ended
// backends) 285 to 264 and 316 to 337 µs/job (2 pairs, quieter; 7 loaded
// pairs: 0.79x); with the default payload 1.17x and 1.34x, process CPU
// 0.86x and 1.00x, server 203 to 181 and 357 to 265 µs/job (2 pairs,
// quieter; 6 loaded pairs: 0.91x, within their noise). job_specs WITHOUT
// ROWID (one b-tree instead of the table and its key's index) measured
// as the rowid table within the noise on SQLite (8 KiB: 0.72x, 0.87x,
// 0.71x CPU; default: 1.25x, 0.90x, 1.06x), and is not kept.
//
// Measured again on the merged code with the machine quiet (load about
// 2, no other work; three alternating pairs each of `fairway bench drain
// --embedded --jobs 30000`, process and machine CPU per job): on SQLite,
// 8 KiB payloads 1.78x the work phase's jobs/s (pairs 1.78, 1.97, 1.68)
// at 0.78x the process's CPU (309 to 239, 325 to 241, 380 to 324
// µs/job); the default payload 1.04x the jobs/s (0.79, 1.12, 1.04) at
// 0.98x the CPU. On PostgreSQL, the default payload 0.98x the jobs/s and
// 1.04x the machine's CPU (287 to 304, 293 to 305, 295 to 302 µs/job: the
// spec's second row and its key's index entry); 8 KiB payloads 1.03x the
// jobs/s, 0.98x the machine's CPU.
//
// What the indexes above give up is an index on state for unfinished
// jobs. Listing them is answered from memory: the leader's dispatcher
// holds every unfinished job (it needs them to schedule), and it lists
// them with the filters, order (newest first by (CreatedAt, ID)), keyset cursor and
// page semantics of JobList; standbys forward such listings to the
// leader. JobList itself still answers every state, so that a server
// without a dispatcher (a standby with no leader) stays correct: an
// unfinished state is found by walking jobs_unfinished newest first and
// filtering, which costs a read of every unfinished job newer than the
// page's last. A listing of terminal states walks jobs_final or
// jobs_tenant_final; a listing of both merges the two answers.
//
// Crash recovery. The store stays the only truth: the dispatcher's
// memory is derived from it, rebuilt at every lead (restart, failover,
// or a failed batch) by JobListUnfinished, which reads jobs_unfinished
// (final_state IS NULL, the same set as state IN UnfinishedStates(),
// by the invariant above). A memory listing is made on the dispatcher's
// goroutine between two commands of a batch and answered only once that
// batch is durable, so it shows a state that every client may observe
// (what it lists is committed, or the batch failed and the answer is an
// error). A listing of unfinished and terminal states reads the memory
// first and the store after: a job that finishes between the two reads
// is in the store's answer (the finishing batch was durable before the
// memory's answer was given), and the merge keeps one copy of a job
// found in both. Dropping the state indexes and adding final_state is
// one migration; its backfill sets final_state from state in the same
// transaction.
// # Attempt history in the execution row
//
// An attempt's own transitions are not event rows. The leased event, the
// started event and the outcome event a worker's completion ends the job
// with (succeeded, failed, cancelled) are held by the rows that already
// record the attempt, and EventList synthesises them; every reader (the
// events API, the audit feed, SSE streams, the UI, the CLI, the Go client)
// goes through EventList and sees the history it saw when they were rows:
// the same ids, types, order, actors, times and details.
//
// Ids. Event ids come from one counter for stored and synthesised events:
// the dispatcher (the one writer) draws every event's id when it records
// the event, in the order it records them, and EventAppend inserts the
// stored ones with those ids (Event.ID set) and stores no row for the
// synthesised ones (Event.Synthesised). At a rebuild (start, failover, a
// failed batch) the dispatcher reads the counter back (EventLastID): the
// largest id in the events table, in the attempt columns of executions
// and of the live jobs (each the end of an index), and in the events'
// sequence (SQLite: sqlite_sequence; PostgreSQL: events_id_seq), which
// retention raises past every id before it deletes any, so the counter
// never falls back. An id is never drawn twice; ids of a batch that never
// committed may be drawn again, but nobody saw them. No statement per
// batch keeps the counter: a PostgreSQL setval on every commit cost 90%
// of the drain (its first version). Events appended without ids (tests,
// tools) are numbered by the sequence after raising it the same way; the
// raise only moves it forward, and on PostgreSQL it runs with the events'
// INSERT after the transaction before has committed (package postgres,
// "Concurrent transactions").
// Batches commit in the order the dispatcher formed them (PostgreSQL's
// concurrent applier included: package postgres, "Concurrent
// transactions"), so ids increase in commit order, for synthesised events
// as for stored ones, and "events after id n" keeps its promise: no event
// is returned twice, none committed before the page is skipped.
//
// Where each one lives:
//
//   - While the attempt is live (leased or running), the job row holds
//     its leased event (live_lease_event_id, leased_at; the worker is
//     worker_id) and, once the worker reported the start, its started
//     event (live_start_event_id, start_event_at; actor "worker:" +
//     worker_id, no detail), in columns no index holds ("The hot row and
//     its indexes"). Both are set by the UPDATE that leases or starts the
//     job, which was written anyway: no row more, no index entry.
//   - When the attempt ends its job and the job row holds it ("The
//     finished attempt in the job row"), the ids stay in the job row,
//     moved by the finishing UPDATE to lease_event_id and start_event_id,
//     and the outcome event is the row's end_event_id.
//   - When the attempt ends with an execution row (a completion, a lost
//     lease, a timeout, a preemption), that row takes the ids over
//     (executions.lease_event_id, start_event_id, start_event_at) and the
//     job row's are cleared, in the same transaction as the transition
//     that ends the attempt. A start reported only with the completion
//     has start_event_at NULL: the event's time is finished_at and its
//     detail {"started_at": started_at}. The outcome event of a
//     worker's completion that ends the job (succeeded, failed, cancelled;
//     actor "worker:" + worker_id, time finished_at, detail class,
//     exit_code and error) is end_event_id.
//   - When the attempt ends with no execution row (a lease withdrawn
//     before it left the server, a lease handed back unrun), its leased
//     and started events become event rows, with their ids, in the
//     transaction that clears them from the job row.
//
// The writer omits a row only when synthesis gives it back exactly: the
// dispatcher builds the event it would have stored, builds the one the
// reader will synthesise from the row it writes (the functions in
// attempt_events.go, which the readers use too), and stores the row
// whenever the two differ, e.g. an outcome reported by "system" (lost
// lease) or a retry (retry_scheduled has run_at, which no row keeps).
// Everything else keeps its row: operator actions (cancel,
// hold, release, reprioritize, retry, extend-sla, lane pause), SLA
// warnings and violations, lease_expired, retry_scheduled, preemption,
// output truncation, schedule events, alert deliveries, workers, keys.
//
// Crash recovery. Every move above is part of one transaction that also
// makes the transition it describes; so, whichever commit a crash falls
// between, each committed event is in exactly one place (an event row, a
// live job row, an execution row, or the row of a job that holds its
// last attempt) and uncommitted ones are nowhere.
// A reader's snapshot sees each event once: a move from the job row to
// the execution row (or to an event row) commits at once, and its id and
// content do not change with it. Events of a batch lost in a crash were
// never acknowledged nor seen, so drawing their ids again is harmless.
// Rebuild reads leased_at and the live ids from the job row, so an attempt
// leased before a restart still ends with the lease time its event shows.
// Rows written before this design (NULL ids) synthesise nothing: their
// events are rows. Deleting a finished job deletes its executions and so
// their synthesised events, as it deletes the job's rows; event retention
// (EventDeleteBefore) clears the ids it passes in execution rows, so that
// history past the event retention goes as before.
//
// The cost read. EventList is a UNION ALL of the events table and five
// synthesising branches (six with the submitted event, below), each filtered and limited on its own: for one job
// by the primary keys of jobs and executions; for the audit feed ("after
// id n", newest first) by one partial index per id column of executions
// (lease, start, end: written once, with the execution row) and one per
// id column of jobs (jobs_live_events, jobs_start_event, jobs_end_event:
// the attempts job rows hold, "The finished attempt in the job row").
// Three index entries per attempt replace four event rows, each with
// three B-tree entries of its own. Live attempts' events are in no index
// ("The hot row and its indexes"): the leader answers them from its
// dispatcher, the store alone by walking jobs_unfinished (two more
// branches, skipped with EventListParams.NoLive).
//
// # The finished attempt in the job row
//
// A drained job's only attempt ends with the job. So when an attempt
// ends and the same transition makes the job terminal (succeeded,
// failed, cancelled), and the attempt has no result upload to make
// (ResultState none), the job row keeps the attempt ("holds" it) and no
// execution row is written: the finishing UPDATE, which was written
// anyway, sets JobSet.HeldAttempt, and the store writes the execution's
// own fields into nullable columns of jobs (attempt_outcome, the marker,
// NULL unless the row holds an attempt; attempt_wait_ms,
// attempt_duration_ms, attempt_sla_met, attempt_sla_violation_pct, the
// usage columns attempt_cpu_user_us ... attempt_usage_source, and
// end_event_id), binding only those that are not NULL (no DEFAULT is
// needed: a row that holds no attempt has them NULL). The fields jobs
// already has with the same meaning are not copied: attempt, worker_id,
// leased_at, started_at, finished_at, exit_code, failure_class,
// last_error (the execution's error), lease_event_id, start_event_id and
// start_event_at; the finishing transition no longer clears the
// attempt's event ids and lease time, it leaves them to the held attempt.
// HeldExecution gives the execution a row holds back from those columns;
// the dispatcher holds an attempt only when that gives back exactly the
// execution it would have written (a job whose earlier attempt left an
// exit code or failure class that this attempt does not overwrite, say,
// or a worker forgotten at a restart, writes its row as before). Every
// other end of an attempt (a retry, a lost lease that requeues, a
// preemption, a snooze, an attempt with a result upload) writes its
// execution row as before.
//
// A job that leaves its terminal state (an operator's retry of a failed
// or cancelled job: any JobTransition to an unfinished state from a
// terminal one, or with no state guard) gives its held attempt up in
// the same operation: the store runs INSERT INTO executions ... SELECT
// ... FROM jobs WHERE id = ? AND attempt_outcome IS NOT NULL (with the
// transition's own guards) before the UPDATE, which clears the held
// columns, the event ids and leased_at. So the history never changes:
// the same execution, with the same event ids, is in one place or the
// other.
//
// Readers. Every reader of executions reads the union of the execution
// rows and the attempts the job rows hold (attempt_outcome IS NOT NULL),
// with the same columns, so they answer as before:
//
//   - a job's executions: both by primary key, the held one last (it is
//     the job's last attempt);
//   - finished attempts newest first: each branch ordered and limited on
//     its own, executions_finished and jobs_finished (a held attempt's
//     finished_at is the job's), then merged;
//   - summaries, usage and the finished series: the union with the time
//     range in both branches, executions_finished and jobs_finished;
//   - the wait series, by leased_at: the held branch walks jobs_finished
//     from the range's start (an attempt is leased before it finishes, so
//     one leased in [since, until) finished at or after since) and keeps
//     those leased in the range. It reads every held attempt finished
//     since the range began, not only those leased in it: for the usual
//     window ending now, the same rows; for an old window, the held
//     attempts finished from then to now (on PostgreSQL, a scan of jobs
//     once that is most of them). No index on leased_at is kept for it
//     (an entry more per job, at every finish);
//   - the audit feed: the job branches of EventList read the held
//     attempt's events like a live attempt's: the leased event through
//     jobs_live_events (lease_event_id: held attempts), the
//     started event through jobs_start_event (start_event_id, partial;
//     time start_event_at, or finished_at with the late start's detail,
//     as the execution branch) and the outcome event through
//     jobs_end_event (end_event_id, partial). For one job, the primary
//     key. EventLastID adds max(end_event_id) and reads max(start_event_id)
//     from jobs_start_event;
//   - retention: deleting a finished job deletes its held attempt with
//     it, as its execution rows; event retention clears the event ids of
//     held attempts up to its last id, as it does in execution rows.
//
// Index entries of a drained job on SQLite, before: 3 at insert, 1 at
// lease (jobs_live_events), 5 at finish (jobs_live_events and
// jobs_unfinished lose it, jobs_final, jobs_tenant_final and
// jobs_finished gain it) and 5 or 6 for its execution row plus the row
// itself (a WITHOUT ROWID B-tree). After: the same 3 and 1, and at finish
// jobs_unfinished loses it, jobs_final, jobs_tenant_final, jobs_finished
// and jobs_end_event gain it (jobs_live_events keeps it), plus
// jobs_start_event when it has a start event. No execution row, and no
// executions index written: seven B-trees fewer dirtied per batch.
// (Since the live attempt's ids moved to unindexed columns, "The hot row
// and its indexes": none at lease, and jobs_live_events gains it at
// finish.)
// Measured on 2026-11-26, alternating pairs against the commit before
// (a shared 2-core machine, so noisy): fairway bench drain --embedded
// --jobs 50000 (SQLite) 8,455 -> 10,632 jobs/s (medians; pairs 1.21,
// 1.52, 1.26), and in a second set 9,049 -> 14,267 (pairs 1.36, 1.30,
// 1.65) with the process's CPU per job 180 -> 142 µs; on PostgreSQL
// (--store, --jobs 30000) 4,534 -> 5,564 jobs/s (pairs 1.25, 1.23, 1.25),
// the process's CPU per job 145 -> 133 µs (the database's not counted).
//
// Crash recovery. The held attempt is written by the UPDATE that finishes
// the job, in the transaction that makes the transition: a job is
// terminal with its last attempt, or unfinished with its attempt live, in
// every committed state, and never both in an execution row and in the
// job row. Giving the attempt up (the INSERT ... SELECT and the UPDATE
// that clears it) is one operation of one transaction: a crash keeps it
// in the job row, or has it in the execution row, never in both or
// neither. Nothing in memory refers to it (finished jobs leave the
// dispatcher), so a rebuild reads nothing new; EventLastID covers the
// held ids, so ids are never drawn twice. Rows written before this design
// hold no attempt (attempt_outcome NULL) and keep their execution rows.
//
// # The submitted event in the job row
//
// A job's submitted event is no event row either: the job row holds it,
// and EventList synthesises it like the attempt events (SubmittedEvent
// and JobSubmittedEvent in attempt_events.go, used by the dispatcher and
// the readers alike). Its id comes from the same counter, drawn when the
// dispatcher records it, as before; its type is submitted, its attempt 0,
// its tenant the job's, its time the job's created_at (the submit's
// time), its actor the submitter (jobs.submit_actor: "open", "embedded",
// "tenant:acme", an API key's name) and its detail the job's type, lane
// and priority at submission. Type and lane never change; the priority
// does, by reprioritize, and that transition stores the priority the job
// was submitted with in jobs.submit_priority, once, in the same UPDATE
// (NULL means "still the job's priority"). The id is jobs.submit_event_id,
// written by the INSERT of the job: a drained job now writes no event row
// at all. The dispatcher builds the event with the row's own reader
// (JobSubmittedEvent), so what it records is what the row gives back,
// byte for byte; a job written before this design has the id column NULL
// and its submitted event stays the row it was.
//
// Indexes. The audit feed ("after id n", either order, with or without
// a tenant, a type, an actor or a time range) walks jobs_submit_event, a
// partial index on submit_event_id: one entry per job, written once by
// the insert, never changed by a state change (so a lease or a start is
// as HOT as before on PostgreSQL), in place of an events row and its
// three B-tree entries (rowid, events_job, events_tenant) and SQLite's
// sqlite_sequence update. The tenant is a filter on that walk, like the
// attempt branches' (no (tenant, submit_event_id) index: it would cost a
// second entry per job); one job's events read the job by its primary
// key. EventLastID includes max(submit_event_id), the end of that index.
//
// Retention. JobDeleteFinished keeps a deleted job's events until event
// retention, as it always did: in the transaction that deletes the job,
// a submitted event the row still holds becomes an event row with its
// id (the move out of the row, as a withdrawn lease's events). The
// dispatcher purges events before jobs, so with an event retention no
// longer than the jobs' the events' purge has cleared the submitted
// event (created_at + retention comes no later than finished_at +
// retention) and the job's deletion moves nothing. Event
// retention (EventDeleteBefore) walks the events table and
// jobs_submit_event together in id order, stops at the first event that
// is not older than the cutoff, deletes the rows up to the last id it
// passed and clears the jobs' submit_event_id up to the same id, in the
// same transaction.
//
// Crash recovery. The submitted event is in the job's row, written by the
// same statement and transaction as the job: a job is committed with its
// submitted event or not at all, and the event's id becomes visible with
// the job. A reprioritize writes submit_priority in the UPDATE that
// changes the priority, so no snapshot shows the new priority without the
// old one kept. A purge moves the event into an event row in the
// transaction that deletes the row, so every snapshot has it exactly once.
// A rebuild reads the counter back through EventLastID, which covers
// jobs_submit_event; ids drawn by a batch that never committed are drawn
// again, as before, and nobody saw them.
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
