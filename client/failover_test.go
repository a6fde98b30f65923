package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// instance is a loopback server acting as a leader (answers the job) or a
// standby (503 not_leader naming the leader), counting its requests.
type instance struct {
	srv    *httptest.Server
	leader atomic.Pointer[string] // nil: this one leads
	hits   atomic.Int32
}

func newInstance(t *testing.T) *instance {
	in := &instance{}
	in.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in.hits.Add(1)
		if l := in.leader.Load(); l != nil {
			if *l != "" {
				w.Header().Set("X-Fairway-Leader", *l)
			}
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"not_leader","message":"standby"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"job":{"id":"j1","state":"pending"}}`))
	}))
	t.Cleanup(in.srv.Close)
	return in
}

func (in *instance) standBy(leaderAddr string) { in.leader.Store(&leaderAddr) }
func (in *instance) lead()                     { in.leader.Store(nil) }
func (in *instance) addr() string              { return strings.TrimPrefix(in.srv.URL, "http://") }

func TestClientFollowsTheLeaderAcrossInstances(t *testing.T) {
	a, b := newInstance(t), newInstance(t)
	a.standBy(b.addr())
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + dead.Addr().String()
	dead.Close() // nothing listens there: connections are refused

	c, err := New(deadURL + "," + a.srv.URL + "," + b.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(context.Background(), "j1")
	if err != nil || got.Job.ID != "j1" {
		t.Fatalf("get through a dead instance and a standby: %+v %v", got, err)
	}
	if c.BaseURL() != b.srv.URL {
		t.Errorf("the client uses %s, want the leader %s", c.BaseURL(), b.srv.URL)
	}
	// Failover: b stands by, a leads; the next call finds a.
	b.standBy(a.addr())
	a.lead()
	before := a.hits.Load()
	if _, err := c.Get(context.Background(), "j1"); err != nil {
		t.Fatal(err)
	}
	if a.hits.Load() != before+1 || c.BaseURL() != a.srv.URL {
		t.Errorf("after the failover the client uses %s", c.BaseURL())
	}
}

// With one instance given, a refused connection is not retried (the CLI
// says at once that the server cannot be reached), and a standby that
// names no leader is asked again until the window or the context ends.
func TestClientWithOneInstance(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + dead.Addr().String()
	dead.Close()
	c, _ := New(deadURL)
	if _, err := c.Get(context.Background(), "j1"); err == nil {
		t.Fatal("a refused connection succeeded")
	}
	s := newInstance(t)
	s.standBy("")
	c, _ = New(s.srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for s.hits.Load() < 3 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err = c.Get(ctx, "j1")
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeNotLeader || s.hits.Load() < 3 {
		t.Errorf("standby with no leader: %v after %d tries", err, s.hits.Load())
	}
}

// silentListener accepts connections and never answers on them: an
// instance cut off from its database or partitioned away.
func silentListener(t *testing.T) (url string, accepted *atomic.Int32) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = new(atomic.Int32)
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String(), accepted
}

// A submit against three instances, the first silent, succeeds through
// the second once the first attempt's timeout passes, well within the
// retry deadline, and the retry carries the same (made-up) idempotency
// key.
func TestASubmitFailsOverFromASilentInstance(t *testing.T) {
	silent, accepted := silentListener(t)
	var keys []string
	var mu sync.Mutex
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get(api.SubmitTokenHeader))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"job":{"id":"j1","state":"pending"}}`))
	}))
	t.Cleanup(leader.Close)
	third := newInstance(t)
	c, err := New(silent+","+leader.URL+","+third.srv.URL, WithRequestTimeout(300*time.Millisecond), WithRetryDeadline(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	res, err := c.Submit(context.Background(), api.JobSpec{Type: "report"})
	took := time.Since(began)
	if err != nil || res.Job.ID != "j1" {
		t.Fatalf("submit with the first instance silent: %+v %v", res, err)
	}
	if accepted.Load() == 0 {
		t.Error("the silent instance was never tried")
	}
	if took > 5*time.Second {
		t.Errorf("took %s, past the retry deadline", took)
	}
	if c.BaseURL() != leader.URL || len(keys) != 1 || !isSubmitToken(keys[0]) {
		t.Errorf("answered by %s with submit tokens %q", c.BaseURL(), keys)
	}
	t.Logf("through the second instance after %s", took)
}

// An answer that may have been applied is retried with the same key when
// the call is safe to repeat (a keyed submit), and returned as it is
// otherwise (a cancel); a timeout likewise.
func TestMaybeAppliedIsRetriedOnlyWhenSafe(t *testing.T) {
	var hits atomic.Int32
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		if hits.Add(1)%2 == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"maybe_applied","message":"may have been applied"}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"job":{"id":"j1","state":"pending"}}`))
	}))
	t.Cleanup(srv.Close)
	c, _ := New(srv.URL, WithRetryDeadline(5*time.Second))
	if _, err := c.Submit(context.Background(), api.JobSpec{Type: "r", IdempotencyKey: "k1"}); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0] != "k1" || keys[1] != "k1" {
		t.Errorf("keys sent %q, want k1 twice", keys)
	}
	_, err := c.Cancel(context.Background(), "j1")
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeMaybeApplied || hits.Load() != 3 {
		t.Errorf("a cancel answered maybe_applied: %v after %d requests, want the answer, not retried", err, hits.Load())
	}
}

// Something other than fairway at the URL (a static file server) is named
// as such: ErrNotFairway, with the URL, not its HTML.
func TestSomethingElseAtTheURLIsNotFairway(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNotImplemented)
		} else if r.URL.Path == "/api/v1/jobs" {
			_, _ = w.Write([]byte("<!DOCTYPE HTML><html>a listing</html>"))
			return
		} else {
			w.WriteHeader(http.StatusNotFound)
		}
		_, _ = w.Write([]byte("<!DOCTYPE HTML>\n<html><body>Error</body></html>"))
	}))
	t.Cleanup(srv.Close)
	c, _ := New(srv.URL)
	_, getErr := c.Get(context.Background(), "j1")
	_, subErr := c.Submit(context.Background(), api.JobSpec{Type: "r"})
	_, listErr := c.List(context.Background(), ListOptions{})
	for what, err := range map[string]error{"get": getErr, "submit": subErr, "list": listErr} {
		if !errors.Is(err, ErrNotFairway) || !strings.Contains(err.Error(), srv.URL) || strings.Contains(err.Error(), "DOCTYPE") {
			t.Errorf("%s: %v, want ErrNotFairway naming %s", what, err, srv.URL)
		}
		if IsNotFound(err) {
			t.Errorf("%s: %v counts as not found", what, err)
		}
	}
}

// A followed log whose instance goes silent (no data, no ping, nothing
// closed) is taken for dropped after the idle bound and reopened from
// where it was, on the next instance if need be: no chunk lost or
// repeated. Opening it on a silent instance moves on after the request
// timeout.
func TestAFollowedLogSurvivesASilentInstance(t *testing.T) {
	defer func(d time.Duration) { streamIdle = d }(streamIdle)
	streamIdle = 300 * time.Millisecond
	var opens atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		if opens.Add(1) == 1 {
			s.event("log", api.LogChunk{JobID: "j1", Attempt: 1, Seq: 1, Data: "a"})
			<-r.Context().Done() // then silence, until the client gives up
			return
		}
		if r.URL.Query().Get("after_seq") != "1" {
			t.Errorf("reopened at after_seq=%q, want 1", r.URL.Query().Get("after_seq"))
		}
		s.event("log", api.LogChunk{JobID: "j1", Attempt: 1, Seq: 2, Data: "b"})
		s.event("end", api.LogEnd{State: "succeeded"})
	}))
	t.Cleanup(srv.Close)
	silent, _ := silentListener(t)
	c, _ := New(silent+","+srv.URL, WithRequestTimeout(300*time.Millisecond), WithRetryDeadline(5*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []string
	end, err := c.FollowLogs(ctx, "j1", LogOptions{}, func(ch api.LogChunk) error {
		got = append(got, ch.Data)
		return nil
	})
	if err != nil || end.State != "succeeded" || strings.Join(got, "") != "ab" {
		t.Fatalf("followed %q, end %+v, %v; want ab, succeeded", got, end, err)
	}
}

// An attempt is bounded by the request timeout; a long poll by its wait
// plus a margin, not the request timeout on top.
func TestAttemptTimeouts(t *testing.T) {
	c, _ := New("http://127.0.0.1:1")
	for _, tc := range []struct {
		k    call
		want time.Duration
	}{
		{call{method: "GET"}, DefaultRequestTimeout},
		{call{method: "POST", wait: 3 * time.Second}, 3*time.Second + longPollMargin},
	} {
		if got := c.attemptTimeout(tc.k); got != tc.want {
			t.Errorf("attemptTimeout(wait %s) = %s, want %s", tc.k.wait, got, tc.want)
		}
	}
	c, _ = New("http://127.0.0.1:1", WithRequestTimeout(time.Second))
	if got := c.attemptTimeout(call{wait: 3 * time.Second}); got != 4*time.Second {
		t.Errorf("with a 1 s request timeout a 3 s poll gets %s, want 4s", got)
	}
}

// A heartbeat lists what the worker holds when it is made: it is never
// sent again after a pause, a timeout or a maybe_applied answer (a late
// copy would make the leader hand back attempts leased since), only at
// once to another instance when the first did nothing.
func TestAHeartbeatIsNotResentLate(t *testing.T) {
	for _, code := range []string{api.CodeMaybeApplied, api.CodeServerUnavailable} {
		var hits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"` + code + `","message":"x"}}`))
		}))
		c, _ := New(srv.URL, WithRetryDeadline(5*time.Second))
		_, err := c.HeartbeatWait(context.Background(), "w1", []api.JobAttempt{{JobID: "j1", Attempt: 1}}, 0)
		srv.Close()
		if err == nil || hits.Load() != 1 {
			t.Errorf("%s: a heartbeat sent %d times (%v), want once", code, hits.Load(), err)
		}
	}
	a, b := newInstance(t), newInstance(t)
	a.standBy("")
	c, _ := New(a.srv.URL + "," + b.srv.URL)
	if _, err := c.HeartbeatWait(context.Background(), "w1", nil, 0); err != nil || b.hits.Load() != 1 {
		t.Errorf("a heartbeat that met a standby: %v, %d on the next instance; want it sent there at once", err, b.hits.Load())
	}
}
