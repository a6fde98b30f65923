package e2e

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

// A one-second schedule on `fairway dev`, driven by the CLI: its jobs run,
// one per slot, each with its nominal time; pause stops it and delete
// removes it.
func TestAOneSecondScheduleRunsOneJobPerSlot(t *testing.T) {
	url, _ := startDev(t, "--slots", "2")
	code, out := runCLI(t, url, "schedule", "create", "--spec", "every 1s", "--name", "tick", "demo", "--", "true")
	if code != 0 {
		t.Fatalf("schedule create: exit %d\n%s", code, out)
	}
	id := strings.Fields(out)[0]
	c, err := client.New(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	succeeded := func() map[time.Time]int {
		slots := map[time.Time]int{}
		list, err := c.List(ctx, client.ListOptions{States: []string{"succeeded"}, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range list.Jobs {
			if j.ScheduleID == id && j.ScheduledFor != nil {
				slots[*j.ScheduledFor]++
			}
		}
		return slots
	}
	eventually(t, 30*time.Second, "three slots to run", func() bool { return len(succeeded()) >= 3 })
	for slot, n := range succeeded() {
		if n != 1 || slot.Nanosecond() != 0 {
			t.Errorf("slot %s has %d jobs (want 1, on a whole second)", slot, n)
		}
	}
	if code, out := runCLI(t, url, "schedule", "get", id); code != 0 || !strings.Contains(out, "recent runs:") || !strings.Contains(out, "succeeded") {
		t.Errorf("schedule get: exit %d\n%s", code, out)
	}
	if code, out := runCLI(t, url, "schedule", "events", id, "--type", "schedule_fired", "--limit", "2"); code != 0 ||
		strings.Count(out, "schedule_fired") != 2 || !strings.Contains(out, "scheduled_for") {
		t.Errorf("schedule events: exit %d\n%s", code, out)
	}
	if code, out := runCLI(t, url, "schedule", "pause", id); code != 0 || !strings.Contains(out, "paused") {
		t.Fatalf("schedule pause: exit %d\n%s", code, out)
	}
	time.Sleep(300 * time.Millisecond) // a slot fired just before the pause may still finish
	before := len(succeeded())
	time.Sleep(2500 * time.Millisecond)
	if after := len(succeeded()); after != before {
		t.Errorf("a paused schedule ran %d more slots", after-before)
	}
	if code, out := runCLI(t, url, "schedule", "delete", id); code != 0 {
		t.Fatalf("schedule delete: exit %d\n%s", code, out)
	}
	if code, _ := runCLI(t, url, "schedule", "get", id); code != 3 {
		t.Errorf("get of a deleted schedule: exit %d, want 3", code)
	}
}

// The crash acceptance: a one-second cron schedule ("* * * * * *",
// seconds first; allow_all, so that every slot makes a job) runs while the
// server is SIGKILLed and restarted 5 times. Afterwards every slot from the first job to the last has
// exactly one job, or was recorded missed; no slot has two; and the
// witness file the jobs append to shows each job ran once.
func TestAScheduleSurvivesServerKillsWithOneJobPerSlot(t *testing.T) {
	cl := newCluster(t, testConfig)
	cl.worker("w1", "--slots", "4")
	witness := filepath.Join(t.TempDir(), "witness")
	ctx := context.Background()
	sc, err := cl.c.CreateSchedule(ctx, api.ScheduleSpec{Spec: "* * * * * *", Overlap: "allow_all", Template: api.JobSpec{
		Type: "crash", MaxAttempts: 1,
		Command: []string{"sh", "-c", "echo \"start $FAIRWAY_JOB_ID $FAIRWAY_SCHEDULED_FOR\" >> " + witness +
			"; sleep 0.05; echo \"end $FAIRWAY_JOB_ID $FAIRWAY_SCHEDULED_FOR\" >> " + witness},
	}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	rng := rand.New(rand.NewPCG(3, 4))
	for kill := range 5 {
		cl.server.kill()
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		cl.startServer()
		time.Sleep(time.Duration(1000+rng.IntN(2000)) * time.Millisecond)
		t.Logf("kill %d done", kill+1)
	}
	if _, err := cl.c.PauseSchedule(ctx, sc.ID, "test over"); err != nil {
		t.Fatal(err)
	}
	// Every job of the schedule, waited for.
	bySlot := map[time.Time][]string{}
	var all []api.Job
	err = cl.c.ListAll(ctx, client.ListOptions{}, func(j api.Job) error {
		if j.ScheduleID == sc.ID {
			all = append(all, j)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range all {
		bySlot[*j.ScheduledFor] = append(bySlot[*j.ScheduledFor], j.ID)
		if done := cl.wait(j.ID, 60*time.Second); done.State != api.StateSucceeded {
			t.Errorf("job %s of slot %s ended %s: %s", j.ID, j.ScheduledFor, done.State, done.LastError)
		}
	}
	var first, last time.Time
	for slot, ids := range bySlot {
		if len(ids) != 1 {
			t.Errorf("slot %s has %d jobs: %v", slot, len(ids), ids)
		}
		if first.IsZero() || slot.Before(first) {
			first = slot
		}
		if slot.After(last) {
			last = slot
		}
	}
	// Each downtime is far inside the default 15-minute catch-up window:
	// no slot may be missed (the schedule's history records none), so
	// every second from the first slot to the last has its job.
	missed, err := cl.c.ScheduleEvents(ctx, sc.ID, client.ScheduleEventOptions{Types: []string{"schedule_missed", "schedule_failed"}})
	if err != nil || len(missed.Events) != 0 {
		t.Errorf("slots recorded missed or failed: %+v (%v)", missed.Events, err)
	}
	for slot := first; !slot.After(last); slot = slot.Add(time.Second) {
		if len(bySlot[slot]) == 0 {
			t.Errorf("slot %s has no job", slot)
		}
	}
	checkScheduleWitness(t, witness, all)
	t.Logf("%d slots from %s to %s: %d jobs across 5 server kills, one per slot, each ran once",
		int(last.Sub(first)/time.Second)+1, first.Format(time.TimeOnly), last.Format(time.TimeOnly), len(all))
}

// checkScheduleWitness reads "start ID SLOT" and "end ID SLOT" lines: every
// job ran exactly once, with its own slot.
func checkScheduleWitness(t *testing.T, path string, jobs []api.Job) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	starts, ends := map[string]int{}, map[string]int{}
	slotOf := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("witness line %q", line)
		}
		if f[0] == "start" {
			starts[f[1]]++
		} else {
			ends[f[1]]++
		}
		slotOf[f[1]] = f[2]
	}
	for _, j := range jobs {
		want := j.ScheduledFor.UTC().Format(time.RFC3339Nano)
		if starts[j.ID] != 1 || ends[j.ID] != 1 || slotOf[j.ID] != want {
			t.Errorf("job %s: %d starts, %d ends, slot %q in the witness; want 1, 1, %q", j.ID, starts[j.ID], ends[j.ID], slotOf[j.ID], want)
		}
	}
	if len(starts) != len(jobs) {
		t.Errorf("%d jobs ran by the witness, %d by the server", len(starts), len(jobs))
	}
}
