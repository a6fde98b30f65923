package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// Keyed inserts (store doc.go, "Idempotency window"). A job with an
// idempotency key claims (tenant, key) and is inserted without a
// savepoint: the claim is one statement that claims only if the job's id
// is free (NOT EXISTS on jobs) and the key is free or its claim expired
// (ON CONFLICT ... DO UPDATE ... WHERE created_at <= cutoff), so a claim
// is never made for a job that cannot be inserted, and there is nothing
// to undo.
//
//   - SQLite (one writer, the write lock held for the transaction): the
//     claim, then the insert, which cannot find the id taken; a claim that
//     changed no row is a duplicate if an unexpired claim holds the key
//     (the holder is read then), else the id is taken (ErrExists).
//     JobInsertBatched claims at once (its answer is needed) and holds the
//     row for the multi-row insert; a held row whose id turns out taken
//     fails the Write (the contract of JobInsertBatched), which rolls the
//     claim back.
//   - PostgreSQL (pipelined): claim and insert are one statement, a
//     data-modifying CTE whose insert selects nothing unless the claim
//     returned a row; it is queued behind what the transaction has queued
//     and sent with it in one round trip, and returns how many jobs it
//     inserted. Only when that is 0 does a second query, in a new snapshot
//     (READ COMMITTED), tell a duplicate (and its holder) from a taken id.
//     A concurrent claim of the same key waits for the other transaction
//     (ON CONFLICT), then sees its claim: exactly one wins. A concurrent
//     insert of the same job id between the claim's NOT EXISTS and the
//     insert is a unique violation that aborts the statement (claim
//     included) and the transaction: ErrExists fails the Write.
//
// JobInsertFreeKey (store doc.go, "Keyed inserts on the deferred path")
// is for a caller that has found the key free. SQLite claims at once, as
// JobInsertBatched does (a statement costs no round trip), and fails the
// transaction if the key is held (ErrKeyHeld) or the id taken. PostgreSQL
// holds the claim with the row: the held claims of a transaction are one
// multi-row INSERT ... ON CONFLICT DO UPDATE (taking over expired claims
// only) queued before the jobs' insert, and the database counts the claims
// it made (Dialect.ExpectRows): a held key is a statement error that fails
// the transaction with ErrKeyHeld (Pipeline.QueueCheck names it: the
// database's error is the one a missed transition raises), and a taken id
// the jobs' insert's unique violation. Nothing answers before the commit, so the whole Write
// may be deferred (package queued).

// idemClaimFreeSQL claims (tenant, key) for a job id that no job has:
// tenant, key, job id, created_at, the job id again, the expiry cutoff.
const idemClaimFreeSQL = `INSERT INTO idempotency_keys (tenant, key, job_id, created_at)
	SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT)
	WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE id = ?)
	ON CONFLICT (tenant, key) DO UPDATE SET job_id = excluded.job_id, created_at = excluded.created_at
	WHERE idempotency_keys.created_at <= ?`

// keyedInsertSQL is the claim and the insert in one statement (PostgreSQL):
// the claim's arguments, then the job's row's, then its spec's
// (splitJobArgs); it returns the jobs inserted. The spec is inserted only
// if the job's row is (job_specs has no foreign key on PostgreSQL: store
// doc.go, "The job's spec lives beside the hot row").
var keyedInsertSQL = "WITH claim AS (" + idemClaimFreeSQL + " RETURNING 1), ins AS (INSERT INTO jobs (" +
	strings.Join(jobTable.cols, ", ") + ") SELECT " + placeholders(len(jobTable.cols)) +
	" WHERE EXISTS (SELECT 1 FROM claim) RETURNING 1), spec AS (INSERT INTO job_specs (" +
	strings.Join(specTable.cols, ", ") + ") SELECT " + placeholders(len(specTable.cols)) +
	" WHERE EXISTS (SELECT 1 FROM ins)) SELECT count(*) FROM ins"

// claimArgs are idemClaimFreeSQL's arguments for j.
func (w *Writer) claimArgs(j *store.Job) []any {
	return []any{j.Tenant, j.IdempotencyKey, j.ID, timeArg(j.CreatedAt), j.ID, timeArg(j.CreatedAt.Add(-w.s.Window))}
}

// insertKeyed inserts j, which has an idempotency key, now.
func (w *Writer) insertKeyed(ctx context.Context, j *store.Job, args []any) error {
	if w.piped() {
		return w.insertKeyedPiped(ctx, j, args)
	}
	if err := w.claimFreeKey(j); err != nil {
		return err
	}
	if err := w.insertJob(j, args); err != nil {
		return w.breakOn(err) // cannot happen under the write lock: the claim checked the id
	}
	return nil
}

// claimFreeKey claims j's key for j, or says why not: a *DuplicateError
// naming the holder, or ErrExists when j's id is taken.
func (w *Writer) claimFreeKey(j *store.Job) error {
	n, err := w.affected(stmtIdemClaimFree, w.claimArgs(j)...)
	if err != nil {
		return fmt.Errorf("store: claim idempotency key: %w", err)
	}
	if n == 1 {
		return nil
	}
	return w.unclaimed(j)
}

// unclaimed is the reason j's claim changed no row: an unexpired claim
// holds the key (checked first, as a claim is made before the insert), or
// j's id is taken.
func (w *Writer) unclaimed(j *store.Job) error {
	dup := &store.DuplicateError{Tenant: j.Tenant, Key: j.IdempotencyKey}
	err := w.s.stmts[stmtIdemHeld].QueryRowContext(bg, j.Tenant, j.IdempotencyKey,
		timeArg(j.CreatedAt.Add(-w.s.Window))).Scan(&dup.JobID)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: job %s", store.ErrExists, j.ID)
	}
	if err != nil {
		return fmt.Errorf("store: read idempotency key holder: %w", err)
	}
	return dup
}

// insertKeyedPiped queues the claim-and-insert statement and sends it
// with the queue, in one round trip.
func (w *Writer) insertKeyedPiped(ctx context.Context, j *store.Job, args []any) error {
	q := w.s.piped.get(keyedKey{}, func() string { return w.s.D.rebind(keyedInsertSQL) })
	inserted := int64(-1)
	hot, spec := splitJobArgs(args)
	w.s.Pipe.Queue(q, slices.Concat(w.claimArgs(j), hot, spec), func(n []int64) {
		if len(n) == 1 {
			inserted = n[0]
		}
	})
	if err := w.Send(ctx); err != nil {
		return err
	}
	switch inserted {
	case 1:
		return nil
	case 0:
		return w.unclaimed(j)
	}
	return w.breakOn(fmt.Errorf("store: insert keyed job %s: no count returned", j.ID))
}

type keyedKey struct{}

// JobInsertFreeKey implements store.Writer.
func (w *Writer) JobInsertFreeKey(ctx context.Context, j store.Job) error {
	if j.IdempotencyKey == "" || j.Unique != nil {
		return w.JobInsertBatched(ctx, j)
	}
	if !w.piped() {
		return w.insertFreeKeyNow(ctx, j)
	}
	return w.holdInsert(ctx, j, claimHeldFree)
}

// holdFreeClaim holds j's claim for queueFreeClaims, which queues it with
// the rows.
func (w *Writer) holdFreeClaim(j *store.Job) error {
	w.held.claims = append(w.held.claims, []any{j.Tenant, j.IdempotencyKey, j.ID, timeArg(j.CreatedAt)})
	return nil
}

// insertFreeKeyNow claims j's key at once and holds or inserts the row
// (JobInsertBatched); a held key or a taken id breaks the transaction,
// since the caller was told nothing would answer.
func (w *Writer) insertFreeKeyNow(ctx context.Context, j store.Job) error {
	err := w.JobInsertBatched(ctx, j)
	var dup *store.DuplicateError
	switch {
	case err == nil || errors.Is(err, store.ErrInvalid) || w.broken != nil:
		return err
	case errors.As(err, &dup):
		return w.breakOn(fmt.Errorf("%w: idempotency key %q of tenant %s is held by job %s",
			store.ErrKeyHeld, j.IdempotencyKey, j.Tenant, dup.JobID))
	}
	return w.breakOn(err)
}

type freeClaimKey struct{ rows int }

type freeClaimArrayKey struct{}

// claimTypes are the SQL types of a held claim's values.
var claimTypes = []string{"text", "text", "text", "bigint"}

// queueArrayFreeClaims is queueFreeClaims from column arrays
// (Dialect.ArrayBatches), maxArrayRows claims a statement; false, and
// nothing queued, if a value does not fit its column.
func (w *Writer) queueArrayFreeClaims(claims [][]any) bool {
	stmts, ok := columnChunks(claims, claimTypes)
	if !ok {
		return false
	}
	q := w.s.piped.get(freeClaimArrayKey{}, func() string { return w.s.freeClaimArraySQL() })
	for i, args := range stmts {
		n := min(maxArrayRows, len(claims)-i*maxArrayRows)
		w.s.Pipe.QueueCheck(q, append(args, w.s.Window.Microseconds(), int64(n)), store.ErrKeyHeld)
	}
	return true
}

// freeClaimArraySQL is freeClaimSQL from one array a column.
func (c *Core) freeClaimArraySQL() string {
	return c.D.rebind("WITH claimed AS (INSERT INTO idempotency_keys (tenant, key, job_id, created_at) SELECT * FROM " +
		unnestSQL(claimTypes) + freeClaimTail + c.D.ExpectRows + "(count(*), ?) FROM claimed")
}

// freeClaimTail follows the claimed rows in a free claims' statement.
const freeClaimTail = " ON CONFLICT (tenant, key) DO UPDATE SET job_id = excluded.job_id, created_at = excluded.created_at" +
	" WHERE idempotency_keys.created_at <= excluded.created_at - CAST(? AS BIGINT) RETURNING 1) SELECT "

// freeClaimSQL claims n keys, taking over expired claims only, and fails
// the statement unless all n were claimed: each row is tenant, key, job
// id, created_at; then the window (microseconds) and n.
func (c *Core) freeClaimSQL(n int) string {
	var b strings.Builder
	b.WriteString("WITH claimed AS (INSERT INTO idempotency_keys (tenant, key, job_id, created_at) VALUES ")
	writeRows(&b, n, 4)
	b.WriteString(freeClaimTail + c.D.ExpectRows + "(count(*), ?) FROM claimed")
	return c.D.rebind(b.String())
}

// queueFreeClaims queues the held claims of JobInsertFreeKey.
func (w *Writer) queueFreeClaims() {
	claims := w.held.claims
	w.held.claims = nil
	if w.arrays(len(claims)) && w.queueArrayFreeClaims(claims) {
		return
	}
	_ = eachChunk(len(claims), func(from, n int) error {
		q := w.s.piped.get(freeClaimKey{n}, func() string { return w.s.freeClaimSQL(n) })
		args := slices.Concat(claims[from : from+n]...)
		w.s.Pipe.QueueCheck(q, append(args, w.s.Window.Microseconds(), int64(n)), store.ErrKeyHeld)
		return nil
	})
}

// breakOn fails the transaction with err, even if err is a sentinel: the
// claim may stand, so the Write must roll back.
func (w *Writer) breakOn(err error) error {
	if w.broken == nil {
		w.broken = err
	}
	return err
}

// holdersChunk bounds the claims of one IdempotencyHolders query.
const holdersChunk = 250

// IdempotencyHolders implements store.Reader: a query per chunk of
// claims, through the primary key (tenant, key).
func (s *Core) IdempotencyHolders(ctx context.Context, claims []store.Claim, createdAfter time.Time) (map[store.Claim]string, error) {
	out := map[store.Claim]string{}
	for len(claims) > 0 {
		n := min(len(claims), holdersChunk)
		if err := s.holdersOf(ctx, claims[:n], createdAfter, out); err != nil {
			return nil, err
		}
		claims = claims[n:]
	}
	return out, nil
}

// HoldersSQL is IdempotencyHolders' query for n claims: a join of the
// claims with idempotency_keys on its primary key (SQLite plans a row
// value IN (VALUES ...) as a scan of the table); its arguments are the
// claims' tenant and key, then the cutoff.
func (s *Core) HoldersSQL(n int) string {
	return s.D.rebind("SELECT k.tenant, k.key, k.job_id FROM (VALUES " +
		strings.TrimSuffix(strings.Repeat("(?, ?), ", n), ", ") +
		") AS v JOIN idempotency_keys k ON k.tenant = v.column1 AND k.key = v.column2 WHERE k.created_at > ?")
}

func (s *Core) holdersOf(ctx context.Context, claims []store.Claim, createdAfter time.Time, out map[store.Claim]string) error {
	args := make([]any, 0, 1+2*len(claims))
	for _, c := range claims {
		args = append(args, c.Tenant, c.Key)
	}
	args = append(args, timeArg(createdAfter))
	rows, err := s.RDB.QueryContext(ctx, s.HoldersSQL(len(claims)), args...)
	if err != nil {
		return fmt.Errorf("store: idempotency key holders: %w", err)
	}
	for rows.Next() {
		var c store.Claim
		var id string
		if err := rows.Scan(&c.Tenant, &c.Key, &id); err != nil {
			_ = rows.Close()
			return fmt.Errorf("store: idempotency key holders: %w", err)
		}
		out[c] = id
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("store: idempotency key holders: %w", err)
	}
	return nil
}
