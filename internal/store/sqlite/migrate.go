package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/fairwayhq/fairway/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// ErrSchemaTooNew: the database was migrated by a newer fairway.
var ErrSchemaTooNew = errors.New("sqlite: database schema is newer than this binary")

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

// migrate applies every pending migration, each in its own IMMEDIATE
// transaction that re-reads the version first, so that two processes
// opening one file at once apply each migration once.
func migrate(ctx context.Context, db *sql.DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return err
	}
	for _, m := range ms {
		if err := apply(ctx, db, m, len(ms)); err != nil {
			return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

func apply(ctx context.Context, db *sql.DB, m sqlstore.Migration, latest int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return err
	}
	if current > latest {
		return fmt.Errorf("%w: version %d, this binary knows %d", ErrSchemaTooNew, current, latest)
	}
	if current >= m.Version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, time.Now().UnixMicro()); err != nil {
		return err
	}
	return tx.Commit()
}

// SchemaStatus reads the schema version of the database file at path
// without changing anything: current is 0 for a file that does not exist
// or was never migrated; latest is LatestVersion.
func SchemaStatus(ctx context.Context, path string) (current, latest int, err error) {
	latest = LatestVersion()
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, latest, nil
	}
	db, err := sql.Open("sqlite3", dsn(path, options{busyTimeout: 10 * time.Second, cacheKiB: 2048}, url.Values{"mode": {"ro"}}))
	if err != nil {
		return 0, latest, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer db.Close()
	var exists int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&exists); err != nil {
		return 0, latest, fmt.Errorf("sqlite: read schema of %s: %w", path, err)
	}
	if exists == 0 {
		return 0, latest, nil
	}
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return 0, latest, fmt.Errorf("sqlite: read schema version of %s: %w", path, err)
	}
	return current, latest, nil
}
