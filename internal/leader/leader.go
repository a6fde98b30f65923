package leader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"database/sql"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fairwayhq/fairway/internal/store"
)

// ErrDeposed is returned by Fence when this instance no longer leads under
// the term it was elected for; errors.Is(err, store.ErrFenced) holds.
var ErrDeposed = fmt.Errorf("%w: deposed: another instance leads, or the lease ran out", store.ErrFenced)

// DB is what the lease statements run on: a pool (*sql.DB on the pgx
// driver), a connection or a transaction.
type DB interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Lease is one instance's claim on the leadership row.
type Lease struct {
	Holder  string        // this instance's id, unique per process start
	Address string        // where this instance serves its API, for followers
	TTL     time.Duration // how long a lease lasts without renewal
}

// Term is a won election: the term number, fixed for the whole tenure.
type Term struct {
	Lease
	Number int64
}

// Campaign takes the leadership row if it is free and returns the new
// term; ok is false when another instance holds it.
func (l Lease) Campaign(ctx context.Context, db DB) (t Term, ok bool, err error) {
	var term int64
	err = db.QueryRowContext(ctx, `UPDATE leadership
		SET term = term + 1, holder = $1, address = $2, expires_at = clock_timestamp() + $3 * interval '1 millisecond'
		WHERE id = 1 AND expires_at < clock_timestamp()
		RETURNING term`, l.Holder, l.Address, l.TTL.Milliseconds()).Scan(&term)
	if errors.Is(err, sql.ErrNoRows) {
		return Term{}, false, nil
	}
	if err != nil {
		return Term{}, false, fmt.Errorf("leader: campaign: %w", err)
	}
	return Term{Lease: l, Number: term}, true, nil
}

// Renew extends the term's lease by TTL from now; ok is false when the
// term is over (another instance took the row after the lease ran out).
func (t Term) Renew(ctx context.Context, db DB) (ok bool, err error) {
	res, err := db.ExecContext(ctx, `UPDATE leadership SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
		WHERE id = 1 AND holder = $1 AND term = $2 AND expires_at > clock_timestamp()`,
		t.Holder, t.Number, t.TTL.Milliseconds())
	if err != nil {
		return false, fmt.Errorf("leader: renew term %d: %w", t.Number, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Resign ends the term at once, so that another instance may take over
// without waiting for the lease to run out.
func (t Term) Resign(ctx context.Context, db DB) error {
	_, err := db.ExecContext(ctx, `UPDATE leadership SET expires_at = to_timestamp(0)
		WHERE id = 1 AND holder = $1 AND term = $2`, t.Holder, t.Number)
	if err != nil {
		return fmt.Errorf("leader: resign term %d: %w", t.Number, err)
	}
	return nil
}

// Fence checks, inside a write transaction, that the term still leads,
// and holds the fence's advisory lock shared until the transaction ends,
// so that no new term can begin before it commits (doc.go, "Fencing"). ErrDeposed when the term is
// over. It also counts the transaction in leader_terms (first and last
// commit time of each term), the record that shows terms never overlap.
//
// The check is one statement (FenceSQL with FenceArgs and a writer
// connection's slot, the database function fairway_fence), so that a
// store can send it with the rest of its transaction (postgres.WithFence)
// and name its error with FenceError. Fence counts under slot 0.
func (t Term) Fence(ctx context.Context, tx DB) error {
	_, err := tx.ExecContext(ctx, FenceSQL, append(t.FenceArgs(), 0)...)
	if ferr := FenceError(err); ferr != nil {
		return ferr
	}
	if err != nil {
		return fmt.Errorf("leader: fence term %d: %w", t.Number, err)
	}
	return nil
}

// FenceSQL is the fence statement; its arguments are Term.FenceArgs and
// the slot (0, 1, ...) of the writer connection it runs on: each slot
// counts its commits in a row of leader_terms of its own, so that fenced
// transactions on different connections never wait for one another.
const FenceSQL = `SELECT fairway_fence($1, $2, $3)`

// FenceArgs are FenceSQL's arguments for the term.
func (t Term) FenceArgs() []any { return []any{t.Holder, t.Number} }

// FenceError is ErrDeposed, with the database's message, when err is the
// fence's refusal; nil for any other error.
func FenceError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "FWDEP" {
		return fmt.Errorf("%w (%s)", ErrDeposed, pe.Message)
	}
	return nil
}

// TermRecord is one term's commits as leader_terms holds them.
type TermRecord struct {
	Term          int64
	Holder        string
	FirstCommitAt time.Time
	LastCommitAt  time.Time
	Commits       int64
}

// Terms returns every term that committed, in term order, its slots'
// counts summed.
func Terms(ctx context.Context, db *sql.DB) ([]TermRecord, error) {
	rows, err := db.QueryContext(ctx, `SELECT term, min(holder), min(first_commit_at), max(last_commit_at), sum(commits)::bigint
		FROM leader_terms GROUP BY term ORDER BY term`)
	if err != nil {
		return nil, fmt.Errorf("leader: terms: %w", err)
	}
	defer rows.Close()
	var out []TermRecord
	for rows.Next() {
		var t TermRecord
		if err := rows.Scan(&t.Term, &t.Holder, &t.FirstCommitAt, &t.LastCommitAt, &t.Commits); err != nil {
			return nil, fmt.Errorf("leader: terms: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("leader: terms: %w", err)
	}
	return out, nil
}

// Current is the leadership row as it stands.
type Current struct {
	Term      int64
	Holder    string
	Address   string
	ExpiresAt time.Time
	Live      bool // the lease has not run out
}

// Read returns the leadership row.
func Read(ctx context.Context, db DB) (Current, error) {
	var c Current
	err := db.QueryRowContext(ctx, `SELECT term, holder, address, expires_at, expires_at > clock_timestamp()
		FROM leadership WHERE id = 1`).Scan(&c.Term, &c.Holder, &c.Address, &c.ExpiresAt, &c.Live)
	if err != nil {
		return Current{}, fmt.Errorf("leader: read: %w", err)
	}
	return c, nil
}
