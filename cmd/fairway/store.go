package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/datadir"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/postgres"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
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
func sqlitePath(dataDir string) string { return filepath.Join(dataDir, "fairway.db") }

// openedStore is a store with what closes it and a description for people.
type openedStore struct {
	store.Store
	where   string // "SQLite in DIR" or the redacted URL
	release func()
}

// Close closes the store and releases what guarded it.
func (o *openedStore) Close() error {
	err := o.Store.Close()
	o.release()
	return err
}

// openStore opens the configured store: SQLite in the data directory,
// locked against a second server on it, or PostgreSQL.
func openStore(ctx context.Context, cfg config.Config) (*openedStore, error) {
	if postgres.IsURL(cfg.Server.Store) {
		st, err := postgres.Open(ctx, cfg.Server.Store)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", postgres.Redact(cfg.Server.Store), err)
		}
		return &openedStore{Store: st, where: postgres.Redact(cfg.Server.Store), release: func() {}}, nil
	}
	release, err := datadirLock(cfg.Server.DataDir)
	if err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, sqlitePath(cfg.Server.DataDir))
	if err != nil {
		release()
		return nil, fmt.Errorf("open store: %w", err)
	}
	return &openedStore{Store: st, where: "data in " + cfg.Server.DataDir, release: release}, nil
}

// datadirLock takes the data directory's lock (the one a server holds) and
// returns its release.
func datadirLock(dir string) (func(), error) {
	lock, err := datadir.Acquire(dir)
	if err != nil {
		return nil, err
	}
	return func() { _ = lock.Release() }, nil
}
