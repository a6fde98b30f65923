package sqlite

import (
	"net/url"
	"strings"
	"testing"
)

// SQLite counts no memory (SQLITE_CONFIG_MEMSTATUS off, mutexes.go): its
// allocator takes no global mutex, so after writes and reads the count
// stays 0.
func TestSQLiteCountsNoMemory(t *testing.T) {
	s := openTemp(t)
	if _, err := s.WConn.ExecContext(t.Context(), "CREATE TABLE scratch (x TEXT); INSERT INTO scratch VALUES ('a'), ('b')"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.RDB.QueryRowContext(t.Context(), "SELECT count(*) FROM scratch").Scan(&n); err != nil || n != 2 {
		t.Fatalf("count %d, %v", n, err)
	}
	if used := memoryUsed(); used != 0 {
		t.Errorf("sqlite3_memory_used() = %d, want 0: SQLite keeps its memory statistics", used)
	}
}

// Every connection is opened in SQLite's multi-thread mode (no mutex of
// its own): database/sql never uses one from two goroutines at once.
func TestConnectionsOpenWithoutTheirMutex(t *testing.T) {
	u, err := url.Parse(dsn("/x/fairway.db", options{cacheKiB: 1024}, url.Values{}))
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Query().Get("_mutex"); got != "no" {
		t.Errorf("dsn %s: _mutex=%q, want no", u, got)
	}
	if !strings.HasPrefix(u.String(), "file:") {
		t.Errorf("dsn %s", u)
	}
}
