package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Drivers wrap them with detail; test with errors.Is.
var (
	// ErrNotFound: the row asked for does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a fenced JobTransition's guard missed (stale attempt or
	// unexpected state). Nothing was changed.
	ErrConflict = errors.New("store: conflict")
	// ErrKeyHeld: the idempotency key of a JobInsertFreeKey, found free by
	// its caller, was held when the Write ran or committed (another
	// instance claimed it meanwhile). It is an ErrConflict: nothing was
	// changed, and a retry finds the holder.
	ErrKeyHeld = fmt.Errorf("%w: idempotency key found free is held", ErrConflict)
	// ErrDuplicate: the idempotency key is held by another job created
	// within the window. The error is a *DuplicateError naming that job.
	ErrDuplicate = errors.New("store: duplicate idempotency key")
	// ErrExists: a row with the same primary key exists (job id, API key).
	ErrExists = errors.New("store: already exists")
	// ErrInvalid: the input breaks a rule the store checks (missing id,
	// unknown state, ...).
	ErrInvalid = errors.New("store: invalid input")
	// ErrInvalidCursor: a list cursor that this store did not produce.
	ErrInvalidCursor = errors.New("store: invalid cursor")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
	// ErrFenced: a write transaction's fence refused it: this instance no
	// longer leads (package leader). Nothing was committed.
	ErrFenced = errors.New("store: fenced: this instance no longer leads")
	// ErrUnavailable: the database cannot be reached; nothing was
	// committed. The operation may be retried.
	ErrUnavailable = errors.New("store: database unavailable")
	// ErrMaybeApplied: the connection to the database failed while the
	// COMMIT was on its way or its answer was: the transaction may or may
	// not have committed, and nobody can tell until the database is
	// reached again. A retry is safe only if it is idempotent (a submit
	// with the same idempotency key).
	ErrMaybeApplied = errors.New("store: database connection lost during commit: the change may have been applied")
)

// DuplicateError is returned by JobInsert when (Tenant, Key) is held by the
// job JobID, created within the idempotency window. errors.Is(err,
// ErrDuplicate) holds.
type DuplicateError struct {
	Tenant string
	Key    string
	JobID  string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%v: tenant %q key %q held by job %s", ErrDuplicate, e.Tenant, e.Key, e.JobID)
}

// Is makes errors.Is(err, ErrDuplicate) true.
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

// Claim names an idempotency claim: a tenant's key.
type Claim struct{ Tenant, Key string }

// IdempotencyWindow is how long an idempotency key stays bound to its job:
// a key claimed by a job created at t blocks other jobs created before
// t+IdempotencyWindow and is free for reuse from then on.
const IdempotencyWindow = 24 * time.Hour

// Purged is what a bounded purge did: the rows it deleted, and, when rows
// past its limit were due too, the time of the oldest of them (zero when
// the purge caught up).
type Purged struct {
	Deleted int64
	NextAt  time.Time
}

// Store is the durable state of the job server. Reads may run from any
// goroutine and never wait for the writer; Write serializes.
type Store interface {
	Reader

	// Write runs fn in one durable transaction and returns after it has
	// committed (fsync'd) or rolled back. fn's error rolls everything back
	// and is returned as is. Writer operations report their own outcome
	// (ErrConflict, ErrDuplicate, ErrNotFound, ErrExists, ErrInvalid)
	// without spoiling the transaction: each operation is all-or-nothing on
	// its own, and fn decides whether to go on. Any other error from an
	// operation means the transaction is unusable: return it from fn.
	// Concurrent calls run one after another; fn must not call Write.
	Write(ctx context.Context, fn func(w Writer) error) error

	// WriteDeferred is Write split in two: it returns once fn's transaction
	// has committed (readers see it; the next Write may start) and gives a
	// channel that receives nil once the commit is durable, or the error
	// that keeps it from being known durable. Durability comes in commit
	// order. A caller must not let anything that depends on the commit
	// leave the process (an answer, a lease) before the channel says so.
	// A transaction that wrote nothing is durable once the commits before
	// it are. Errors before the commit are returned as by Write, with a nil
	// channel. A driver may run fn's operations after WriteDeferred
	// returned (Queueing); what an operation sets in place (event ids) is
	// set by the time the channel reports.
	WriteDeferred(ctx context.Context, fn func(w Writer) error) (<-chan error, error)

	// Close waits for the running Write, then closes the store.
	Close() error
}

// Queueing is implemented by a store whose WriteDeferred may queue the
// transaction and return before it ran (package queued, used by both
// drivers; reads still see every Write whose WriteDeferred returned).
// Ready is closed when the store is ready for the next Write (no queued
// Write waits for its transaction; on SQLite no fsync runs; on
// PostgreSQL a transaction slot is free): a caller
// with Writes in flight forms its next batch until then, rather than
// until they are durable, so that its own work overlaps the store's.
//
// A queued transaction that fails (a guard that misses: the caller's state
// had run ahead of the database) fails its Write's channel and every later
// one, and the store refuses writes until the caller, having rebuilt its
// state from what the store holds, calls Resume.
type Queueing interface {
	Ready() <-chan struct{}
	Resume()
}

// SyncGathering is implemented by a Queueing store whose Ready also
// waits for a running fsync (SQLite): ReadyUnlessSyncing is closed while
// the store would be ready but for the fsync. Waiting for the fsync pays
// only when more commands arrive meanwhile; a caller that finds none do
// may hand over its batch when ReadyUnlessSyncing closes, and its
// transaction then runs while the disk syncs the one before (package
// dispatch, gather.go).
type SyncGathering interface {
	ReadyUnlessSyncing() <-chan struct{}
}

// ClaimsInPlace is implemented by a store whose keyed JobInsertBatched
// claims the key with a statement of its own process, no round trip
// (SQLite: on the writer connection, under the write lock). A caller with
// no Write in flight may then let that claim find a held key (its answer,
// a *DuplicateError naming the holder) rather than read the key's holders
// before the transaction (IdempotencyHolders) and insert with
// JobInsertFreeKey: one statement instead of a read on another
// connection, and the Write is its own transaction at once instead of
// queued, which costs nothing when nothing else is queued (package
// dispatch, claims.go). PostgreSQL's claim is a round trip, as the read
// is: it keeps the deferred path.
type ClaimsInPlace interface {
	ClaimsInPlace() bool
}

// Writer is the set of operations valid inside Write. It is valid only
// until fn returns. ctx is checked before each operation; cancelling the
// ctx given to Write rolls the whole transaction back.
type Writer interface {
	// JobInsert stores a new job. With an idempotency key it first claims
	// (Tenant, IdempotencyKey); if a job created less than
	// IdempotencyWindow before job.CreatedAt holds it, nothing is stored
	// and the error is a *DuplicateError. With a unique rule it then
	// claims (Tenant, the rule's hash of the job); if the job holding that
	// claim still binds (UniqueRule.Holds), nothing is stored and the
	// error is a *UniqueError naming it. ErrExists if the id is taken.
	JobInsert(ctx context.Context, job Job) error
	// JobInsertBatched is JobInsert for a caller to whom a taken id is
	// fatal (the dispatcher, which makes the ids): for a job without an
	// idempotency key the driver may hold it and insert it with others
	// before the transaction's next operation or its commit; ErrExists
	// then fails that operation, or the Write. A job with a unique rule is
	// inserted at once, as by JobInsert (ErrDuplicate is an answer). A job
	// with a key claims its key at once, so a duplicate (*DuplicateError)
	// and an id already stored (ErrExists, nothing claimed) are answers, as
	// by JobInsert; the driver may then hold the row as above (its key's
	// claim is undone with the Write if the row fails).
	JobInsertBatched(ctx context.Context, job Job) error
	// JobInsertFreeKey is JobInsertBatched for a job with an idempotency
	// key that its caller has found free (IdempotencyHolders, and no claim
	// of its own Writes still uncommitted): the driver may hold the claim
	// as it holds the row, and a queueing store may defer the whole Write.
	// A key held inside its window then fails that operation, or the
	// Write, with ErrKeyHeld (an ErrConflict), and nothing commits: like
	// a missed guard, it means the caller's view ran behind the database,
	// but unlike one it is not a bug (another instance claimed the key),
	// and the request may be retried. An expired
	// claim is taken over as by JobInsert. A job without a key, or with a
	// unique rule, is inserted as by JobInsertBatched.
	JobInsertFreeKey(ctx context.Context, job Job) error
	// JobTransition applies a fenced change; see JobTransitionParams.
	// ErrConflict when the guard misses, ErrNotFound when there is no job.
	JobTransition(ctx context.Context, p JobTransitionParams) error
	// JobTransitionBatched is JobTransition for a caller to whom a missed
	// guard is fatal (the dispatcher, which knows every job's state): the
	// driver may hold it and apply it with others in one statement before
	// the transaction's next operation or its commit. A miss then fails
	// that operation, or the Write, with ErrConflict, and nothing commits.
	JobTransitionBatched(ctx context.Context, p JobTransitionParams) error
	// JobDeleteFinished deletes up to limit terminal jobs finished before
	// the given time, oldest first, with their executions and logs. Their
	// idempotency claims stay until IdempotencyPurge (a key is bound for
	// IdempotencyWindow whatever happens to its job), and so do their
	// events (EventDeleteBefore). A job with a result upload still pending
	// is kept until the upload ends. Purged.NextAt is the finish time of
	// the oldest job left that the same call would delete: the backlog.
	JobDeleteFinished(ctx context.Context, finishedBefore time.Time, limit int) (Purged, error)
	// EventDeleteBefore deletes up to limit events recorded before the
	// given time, in id order: it stops at the first event that is not
	// older. Purged.NextAt is the time of the oldest event left that the
	// same call would delete.
	EventDeleteBefore(ctx context.Context, before time.Time, limit int) (Purged, error)
	// IdempotencyPurge forgets up to limit key claims made before
	// createdBefore, oldest first; call it with now - IdempotencyWindow.
	// Expired claims are reusable even unpurged: purging only keeps the
	// table small. Purged.NextAt is as for JobDeleteFinished.
	IdempotencyPurge(ctx context.Context, createdBefore time.Time, limit int) (Purged, error)

	// ExecutionUpsert inserts or replaces the execution (JobID, Attempt).
	// ErrNotFound if the job does not exist.
	ExecutionUpsert(ctx context.Context, e Execution) error
	// ExecutionUpsertMany upserts many executions as one operation;
	// ErrNotFound, and nothing stored, if a job does not exist. Like the
	// Batched operations it is for the dispatcher, which knows its jobs
	// exist: the driver may send it with the transaction's later
	// statements, and a missing job then fails the Write with ErrNotFound.
	ExecutionUpsertMany(ctx context.Context, es []Execution) error
	// ExecutionResultUpdate records a try of an attempt's result upload;
	// see ResultUpdate. ErrConflict when the upload is not pending with
	// u.Tries-1 tries made, ErrNotFound when there is no such execution.
	ExecutionResultUpdate(ctx context.Context, u ResultUpdate) error
	// LogAppend stores chunks; existing (JobID, Attempt, Seq) are skipped.
	// ErrNotFound if a chunk's job does not exist (then none is stored).
	LogAppend(ctx context.Context, chunks []LogChunk) error
	// EventAppend stores events. Events with ID 0 get theirs from the
	// store, set in place, above every id committed before; the others are
	// stored with their ID, which must be above every id committed before
	// (EventLastID). Synthesised events are stored as no row: the attempt
	// rows written in the same transaction hold them.
	EventAppend(ctx context.Context, events []Event) error

	// WorkerUpsert inserts or replaces a worker.
	WorkerUpsert(ctx context.Context, w Worker) error
	// WorkerTouch sets a worker's last_seen_at. ErrNotFound if unknown.
	WorkerTouch(ctx context.Context, id string, lastSeenAt time.Time) error
	// WorkerDelete removes a worker. ErrNotFound if unknown.
	WorkerDelete(ctx context.Context, id string) error

	// ScheduleUpsert inserts or replaces a schedule.
	ScheduleUpsert(ctx context.Context, s Schedule) error
	// ScheduleDelete removes a schedule. ErrNotFound if unknown.
	ScheduleDelete(ctx context.Context, id string) error

	// WebhookInsert stores a webhook; ErrExists if its name is taken.
	WebhookInsert(ctx context.Context, w Webhook) error
	// WebhookDelete removes a webhook; ErrNotFound if unknown.
	WebhookDelete(ctx context.Context, name string) error

	// LaneStateSet inserts or replaces a lane's state.
	LaneStateSet(ctx context.Context, l LaneState) error

	// APIKeyInsert stores a key. ErrExists if the hash is stored.
	APIKeyInsert(ctx context.Context, k APIKey) error
	// APIKeyDelete removes a key. ErrNotFound if unknown.
	APIKeyDelete(ctx context.Context, keyHash string) error
}

// Reader is the read side of the store. Every call sees the state as of
// some committed transaction.
type Reader interface {
	// JobGet returns one job or ErrNotFound.
	JobGet(ctx context.Context, id string) (Job, error)
	// JobGetMany returns the jobs that exist among ids, in the order of ids.
	JobGetMany(ctx context.Context, ids []string) ([]Job, error)
	// JobGetByIdempotencyKey returns the job that holds (tenant, key), if it
	// was created after createdAfter (pass now - IdempotencyWindow), or
	// ErrNotFound.
	JobGetByIdempotencyKey(ctx context.Context, tenant, key string, createdAfter time.Time) (Job, error)
	// IdempotencyHolder returns the id of the job that holds (tenant, key),
	// claimed after createdAfter (pass now - IdempotencyWindow), whether
	// or not the job still exists (retention may have deleted it), or
	// ErrNotFound.
	IdempotencyHolder(ctx context.Context, tenant, key string, createdAfter time.Time) (string, error)
	// IdempotencyHolders is IdempotencyHolder for many claims in a few
	// queries: the holder of every claim that is held, by claim; claims
	// not held are absent.
	IdempotencyHolders(ctx context.Context, claims []Claim, createdAfter time.Time) (map[Claim]string, error)
	// SubmitTokens returns the submit tokens of the jobs whose id is
	// sinceID or later (pass IDFloor(now - SubmitTokenWindow)), in id
	// order: what the dispatcher rebuilds its tokens from.
	SubmitTokens(ctx context.Context, sinceID string) ([]SubmitToken, error)
	// JobList returns one page of jobs, newest first.
	JobList(ctx context.Context, p JobListParams) (JobPage, error)
	// JobCount counts the jobs JobList would page through (Limit and
	// Cursor ignored).
	JobCount(ctx context.Context, p JobListParams) (int64, error)
	// JobListUnfinished returns every job in a non-terminal state, oldest
	// first: what the dispatcher rebuilds its index from at start.
	JobListUnfinished(ctx context.Context) ([]Job, error)

	// ExecutionList returns executions; see ExecutionListParams.
	ExecutionList(ctx context.Context, p ExecutionListParams) ([]Execution, error)
	// ExecutionResultsDue returns up to limit executions whose result
	// upload is pending with ResultNextAt at or before now, soonest first.
	ExecutionResultsDue(ctx context.Context, now time.Time, limit int) ([]Execution, error)
	// ExecutionSummary aggregates finished executions.
	ExecutionSummary(ctx context.Context, p SummaryParams) (Summary, error)
	// ExecutionUsage reports, per tenant or lane, what the attempts that
	// finished in a window used; rows in key order.
	ExecutionUsage(ctx context.Context, p UsageParams) ([]UsageRow, error)
	// ExecutionSeries buckets executions over time: per bucket the
	// attempts that ended, by outcome, and the waits of those leased.
	// Every bucket of the range comes back, empty ones included.
	ExecutionSeries(ctx context.Context, p SeriesParams) ([]SeriesPoint, error)

	// LogList returns log chunks in (attempt, seq) order.
	LogList(ctx context.Context, p LogListParams) ([]LogChunk, error)
	// EventLastID returns the largest event id ever committed, stored or
	// synthesised (0: none); ids above it are free.
	EventLastID(ctx context.Context) (int64, error)
	// EventList returns events in ID order, the stored ones and those
	// synthesised from attempt rows (AttemptEvents).
	EventList(ctx context.Context, p EventListParams) ([]Event, error)

	// WorkerGet returns one worker or ErrNotFound.
	WorkerGet(ctx context.Context, id string) (Worker, error)
	// WorkerList returns every worker in id order.
	WorkerList(ctx context.Context) ([]Worker, error)

	// ScheduleGet returns one schedule or ErrNotFound.
	ScheduleGet(ctx context.Context, id string) (Schedule, error)
	// ScheduleList returns schedules in id order.
	ScheduleList(ctx context.Context, p ScheduleListParams) ([]Schedule, error)

	// WebhookList returns the stored webhooks by name.
	WebhookList(ctx context.Context) ([]Webhook, error)

	// LaneStateList returns every stored lane state by lane name.
	LaneStateList(ctx context.Context) ([]LaneState, error)

	// APIKeyGet returns the key with this hash or ErrNotFound.
	APIKeyGet(ctx context.Context, keyHash string) (APIKey, error)
	// APIKeyList returns a tenant's keys ("" = every key) by hash.
	APIKeyList(ctx context.Context, tenant string) ([]APIKey, error)
}
