package sqlite

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"
)

// migratedBefore opens a new database file with every migration before
// the one named name applied, for a test to write rows in an old schema
// and then Open the file (which applies the rest). It returns the open
// database and its path.
func migratedBefore(t *testing.T, name string) (*sql.DB, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fairway.db")
	db, err := sql.Open("sqlite3", dsn(path, options{}, url.Values{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY,
		name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name == name {
			return db, path
		}
		if err := apply(ctx, db, m, len(ms)); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("no migration named %q", name)
	return nil, ""
}

// reopen closes db, made by migratedBefore, and Opens its file, which
// applies the remaining migrations; the store closes with the test.
func reopen(t *testing.T, db *sql.DB, path string) *Store {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
