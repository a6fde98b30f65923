package sqlstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// Unique claims (store package doc, "Unique jobs"). A claim is one row of
// unique_claims keyed by (tenant, unique_hash); the job inserted with it
// takes it when no row holds the key, or when the row's job no longer
// binds (left the rule's states, older than its period, or deleted): a
// compare-and-swap on the row's job_id, so that of two transactions that
// race for one key exactly one commits a claim (in PostgreSQL the loser's
// INSERT or UPDATE waits for the winner's row lock, then sees its row).

const (
	uniqueClaimSQL = `INSERT INTO unique_claims (tenant, unique_hash, job_id, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (tenant, unique_hash) DO NOTHING`
	uniqueHolderSQL = `SELECT c.job_id, c.created_at, j.state FROM unique_claims c
		LEFT JOIN jobs j ON j.id = c.job_id WHERE c.tenant = ? AND c.unique_hash = ?`
	uniqueTakeSQL = `UPDATE unique_claims SET job_id = ?, created_at = ?
		WHERE tenant = ? AND unique_hash = ? AND job_id = ?`
)

// uniqueArg is the unique_rule column's value: the rule as JSON, or NULL.
func uniqueArg(r *store.UniqueRule) (any, error) {
	if r == nil {
		return nil, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("%w: unique rule: %v", store.ErrInvalid, err)
	}
	return string(b), nil
}

// claimUnique claims j's unique hash for j, which the transaction has
// inserted, or returns a *store.UniqueError naming the job that holds it.
func (w *Writer) claimUnique(j *store.Job) error {
	hash := j.Unique.UniqueHash(j)
	for range 3 {
		res, err := w.s.WConn.ExecContext(bg, w.s.D.rebind(uniqueClaimSQL), j.Tenant, hash, j.ID, timeArg(j.CreatedAt))
		if err != nil {
			return fmt.Errorf("store: claim unique hash: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		holder, created, state, found, err := w.uniqueHolder(j.Tenant, hash)
		if err != nil {
			return err
		}
		if !found {
			continue // deleted with its job since: claim again
		}
		if state != "" && j.Unique.Holds(state, created, j.CreatedAt) {
			return &store.UniqueError{Tenant: j.Tenant, Hash: hash, JobID: holder}
		}
		res, err = w.s.WConn.ExecContext(bg, w.s.D.rebind(uniqueTakeSQL), j.ID, timeArg(j.CreatedAt), j.Tenant, hash, holder)
		if err != nil {
			return fmt.Errorf("store: take unique claim: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		// Another transaction took it since it was read: look again.
	}
	return fmt.Errorf("store: unique claim of tenant %q hash %s kept changing hands while claimed", j.Tenant, hash)
}

// uniqueHolder reads the claim of (tenant, hash): its job, when that job
// claimed it, and the job's state ("" when the job is gone); found is
// false when there is no claim.
func (w *Writer) uniqueHolder(tenant, hash string) (id string, created time.Time, state store.State, found bool, err error) {
	err = w.s.WConn.QueryRowContext(bg, w.s.D.rebind(uniqueHolderSQL), tenant, hash).
		Scan(&id, timeCol{&created}, strCol[store.State]{&state})
	if errors.Is(err, sql.ErrNoRows) {
		return "", created, "", false, nil
	}
	if err != nil {
		return "", created, "", false, fmt.Errorf("store: read unique claim: %w", err)
	}
	return id, created, state, true, nil
}
