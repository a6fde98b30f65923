package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"database/sql"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/internal/leader"
	"github.com/fairwayhq/fairway/internal/pgtest"
)

const haConfig = `
server:
  lease_ttl: 4s
  heartbeat_interval: 1s
  leader_ttl: 2s
  allow_unknown_types: true
`

// haCluster is several server processes on one PostgreSQL schema.
type haCluster struct {
	t      *testing.T
	url    string         // the store
	via    map[int]string // instances reaching the store by another URL (a proxy)
	config string
	dir    string
	addrs  []string
	procs  []*proc
}

func newHACluster(t *testing.T, n int) *haCluster {
	t.Helper()
	return newHAClusterVia(t, n, "", nil)
}

// newHAClusterVia is newHACluster with instance 0 reaching the store at
// url rewritten by via (through a proxy), when via is not nil.
func newHAClusterVia(t *testing.T, n int, url string, via func(url string) string) *haCluster {
	t.Helper()
	if url == "" {
		url = pgtest.URL(t)
	}
	h := &haCluster{t: t, url: url, dir: t.TempDir(), via: map[int]string{}}
	if via != nil {
		h.via[0] = via(url)
	}
	h.config = filepath.Join(h.dir, "fairway.yaml")
	if err := os.WriteFile(h.config, []byte(haConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		h.addrs = append(h.addrs, freeAddr(t))
		h.procs = append(h.procs, nil)
		h.start(i)
	}
	return h
}

// start runs instance i.
func (h *haCluster) start(i int) {
	url := h.url
	if v, ok := h.via[i]; ok {
		url = v
	}
	h.procs[i] = start(h.t, fmt.Sprintf("server-%d", i), "server", "--config", h.config,
		"--listen", h.addrs[i], "--store", url)
}

// urls is every instance, comma-separated, as clients and workers take it.
func (h *haCluster) urls() string { return strings.Join(h.urlsFrom(0), ",") }

// urlsFrom is the instances' base URLs starting with instance i.
func (h *haCluster) urlsFrom(i int) []string {
	var out []string
	for _, a := range append(slices.Clone(h.addrs[i:]), h.addrs[:i]...) {
		out = append(out, "http://"+a)
	}
	return out
}

// probeClient bounds a /readyz probe: a hung instance counts as down.
var probeClient = &http.Client{Timeout: 2 * time.Second}

// role asks instance i's /readyz for its role and term.
func (h *haCluster) role(i int) (string, int64) {
	resp, err := probeClient.Get("http://" + h.addrs[i] + "/readyz")
	if err != nil {
		return "down", 0
	}
	defer resp.Body.Close()
	var body struct {
		Role string `json:"role"`
		Term int64  `json:"term"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusOK {
		return body.Role, 0
	}
	return body.Role, body.Term
}

// leader waits for an instance that is ready as leader of a term after
// minTerm, and returns it.
func (h *haCluster) leader(minTerm int64, within time.Duration) (int, int64) {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for i := range h.addrs {
			if role, term := h.role(i); role == "leader" && term > minTerm {
				return i, term
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("no leader after term %d within %s", minTerm, within)
	return -1, 0
}

// The failover acceptance: three instances on PostgreSQL, two
// workers, a steady load of submits with idempotency keys through clients
// that start at different instances, and a one-second cron schedule. The
// leader is SIGKILLed 5 times, 10 s apart, and restarted each time.
// Afterwards: every acknowledged job ran once and succeeded, no key is two
// jobs, no job's runs overlap, no slot has two jobs, and the terms'
// commits never overlap in time.
func TestLeaderFailoverLosesAndDoublesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("failover test: -short")
	}
	h := newHACluster(t, 3)
	db := pgtest.Open(t, h.url)
	first, term := h.leader(0, 30*time.Second)
	t.Logf("instance %d leads term %d", first, term)
	for _, name := range []string{"w1", "w2"} {
		start(t, name, "worker", "--server", h.urls(), "--name", name, "--slots", "4")
	}
	witness := filepath.Join(t.TempDir(), "witness")
	schedWitness := filepath.Join(t.TempDir(), "schedule-witness")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c0, err := client.New(h.urls())
	if err != nil {
		t.Fatal(err)
	}
	rr := &roundRobin{h: h, http: &http.Client{Timeout: 30 * time.Second}}
	sc, err := c0.CreateSchedule(ctx, api.ScheduleSpec{Spec: "* * * * * *", Overlap: "allow_all", Template: api.JobSpec{
		Type: "tick", MaxAttempts: 1,
		Command: []string{"sh", "-c", "echo \"start $FAIRWAY_JOB_ID $FAIRWAY_SCHEDULED_FOR\" >> " + schedWitness +
			"; sleep 0.05; echo \"end $FAIRWAY_JOB_ID $FAIRWAY_SCHEDULED_FOR\" >> " + schedWitness},
	}})
	if err != nil {
		t.Fatal(err)
	}
	load := &crashLoad{acked: map[string]string{}}
	var wg sync.WaitGroup
	for i := range len(h.addrs) {
		wg.Add(1)
		go func() { defer wg.Done(); load.submitter(ctx, rr, fmt.Sprintf("c%d", i), witness) }()
	}
	var takeovers []time.Duration
	for kill := range 5 {
		time.Sleep(10 * time.Second)
		victim, _ := h.leader(0, 10*time.Second)
		_, before := h.role(victim)
		killed := time.Now()
		h.procs[victim].kill()
		_, newTerm := h.leader(before, 30*time.Second)
		ready := time.Since(killed)
		takeovers = append(takeovers, firstLeaseAfter(t, db, killed).Sub(killed))
		t.Logf("kill %d: instance %d (term %d) killed; term %d ready after %s, first lease after %s",
			kill+1, victim, before, newTerm, ready, takeovers[kill])
		h.start(victim)
	}
	cancel()
	wg.Wait()
	bg, bgCancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer bgCancel()
	if _, err := c0.PauseSchedule(bg, sc.ID, "test over"); err != nil {
		t.Fatal(err)
	}
	slotted, slots := checkAckedAndSlots(bg, t, c0, load, witness, sc.ID, false)
	checkScheduleWitness(t, schedWitness, slotted)
	checkTermsNeverOverlap(t, h.url)
	slices.Sort(takeovers)
	t.Logf("%d acknowledged jobs, %d schedule slots across 5 leader kills; kill to first lease by the new leader: p50 %s, max %s",
		len(load.acked), slots, takeovers[len(takeovers)/2], takeovers[len(takeovers)-1])
}

// checkTermsNeverOverlap reads leader_terms: each term's first commit
// comes after the previous term's last.
func checkTermsNeverOverlap(t *testing.T, url string) {
	t.Helper()
	db := pgtest.Open(t, url)
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
	if len(terms) < 6 {
		t.Errorf("%d terms committed, want at least 6 (one per kill and the first)", len(terms))
	}
	t.Logf("%d terms, commits per term: %v", len(terms), commitsPerTerm(terms))
}

func commitsPerTerm(terms []leader.TermRecord) []int64 {
	out := make([]int64, len(terms))
	for i, tr := range terms {
		out[i] = tr.Commits
	}
	return out
}

// firstLeaseAfter is the time of the first lease committed after from
// (the leased events' times, unix microseconds), waiting up to 30 s.
func firstLeaseAfter(t *testing.T, db *sql.DB, from time.Time) time.Time {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var at sql.NullInt64
		// A lease's event is a row of its own, or held by its attempt's
		// job row while it lives and its execution row once it ended
		// (package store, "Attempt history in the execution row").
		err := db.QueryRow(`SELECT MIN(at) FROM (
			SELECT at FROM events WHERE type = 'leased' AND at > $1
			UNION ALL SELECT leased_at FROM jobs WHERE lease_event_id IS NOT NULL AND leased_at > $1
			UNION ALL SELECT leased_at FROM executions WHERE lease_event_id IS NOT NULL AND leased_at > $1) AS leases`,
			from.UnixMicro()).Scan(&at)
		if err != nil {
			t.Fatal(err)
		}
		if at.Valid {
			return time.UnixMicro(at.Int64)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no lease within 30 s after %s", from)
	return time.Time{}
}

// roundRobin sends each submit to the next instance in turn (a standby
// forwards it to the leader), through a client rooted there that falls
// back on the others while that instance is down: a fresh client per
// call, sharing one HTTP client, so that no call stays on the instance an
// earlier one failed over to.
type roundRobin struct {
	h    *haCluster
	http *http.Client
	next atomic.Int64
}

func (r *roundRobin) Submit(ctx context.Context, spec api.JobSpec) (api.SubmitResponse, error) {
	i := int(r.next.Add(1)) % len(r.h.addrs)
	c, err := client.New(strings.Join(r.h.urlsFrom(i), ","), client.WithHTTPClient(r.http))
	if err != nil {
		return api.SubmitResponse{}, err
	}
	return c.Submit(ctx, spec)
}

// checkAckedAndSlots waits for every acknowledged job of load and for the
// jobs of schedule scheduleID: each acknowledged job succeeded, no key was
// acknowledged as two jobs, the witness saw each acknowledged run once,
// and no slot has two jobs (with slotsSucceed, each slot's job succeeded
// too). It returns the schedule's jobs and the number of slots.
func checkAckedAndSlots(ctx context.Context, t *testing.T, c *client.Client, load *crashLoad, witness, scheduleID string, slotsSucceed bool) ([]api.Job, int) {
	t.Helper()
	for key, id := range load.acked {
		j, err := c.Wait(ctx, id)
		if err != nil || j.State != api.StateSucceeded {
			t.Errorf("acknowledged %s (job %s) ended %s: %s %s %v", key, id, j.State, j.FailureClass, j.LastError, err)
		}
	}
	if len(load.doubled) > 0 {
		t.Errorf("keys acknowledged as two jobs: %v", load.doubled)
	}
	checkWitness(t, witness, load.acked)
	var slotted []api.Job
	err := c.ListAll(ctx, client.ListOptions{}, func(j api.Job) error {
		if j.ScheduleID == scheduleID {
			slotted = append(slotted, j)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	bySlot := map[time.Time]int{}
	for _, j := range slotted {
		bySlot[*j.ScheduledFor]++
		if n := bySlot[*j.ScheduledFor]; n > 1 {
			t.Errorf("slot %s has %d jobs", j.ScheduledFor, n)
		}
		done, err := c.Wait(ctx, j.ID)
		if slotsSucceed && (err != nil || done.State != api.StateSucceeded) {
			t.Errorf("schedule job %s (slot %s) ended %s: %s %s %v", j.ID, j.ScheduledFor, done.State, done.FailureClass, done.LastError, err)
		}
	}
	return slotted, len(bySlot)
}
