package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

const testConfig = `
server:
  lease_ttl: 2s
  heartbeat_interval: 500ms
  allow_unknown_types: true
`

func TestCommandRunsWithLogs(t *testing.T) {
	cl := newCluster(t, testConfig)
	cl.worker("w1", "--slots", "2")
	job := cl.submit(api.JobSpec{Type: "echo", Command: []string{"sh", "-c", "echo out-line; echo err-line >&2"}})
	done := cl.wait(job.ID, 30*time.Second)
	if done.State != api.StateSucceeded || done.ExitCode == nil || *done.ExitCode != 0 {
		t.Fatalf("job ended %s (exit %v): %+v", done.State, done.ExitCode, done)
	}
	streams := map[string]string{}
	err := cl.c.LogsAll(context.Background(), job.ID, client.LogOptions{}, func(c api.LogChunk) error {
		streams[c.Stream] += c.Data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if streams["stdout"] != "out-line\n" || streams["stderr"] != "err-line\n" {
		t.Fatalf("logs = %q", streams)
	}
}

func TestFailureIsRetriedWithBackoff(t *testing.T) {
	cl := newCluster(t, testConfig)
	cl.worker("w1", "--slots", "1")
	job := cl.submit(api.JobSpec{Type: "flaky", Command: []string{"sh", "-c", "exit 3"}, MaxAttempts: 3,
		Retry: &api.RetryPolicy{Kind: "fixed", DelayMS: 300}})
	done := cl.wait(job.ID, 30*time.Second)
	if done.State != api.StateFailed || done.Attempt != 3 || done.FailureClass != "exit_code" || *done.ExitCode != 3 {
		t.Fatalf("final job: %+v", done)
	}
	execs, err := cl.c.Executions(context.Background(), job.ID)
	if err != nil || len(execs) != 3 {
		t.Fatalf("executions = %d (%v)", len(execs), err)
	}
	for i := 1; i < len(execs); i++ {
		gap := execs[i].StartedAt.Sub(*execs[i-1].FinishedAt)
		if execs[i].Outcome != "failed" || gap < 300*time.Millisecond {
			t.Fatalf("attempt %d: outcome %s, started %s after the previous ended (back-off 300ms)", execs[i].Attempt, execs[i].Outcome, gap)
		}
	}
}

func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	cl := newCluster(t, testConfig)
	cl.worker("w1", "--slots", "1")
	pidFile := filepath.Join(t.TempDir(), "pid")
	job := cl.submit(api.JobSpec{Type: "slow", MaxAttempts: 1, TimeoutMS: 700,
		Command: []string{"sh", "-c", "sleep 1000 & echo $! > " + pidFile + "; wait"}})
	done := cl.wait(job.ID, 30*time.Second)
	if done.State != api.StateFailed || done.FailureClass != "timeout" {
		t.Fatalf("job ended %s class %q", done.State, done.FailureClass)
	}
	pid := readPid(t, pidFile)
	eventually(t, 10*time.Second, "the background sleep to be killed", func() bool { return !alive(pid) })
}

func TestCancelRunningKillsTheProcess(t *testing.T) {
	cl := newCluster(t, testConfig)
	cl.worker("w1", "--slots", "1")
	pidFile := filepath.Join(t.TempDir(), "pid")
	job := cl.submit(api.JobSpec{Type: "slow", Command: []string{"sh", "-c", "echo $$ > " + pidFile + "; exec sleep 1000"}})
	eventually(t, 20*time.Second, "the job to run", func() bool {
		_, err := os.Stat(pidFile)
		return err == nil
	})
	r, err := cl.c.Cancel(context.Background(), job.ID)
	if err != nil || r.Result != api.ResultCancelRequested {
		t.Fatalf("cancel = %+v, %v", r, err)
	}
	if done := cl.wait(job.ID, 30*time.Second); done.State != api.StateCancelled {
		t.Fatalf("job ended %s", done.State)
	}
	pid := readPid(t, pidFile)
	eventually(t, 10*time.Second, "the process to be killed", func() bool { return !alive(pid) })
}

func TestKilledWorkersJobRerunsElsewhere(t *testing.T) {
	cl := newCluster(t, testConfig)
	marker := filepath.Join(t.TempDir(), "first-attempt-ran")
	a := cl.worker("wa", "--slots", "1")
	// The first attempt marks the file and hangs; a later one succeeds.
	job := cl.submit(api.JobSpec{Type: "once", Command: []string{"sh", "-c",
		"if [ -f " + marker + " ]; then echo second; exit 0; fi; touch " + marker + "; exec sleep 1000"}})
	eventually(t, 20*time.Second, "the first attempt to start", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	cl.worker("wb", "--slots", "1")
	a.kill()
	done := cl.wait(job.ID, 60*time.Second)
	if done.State != api.StateSucceeded || done.Attempt != 2 {
		t.Fatalf("job ended %s at attempt %d", done.State, done.Attempt)
	}
	execs, err := cl.c.Executions(context.Background(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	succeeded := 0
	for _, e := range execs {
		if e.Outcome == "succeeded" {
			succeeded++
		}
	}
	if len(execs) != 2 || execs[0].Outcome != "lost" || succeeded != 1 || execs[1].WorkerID == execs[0].WorkerID {
		t.Fatalf("executions = %+v", execs)
	}
}

func TestServerKilledDuringLoadLosesNoAcknowledgedJob(t *testing.T) {
	cl := newCluster(t, testConfig)
	cl.worker("w1", "--slots", "4")
	var mu sync.Mutex
	var acked []string
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil && i < 2000; i++ {
				r, err := cl.c.Submit(ctx, api.JobSpec{Type: "noop", Command: []string{"true"}, IdempotencyKey: fmt.Sprintf("p%d-%d", p, i)})
				if err != nil {
					time.Sleep(5 * time.Millisecond) // the server is down: try on
					continue
				}
				mu.Lock()
				acked = append(acked, r.Job.ID)
				mu.Unlock()
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	eventually(t, 30*time.Second, "200 acknowledged submits", func() bool { return count() >= 200 })
	cl.server.kill()
	before := count()
	cl.startServer()
	eventually(t, 30*time.Second, "submits after the restart", func() bool { return count() >= before+100 })
	stop()
	wg.Wait()
	mu.Lock()
	ids := append([]string(nil), acked...)
	mu.Unlock()
	for _, id := range ids {
		if j := cl.wait(id, 60*time.Second); j.State != api.StateSucceeded {
			t.Fatalf("acknowledged job %s ended %s", id, j.State)
		}
	}
	t.Logf("%d acknowledged jobs, %d before the SIGKILL; all succeeded", len(ids), before)
}

func TestSubmitWaitStreamsLogsAndExitCode(t *testing.T) {
	cl := newCluster(t, testConfig)
	cl.worker("w1", "--slots", "1")
	run := func(script string) (string, int) {
		cmd := exec.Command(binary, "submit", "--server", "http://"+cl.addr, "--wait", "demo", "--", "sh", "-c", script)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	if out, code := run("echo hello; echo world"); code != 0 || out != "hello\nworld\n" {
		t.Fatalf("success: exit %d, stdout %q", code, out)
	}
	if _, code := run("exit 4"); code != 1 {
		t.Fatalf("failure: exit %d, want 1", code)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestExtendedSLAReachesTheWorker(t *testing.T) {
	cl := newCluster(t, testConfig)
	cl.worker("w1", "--slots", "1")
	marker := filepath.Join(t.TempDir(), "started")
	job := cl.submit(api.JobSpec{Type: "long", MaxAttempts: 1, TimeoutMS: 1500,
		Command: []string{"sh", "-c", "touch " + marker + "; sleep 3; echo finished"}})
	eventually(t, 20*time.Second, "the job to start", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	if _, err := cl.c.ExtendSLA(context.Background(), job.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if done := cl.wait(job.ID, 30*time.Second); done.State != api.StateSucceeded {
		t.Fatalf("job ended %s (%s): the worker killed it at the old deadline", done.State, done.FailureClass)
	}
}

func TestWorkerSIGTERMDrainsAndHandsBack(t *testing.T) {
	cl := newCluster(t, testConfig)
	marker := filepath.Join(t.TempDir(), "started")
	w := cl.worker("w1", "--slots", "1", "--drain-timeout", "20s")
	running := cl.submit(api.JobSpec{Type: "slow", Command: []string{"sh", "-c", "touch " + marker + "; sleep 1; echo drained"}})
	eventually(t, 20*time.Second, "the first job to start", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	queued := cl.submit(api.JobSpec{Type: "next", Command: []string{"true"}})
	w.stop() // SIGTERM: finish the running job, take no more, deregister
	if code := w.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("worker exited %d after SIGTERM", code)
	}
	if j := cl.wait(running.ID, 10*time.Second); j.State != api.StateSucceeded || j.Attempt != 1 {
		t.Fatalf("running job after the drain: %s attempt %d", j.State, j.Attempt)
	}
	if j, _ := cl.c.Get(context.Background(), queued.ID); j.Job.State != api.StatePending {
		t.Fatalf("queued job after the worker left: %s (want pending, not run)", j.Job.State)
	}
	cl.worker("w2", "--slots", "1")
	if j := cl.wait(queued.ID, 30*time.Second); j.State != api.StateSucceeded {
		t.Fatalf("queued job on the next worker: %s", j.State)
	}
}

func TestShellJobsOnlyWhereTheTypeAllows(t *testing.T) {
	cl := newCluster(t, testConfig+"types:\n  script: {allow_shell: true}\n")
	cl.worker("w1", "--slots", "1", "--allow-shell")
	job := cl.submit(api.JobSpec{Type: "script", Shell: true, Command: []string{"echo", "$((40+2))"}})
	if !job.Shell || len(job.Env) != 0 {
		t.Fatalf("submitted job: shell %v env %v", job.Shell, job.Env)
	}
	if done := cl.wait(job.ID, 30*time.Second); done.State != api.StateSucceeded {
		t.Fatalf("shell job ended %s", done.State)
	}
	var out string
	err := cl.c.LogsAll(context.Background(), job.ID, client.LogOptions{}, func(c api.LogChunk) error {
		out += c.Data
		return nil
	})
	if err != nil || out != "42\n" {
		t.Fatalf("shell output %q (%v)", out, err)
	}
	_, err = cl.c.Submit(context.Background(), api.JobSpec{Type: "other", Shell: true, Command: []string{"echo hi"}})
	if ae, ok := client.APIError(err); !ok || ae.Field != "shell" {
		t.Fatalf("shell on a type that does not allow it: %v", err)
	}
}
