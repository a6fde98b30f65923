package e2e

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

// An open server (no keys) listens beyond loopback only with --insecure,
// and says at WARN that anyone who reaches it is admin.
func TestOpenServerOnAllInterfacesNeedsInsecure(t *testing.T) {
	dir := t.TempDir()
	_, port, _ := net.SplitHostPort(freeAddr(t))
	refused := start(t, "refused", "server", "--listen", "0.0.0.0:"+port, "--data", filepath.Join(dir, "a"))
	select {
	case <-refused.done:
	case <-time.After(20 * time.Second):
		t.Fatal("an open server on 0.0.0.0 without --insecure is still running")
	}
	if code := refused.cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(refused.output(), "--insecure") {
		t.Fatalf("without --insecure: exit %d\n%s", code, refused.output())
	}
	srv := start(t, "insecure", "server", "--insecure", "--listen", "0.0.0.0:"+port, "--data", filepath.Join(dir, "b"))
	c, err := client.New("http://127.0.0.1:" + port)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the --insecure server to be ready", func() bool { return c.Ready(context.Background()) == nil })
	if out := srv.output(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "anyone who can reach this server is admin") {
		t.Fatalf("no open-mode WARN line:\n%s", out)
	}
}

// markedProcesses lists the pids whose command line contains tag.
func markedProcesses(tag string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), tag) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// A job's setsid'ed and background descendants die with it: at a timeout,
// no process of the job survives its end.
func TestJobDescendantsDieWithTheJob(t *testing.T) {
	cl := newCluster(t, testConfig)
	cl.worker("w1", "--slots", "1")
	tag := "31" + strconv.Itoa(os.Getpid()%1000) + "7"
	script := "setsid sleep " + tag + " & sleep " + tag + " & nohup sleep " + tag + " >/dev/null 2>&1 & sleep " + tag
	job := cl.submit(api.JobSpec{Type: "tree", MaxAttempts: 1, TimeoutMS: 1500, SLAPolicy: "strict", Command: []string{"sh", "-c", script}})
	eventually(t, 20*time.Second, "the job's processes to start", func() bool { return len(markedProcesses("sleep\x00"+tag)) >= 4 })
	done := cl.wait(job.ID, 30*time.Second)
	if done.State != api.StateFailed || done.FailureClass != "timeout" {
		t.Fatalf("job ended %s (%s), want failed (timeout)", done.State, done.FailureClass)
	}
	eventually(t, 10*time.Second, "every process of the job to end", func() bool { return len(markedProcesses("sleep\x00"+tag)) == 0 })
}

// After a worker is SIGKILLed, its jobs' escaped descendants are killed by
// the next worker that starts on the machine.
func TestNextWorkerKillsWhatAKilledWorkersJobsLeft(t *testing.T) {
	cl := newCluster(t, testConfig)
	w := cl.worker("w1", "--slots", "1")
	tag := "32" + strconv.Itoa(os.Getpid()%1000) + "9"
	script := "setsid sleep " + tag + " & sleep " + tag
	cl.submit(api.JobSpec{Type: "tree", MaxAttempts: 1, Command: []string{"sh", "-c", script}})
	eventually(t, 20*time.Second, "the job's processes to start", func() bool { return len(markedProcesses("sleep\x00"+tag)) >= 2 })
	t.Cleanup(func() {
		for _, pid := range markedProcesses("sleep\x00" + tag) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	w.kill()
	cl.worker("w2", "--slots", "1")
	eventually(t, 20*time.Second, "the next worker to kill the left-over processes", func() bool {
		return len(markedProcesses("sleep\x00"+tag)) == 0
	})
}
