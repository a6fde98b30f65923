package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/pgtest"
)

func TestPct(t *testing.T) {
	ns := func(ms ...int64) []int64 {
		out := make([]int64, len(ms))
		for i, v := range ms {
			out[i] = v * 1e6
		}
		return out
	}
	tests := []struct {
		vals []int64
		q    float64
		want float64
	}{
		{ns(1), 0.5, 1},
		{ns(1, 2), 0.5, 1},
		{ns(1, 2, 3, 4), 0.5, 2},
		{ns(1, 2, 3, 4), 0.75, 3},
		{ns(1, 2, 3, 4), 0.99, 4},
		{ns(1, 2, 3, 4), 1, 4},
		{ns(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.95, 10},
		{ns(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.9, 9},
		{ns(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.01, 1},
	}
	for _, tc := range tests {
		if got := pct(tc.vals, tc.q); got != tc.want {
			t.Errorf("pct(%v, %v) = %v, want %v", tc.vals, tc.q, got, tc.want)
		}
	}
	if got := pct(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("pct(nil) = %v, want NaN", got)
	}
}

func TestAddLatencies(t *testing.T) {
	l := &line{}
	lat := []int64{3e6, 1e6, 2e6} // unsorted on purpose
	addLatencies(l, "", lat, 0, 0.5, 0.99, 1)
	if got, want := l.String(), "p50_ms=2.00 p99_ms=3.00 max_ms=3.00"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if lat[0] != 3e6 {
		t.Error("addLatencies sorted its input in place")
	}
	// One missing job out of four: p50 is a real value, p99 and max +Inf.
	l = &line{}
	addLatencies(l, "high_wait_", lat, 1, 0.5, 0.99, 1)
	if got, want := l.String(), "high_wait_p50_ms=2.00 high_wait_p99_ms=+Inf high_wait_max_ms=+Inf"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	l = &line{}
	addLatencies(l, "insert_", nil, 0, 0.5)
	if got, want := l.String(), "insert_p50_ms=NaN"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLineFormat(t *testing.T) {
	l := &line{}
	l.add("a", 1234.5).add("b", 12.345).add("c", 0.12345).add("d", math.NaN()).
		add("e", 1500*time.Millisecond).add("f", 42).add("g", "with space\tand\ttab").
		add("h", int64(-7)).add("i", -250.4).add("j", math.Inf(1))
	want := "a=1234 b=12.35 c=0.123 d=NaN e=1.500 f=42 g=with_space_and_tab h=-7 i=-250 j=+Inf"
	if got := l.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestRate(t *testing.T) {
	if got := rate(500, 2*time.Second); got != 250 {
		t.Errorf("rate = %v, want 250", got)
	}
	if got := rate(1, 0); !math.IsNaN(got) {
		t.Errorf("rate over 0s = %v, want NaN", got)
	}
}

func TestRecorder(t *testing.T) {
	r := newRecorder(3)
	now := time.Now().UnixNano()
	r.onStart(Job{Seq: 2, EnqueuedAt: now - int64(time.Millisecond)})
	r.onStart(Job{Seq: 2, EnqueuedAt: now})
	r.onStart(Job{Seq: 0})
	r.onStart(Job{Seq: 4})
	r.onStart(Job{Seq: 3, EnqueuedAt: now})
	if got := r.started.Load(); got != 2 {
		t.Errorf("started = %d, want 2", got)
	}
	if got := r.dups.Load(); got != 1 {
		t.Errorf("dups = %d, want 1", got)
	}
	if got := r.unknown.Load(); got != 2 {
		t.Errorf("unknown = %d, want 2", got)
	}
	if l := r.lat[2].Load(); l < int64(time.Millisecond) {
		t.Errorf("latency of job 2 = %v, want >= 1ms", time.Duration(l))
	}
	first, last := r.firstStart(1, 3), r.lastStart(1, 3)
	if first == 0 || last < first || first != r.start[2].Load() || last != r.start[3].Load() {
		t.Errorf("firstStart=%d lastStart=%d, starts %d %d", first, last, r.start[2].Load(), r.start[3].Load())
	}
	if r.firstStart(1, 1) != 0 || r.lastStart(1, 1) != 0 {
		t.Error("a job that never started has a start time")
	}
	ctx := context.Background()
	if !r.waitStarted(ctx, 2, 0) {
		t.Error("waitStarted(2) = false with 2 started")
	}
	if r.waitStarted(ctx, 3, 5*time.Millisecond) {
		t.Error("waitStarted(3) = true with 2 started")
	}
}

func TestBoundedWait(t *testing.T) {
	if got := boundedWait(context.Background(), time.Second); got != time.Second {
		t.Errorf("no deadline: %v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if got := boundedWait(ctx, time.Hour); got > 50*time.Millisecond || got <= 0 {
		t.Errorf("deadline in 50ms: %v", got)
	}
}

func TestSpec(t *testing.T) {
	s := spec(Job{Seq: 12, EnqueuedAt: 34, Class: ClassHigh})
	if s.Type != jobType || string(s.Payload) != `{"s":12,"t":34,"c":1}` || s.Priority == nil || *s.Priority != priorityHigh {
		t.Errorf("high spec: %+v payload %s", s, s.Payload)
	}
	s = spec(Job{Seq: 1, EnqueuedAt: 2, Class: ClassLow})
	if string(s.Payload) != `{"s":1,"t":2,"c":2}` || s.Priority == nil || *s.Priority != priorityLow {
		t.Errorf("low spec: %+v payload %s", s, s.Payload)
	}
	s = spec(Job{Seq: 5, EnqueuedAt: 6})
	if string(s.Payload) != `{"s":5,"t":6}` || s.Priority != nil {
		t.Errorf("normal spec: %+v payload %s", s, s.Payload)
	}
}

// keys are the keys every line of a workload must have, in order.
var keys = map[string][]string{
	"drain": {"system", "workload", "jobs", "concurrency", "insert_mode", "insert_batch", "insert_goroutines",
		"insert_s", "insert_jobs_per_s", "work_s", "work_jobs_per_s", "handlers_done_s", "first_start_ms",
		"started", "dup_starts", "run_s", "durability", "config", "status"},
	"steady": {"system", "workload", "producers", "concurrency", "seconds", "inserted", "inserted_per_s",
		"completed_per_s", "started_per_s", "backlog_at_end", "p50_ms", "p95_ms", "p99_ms", "max_ms",
		"insert_p50_ms", "insert_p99_ms", "drain_after_s", "missing", "dup_starts", "insert_errors",
		"run_s", "durability", "config", "status"},
	"latency": {"system", "workload", "rate", "concurrency", "jobs", "seconds", "inserted", "achieved_rate",
		"p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms", "insert_p50_ms", "insert_p99_ms", "missing",
		"dup_starts", "insert_errors", "run_s", "durability", "config", "status"},
	"priority": {"system", "workload", "low", "high", "concurrency", "high_after_low_started", "low_insert_s",
		"high_wait_p50_ms", "high_wait_p99_ms", "high_wait_max_ms", "high_insert_p50_ms", "high_insert_p99_ms",
		"high_ack_to_start_p50_ms", "high_ack_to_start_p99_ms", "high_insert_s",
		"low_started_before_first_high", "low_started_after_first_high", "low_started_while_high_waiting", "low_leased_while_high_waiting",
		"all_high_started_s", "dup_starts", "run_s", "durability", "config", "status"},
}

func parseLine(t *testing.T, s string) (order []string, kv map[string]string) {
	t.Helper()
	kv = map[string]string{}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("field %q is not key=value in %q", f, s)
		}
		order = append(order, k)
		kv[k] = v
	}
	return order, kv
}

// TestWorkloadsOnFairway runs every workload, tiny, against a real server
// and workers, through the command's entry point.
func TestWorkloadsOnFairway(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"all",
		"--jobs", "200", "--concurrency", "20", "--producers", "4", "--duration", "1s", "--max-jobs", "300",
		"--rate", "100", "--low", "300", "--high", "20", "--high-after", "50", "--prio-concurrency", "5",
		"--warmup", "100ms", "--settle", "0", "--batch", "100", "--insert-parallel", "2",
		"--timeout", "40s", "--drain-timeout", "30s", "--max-runtime", "2m",
		"--data-dir", t.TempDir(),
	}, &stdout, &stderr)
	if code != 0 {
		t.Errorf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	t.Logf("stdout:\n%s", stdout.String())
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != len(workloads) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(workloads), stdout.String())
	}
	for i, w := range workloads {
		order, kv := parseLine(t, lines[i])
		if kv["system"] != "fairway" || kv["workload"] != w.name {
			t.Errorf("line %d: system=%s workload=%s, want fairway %s", i, kv["system"], kv["workload"], w.name)
		}
		if kv["status"] != "ok" {
			t.Errorf("%s: status=%s error=%s", w.name, kv["status"], kv["error"])
		}
		if got, want := strings.Join(order, " "), strings.Join(keys[w.name], " "); got != want {
			t.Errorf("%s keys:\n got %s\nwant %s", w.name, got, want)
		}
		if kv["durability"] != "sqlite:wal,fsync_before_ack" {
			t.Errorf("%s: durability=%s", w.name, kv["durability"])
		}
		if d := kv["dup_starts"]; d != "0" {
			t.Errorf("%s: dup_starts=%s", w.name, d)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !strings.HasPrefix(l, "# ") {
			t.Errorf("stderr line without the # prefix: %q", l)
		}
	}
}

func TestMainUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(context.Background(), nil, &out, &errb); code != 2 {
		t.Errorf("no args: exit %d, want 2", code)
	}
	errb.Reset()
	if code := Main(context.Background(), []string{"nope"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown workload "nope"`) {
		t.Errorf("unknown workload: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := Main(context.Background(), []string{"drain", "--systems", "river"}, &out, &errb); code != 2 {
		t.Errorf("--systems river: exit %d, want 2", code)
	}
	errb.Reset()
	if code := Main(context.Background(), []string{"drain", "-h"}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "-prio-concurrency") {
		t.Errorf("-h: exit %d, stderr %q", code, errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("usage errors wrote to stdout: %q", out.String())
	}
}

// TestDrainOnPostgresIsFenced runs drain on PostgreSQL and checks that the
// bench's server led a term and fenced its commits, as fairway server
// --store does.
func TestDrainOnPostgresIsFenced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	pg := pgtest.URL(t)
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"drain", "--store", pg, "--leader-ttl", "20s",
		"--jobs", "200", "--concurrency", "20", "--batch", "100", "--settle", "0",
		"--timeout", "40s", "--drain-timeout", "30s", "--max-runtime", "2m", "--data-dir", t.TempDir(),
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	_, kv := parseLine(t, strings.TrimSpace(stdout.String()))
	if kv["status"] != "ok" || kv["started"] != "200" || kv["dup_starts"] != "0" {
		t.Errorf("drain: status=%s started=%s dup_starts=%s", kv["status"], kv["started"], kv["dup_starts"])
	}
	if kv["durability"] != "postgres:synchronous_commit,commit_before_ack,leader_fenced" {
		t.Errorf("durability=%s", kv["durability"])
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
	// 200 jobs inserted in batches, leased, started and finished: each
	// transaction of the dispatcher is counted by the fence.
	if terms != 1 || commits < 10 {
		t.Errorf("leader_terms: %d terms, %d fenced commits; want 1 term and its commits counted", terms, commits)
	}
}

func TestSpecPadded(t *testing.T) {
	f := NewFairway(FairwayOptions{PayloadBytes: 4096}).(*fairwaySystem)
	s := f.spec(Job{Seq: 1_234_567, EnqueuedAt: 1_700_000_000_000_000_000})
	var p payload
	if err := json.Unmarshal(s.Payload, &p); err != nil || p.Seq != 1_234_567 || p.EnqueuedAt != 1_700_000_000_000_000_000 {
		t.Fatalf("padded payload %.80s...: %+v, %v", s.Payload, p, err)
	}
	if len(s.Payload) < 4095 || len(s.Payload) > 4097 {
		t.Errorf("padded payload of %d bytes, want about 4096", len(s.Payload))
	}
	if s = NewFairway(FairwayOptions{}).(*fairwaySystem).spec(Job{Seq: 5, EnqueuedAt: 6}); string(s.Payload) != `{"s":5,"t":6}` {
		t.Errorf("unpadded payload %s", s.Payload)
	}
}
