package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store/postgres"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

func TestMigrateStatusAndUpOnSQLite(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCmd(t, "migrate", "status", "--data", dir)
	if code != exitNotFound || out != "" || !strings.Contains(errOut, "no database here (no fairway.db in it)") || !strings.Contains(errOut, "fairway migrate up --data "+dir) {
		t.Fatalf("status of an empty directory: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCmd(t, "migrate", "up", "--data", dir)
	if code != 0 || !strings.Contains(out, "migrated from version 0 to") {
		t.Fatalf("up: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCmd(t, "migrate", "--data", dir)
	if code != 0 || !strings.Contains(out, "current") {
		t.Fatalf("status after up: exit %d\n%s", code, out)
	}
	if v := sqlite.LatestVersion(); !strings.Contains(out, "schema version "+strconv.Itoa(v)) {
		t.Errorf("status does not name version %d: %s", v, out)
	}
	code, _, errOut = runCmd(t, "migrate", "sideways", "--data", dir)
	if code != exitUsage || !strings.Contains(errOut, "the verbs are status and up") {
		t.Errorf("unknown verb: exit %d %s", code, errOut)
	}
	code, _, errOut = runCmd(t, "migrate", "--store", "mysql://x")
	if code != exitUsage || !strings.Contains(errOut, "want a postgres://") {
		t.Errorf("bad --store: exit %d %s", code, errOut)
	}
}

// Item 7 of issue 28: the default --data is relative, and a directory
// that does not exist holds no database rather than pending migrations.
func TestMigrateStatusRelativeAndMissingData(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errOut := runCmd(t, "migrate", "status", "--data", "/nonexistent/dir")
	if code != exitNotFound || out != "" || !strings.Contains(errOut, "/nonexistent/dir/fairway.db: no database here (no such directory)") {
		t.Fatalf("status of a missing directory: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut = runCmd(t, "migrate", "up"); code != 0 || !strings.Contains(out, "fairway-data/fairway.db: migrated from version 0") {
		t.Fatalf("up in the default ./fairway-data: exit %d\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{{"migrate", "status"}, {"migrate", "status", "--data", "fairway-data"}, {"migrate", "status", "--data", "./fairway-data/"}} {
		code, out, errOut := runCmd(t, args...)
		if code != 0 || !strings.Contains(out, "schema version "+strconv.Itoa(sqlite.LatestVersion())+", current") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

func TestMigrateUpOnPostgres(t *testing.T) {
	url := pgtest.URL(t)
	if code, out, _ := runCmd(t, "migrate", "status", "--store", url); code != 1 || !strings.Contains(out, "schema version 0") {
		t.Fatalf("status: exit %d %s", code, out)
	}
	if code, out, errOut := runCmd(t, "migrate", "up", "--store", url); code != 0 {
		t.Fatalf("up: exit %d %s%s", code, out, errOut)
	}
	code, out, _ := runCmd(t, "migrate", "status", "--store", url)
	if code != 0 || !strings.Contains(out, "schema version "+strconv.Itoa(postgres.LatestVersion())+", current") {
		t.Fatalf("status after up: exit %d %s", code, out)
	}
}
