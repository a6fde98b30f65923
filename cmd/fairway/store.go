package main

import (
	"fmt"

	"github.com/fairwayhq/fairway/internal/instance"
	"github.com/fairwayhq/fairway/internal/store/postgres"
)

// checkStoreURL refuses a --store that is neither empty (SQLite in the
// data directory) nor a PostgreSQL URL.
func checkStoreURL(storeURL string) error {
	if storeURL == "" || postgres.IsURL(storeURL) {
		return nil
	}
	return fmt.Errorf("--store %q: want a postgres://user@host:5432/db URL, or no --store for SQLite in --data", postgres.Redact(storeURL))
}

// sqlitePath is the SQLite database file of a data directory.
func sqlitePath(dataDir string) string { return instance.SQLitePath(dataDir) }

// datadirLock takes the data directory's lock (the one a server holds) and
// returns its release.
func datadirLock(dir string) (func(), error) { return instance.LockDataDir(dir) }
