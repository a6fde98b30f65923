package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/internal/faultproxy"
	"github.com/fairwayhq/fairway/internal/leader"
	"github.com/fairwayhq/fairway/internal/pgtest"
)

// newProxiedCluster starts one instance on store that reaches PostgreSQL
// through a partitionProxy.
func newProxiedCluster(t *testing.T, store string) (*haCluster, *faultproxy.Proxy) {
	t.Helper()
	proxy, _ := faultproxy.StartFor(t, store)
	h := newHAClusterVia(t, 1, store, func(raw string) string { return proxy.Via(t, raw) })
	return h, proxy
}

// The partition acceptance: the leader reaches PostgreSQL through a proxy;
// the proxy is cut while it leads and jobs are being submitted; another
// instance takes over, and the cut-off leader's last commit comes before
// the new leader's first. Healed, the old leader is a standby again,
// without a restart.
func TestAPartitionedLeaderStopsCommittingBeforeTheNextLeads(t *testing.T) {
	if testing.Short() {
		t.Skip("partition test: -short")
	}
	store := pgtest.URL(t)
	h, proxy := newProxiedCluster(t, store)
	if i, _ := h.leader(0, 30*time.Second); i != 0 {
		t.Fatalf("instance %d leads, want the proxied 0", i)
	}
	h.addrs = append(h.addrs, freeAddr(t))
	h.procs = append(h.procs, nil)
	h.start(1)
	start(t, "w1", "worker", "--server", h.urls(), "--name", "w1", "--slots", "4")
	c, err := client.New(h.urls())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acked sync.Map
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			key := fmt.Sprintf("k%d", i)
			for ctx.Err() == nil {
				r, err := c.Submit(ctx, api.JobSpec{Type: "p", IdempotencyKey: key, Command: []string{"true"}})
				if err == nil {
					acked.Store(key, r.Job.ID)
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	time.Sleep(3 * time.Second)
	_, before := h.role(0)
	proxy.Blackhole()
	cutAt := time.Now()
	_, term := h.leader(before, 30*time.Second)
	t.Logf("cut at term %d; term %d leads after %s", before, term, time.Since(cutAt))
	time.Sleep(2 * time.Second)
	proxy.Heal()
	deadline := time.Now().Add(30 * time.Second)
	for role, _ := h.role(0); role != "standby"; role, _ = h.role(0) {
		if time.Now().After(deadline) {
			t.Fatalf("healed, instance 0 is %q, want standby", role)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("healed: instance 0 is a standby again after %s", time.Since(cutAt))
	// Its view of the leader comes back with its next read of the
	// leadership row (within about leader_ttl: reads back off while they
	// fail); until then it answers not_leader, which clients retry.
	eventually(t, 30*time.Second, "the healed standby names the leader", func() bool {
		return standbyKnowsLeader(h.addrs[0])
	})
	t.Logf("healed: instance 0 names the leader after %s", time.Since(cutAt))
	checkStandbyServesReads(t, "http://"+h.addrs[0])
	cancel()
	wg.Wait()

	terms, err := leader.Terms(context.Background(), pgtest.Open(t, store))
	if err != nil {
		t.Fatal(err)
	}
	var old, next *leader.TermRecord
	for i := range terms {
		switch terms[i].Term {
		case before:
			old = &terms[i]
		case term:
			next = &terms[i]
		}
	}
	if old == nil || next == nil {
		t.Fatalf("terms %d and %d not both recorded: %+v", before, term, terms)
	}
	if !old.LastCommitAt.Before(next.FirstCommitAt) {
		t.Errorf("the cut-off leader committed at %s, after the new leader's first commit at %s", old.LastCommitAt, next.FirstCommitAt)
	}
	t.Logf("term %d's last commit %s before term %d's first", before, next.FirstCommitAt.Sub(old.LastCommitAt), term)
	n := 0
	acked.Range(func(key, id any) bool {
		n++
		wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
		defer wcancel()
		if j, err := c.Wait(wctx, id.(string)); err != nil || j.State != api.StateSucceeded {
			t.Errorf("acknowledged %s (job %s): %s %v", key, id, j.State, err)
		}
		return true
	})
	t.Logf("%d acknowledged jobs, all succeeded", n)
}

// standbyKnowsLeader: the standby at addr names a leader in /readyz.
func standbyKnowsLeader(addr string) bool {
	resp, err := probeClient.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var body struct{ Leader string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return body.Leader != ""
}

// checkStandbyServesReads: a standby answers a job list from the database
// and forwards what needs the dispatcher (explain) to the leader.
func checkStandbyServesReads(t *testing.T, base string) {
	t.Helper()
	standby, err := client.New(base)
	if err != nil {
		t.Fatal(err)
	}
	list, err := standby.List(context.Background(), client.ListOptions{Limit: 5})
	if err != nil || len(list.Jobs) == 0 || standby.BaseURL() != base {
		t.Fatalf("list on the standby: %d jobs, %v, answered by %s", len(list.Jobs), err, standby.BaseURL())
	}
	resp, err := probeClient.Get(base + "/api/v1/jobs/" + list.Jobs[0].ID + "/explain")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Fairway-Leader") == "" {
		t.Errorf("explain on the standby: HTTP %d, leader %q; want the leader's 200, forwarded, naming the leader",
			resp.StatusCode, resp.Header.Get("X-Fairway-Leader"))
	}
}

// The only instance loses the database: nothing gets a 2xx while it is
// out of reach (requests hang or get 503), and once it is back the
// instance leads again, without a restart, and every acknowledged job runs.
func TestTheDatabaseOutOfReachThenBack(t *testing.T) {
	if testing.Short() {
		t.Skip("outage test: -short")
	}
	store := pgtest.URL(t)
	h, proxy := newProxiedCluster(t, store)
	_, term := h.leader(0, 30*time.Second)
	start(t, "w1", "worker", "--server", h.urls(), "--name", "w1")
	c, err := client.New(h.urls())
	if err != nil {
		t.Fatal(err)
	}
	submit := func(key string) (int, string) {
		body := fmt.Sprintf(`{"type":"p","command":["true"],"idempotency_key":%q}`, key)
		hc := &http.Client{Timeout: 3 * time.Second}
		resp, err := hc.Post("http://"+h.addrs[0]+"/api/v1/jobs", "application/json", strings.NewReader(body))
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := submit("before"); code != http.StatusCreated {
		t.Fatalf("submit before the outage: %d %s", code, body)
	}
	proxy.Blackhole()
	for i := range 5 {
		code, body := submit(fmt.Sprintf("during-%d", i))
		if code != 0 && code != http.StatusServiceUnavailable { // 0: the request timed out
			t.Errorf("a submit during the outage got %d, want 503 (or no answer): %s", code, body)
		}
		t.Logf("during the outage: %d %.120s", code, body)
		time.Sleep(time.Second)
	}
	proxy.Heal()
	_, again := h.leader(term, 30*time.Second)
	t.Logf("back: term %d leads", again)
	code, body := submit("after")
	if code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("submit after the outage: %d %s", code, body)
	}
	list, err := c.List(context.Background(), client.ListOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range list.Jobs {
		wctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		done, err := c.Wait(wctx, j.ID)
		cancel()
		if err != nil || done.State != api.StateSucceeded {
			t.Errorf("job %s (key %s): %s %v", j.ID, j.IdempotencyKey, done.State, err)
		}
	}
}
