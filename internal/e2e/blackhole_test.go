package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/internal/faultproxy"
	"github.com/fairwayhq/fairway/internal/leader"
	"github.com/fairwayhq/fairway/internal/pgtest"
)

// newPartitionedCluster starts n instances on one PostgreSQL schema, each
// reaching it through a faultproxy.Proxy of its own, with lease_ttl ttl.
func newPartitionedCluster(t *testing.T, n int, ttl time.Duration) (*haCluster, []*faultproxy.Proxy) {
	t.Helper()
	store := pgtest.URL(t)
	h := &haCluster{t: t, url: store, dir: t.TempDir(), via: map[int]string{}}
	h.config = filepath.Join(h.dir, "fairway.yaml")
	cfg := fmt.Sprintf("server:\n  lease_ttl: %s\n  leader_ttl: %s\n  allow_unknown_types: true\n", ttl, partitionLeaderTTL)
	if err := os.WriteFile(h.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var proxies []*faultproxy.Proxy
	for i := range n {
		p, proxied := faultproxy.StartFor(t, store)
		proxies = append(proxies, p)
		h.via[i] = proxied
		h.addrs = append(h.addrs, freeAddr(t))
		h.procs = append(h.procs, nil)
		h.start(i)
	}
	return h, proxies
}

// blackholeRun is what one blackhole of the leader measured.
type blackholeRun struct {
	firstLease  time.Duration            // cut to the first lease committed by the next leader
	longestCall time.Duration            // the longest submit call (the client's retries included)
	stalls      map[string]time.Duration // per kind of call, the longest stall of one attempt after the cut
	acked       int
}

// Partition targets (issue 27), asserted for every case run. The first
// lease after the cut: p50 firstLeaseP50 (over three runs or more) and at
// most firstLeaseMax (as after a crash). No attempt of a call (a worker's, or a submit) is held
// longer than callStallMax: a leader cut off from the database steps
// down at most 0.8·leader_ttl (1.6 s here) after the cut, and every
// request it holds is answered 503 then; a cut-off instance answers
// not_leader after at most leader_ttl/3 (0.67 s) of waiting for a view
// of the leadership; 2·leader_ttl leaves the rest for a shared machine,
// well inside lease_ttl (10 s or 30 s), and far from the client's 10 s
// request timeout, which a held request would reach. A whole submit (the
// client's failover and back-off included) ends within submitMax.
const (
	firstLeaseP50 = 3 * time.Second
	firstLeaseMax = 10 * time.Second
	callStallMax  = 2 * partitionLeaderTTL
	submitMax     = 10 * time.Second
	// partitionLeaderTTL is the leader_ttl of newPartitionedCluster.
	partitionLeaderTTL = 2 * time.Second
)

// The partition acceptance (issue 27): three instances, each reaching
// PostgreSQL through a proxy, two workers, a steady load of keyed submits
// and a one-second schedule. The leader's proxy is blackholed (data held,
// nothing closed) for cut, then healed. Afterwards: every acknowledged
// job ran once and succeeded, no key is two jobs, nothing that ran to
// success is recorded failed or lost (no job failed, no lease expired, no
// worker lost), no slot has two jobs, and the terms' commits never
// overlap. CI runs one case (15 s, lease_ttl 10 s); FAIRWAY_PARTITION_MATRIX=1
// runs the matrix: 15 s and 45 s, lease_ttl 10 s and 30 s, three
// times each (FAIRWAY_PARTITION_RUNS=N: N times), and logs the figures;
// FAIRWAY_PARTITION_CASES=15s:30s,45s:10s runs the cases named (cut:lease_ttl).
// Workers and submitters reach the instances through a callRecorder, and
// the test asserts the targets (see firstLeaseP50). FAIRWAY_PARTITION_DUMP=1
// (a diagnosis) kills the cut-off leader with SIGQUIT 6 s after the cut
// and logs what its dispatcher and database calls were waiting for.
func TestABlackholedLeaderStallsNothingAndFailsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("partition test: -short")
	}
	type blackholeCase struct{ cut, ttl time.Duration }
	cases := []blackholeCase{{15 * time.Second, 10 * time.Second}}
	runs := 1
	if os.Getenv("FAIRWAY_PARTITION_MATRIX") == "1" {
		cases = []blackholeCase{{15 * time.Second, 10 * time.Second}, {15 * time.Second, 30 * time.Second},
			{45 * time.Second, 10 * time.Second}, {45 * time.Second, 30 * time.Second}}
		runs = 3
	}
	if n, err := strconv.Atoi(os.Getenv("FAIRWAY_PARTITION_RUNS")); err == nil && n > 0 {
		runs = n
	}
	if only := os.Getenv("FAIRWAY_PARTITION_CASES"); only != "" { // e.g. 15s:30s,45s:10s (cut:lease_ttl)
		cases = nil
		for _, one := range strings.Split(only, ",") {
			cut, ttl, _ := strings.Cut(one, ":")
			c, err1 := time.ParseDuration(cut)
			l, err2 := time.ParseDuration(ttl)
			if err1 != nil || err2 != nil {
				t.Fatalf("FAIRWAY_PARTITION_CASES: %q is not cut:lease_ttl", one)
			}
			cases = append(cases, blackholeCase{c, l})
		}
	}
	for _, c := range cases {
		var firsts, calls []time.Duration
		stalls := map[string]time.Duration{}
		for run := range runs {
			name := fmt.Sprintf("cut %s lease_ttl %s run %d", c.cut, c.ttl, run+1)
			var r blackholeRun
			if !t.Run(name, func(t *testing.T) { r = blackholeOnce(t, c.cut, c.ttl) }) || r.acked == 0 { // failed or skipped
				continue
			}
			firsts, calls = append(firsts, r.firstLease), append(calls, r.longestCall)
			for kind, d := range r.stalls {
				stalls[kind] = max(stalls[kind], d)
			}
		}
		if len(firsts) > 0 {
			slices.Sort(firsts)
			slices.Sort(calls)
			p50, longest := firsts[len(firsts)/2], firsts[len(firsts)-1]
			var per []string
			for _, kind := range slices.Sorted(maps.Keys(stalls)) {
				per = append(per, fmt.Sprintf("%s %s", kind, stalls[kind].Round(time.Millisecond)))
			}
			t.Logf("cut %s, lease_ttl %s, %d runs: cut to first lease p50 %s max %s; longest submit call max %s; longest stall of one attempt: %s",
				c.cut, c.ttl, len(firsts), p50.Round(time.Millisecond), longest.Round(time.Millisecond),
				calls[len(calls)-1].Round(time.Millisecond), strings.Join(per, ", "))
			// A median is asserted over three runs or more: one run's
			// figure is a sample, which a shared machine may delay.
			if (len(firsts) >= 3 && p50 > firstLeaseP50) || longest > firstLeaseMax {
				t.Errorf("cut %s, lease_ttl %s: cut to first lease p50 %s, max %s; want p50 <= %s, max <= %s",
					c.cut, c.ttl, p50, longest, firstLeaseP50, firstLeaseMax)
			}
		}
	}
}

func blackholeOnce(t *testing.T, cut, ttl time.Duration) blackholeRun {
	h, proxies := newPartitionedCluster(t, 3, ttl)
	db := pgtest.Open(t, h.url)
	first, term := h.leader(0, 30*time.Second)
	t.Logf("instance %d leads term %d", first, term)
	rec := newCallRecorder(t, h)
	var workers []*proc
	for i, name := range []string{"w1", "w2"} {
		workers = append(workers, start(t, name, "worker", "--server", rec.urlsFrom(i), "--name", name, "--slots", "4"))
	}
	witness := filepath.Join(t.TempDir(), "witness")
	schedWitness := filepath.Join(t.TempDir(), "schedule-witness")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c0, err := client.New(h.urls())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := c0.CreateSchedule(ctx, api.ScheduleSpec{Spec: "* * * * * *", Overlap: "allow_all", Template: api.JobSpec{
		Type: "tick", MaxAttempts: 1,
		Command: []string{"sh", "-c", "echo \"start $FAIRWAY_JOB_ID $FAIRWAY_SCHEDULED_FOR\" >> " + schedWitness +
			"; sleep 0.05; echo \"end $FAIRWAY_JOB_ID $FAIRWAY_SCHEDULED_FOR\" >> " + schedWitness},
	}})
	if err != nil {
		t.Fatal(err)
	}
	load := &crashLoad{acked: map[string]string{}}
	timed := &timedSubmits{h: h, rec: rec, http: &http.Client{}}
	var wg sync.WaitGroup
	for i := range len(h.addrs) {
		wg.Add(1)
		go func() { defer wg.Done(); load.submitter(ctx, timed, fmt.Sprintf("c%d", i), witness) }()
	}
	time.Sleep(5 * time.Second)
	victim, before := h.leader(0, 10*time.Second)
	proxies[victim].Blackhole()
	cutAt := time.Now()
	if os.Getenv("FAIRWAY_PARTITION_DUMP") == "1" {
		defer dumpDispatcher(t, h.procs[victim], cutAt.Add(6*time.Second))()
	}
	samples := sampleLeadership(db, 30*time.Second)
	next, newTerm := h.leader(before, 30*time.Second)
	firstLease := firstLeaseAfter(t, db, cutAt).Sub(cutAt)
	t.Logf("blackholed instance %d (term %d); instance %d leads term %d after %s; first lease after %s",
		victim, before, next, newTerm, time.Since(cutAt), firstLease)
	sampled := samples()
	if firstLease > 5*time.Second { // what the database and the new leader did meanwhile
		for _, line := range sampled {
			t.Log(line)
		}
		for _, line := range strings.Split(h.procs[next].output(), "\n") {
			if strings.Contains(line, "leader") || strings.Contains(line, "ha:") || strings.Contains(line, "dispatcher") {
				t.Logf("server-%d: %s", next, line)
			}
		}
	}
	time.Sleep(time.Until(cutAt.Add(cut)))
	proxies[victim].Heal()
	t.Logf("healed after %s", time.Since(cutAt))
	time.Sleep(5 * time.Second) // the load runs on across the heal
	cancel()
	wg.Wait()

	bg, bgCancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer bgCancel()
	if _, err := c0.PauseSchedule(bg, sc.ID, "test over"); err != nil {
		t.Fatal(err)
	}
	slotted, slots := checkAckedAndSlots(bg, t, c0, load, witness, sc.ID, true)
	checkScheduleWitness(t, schedWitness, slotted)
	checkNothingLostForSilence(t, db)
	checkTermsInOrder(t, db)
	longest := timed.longest()
	t.Logf("%d acknowledged jobs, %d schedule slots; longest submit call %s", len(load.acked), slots, longest)
	calls := rec.recorded()
	stalls := callStalls(calls, cutAt)
	for _, kind := range slices.Sorted(maps.Keys(stalls)) {
		s := stalls[kind]
		t.Logf("after the cut, %d calls %q: longest stall %s (%s, began %s after the cut)", s.n, kind,
			s.stall.Round(time.Millisecond), s.call, s.call.start.Sub(cutAt).Round(time.Millisecond))
	}
	slices.SortFunc(calls, func(a, b recordedCall) int { return int(b.overrun() - a.overrun()) })
	for _, c := range calls[:min(5, len(calls))] {
		t.Logf("slowest: %s, began %s after the cut", c, c.start.Sub(cutAt).Round(time.Millisecond))
	}
	worst := map[string]time.Duration{}
	for kind, s := range stalls {
		worst[kind] = s.stall
		if s.stall > callStallMax {
			t.Errorf("%s held %s (%s, began %s after the cut), want at most %s: a request the cut-off leader held was not ended with its term",
				kind, s.stall.Round(time.Millisecond), s.call, s.call.start.Sub(cutAt).Round(time.Millisecond), callStallMax)
		}
	}
	if longest > submitMax {
		t.Errorf("a submit took %s, failover included; want at most %s", longest, submitMax)
	}
	for i, p := range h.procs {
		out := p.output()
		t.Logf("server-%d logged %d failed campaigns, %d failed renewals, %d step-downs", i,
			strings.Count(out, "campaign failed"), strings.Count(out, "renewal failed"), strings.Count(out, "stepping down"))
	}
	for _, w := range workers {
		out := w.output()
		t.Logf("%s logged %d lines with \"revoked\", %d with \"stale_attempt\"", w.name,
			strings.Count(out, "revoked"), strings.Count(out, "stale_attempt"))
	}
	return blackholeRun{firstLease: firstLease, longestCall: longest, stalls: worst, acked: len(load.acked)}
}

// sampleLeadership records, every 250 ms for up to d, the leadership row
// and the sessions that wait for a lock or sit in a transaction; the
// returned function stops and returns the samples.
func sampleLeadership(db *sql.DB, d time.Duration) func() []string {
	var mu sync.Mutex
	var out []string
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		began := time.Now()
		for time.Since(began) < d {
			var row string
			_ = db.QueryRow(`SELECT format('term %s holder %s expires in %s', term, holder, expires_at - clock_timestamp()) FROM leadership WHERE id = 1`).Scan(&row)
			rows, err := db.Query(`SELECT format('pid %s %s wait %s/%s xact %s: %s', pid, state, wait_event_type, wait_event,
				clock_timestamp() - xact_start, left(query, 60)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid() AND (wait_event_type = 'Lock' OR state LIKE 'idle in%' OR state = 'active')`)
			var sess []string
			if err == nil {
				for rows.Next() {
					var s string
					_ = rows.Scan(&s)
					sess = append(sess, s)
				}
				rows.Close()
			}
			mu.Lock()
			out = append(out, fmt.Sprintf("+%s %s; %d sessions: %s", time.Since(began).Round(time.Millisecond), row, len(sess), strings.Join(sess, " | ")))
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	return func() []string {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return out
	}
}

// checkNothingLostForSilence: no lease expired and no worker was lost
// (the workers ran throughout), and no job failed.
func checkNothingLostForSilence(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, q := range []struct{ what, sql string }{
		{"lease_expired events", `SELECT count(*) FROM events WHERE type = 'lease_expired'`},
		{"worker_lost events", `SELECT count(*) FROM events WHERE type = 'worker_lost'`},
		{"failed jobs", `SELECT count(*) FROM jobs WHERE state = 'failed'`},
	} {
		var n int
		if err := db.QueryRow(q.sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d %s, want 0: work that ran was failed for the server's silence", n, q.what)
		}
	}
}

// checkTermsInOrder reads leader_terms: each term's first commit comes
// after the previous term's last (never two leaders committing at once).
func checkTermsInOrder(t *testing.T, db *sql.DB) {
	t.Helper()
	terms, err := leader.Terms(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(terms); i++ {
		if !terms[i].FirstCommitAt.After(terms[i-1].LastCommitAt) {
			t.Errorf("term %d committed at %s, before term %d's last commit at %s",
				terms[i].Term, terms[i].FirstCommitAt, terms[i-1].Term, terms[i-1].LastCommitAt)
		}
	}
	if len(terms) < 2 {
		t.Errorf("%d terms committed, want at least 2", len(terms))
	}
}

// timedSubmits is roundRobin that records the longest submit call.
type timedSubmits struct {
	h           *haCluster
	rec         *callRecorder // the fronts to send through
	http        *http.Client
	next        atomic.Int64
	mu          sync.Mutex
	longestCall time.Duration
}

func (s *timedSubmits) Submit(ctx context.Context, spec api.JobSpec) (api.SubmitResponse, error) {
	i := int(s.next.Add(1)) % len(s.h.addrs)
	c, err := client.New(s.rec.urlsFrom(i), client.WithHTTPClient(s.http))
	if err != nil {
		return api.SubmitResponse{}, err
	}
	began := time.Now()
	r, err := c.Submit(ctx, spec)
	took := time.Since(began)
	s.mu.Lock()
	s.longestCall = max(s.longestCall, took)
	s.mu.Unlock()
	return r, err
}

func (s *timedSubmits) longest() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.longestCall
}

// The database-outage acceptance: every instance loses the database (its
// connections closed, new ones refused) for 10 s under a load of raw HTTP
// submits with idempotency keys. No answer is a 500; every 503 carries
// Retry-After; every acknowledged key is a job afterwards; and the
// instances lead again without a restart.
func TestADatabaseOutageOfEveryInstanceIsAnswered503AndRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("outage test: -short")
	}
	h, proxies := newPartitionedCluster(t, 3, 10*time.Second)
	_, term := h.leader(0, 30*time.Second)
	start(t, "w1", "worker", "--server", h.urls(), "--name", "w1", "--slots", "4")
	hc := &http.Client{Timeout: 20 * time.Second}
	var mu sync.Mutex
	statuses := map[int]int{}
	var acked []string
	var bad []string
	submit := func(i int, key string) {
		body := fmt.Sprintf(`{"type":"p","command":["true"],"idempotency_key":%q}`, key)
		resp, err := hc.Post("http://"+h.addrs[i%len(h.addrs)]+"/api/v1/jobs", "application/json", strings.NewReader(body))
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			statuses[0]++
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		statuses[resp.StatusCode]++
		switch {
		case resp.StatusCode/100 == 2:
			acked = append(acked, key)
		case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
		default:
			bad = append(bad, fmt.Sprintf("%s: %d %q (Retry-After %q)", key, resp.StatusCode, b, resp.Header.Get("Retry-After")))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				submit(g+i, fmt.Sprintf("g%d-%d", g, i))
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	time.Sleep(3 * time.Second)
	for _, p := range proxies {
		p.Refuse()
	}
	time.Sleep(10 * time.Second)
	for _, p := range proxies {
		p.Heal()
	}
	_, again := h.leader(term, 60*time.Second)
	time.Sleep(3 * time.Second)
	cancel()
	wg.Wait()
	t.Logf("term %d leads after the outage; answers by status: %v", again, statuses)
	if len(bad) > 0 {
		t.Errorf("%d answers neither 2xx nor 503 with Retry-After, e.g. %v", len(bad), bad[:min(5, len(bad))])
	}
	c, err := client.New(h.urls())
	if err != nil {
		t.Fatal(err)
	}
	bg, bgCancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer bgCancel()
	keys := map[string]bool{}
	err = c.ListAll(bg, client.ListOptions{}, func(j api.Job) error {
		keys[j.IdempotencyKey] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range acked {
		if !keys[k] {
			t.Errorf("acknowledged key %s is no job", k)
		}
	}
	if statuses[http.StatusCreated] == 0 {
		t.Error("nothing was acknowledged")
	}
}

// dumpDispatcher (FAIRWAY_PARTITION_DUMP=1, a diagnosis) sends SIGQUIT to
// p at the time at, which makes the Go runtime print every goroutine and
// exit; the returned function logs the goroutines of the dispatcher and
// of the database calls, to show what a cut-off leader was waiting for.
func dumpDispatcher(t *testing.T, p *proc, at time.Time) func() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(time.Until(at))
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
	}()
	return func() {
		<-done
		for _, g := range strings.Split(p.output(), "\n\ngoroutine ") {
			if strings.Contains(g, "dispatch.(*Dispatcher).run") || strings.Contains(g, "sqlstore.") ||
				strings.Contains(g, "pgconn.") {
				t.Logf("%s at the dump: goroutine %s", p.name, g)
			}
		}
	}
}
