// Package pgtest gives a test a PostgreSQL schema of its own on the test
// server: FAIRWAY_TEST_POSTGRES_URL names the server (CI points it at
// 127.0.0.1:5432); without it the test is skipped, unless
// FAIRWAY_REQUIRE_POSTGRES=1 (CI) makes that a failure.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the pgx database/sql driver
)

// URL creates a fresh schema and returns the test server's URL with
// search_path set to it, so that everything a store or a process opened
// with it creates lands there. The schema is dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("FAIRWAY_TEST_POSTGRES_URL")
	if base == "" {
		if os.Getenv("FAIRWAY_REQUIRE_POSTGRES") == "1" {
			t.Fatal("FAIRWAY_TEST_POSTGRES_URL is not set, and FAIRWAY_REQUIRE_POSTGRES=1")
		}
		t.Skip("FAIRWAY_TEST_POSTGRES_URL is not set: PostgreSQL tests skipped")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: connect to FAIRWAY_TEST_POSTGRES_URL: %v", err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("fw_test_%x", rand.Uint64())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { drop(t, base, schema) })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: FAIRWAY_TEST_POSTGRES_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// drop removes the schema, ending any session still using it first.
func drop(t testing.TB, base, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Logf("pgtest: drop %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
		t.Logf("pgtest: drop %s: %v", schema, err)
	}
}

// Open opens a database/sql pool on url (the pgx driver), closed when the
// test ends.
func Open(t testing.TB, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
