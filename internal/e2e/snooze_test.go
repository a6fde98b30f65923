package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/pgtest"
)

// Issue 30 item 3: a command job snoozes through a real worker process. It
// writes a delay to $FAIRWAY_SNOOZE_FILE and exits 75 on its first run,
// waits that long blocked, then runs again and succeeds, though it has one
// attempt: the snoozed attempt was not charged. A job that always snoozes
// fails once it asks past its max_snoozes; one that exits 75 without a
// delay just fails. On SQLite, and on PostgreSQL.
func TestCommandJobSnoozesThroughARealWorker(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { snoozeThroughAWorker(t, testConfig) })
	t.Run("postgres", func(t *testing.T) {
		snoozeThroughAWorker(t, testConfig+"  store: "+pgtest.URL(t)+"\n")
	})
}

func snoozeThroughAWorker(t *testing.T, config string) {
	cl := newCluster(t, config)
	cl.worker("w1", "--slots", "2")
	marker := filepath.Join(t.TempDir(), "ready")
	once := cl.submit(api.JobSpec{Type: "poll", MaxAttempts: 1, Command: []string{"sh", "-c",
		`if [ -e "` + marker + `" ]; then echo ready; exit 0; fi; touch "` + marker + `"; echo 0.3 > "$FAIRWAY_SNOOZE_FILE"; exit 75`}})
	always := cl.submit(api.JobSpec{Type: "poll", MaxSnoozes: 2, Command: []string{"sh", "-c",
		`echo 100ms > "$FAIRWAY_SNOOZE_FILE"; exit 75`}})
	plain := cl.submit(api.JobSpec{Type: "poll", MaxAttempts: 1, Command: []string{"sh", "-c", `exit 75`}})

	done := cl.wait(once.ID, 60*time.Second)
	if done.State != api.StateSucceeded || done.Attempt != 2 || done.Snoozes != 1 || done.ReturnedLeases != 1 {
		t.Fatalf("snoozed once: %s attempt %d snoozes %d returned %d (%s)", done.State, done.Attempt, done.Snoozes, done.ReturnedLeases, done.LastError)
	}
	ctx := context.Background()
	execs, err := cl.c.Executions(ctx, once.ID)
	if err != nil || len(execs) != 2 || execs[0].Outcome != api.OutcomeSnoozed || execs[1].Outcome != api.OutcomeSucceeded {
		t.Fatalf("executions %+v (%v)", execs, err)
	}
	if gap := execs[1].StartedAt.Sub(*execs[0].FinishedAt); gap < 300*time.Millisecond {
		t.Fatalf("ran again %s after the snooze of 300ms", gap)
	}
	events, err := cl.c.Events(ctx, once.ID)
	if err != nil || !slices.ContainsFunc(events, func(e api.Event) bool { return e.Type == "snoozed" }) {
		t.Fatalf("no snoozed event: %+v (%v)", events, err)
	}

	capped := cl.wait(always.ID, 60*time.Second)
	if capped.State != api.StateFailed || capped.FailureClass != api.FailSnoozeLimit || capped.Snoozes != 2 || capped.Attempt != 3 {
		t.Fatalf("always snoozing, max 2: %s class %s snoozes %d attempt %d (%s)", capped.State, capped.FailureClass, capped.Snoozes, capped.Attempt, capped.LastError)
	}
	failed := cl.wait(plain.ID, 60*time.Second)
	if failed.State != api.StateFailed || failed.FailureClass != api.FailExitCode || failed.Snoozes != 0 {
		t.Fatalf("exit 75 without a delay: %s class %s snoozes %d", failed.State, failed.FailureClass, failed.Snoozes)
	}
}
