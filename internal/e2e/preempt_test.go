package e2e

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Issue 26's preemption, live: a real server with preemption on for its
// lane after 2 s and a real worker of one slot running a long command
// job of low priority. A high job submitted then waits (explain:
// reserved), then preempts it (explain: preempting); the low command gets
// SIGTERM with its FAIRWAY_PREEMPTED_FILE written, goes back to the queue
// without spending an attempt (max_attempts 1), runs again once the high
// job is done, and succeeds.
func TestPreemptedCommandJobRunsAgainAndSucceeds(t *testing.T) {
	cl := newCluster(t, `
server:
  lease_ttl: 10s
  heartbeat_interval: 1s
lanes:
  default:
    preemption: {after: 2s, grace: 3s}
types:
  long: {}
  urgent: {}
`)
	marks := t.TempDir()
	cl.worker("w-preempt", "--slots", "1", "--kill-grace", "3s")
	ctx := context.Background()
	// First run: traps SIGTERM, records what the preempted file held, and
	// exits 0 a second later (a handler that stops cleanly, within the
	// grace; long enough for explain to see preempting). Second run:
	// succeeds at once.
	script := `if [ -e ` + marks + `/ran ]; then echo second run; exit 0; fi
touch ` + marks + `/ran
trap 'echo "preempted file: $(cat "$FAIRWAY_PREEMPTED_FILE")" > ` + marks + `/term; sleep 1; exit 0' TERM
echo first run; while :; do sleep 0.05; done`
	low := cl.submit(api.JobSpec{Type: "long", Priority: intPtr(100), MaxAttempts: 1, Command: []string{"sh", "-c", script}})
	// The job's state says running from its lease on, before the lease
	// has left the server; a lease not yet delivered is withdrawn for a
	// higher job that arrives (preemption before delivery), and nothing
	// would be left to preempt. So wait for the command itself to run.
	eventually(t, 20*time.Second, "the low job's command to run", func() bool {
		_, err := os.Stat(marks + "/ran")
		return err == nil
	})
	high := cl.submit(api.JobSpec{Type: "urgent", Priority: intPtr(900), Command: []string{"true"}})
	codes := map[string]bool{}
	eventually(t, 20*time.Second, "the high job to run", func() bool {
		if x, err := cl.c.Explain(ctx, high.ID); err == nil {
			codes[x.Code] = true
		}
		r, err := cl.c.Get(ctx, high.ID)
		return err == nil && (r.Job.State == api.StateRunning || r.Job.State == api.StateSucceeded || r.Job.State == api.StateLeased)
	})
	if !codes["reserved"] || !codes["preempting"] {
		t.Errorf("explain codes seen while the high job waited: %v, want reserved and preempting", codes)
	}
	if got := cl.wait(high.ID, 20*time.Second); got.State != api.StateSucceeded {
		t.Fatalf("high job ended %s", got.State)
	}
	got := cl.wait(low.ID, 30*time.Second)
	if got.State != api.StateSucceeded {
		t.Fatalf("low job ended %s (%s), want succeeded on its second run", got.State, got.LastError)
	}
	if got.ReturnedLeases != 1 || got.Attempt != 2 {
		t.Errorf("low job: attempt %d, returned_leases %d; want attempt 2 with 1 uncharged (max_attempts 1)", got.Attempt, got.ReturnedLeases)
	}
	term := readFile(t, marks+"/term")
	if !strings.Contains(term, "preempted file: 1") {
		t.Errorf("the command's SIGTERM handler saw %q, want the preempted file holding 1", term)
	}
	execs, err := cl.c.Executions(ctx, low.ID)
	if err != nil || len(execs) != 2 || execs[0].Outcome != api.OutcomePreempted || execs[1].Outcome != api.OutcomeSucceeded {
		t.Errorf("low job's executions %+v (%v), want preempted then succeeded", execs, err)
	}
	evs, err := cl.c.Events(ctx, low.ID)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
		if e.Type == "preempted" && !strings.Contains(string(e.Detail), high.ID) {
			t.Errorf("preempted event %s does not name the job it yielded to (%s)", e.Detail, high.ID)
		}
	}
	if !slices.Contains(types, "preempt_requested") || !slices.Contains(types, "preempted") {
		t.Errorf("low job's events %v lack preempt_requested and preempted", types)
	}
}

func intPtr(v int) *int { return &v }

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}
