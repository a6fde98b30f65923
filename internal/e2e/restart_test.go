package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Issue 28 item 2: two typed workers, one stopped mid-stream as in a
// rolling deploy. Submits of its type go on being accepted (the CLI
// warns on stderr that no worker runs the type now) and run once it
// returns.
func TestSubmitsOfATypeWhoseWorkerRestartsAreQueued(t *testing.T) {
	cl := newCluster(t, testConfig)
	cl.worker("wa", "--types", "a", "--slots", "1")
	wb := cl.worker("wb", "--types", "b", "--slots", "1")
	eventually(t, 20*time.Second, "both workers registered", func() bool {
		ws, err := cl.c.Workers(context.Background())
		return err == nil && len(ws) == 2
	})
	var ids []string
	submitB := func() {
		t.Helper()
		r, err := cl.c.Submit(context.Background(), api.JobSpec{Type: "b", Command: []string{"echo", "hi"}})
		if err != nil {
			t.Fatalf("submit of b: %v", err)
		}
		ids = append(ids, r.Job.ID)
	}
	for range 3 {
		submitB()
	}
	wb.stop() // SIGTERM: it drains and deregisters
	for range 3 {
		submitB()
	}
	code, out := runCLI(t, "http://"+cl.addr, "submit", "b", "--", "echo", "hi")
	if code != 0 || !strings.Contains(out, "warning") || !strings.Contains(out, `no registered worker runs type "b"`) {
		t.Fatalf("fairway submit b while b's worker restarts: exit %d\n%s", code, out)
	}
	ids = append(ids, strings.TrimSpace(out[strings.LastIndexByte(strings.TrimSpace(out), '\n')+1:]))
	cl.worker("wb2", "--types", "b", "--slots", "1")
	for _, id := range ids {
		if j := cl.wait(id, 30*time.Second); j.State != api.StateSucceeded {
			t.Fatalf("job %s of b: %s", id, j.State)
		}
	}
}

// Issue 28 item 40: SIGTERM stops a server with a worker connected at
// once: the worker's held heartbeat (here up to 30 s) is answered at the
// shutdown, not waited for until the HTTP server's 10 s shutdown
// deadline.
func TestServerSIGTERMDoesNotWaitForAHeldHeartbeat(t *testing.T) {
	cl := newCluster(t, `
server:
  lease_ttl: 90s
  heartbeat_interval: 30s
  allow_unknown_types: true
`)
	cl.worker("w1", "--slots", "1")
	eventually(t, 20*time.Second, "the worker's first heartbeat (then held)", func() bool {
		ws, err := cl.c.Workers(context.Background())
		return err == nil && len(ws) == 1 && ws[0].LastSeenAt.After(ws[0].RegisteredAt)
	})
	_ = cl.server.cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cl.server, 5*time.Second); code != 0 {
		t.Fatalf("server exited %d after SIGTERM", code)
	}
}
