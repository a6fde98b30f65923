package ha

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/leader"
	"github.com/fairwayhq/fairway/internal/pgtest"
)

// startNode runs a Node on a loopback port chosen by the OS until the
// test ends, and returns its address.
func startNode(t *testing.T, url, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	node, err := New(ctx, Options{URL: url, Config: config.Default(),
		Lease: leader.Lease{Holder: name, Address: ln.Addr().String(), TTL: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: node.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	done := make(chan struct{})
	go func() { defer close(done); node.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = hs.Close()
	})
	return ln.Addr().String()
}

// role is what /readyz says the instance at addr is.
func role(t *testing.T, addr string) string {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Role string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return body.Role
}

// A standby forwards a write to the leader and copies its answer back, so
// that a plain HTTP client may use any instance; a request that was
// forwarded already is not forwarded again.
func TestAStandbyForwardsWritesToTheLeader(t *testing.T) {
	url := pgtest.URL(t)
	a := startNode(t, url, "a")
	var leaderAddr, standbyAddr string
	deadline := time.Now().Add(15 * time.Second)
	for leaderAddr == "" && time.Now().Before(deadline) {
		if role(t, a) == "leader" {
			leaderAddr = a
		}
		time.Sleep(20 * time.Millisecond)
	}
	if leaderAddr == "" {
		t.Fatal("the only instance did not lead within 15 s")
	}
	standbyAddr = startNode(t, url, "b")
	for role(t, standbyAddr) != "standby" {
		if time.Now().After(deadline) {
			t.Fatalf("b is %q, want standby", role(t, standbyAddr))
		}
		time.Sleep(20 * time.Millisecond)
	}

	resp, err := http.Post("http://"+standbyAddr+"/api/v1/jobs", "application/json",
		strings.NewReader(`{"type":"report","tenant":"acme","idempotency_key":"k1"}`))
	if err != nil {
		t.Fatal(err)
	}
	var sub api.SubmitResponse
	err = json.NewDecoder(resp.Body).Decode(&sub)
	job := sub.Job
	resp.Body.Close()
	if resp.StatusCode/100 != 2 || err != nil || job.ID == "" {
		t.Fatalf("submit through the standby: %d %+v %v", resp.StatusCode, job, err)
	}
	if got := resp.Header.Values("X-Fairway-Leader"); len(got) != 1 || got[0] != leaderAddr {
		t.Errorf("X-Fairway-Leader = %q, want once %q", got, leaderAddr)
	}
	for _, addr := range []string{leaderAddr, standbyAddr} { // the leader has it; the standby reads it from the database
		resp, err := http.Get("http://" + addr + "/api/v1/jobs/" + job.ID)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET the job from %s: %d", addr, resp.StatusCode)
		}
	}

	req, _ := http.NewRequest("POST", "http://"+standbyAddr+"/api/v1/jobs", strings.NewReader(`{"type":"report"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(ForwardedByHeader, "c")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var e api.ErrorResponse
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || e.Error.Code != api.CodeNotLeader {
		t.Errorf("a request forwarded twice: %d %+v, want 503 not_leader", resp.StatusCode, e)
	}
}
