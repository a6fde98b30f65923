package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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
