package e2e

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

// silentInstance is a listener that accepts connections and never
// answers: an instance that hangs, or a host partitioned away.
func silentInstance(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// A submit against three URLs, the first one silent, succeeds through the
// second within the client's deadline (its defaults: a 10 s request
// timeout, 30 s of retries), from the fairway binary and from the SDK.
func TestASubmitGoesPastASilentInstance(t *testing.T) {
	cl := newCluster(t, testConfig)
	servers := silentInstance(t) + ",http://" + cl.addr + ",http://" + cl.addr
	began := time.Now()
	code, out := runCLI(t, servers, "submit", "report", "--", "true")
	if code != 0 {
		t.Fatalf("fairway submit with the first instance silent: exit %d: %s", code, out)
	}
	t.Logf("the CLI's submit went through after %s", time.Since(began))

	c, err := client.New(servers)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), client.DefaultRetryDeadline)
	defer cancel()
	began = time.Now()
	r, err := c.Submit(ctx, api.JobSpec{Type: "report", Command: []string{"true"}})
	if err != nil || r.Job.ID == "" {
		t.Fatalf("the SDK's submit with the first instance silent: %+v %v", r.Job, err)
	}
	t.Logf("the SDK's submit went through after %s", time.Since(began))
}
