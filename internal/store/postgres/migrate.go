package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"

	"github.com/fairwayhq/fairway/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// ErrSchemaTooNew: the database was migrated by a newer fairway.
var ErrSchemaTooNew = errors.New("postgres: database schema is newer than this binary")

// migrationLock is the advisory lock key migrations hold ("fairway" in
// ASCII): several servers starting at once apply each migration once.
const migrationLock = 0x66616972776179

func migrations() ([]sqlstore.Migration, error) {
	return sqlstore.ReadMigrations(migrationFS, "migrations")
}

// LatestVersion returns the schema version this binary migrates to.
func LatestVersion() int {
	ms, err := migrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// Migrate applies every pending migration to the database at url, in one
// transaction holding a transaction-level advisory lock, and returns how
// many it applied.
func Migrate(ctx context.Context, url string) (applied int, err error) {
	ms, err := migrations()
	if err != nil {
		return 0, err
	}
	return migrateTo(ctx, url, ms, len(ms))
}

// migrateTo is Migrate up to version to of ms (tests stop before one).
func migrateTo(ctx context.Context, url string, ms []sqlstore.Migration, to int) (applied int, err error) {
	if err := checkURL(url); err != nil {
		return 0, err
	}
	db, err := OpenDB(url)
	if err != nil {
		return 0, fmt.Errorf("postgres: open: %w", err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("postgres: migrate: %w", unavailable(err))
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
		return 0, fmt.Errorf("postgres: migrate: lock: %w", unavailable(err))
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
	)`); err != nil {
		return 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	current, err := version(ctx, tx)
	if err != nil {
		return 0, err
	}
	if current > len(ms) {
		return 0, fmt.Errorf("%w: version %d, this binary knows %d", ErrSchemaTooNew, current, len(ms))
	}
	for _, m := range ms[current:max(current, to)] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return 0, fmt.Errorf("postgres: migration %04d_%s: %w", m.Version, m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			return 0, fmt.Errorf("postgres: migration %04d_%s: %w", m.Version, m.Name, err)
		}
		applied++
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("postgres: migrate: commit: %w", unavailable(err))
	}
	return applied, nil
}

func version(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: read schema version: %w", err)
	}
	return v, nil
}

// SchemaStatus reads the schema version of the database at url without
// changing anything: current is 0 for a database never migrated.
func SchemaStatus(ctx context.Context, url string) (current, latest int, err error) {
	latest = LatestVersion()
	if err := checkURL(url); err != nil {
		return 0, latest, err
	}
	db, err := OpenDB(url)
	if err != nil {
		return 0, latest, fmt.Errorf("postgres: open: %w", err)
	}
	defer db.Close()
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, latest, fmt.Errorf("postgres: read schema: %w", unavailable(err))
	}
	if !exists {
		return 0, latest, nil
	}
	current, err = version(ctx, db)
	return current, latest, err
}

// Redact is a URL with its password hidden, to show it.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
