package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one embedded file migrations/NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// ErrSchemaTooNew: the database was migrated by a newer fairway.
var ErrSchemaTooNew = errors.New("sqlite: database schema is newer than this binary")

func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("bad migration file name %q", e.Name())
		}
		body, err := fs.ReadFile(migrationFS, "migrations/"+e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration versions must be 1..n without gaps; found %d at %d", m.version, i+1)
		}
	}
	return out, nil
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
			return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
		}
	}
	return nil
}

func apply(ctx context.Context, db *sql.DB, m migration, latest int) error {
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
	if current >= m.version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.name, time.Now().UnixMicro()); err != nil {
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
