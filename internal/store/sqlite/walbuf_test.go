package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// copyCrashImage copies the database and its WAL (not the wal-index) into
// a new directory, as a crash would leave them, and opens the copy with
// SQLite's own unix VFS: recovery rebuilds the wal-index from the WAL,
// keeping only frames whose checksums chain up to a commit.
func copyCrashImage(t *testing.T, path string) *sql.DB {
	t.Helper()
	dir := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		src, err := os.Open(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(dir, "copy.db"+suffix))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		_ = src.Close()
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "copy.db")+"?vfs=unix")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func countJobs(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM jobs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWalbufCoalescesCommits: every connection of a store opens its WAL
// through the shim, linked to its database file, and a commit of many
// frames reaches the WAL file as one write.
func TestWalbufCoalescesCommits(t *testing.T) {
	before := readWalbufStats()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "w.db"), WithCheckpointInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.RDB.PingContext(ctx); err != nil { // a reader opens the WAL
		t.Fatal(err)
	}
	opened := readWalbufStats()
	if opened.Linked-before.Linked < 2 || opened.Unlinked != before.Unlinked {
		t.Fatalf("WAL files linked %d, not linked %d; want the writer's and a reader's linked, none unlinked",
			opened.Linked-before.Linked, opened.Unlinked-before.Unlinked)
	}
	for i := range 50 {
		ids := make([]string, 40)
		for k := range ids {
			ids[k] = fmt.Sprintf("job-%03d-%02d", i, k)
		}
		b := readWalbufStats()
		if err := s.Write(ctx, insertQueued(ctx, ids...)); err != nil {
			t.Fatal(err)
		}
		a := readWalbufStats()
		in, out, direct, commits := a.WritesIn-b.WritesIn, a.WritesOut-b.WritesOut, a.Direct-b.Direct, a.Commits-b.Commits
		// A restart of the WAL writes its header at offset 0 first: one
		// write straight through.
		if in < 10 || commits != 1 || out-direct != 1 || direct > 1 {
			t.Fatalf("commit %d: SQLite wrote %d times, the shim %d (%d straight through, %d commit flushes); want one buffered write for the commit",
				i, in, out, direct, commits)
		}
	}
}

// TestWalbufCommitsAreInTheFile: right after Write returns, a reader
// connection sees the commit, and so does SQLite's recovery of a copy of
// the files (the commit's frames are in the WAL file, not in a buffer).
func TestWalbufCommitsAreInTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v.db")
	s, err := Open(ctx, path, WithCheckpointInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 1; i <= 400; i++ {
		var fn func(w store.Writer) error
		if i%2 == 0 {
			fn = insertJob(ctx, fmt.Sprintf("direct-%04d", i)) // a Write of its own
		} else {
			fn = insertQueued(ctx, fmt.Sprintf("queued-%04d", i)) // the applier's
		}
		if err := s.Write(ctx, fn); err != nil {
			t.Fatal(err)
		}
		if n := countJobs(t, s.RDB); n != i {
			t.Fatalf("after %d commits a reader sees %d jobs", i, n)
		}
		if i%40 == 0 {
			if n := countJobs(t, copyCrashImage(t, path)); n != i {
				t.Fatalf("after %d commits the files hold %d jobs", i, n)
			}
		}
	}
}

// TestWalbufOverwrittenFrames: a transaction larger than its page cache
// spills pages to the WAL, then changes them again (SQLite overwrites
// their frames in place), rolls back to a savepoint (later frames are
// written over the rolled-back ones) and, at commit, rewrites the
// checksums of its frames: writes that do not continue the previous one.
// Readers and a recovered copy see exactly the committed content.
func TestWalbufOverwrittenFrames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "o.db")
	o := options{busyTimeout: 10 * time.Second, cacheKiB: 40} // 10 pages of 4 KiB
	open := func(q url.Values) *sql.DB {
		db, err := sql.Open("sqlite3", dsn(path, o, q))
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	w := open(url.Values{"_journal_mode": {"WAL"}, "_synchronous": {"NORMAL"}})
	r := open(url.Values{"_query_only": {"true"}})
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := w.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
	sum := func(db *sql.DB) string {
		t.Helper()
		h := sha256.New()
		rows, err := db.Query("SELECT id, v FROM t ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int
			var v string
			if err := rows.Scan(&id, &v); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "%d=%s;", id, v)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", h.Sum(nil))
	}
	want := map[int]string{}
	wantSum := func() string {
		h := sha256.New()
		for id := 1; id <= len(want); id++ {
			fmt.Fprintf(h, "%d=%s;", id, want[id])
		}
		return fmt.Sprintf("%x", h.Sum(nil))
	}
	b := readWalbufStats()
	for round := range 5 {
		tx, err := w.Begin()
		if err != nil {
			t.Fatal(err)
		}
		txExec := func(q string, args ...any) {
			t.Helper()
			if _, err := tx.Exec(q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		pad := strings.Repeat("x", 150)
		for id := 1; id <= 1000; id++ { // ~50 pages: spills
			txExec("INSERT INTO t (id, v) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET v = excluded.v", id, fmt.Sprintf("r%d-a-%s", round, pad))
		}
		txExec("UPDATE t SET v = ?||id||?", fmt.Sprintf("r%d-b-", round), pad) // the spilled pages again
		txExec("SAVEPOINT s")
		txExec("UPDATE t SET v = 'rolled back'")
		txExec("ROLLBACK TO s")
		txExec("UPDATE t SET v = v||'-c' WHERE id % 3 = 0")
		txExec("RELEASE s")
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for id := 1; id <= 1000; id++ {
			want[id] = fmt.Sprintf("r%d-b-%d%s", round, id, pad)
			if id%3 == 0 {
				want[id] += "-c"
			}
		}
		// A fresh transaction appends the pages it spills; the first of
		// them, evicted from the cache, is read back from frames still
		// in the buffer.
		tx, err = w.Begin()
		if err != nil {
			t.Fatal(err)
		}
		txExec("UPDATE t SET v = v||'-d' WHERE id <= 400")
		for _, id := range []int{1, 2, 30, 200} {
			var v string
			if err := tx.QueryRow("SELECT v FROM t WHERE id = ?", id).Scan(&v); err != nil {
				t.Fatal(err)
			}
			if v != want[id]+"-d" {
				t.Fatalf("round %d: the transaction reads back row %d as %.20q", round, id, v)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for id := 1; id <= 400; id++ {
			want[id] += "-d"
		}
		if got := sum(r); got != wantSum() {
			t.Fatalf("round %d: a reader sees other content", round)
		}
		if got := sum(copyCrashImage(t, path)); got != wantSum() {
			t.Fatalf("round %d: the recovered files hold other content", round)
		}
	}
	a := readWalbufStats()
	t.Logf("SQLite wrote %d times, the shim %d (%d straight through)", a.WritesIn-b.WritesIn, a.WritesOut-b.WritesOut, a.Direct-b.Direct)
	if a.Direct-b.Direct < 10 {
		t.Errorf("%d writes went straight through: the transactions did not overwrite frames", a.Direct-b.Direct)
	}
	var ok string
	if err := r.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %q, %v", ok, err)
	}
}

// TestWalbufFailedFlush: a flush that fails fails the COMMIT that needed
// it; the connection's WAL then refuses further I/O, and the store its
// writes; what was acknowledged before is in the files.
func TestWalbufFailedFlush(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "f.db")
	s, err := Open(ctx, path, WithCheckpointInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := s.Write(ctx, insertJob(ctx, fmt.Sprintf("ok-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	walbufFailFlushes(1)
	defer walbufFailFlushes(0)
	if err := s.Write(ctx, insertJob(ctx, "lost")); err == nil || !strings.Contains(err.Error(), "I/O") {
		t.Fatalf("Write with a failed flush: %v, want a disk I/O error", err)
	}
	if err := s.Write(ctx, insertJob(ctx, "after")); err == nil {
		t.Fatal("a Write after a failed flush succeeded")
	}
	_ = s.Close() // reports the failed WAL
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.JobListUnfinished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range got {
		ids = append(ids, j.ID)
	}
	if len(ids) != 10 || strings.Contains(strings.Join(ids, ","), "lost") || strings.Contains(strings.Join(ids, ","), "after") {
		t.Fatalf("after reopening: %v, want ok-0..ok-9", ids)
	}
}
