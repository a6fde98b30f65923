package bench

import (
	"bytes"
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/internal/pgtest"
)

// benchEmbedded runs `fairway bench <args> --embedded`, tiny, and returns
// its summary lines as key=value maps, each checked ok with no duplicate
// start and its workers in process.
func benchEmbedded(t *testing.T, args ...string) []map[string]string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append(args, "--embedded",
		"--jobs", "200", "--concurrency", "20", "--producers", "4", "--duration", "1s", "--max-jobs", "300",
		"--rate", "100", "--low", "300", "--high", "20", "--high-after", "50", "--prio-concurrency", "5",
		"--warmup", "100ms", "--settle", "0", "--batch", "100",
		"--timeout", "40s", "--drain-timeout", "30s", "--max-runtime", "2m", "--data-dir", t.TempDir())
	if code := Main(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	t.Logf("stdout:\n%s", stdout.String())
	var out []map[string]string
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		_, kv := parseLine(t, l)
		if kv["status"] != "ok" || kv["dup_starts"] != "0" || !strings.HasSuffix(kv["config"], ",in_process") {
			t.Errorf("%s: status=%s dup_starts=%s config=%s", kv["workload"], kv["status"], kv["dup_starts"], kv["config"])
		}
		out = append(out, kv)
	}
	return out
}

// Every workload runs with --embedded: producers and workers in process.
func TestWorkloadsEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	lines := benchEmbedded(t, "all")
	if len(lines) != len(workloads) {
		t.Fatalf("%d lines, want %d", len(lines), len(workloads))
	}
	for i, w := range workloads {
		if lines[i]["workload"] != w.name || lines[i]["durability"] != "sqlite:wal,fsync_before_ack" {
			t.Errorf("line %d: workload=%s durability=%s, want %s on SQLite", i, lines[i]["workload"], lines[i]["durability"], w.name)
		}
	}
}

// --embedded --store: the embedded instance leads one term on PostgreSQL
// and its commits are fenced by it, as the server's are.
func TestDrainEmbeddedOnPostgresIsFenced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	pg := pgtest.URL(t)
	// A long lease: the test checks the fence, and a loaded CI machine
	// once took longer than the default's renewal bound (2 s / 3).
	kv := benchEmbedded(t, "drain", "--store", pg, "--leader-ttl", "20s")[0]
	if kv["started"] != "200" || kv["durability"] != "postgres:synchronous_commit,commit_before_ack,leader_fenced" {
		t.Errorf("drain: started=%s durability=%s", kv["started"], kv["durability"])
	}
	db, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var terms, commits int64
	if err := db.QueryRow("SELECT count(DISTINCT term), coalesce(sum(commits), 0) FROM leader_terms").Scan(&terms, &commits); err != nil {
		t.Fatal(err)
	}
	if terms != 1 || commits < 10 {
		t.Errorf("leader_terms: %d terms, %d fenced commits; want 1 term and its commits counted", terms, commits)
	}
}
