package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

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
