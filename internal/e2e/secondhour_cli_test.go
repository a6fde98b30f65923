package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

// Issue 28 item 11: submit --wait says that attempt 1 timed out before
// attempt 2 runs, however fast the retry comes.
func TestSubmitWaitSaysEachAttemptsOutcome(t *testing.T) {
	url, _ := startDev(t, "--slots", "1")
	code, out := runCLI(t, url, "submit", "--wait", "--timeout", "1s", "--max-attempts", "2", "--retry", "immediate",
		"report", "--", "sleep", "30")
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{
		"running (attempt 1 of 2 on worker ",
		"retry_wait (attempt 1 of 2 failed: timeout: timed out after 1s; attempt 2 starts now)",
		"running (attempt 2 of 2 on worker ",
		"failed (attempt 2: timeout: timed out after 1s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("submit --wait does not say %q:\n%s", want, out)
		}
	}
}

// Issue 28 item 12: after a lease is handed back uncharged at a restart,
// list, status and logs number the attempts one way, and status says why
// there is one more.
func TestAttemptsAreNumberedOneWayAfterAHandBack(t *testing.T) {
	dir := t.TempDir()
	addr, data := freeAddr(t), filepath.Join(dir, "data")
	url := "http://" + addr
	dev := start(t, "dev", "dev", "--listen", addr, "--data", data, "--slots", "1")
	c, err := client.New(url)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "dev to be ready", func() bool {
		ws, err := c.Workers(context.Background())
		return err == nil && len(ws) == 1
	})
	marker := filepath.Join(dir, "ran")
	r, err := c.Submit(context.Background(), api.JobSpec{Type: "report", MaxAttempts: 3, Shell: true,
		Command: []string{"if [ -f " + marker + " ]; then echo second; else touch " + marker + "; echo first; exec sleep 120; fi"}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the first run to start", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	time.Sleep(300 * time.Millisecond) // the start reaches the server
	forceStop(t, dev)
	dev = start(t, "dev", "dev", "--listen", addr, "--data", data, "--slots", "1")
	t.Cleanup(func() { forceStop(t, dev) })
	eventually(t, 60*time.Second, "the job to succeed after the restart", func() bool {
		got, err := c.Get(context.Background(), r.Job.ID)
		return err == nil && got.Job.State == api.StateSucceeded
	})

	_, out := runCLI(t, url, "list", "--limit", "1")
	if lines := strings.Split(out, "\n"); len(lines) < 2 || strings.Fields(lines[1])[7] != "2" {
		t.Errorf("list's ATTEMPT is not 2:\n%s", out)
	}
	_, out = runCLI(t, url, "status", r.Job.ID)
	if !strings.Contains(out, "succeeded (attempt 2") || !strings.Contains(out, "2 of 4 (max_attempts 3, plus 1 lease(s) handed back uncharged") {
		t.Errorf("status:\n%s", out)
	}
	_, out = runCLI(t, url, "logs", r.Job.ID)
	if !strings.Contains(out, "==> attempt 1 of 4: handed back uncharged (") || !strings.Contains(out, "==> attempt 2 of 4 on w-") {
		t.Errorf("logs:\n%s", out)
	}
}
