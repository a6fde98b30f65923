package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// slowHeartbeats is a config whose heartbeats come every 10 s: an extended
// deadline cannot wait for the next one.
const slowHeartbeats = `
server:
  lease_ttl: 30s
  heartbeat_interval: 10s
  allow_unknown_types: true
`

func eventTypes(t *testing.T, cl *cluster, id string) []string {
	t.Helper()
	evs, err := cl.c.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// The case: --sla strict --timeout 2s -- sleep 4, extended by 5 s
// at 1 s. The worker learns of the extension before it kills (it asks the
// server when its local deadline comes), so the job succeeds.
func TestSLAExtendedBeforeTheNextHeartbeatIsHonoured(t *testing.T) {
	cl := newCluster(t, slowHeartbeats)
	cl.worker("w1", "--slots", "1")
	marker := filepath.Join(t.TempDir(), "started")
	job := cl.submit(api.JobSpec{Type: "long", MaxAttempts: 1, TimeoutMS: 2000, SLAPolicy: "strict",
		Command: []string{"sh", "-c", "touch " + marker + "; sleep 4; echo finished"}})
	eventually(t, 20*time.Second, "the job to start", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	time.Sleep(time.Second) // the timing: extend 1 s into the run
	if _, err := cl.c.ExtendSLA(context.Background(), job.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	done := cl.wait(job.ID, 30*time.Second)
	if done.State != api.StateSucceeded {
		t.Fatalf("job ended %s (%s: %s): the worker killed it at the old deadline", done.State, done.FailureClass, done.LastError)
	}
	if evs := eventTypes(t, cl, job.ID); !slices.Contains(evs, "sla_extended") {
		t.Errorf("events %v lack sla_extended", evs)
	}
}

// A strict-SLA kill is recorded as an sla_violation event, however soon
// after the deadline the worker reports it.
func TestStrictSLAKillRecordsAViolation(t *testing.T) {
	cl := newCluster(t, slowHeartbeats)
	cl.worker("w1", "--slots", "1")
	job := cl.submit(api.JobSpec{Type: "long", MaxAttempts: 1, TimeoutMS: 1000, SLAPolicy: "strict",
		Command: []string{"sleep", "30"}})
	done := cl.wait(job.ID, 30*time.Second)
	if done.State != api.StateFailed || done.FailureClass != "timeout" {
		t.Fatalf("job ended %s (%s), want failed (timeout)", done.State, done.FailureClass)
	}
	if evs := eventTypes(t, cl, job.ID); !slices.Contains(evs, "sla_violation") {
		t.Errorf("events %v lack sla_violation", evs)
	}
}
