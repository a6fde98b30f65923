package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

func filePageSize(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.RDB.QueryRowContext(context.Background(), "PRAGMA page_size").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A database file the store creates has pages of pageSize bytes.
func TestANewFileHasTheStoresPageSize(t *testing.T) {
	s := openTemp(t)
	if got := filePageSize(t, s); got != pageSize {
		t.Fatalf("page_size = %d, want %d", got, pageSize)
	}
}

// A file made with another page size (8 KiB: fairway's before
// 2026-11-27) keeps it: the store opens it, migrates it and writes to it
// as to any other.
func TestAnOlderFileKeepsItsPageSize(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fairway.db")
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // the page size is the connection's until the first page is written
	if _, err := db.ExecContext(ctx, "PRAGMA page_size = 8192"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE before_the_store (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode = WAL"); err != nil {
		t.Fatal(err)
	}
	var old int
	if err := db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&old); err != nil || old == pageSize {
		t.Fatalf("the older file's page_size = %d (%v): the test needs another size than %d", old, err, pageSize)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := filePageSize(t, s); got != old {
		t.Fatalf("page_size = %d after the store opened the file, want it kept at %d", got, old)
	}
	id := store.NewID(time.Now())
	if err := s.Write(ctx, insertQueued(ctx, id)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.JobGet(ctx, id); err != nil {
		t.Fatal(err)
	}
}
