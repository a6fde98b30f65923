package ha

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	addr, _ := startNodeWith(t, url, name, config.Default())
	return addr
}

// startNodeWith is startNode with a configuration; it also returns a
// function that stops the Node as the server's SIGTERM does (the Node's
// Run ends, then the HTTP server shuts down) and returns once both have.
func startNodeWith(t *testing.T, url, name string, cfg config.Config) (string, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	node, err := New(ctx, Options{URL: url, Config: cfg,
		Lease: leader.Lease{Holder: name, Address: ln.Addr().String(), TTL: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: node.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	done := make(chan struct{})
	go func() { defer close(done); node.Run(ctx) }()
	stop := func() {
		cancel()
		<-done
		sctx, scancel := context.WithTimeout(context.Background(), time.Minute)
		defer scancel()
		_ = hs.Shutdown(sctx)
	}
	t.Cleanup(func() {
		cancel()
		<-done
		_ = hs.Close()
	})
	return ln.Addr().String(), stop
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

// leaderAndStandby starts instance a, waits for it to lead, then starts
// instance b and waits for it to stand by; it returns their addresses.
func leaderAndStandby(t *testing.T) (leaderAddr, standbyAddr string) {
	t.Helper()
	url := pgtest.URL(t)
	a := startNode(t, url, "a")
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
	return leaderAddr, standbyAddr
}

// A standby forwards a chunked request and closes the client's connection
// after the answer, as the leader does (RFC 9112 §6.3, docs/api.md): a
// request with both Content-Length and Transfer-Encoding is framed by the
// chunked coding, and the bytes after it are not read as another request.
func TestAStandbyClosesTheConnectionOfAChunkedRequest(t *testing.T) {
	leaderAddr, standbyAddr := leaderAndStandby(t)
	job := `{"type":"report","tenant":"acme"}`
	smuggled := `{"type":"smuggled","tenant":"acme"}`
	req := "POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
		"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" +
		fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(job), job) +
		"POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
		fmt.Sprint(len(smuggled)) + "\r\n\r\n" + smuggled
	c, err := net.Dial("tcp", standbyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(c)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || !resp.Close {
		t.Fatalf("chunked submit through the standby: %s (close %v) %s, want 201 and Connection: close", resp.Status, resp.Close, body)
	}
	if rest, err := io.ReadAll(rd); err != nil || len(rest) != 0 {
		t.Fatalf("after the answer the connection gave %q (%v), want it closed", rest, err)
	}
	resp, err = http.Get("http://" + leaderAddr + "/api/v1/jobs?type=smuggled")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list api.JobList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Jobs) != 0 {
		t.Fatalf("smuggled jobs: %+v (%v)", list.Jobs, err)
	}
}

// A standby forwards a write to the leader and copies its answer back, so
// that a plain HTTP client may use any instance; a request that was
// forwarded already is not forwarded again.
func TestAStandbyForwardsWritesToTheLeader(t *testing.T) {
	leaderAddr, standbyAddr := leaderAndStandby(t)

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

// Issue 28 item 40: a standby that stops does not wait for the requests
// it forwarded and the leader holds (a worker's heartbeat): they are cut
// when the Node stops.
func TestAStoppingStandbyCutsTheHeldRequestsItForwarded(t *testing.T) {
	url := pgtest.URL(t)
	cfg := config.Default()
	cfg.Server.LeaseTTL = config.Duration(4 * time.Minute)
	cfg.Server.HeartbeatInterval = config.Duration(2 * time.Minute) // a held heartbeat: up to wait_ms, 60 s
	leaderAddr, _ := startNodeWith(t, url, "a", cfg)
	deadline := time.Now().Add(15 * time.Second)
	for role(t, leaderAddr) != "leader" {
		if time.Now().After(deadline) {
			t.Fatal("the only instance did not lead within 15 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	standby, stop := startNodeWith(t, url, "b", cfg)
	for role(t, standby) != "standby" {
		if time.Now().After(deadline) {
			t.Fatal("b is not a standby")
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Post("http://"+standby+"/api/v1/workers/register", "application/json", strings.NewReader(`{"name":"w","slots":1}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg api.RegisterResponse
	_ = json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	if reg.WorkerID == "" {
		t.Fatalf("register through the standby: HTTP %d", resp.StatusCode)
	}
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		resp, err := http.Post("http://"+standby+"/api/v1/workers/"+reg.WorkerID+"/heartbeat", "application/json",
			strings.NewReader(`{"wait_ms":60000}`))
		if err == nil {
			resp.Body.Close()
		}
	}()
	// Once the leader has seen the beat, it holds the request.
	for {
		resp, err := http.Get("http://" + leaderAddr + "/api/v1/workers")
		if err != nil {
			t.Fatal(err)
		}
		var ws api.WorkerList
		_ = json.NewDecoder(resp.Body).Decode(&ws)
		resp.Body.Close()
		if len(ws.Workers) == 1 && ws.Workers[0].LastSeenAt.After(ws.Workers[0].RegisteredAt) {
			break
		}
		if time.Now().After(deadline.Add(time.Minute)) {
			t.Fatal("the heartbeat never reached the leader")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stopped := make(chan struct{})
	go func() { defer close(stopped); stop() }()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the standby's shutdown waited for the heartbeat the leader holds")
	}
	<-answered
}

// A standby forwards a listing of unfinished jobs to the leader, which
// answers it from its dispatcher's memory (the store keeps no index on
// an unfinished job's state): the answer carries the engine's reasons,
// which only the leader knows. A listing of finished jobs it answers
// itself.
func TestAStandbyForwardsListingsOfUnfinishedJobs(t *testing.T) {
	leaderAddr, standbyAddr := leaderAndStandby(t)
	resp, err := http.Post("http://"+leaderAddr+"/api/v1/jobs", "application/json",
		strings.NewReader(`{"type":"report","tenant":"acme"}`))
	if err != nil {
		t.Fatal(err)
	}
	var sub api.SubmitResponse
	err = json.NewDecoder(resp.Body).Decode(&sub)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 || err != nil {
		t.Fatalf("submit: %d %v", resp.StatusCode, err)
	}
	list := func(query string) api.JobList {
		t.Helper()
		resp, err := http.Get("http://" + standbyAddr + "/api/v1/jobs?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var l api.JobList
		if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /jobs?%s from the standby: %d %v", query, resp.StatusCode, err)
		}
		return l
	}
	pending := list("state=pending")
	if len(pending.Jobs) != 1 || pending.Jobs[0].ID != sub.Job.ID || pending.Jobs[0].Reason == "" {
		t.Errorf("pending jobs through the standby: %+v, want job %s with the leader's reason", pending.Jobs, sub.Job.ID)
	}
	if done := list("state=succeeded"); len(done.Jobs) != 0 {
		t.Errorf("succeeded jobs: %+v, want none", done.Jobs)
	}
}
