package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fairwayhq/fairway/internal/store/postgres"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

func init() {
	commands["migrate"] = command{summary: "show or apply the store's schema migrations (status, up)", run: runMigrate}
}

const migrateAbout = `Shows (status) or applies (up) the store's schema migrations. The server
applies pending migrations when it starts; run 'fairway migrate up' to do it
beforehand, e.g. before rolling out a new version to several servers on one
PostgreSQL database. The store is --store (a postgres:// URL), else SQLite in
--data (or the config file's server.store / server.data_dir).

  fairway migrate status [--store URL | --data DIR]
  fairway migrate up     [--store URL | --data DIR]

status exits 0 when the schema is current, 1 when migrations are pending
(or the database is newer than this binary), 3 when --data holds no
database, 5 when the store cannot be read.`

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verb := "status"
	if len(args) > 0 && (args[0] == "status" || args[0] == "up") {
		verb, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	var f serverFlags
	fs.StringVar(&f.configPath, "config", "", "YAML config file naming the store (server.store, server.data_dir)")
	fs.StringVar(&f.dataDir, "data", "", "data directory of the SQLite store (default from config, else ./fairway-data)")
	fs.StringVar(&f.storeURL, "store", "", "a postgres:// `URL` (default from config, else SQLite in --data)")
	if code := parseCommandFlags(fs, "status|up [flags]", migrateAbout, args, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fairway migrate: unexpected argument %q; the verbs are status and up\n", fs.Arg(0))
		return exitUsage
	}
	cfg, err := f.load()
	if err != nil {
		fmt.Fprintf(stderr, "fairway migrate: %v\n", err)
		return exitUsage
	}
	if verb == "status" && !postgres.IsURL(cfg.Server.Store) {
		if missing := noDatabase(cfg.Server.DataDir); missing != "" {
			fmt.Fprintf(stderr, "fairway migrate: %s: no database here (%s); check --data, or create one at schema version %d with: fairway migrate up --data %s\n",
				sqlitePath(cfg.Server.DataDir), missing, sqlite.LatestVersion(), cfg.Server.DataDir)
			return exitNotFound
		}
	}
	where, current, latest, err := schemaStatus(ctx, cfg.Server.Store, cfg.Server.DataDir)
	if err == nil && verb == "up" && current < latest {
		err = migrateUp(ctx, cfg.Server.Store, cfg.Server.DataDir)
		if err == nil {
			fmt.Fprintf(stdout, "%s: migrated from version %d to %d\n", where, current, latest)
			return exitOK
		}
	}
	switch {
	case errors.Is(err, sqlite.ErrSchemaTooNew) || errors.Is(err, postgres.ErrSchemaTooNew) || err == nil && current > latest:
		fmt.Fprintf(stderr, "fairway migrate: %s: schema version %d is newer than this binary's %d: upgrade fairway\n", where, current, latest)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "fairway migrate: %s: %v\n", where, err)
		return exitUnavailable
	case current == latest:
		fmt.Fprintf(stdout, "%s: schema version %d, current\n", where, current)
		return exitOK
	}
	fmt.Fprintf(stdout, "%s: schema version %d, %d migration(s) pending (run: fairway migrate up)\n", where, current, latest-current)
	return 1
}

// noDatabase says why the data directory holds no SQLite database ("no
// such directory", "no fairway.db in it"), or "" when it holds one.
func noDatabase(dataDir string) string {
	if _, err := os.Stat(dataDir); errors.Is(err, os.ErrNotExist) {
		return "no such directory"
	}
	if _, err := os.Stat(sqlitePath(dataDir)); errors.Is(err, os.ErrNotExist) {
		return "no " + filepath.Base(sqlitePath(dataDir)) + " in it"
	}
	return ""
}

// schemaStatus reads the store's schema version without changing it.
func schemaStatus(ctx context.Context, storeURL, dataDir string) (where string, current, latest int, err error) {
	if postgres.IsURL(storeURL) {
		current, latest, err = postgres.SchemaStatus(ctx, storeURL)
		return postgres.Redact(storeURL), current, latest, err
	}
	current, latest, err = sqlite.SchemaStatus(ctx, sqlitePath(dataDir))
	return sqlitePath(dataDir), current, latest, err
}

// migrateUp applies the pending migrations.
func migrateUp(ctx context.Context, storeURL, dataDir string) error {
	if postgres.IsURL(storeURL) {
		_, err := postgres.Migrate(ctx, storeURL)
		return err
	}
	lock, err := datadirLock(dataDir)
	if err != nil {
		return err
	}
	defer lock()
	st, err := sqlite.Open(ctx, sqlitePath(dataDir))
	if err != nil {
		return err
	}
	return st.Close()
}
