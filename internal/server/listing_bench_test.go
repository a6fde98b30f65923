package server

import (
	"context"
	"database/sql"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/postgres"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

// BenchmarkFirstPageOfRunningJobs measures GET /api/v1/jobs?state=running
// (the first page, 50 jobs) on a server holding FAIRWAY_BENCH_PENDING
// pending jobs (1,000,000 unless set) and 100 running ones, on SQLite
// and, with FAIRWAY_TEST_POSTGRES_URL, on PostgreSQL. The rows are
// written straight into a temporary database (a temporary file, a
// private schema), which is removed at the end. It also reports the same
// page read from the store alone (store-ms: JobList, which walks the
// unfinished jobs, as a standby with no leader does), the rebuild at
// start, and the process's resident memory once the server holds them,
// in its log (-v).
func BenchmarkFirstPageOfRunningJobs(b *testing.B) {
	pending := 1_000_000
	if v := os.Getenv("FAIRWAY_BENCH_PENDING"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			b.Fatalf("FAIRWAY_BENCH_PENDING=%q: want a number of at least 1000", v)
		}
		pending = n
	}
	// A sub-benchmark's function runs more than once (b.N = 1 first):
	// each store is seeded and its server started once.
	// Their resources belong to the outer benchmark.
	outer := b
	servers := map[string]*harness{}
	b.Run("sqlite", func(b *testing.B) {
		if servers["sqlite"] == nil {
			st, err := sqlite.Open(context.Background(), filepath.Join(outer.TempDir(), "fairway.db"))
			if err != nil {
				b.Fatal(err)
			}
			outer.Cleanup(func() { st.Close() })
			seedListing(b, st.WConn, false, pending)
			servers["sqlite"] = startListing(outer, b, st)
		}
		benchRunningPage(b, servers["sqlite"])
	})
	b.Run("postgres", func(b *testing.B) {
		if servers["postgres"] == nil {
			url := pgtest.URL(outer)
			st, err := postgres.Open(context.Background(), url)
			if err != nil {
				b.Fatal(err)
			}
			outer.Cleanup(func() { st.Close() })
			db := pgtest.Open(outer, url)
			conn, err := db.Conn(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			seedListing(b, conn, true, pending)
			servers["postgres"] = startListing(outer, b, st)
		}
		benchRunningPage(b, servers["postgres"])
	})
}

// seedRunning is how many running jobs seedListing writes.
const seedRunning = 100

// seedListing writes n pending jobs and seedRunning running ones (on
// worker w-bench) spread among them, and that worker.
func seedListing(b *testing.B, conn *sql.Conn, pg bool, n int) {
	b.Helper()
	began := time.Now()
	runningEvery := (n + seedRunning) / seedRunning
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	rows := `SELECT printf('bench-%08d', i), 'acme', 'noop', 'default', 0,
			CASE WHEN i % ` + fmt.Sprint(runningEvery) + ` = 0 THEN 'running' ELSE 'pending' END,
			CASE WHEN i % ` + fmt.Sprint(runningEvery) + ` = 0 THEN 1 ELSE 0 END,
			CASE WHEN i % ` + fmt.Sprint(runningEvery) + ` = 0 THEN 'w-bench' END,
			CASE WHEN i % ` + fmt.Sprint(runningEvery) + ` = 0 THEN ?2 + i END,
			CASE WHEN i % ` + fmt.Sprint(runningEvery) + ` = 0 THEN ?2 + 86400000000 END,
			?2 + i, ?2 + i, ?2 + i`
	var q string
	if pg {
		rows = strings.NewReplacer("printf('bench-%08d', i)", "'bench-' || lpad(i::text, 8, '0')", "?2", "$2::bigint").Replace(rows)
		q = `INSERT INTO jobs (id, tenant, type, lane, priority, state, attempt, worker_id, started_at, lease_expires_at,
			created_at, updated_at, enqueued_at) ` + rows + ` FROM generate_series(1, $1) AS i`
	} else {
		q = `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?1)
			INSERT INTO jobs (id, tenant, type, lane, priority, state, attempt, worker_id, started_at, lease_expires_at,
			created_at, updated_at, enqueued_at) ` + rows + ` FROM seq`
	}
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, q, runningEvery*seedRunning, t0); err != nil {
		b.Fatal(err)
	}
	// The spec lives in job_specs (store doc.go, "The hot row and its indexes").
	if _, err := conn.ExecContext(ctx, `INSERT INTO job_specs (job_id, command) SELECT id, '["true"]' FROM jobs`); err != nil {
		b.Fatal(err)
	}
	wq := `INSERT INTO workers (id, name, slots, state, registered_at, last_seen_at) VALUES ('w-bench', 'bench', 100, 'active', ?, ?)`
	if pg {
		wq = strings.NewReplacer("?, ?", "$1, $2").Replace(wq)
	}
	if _, err := conn.ExecContext(ctx, wq, t0, t0); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d pending and %d running jobs in %v", runningEvery*seedRunning-seedRunning, seedRunning,
		time.Since(began).Round(time.Millisecond))
}

// startListing measures the store's own page, then starts a server on
// st, stopped when outer ends, and reports its rebuild.
func startListing(outer, b *testing.B, st store.Store) *harness {
	ctx := context.Background()
	p := store.JobListParams{States: []store.State{store.StateRunning}, Limit: 50}
	began := time.Now()
	page, err := st.JobList(ctx, p)
	if err != nil || len(page.Jobs) != 50 {
		b.Fatalf("store JobList: %d jobs, %v", len(page.Jobs), err)
	}
	storeTook := time.Since(began)

	cfg := defaultConfig()
	cfg.Server.LeaseTTL = cfg.Server.LeaseTTL * 20 // w-bench never calls in
	srv, err := New(Options{Store: st, Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	began = time.Now()
	if err := srv.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("the store's own first page of running jobs: %v; the server's rebuild: %v; resident memory then: %d MiB",
		storeTook.Round(time.Microsecond), time.Since(began).Round(time.Millisecond), rssKiB()/1024)
	// VmRSS right after the rebuild holds the rebuild's garbage as well;
	// the live heap after a collection is what the process keeps (the
	// dispatcher's state, plus an earlier sub-benchmark's server).
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.Logf("live heap after a collection: %d MiB", ms.HeapAlloc>>20)
	h := &harness{t: b, srv: srv, http: httptest.NewServer(srv.Handler())}
	outer.Cleanup(h.stop)
	return h
}

func benchRunningPage(b *testing.B, h *harness) {
	h.t = b
	b.ResetTimer()
	for range b.N {
		var l api.JobList
		if code := h.do("GET", "/jobs?state=running&limit=50", nil, &l); code != 200 || len(l.Jobs) != 50 {
			b.Fatalf("HTTP %d, %d jobs", code, len(l.Jobs))
		}
	}
}

// rssKiB is this process's resident set (VmRSS), 0 where unknown.
func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
