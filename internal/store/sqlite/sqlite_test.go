package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/sqlstore"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// crashChildEnv names the database a re-executed test binary writes to until
// it is killed; see TestCrashDurability.
const crashChildEnv = "FAIRWAY_STORE_CRASH_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		os.Exit(crashChild(path))
	}
	goleak.VerifyTestMain(m)
}

func openTemp(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "sub", "dir", "fairway.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) store.Store { return openTemp(t) })
}

func TestPragmas(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	for pragma, want := range map[string]string{
		"journal_mode": "wal",
		"synchronous":  "1", // NORMAL: the syncer fsyncs the WAL after COMMIT
		"foreign_keys": "1",
		"busy_timeout": "10000",
		"temp_store":   "2",     // MEMORY: statement journals never spill to a file
		"cache_size":   "-4096", // writerCacheKiB: SQLite's commit scans it after a page split
	} {
		var got string
		if err := s.WConn.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("writer PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
	var qo, cache string
	if err := s.RDB.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&cache); err != nil || cache != "-32768" {
		t.Errorf("reader cache_size = %q, %v, want -32768 (32 MiB)", cache, err)
	}
	if err := s.RDB.QueryRowContext(ctx, "PRAGMA query_only").Scan(&qo); err != nil || qo != "1" {
		t.Errorf("reader query_only = %q, %v", qo, err)
	}
	if _, err := s.RDB.ExecContext(ctx, "DELETE FROM jobs"); err == nil {
		t.Error("the read pool accepted a write")
	}
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	j := store.Job{ID: "j", Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: time.Now()}
	if err := s.Write(ctx, func(w store.Writer) error { return w.JobInsert(ctx, j) }); err != nil {
		t.Fatal(err)
	}
	var version int
	if err := s.RDB.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != LatestVersion() || version < 1 {
		t.Fatalf("schema version %d, want %d", version, LatestVersion())
	}
	if _, err := s.WConn.ExecContext(ctx, "INSERT INTO schema_migrations VALUES (999, 'future', 0)"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, path)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("open of a newer schema: %v, want ErrSchemaTooNew", err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	for round := range 3 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("job-%d", round)
		j := store.Job{ID: id, Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: time.Now()}
		if err := s.Write(ctx, func(w store.Writer) error { return w.JobInsert(ctx, j) }); err != nil {
			t.Fatal(err)
		}
		got, err := s.JobListUnfinished(ctx)
		if err != nil || len(got) != round+1 {
			t.Fatalf("round %d: %d jobs, %v", round, len(got), err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestManyTransitionShapes goes past the statement cache: shapes beyond it
// still run (prepared per use).
func TestManyTransitionShapes(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	now := time.Now()
	setters := []func(*store.JobSet){
		func(js *store.JobSet) { js.Priority = store.Ptr(1) },
		func(js *store.JobSet) { js.LastError = store.Ptr("e") },
		func(js *store.JobSet) { js.RunAt = store.Ptr(now) },
		func(js *store.JobSet) { js.EnqueuedAt = store.Ptr(now) },
		func(js *store.JobSet) { js.Result = store.Ptr([]byte("r")) },
		func(js *store.JobSet) { js.Timeout = store.Ptr(time.Second) },
		func(js *store.JobSet) { js.Expected = store.Ptr(time.Second) },
		func(js *store.JobSet) { js.CancelRequested = store.Ptr(true) },
		func(js *store.JobSet) { js.WorkerID = store.Ptr("w") },
	}
	if err := s.Write(ctx, func(w store.Writer) error {
		if err := w.JobInsert(ctx, store.Job{ID: "j", Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: now}); err != nil {
			return err
		}
		for mask := range sqlstore.MaxShapes + 50 {
			p := store.JobTransitionParams{ID: "j", ExpectAttempt: 0, At: now,
				FromStates: []store.State{store.StatePending}}
			for b, set := range setters {
				if mask&(1<<b) != 0 {
					set(&p.Set)
				}
			}
			if err := w.JobTransition(ctx, p); err != nil {
				return fmt.Errorf("mask %d: %w", mask, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := s.Shapes(); n != sqlstore.MaxShapes {
		t.Errorf("%d cached shapes, want the cap %d", n, sqlstore.MaxShapes)
	}
}

// TestCrashDurability re-executes the test binary as a child that commits
// jobs in a loop and prints each committed batch's ids, kills it with
// SIGKILL mid-stream, reopens the database and checks that every job whose
// Write had returned is there. Three rounds on one file: each reopen
// recovers the WAL left by the killed writer.
func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	var all []string
	for round := range 3 {
		all = append(all, crashRound(t, path, 200+round*150)...)
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		got, err := s.JobGetMany(context.Background(), all)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(all) {
			t.Errorf("round %d: %d of %d acknowledged jobs survived the kill", round, len(got), len(all))
		}
		var check string
		if err := s.RDB.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
			t.Errorf("round %d: integrity_check = %q, %v", round, check, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d acknowledged jobs, all present", round, len(all))
	}
}

// crashRound runs one child until it has acknowledged at least killAfter
// jobs, kills it, and returns every id it acknowledged.
func crashRound(t *testing.T, path string, killAfter int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	var acked []string
	killed := false
	deadline := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	for {
		line, err := r.ReadString('\n')
		if err != nil { // EOF after the kill; a torn last line is not an ack
			break
		}
		acked = append(acked, strings.Fields(strings.TrimPrefix(line, "committed"))...)
		if !killed && len(acked) >= killAfter {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			killed = true
		}
	}
	_, _ = io.Copy(io.Discard, r)
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child ended before the kill (%d acks): %v", len(acked), err)
	}
	return acked
}

// crashChild commits batches of jobs forever, printing each batch's ids
// once it is acknowledged: odd batches as direct Writes (JobInsert), even
// ones as queued Writes (JobInsertBatched, up to four in flight, each
// printed when its channel reports it durable).
func crashChild(path string) int {
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		return 1
	}
	type inflight struct {
		ids     []string
		durable <-chan error
	}
	var pending []inflight
	ack := func(f inflight) bool {
		if err := <-f.durable; err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			return false
		}
		fmt.Fprintf(os.Stdout, "committed %s\n", strings.Join(f.ids, " "))
		return true
	}
	deadline := time.Now().Add(time.Minute)
	for batch := 0; time.Now().Before(deadline); batch++ {
		now := time.Now()
		ids := make([]string, 1+batch%7)
		queued := batch%2 == 0
		ch, err := s.WriteDeferred(ctx, func(w store.Writer) error {
			for i := range ids {
				ids[i] = store.NewID(now)
				j := benchJob(ids[i], now)
				insert := w.JobInsert
				if queued {
					insert = w.JobInsertBatched
				}
				if err := insert(ctx, j); err != nil {
					return err
				}
				if err := w.EventAppend(ctx, []store.Event{{JobID: j.ID, Tenant: j.Tenant, Type: store.EventSubmitted, At: now}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			return 1
		}
		pending = append(pending, inflight{ids, ch})
		for len(pending) > 4 || (!queued && len(pending) > 0) {
			if !ack(pending[0]) {
				return 1
			}
			pending = pending[1:]
		}
	}
	return 0
}

func TestSchemaStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fairway.db")
	cur, latest, err := SchemaStatus(context.Background(), path)
	if err != nil || cur != 0 || latest != LatestVersion() || latest < 10 {
		t.Fatalf("before: %d of %d (%v)", cur, latest, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reading the status created the file: %v", err)
	}
	st, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if cur, latest, err = SchemaStatus(context.Background(), path); err != nil || cur != latest {
		t.Fatalf("after open: %d of %d (%v)", cur, latest, err)
	}
}

// A relative path (the CLI's default data directory is "fairway-data") is
// read as relative to the working directory, not as a URI authority.
func TestSchemaStatusRelativePath(t *testing.T) {
	t.Chdir(t.TempDir())
	rel := filepath.Join("fairway-data", "fairway.db")
	st, err := Open(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	cur, latest, err := SchemaStatus(context.Background(), rel)
	if err != nil || cur != latest {
		t.Fatalf("status of %s: %d of %d (%v)", rel, cur, latest, err)
	}
}
