package sqlite

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// A transition of a job whose insert is held in the same Write is
// applied to the held row: the row is the one an insert and an UPDATE
// leave, and no UPDATE runs (counted by a trigger).
func TestFoldedRows(t *testing.T) {
	ctx := context.Background()
	storetest.CheckFoldedRows(t, func(t *testing.T, fold bool) (store.Store, *sql.DB) {
		path := filepath.Join(t.TempDir(), "fairway.db")
		s, err := Open(ctx, path, func(o *options) { o.noFold = !fold })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		db, err := sql.Open("sqlite3", dsn(path, options{busyTimeout: 5e9}, url.Values{}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return s, db
	}, []string{
		`CREATE TABLE fold_updates (n INTEGER NOT NULL)`,
		`INSERT INTO fold_updates VALUES (0)`,
		`CREATE TRIGGER fold_count AFTER UPDATE ON jobs BEGIN UPDATE fold_updates SET n = n + 1; END`,
	})
}
