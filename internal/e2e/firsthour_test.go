package e2e

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

// waitExit waits (bounded) for a process that should stop by itself and
// returns its exit code.
func waitExit(t *testing.T, p *proc, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("%s still running after %s", p.name, within)
	}
	return p.cmd.ProcessState.ExitCode()
}

// Issue 9 item 7: a port in use is explained with the flag that picks
// another, and no data directory is created.
func TestServerOnAPortInUseSaysHowToPickAnother(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, cmd := range []string{"server", "dev"} {
		data := filepath.Join(t.TempDir(), "fairway-data")
		p := start(t, cmd, cmd, "--listen", busy.Addr().String(), "--data", data)
		if code := waitExit(t, p, 20*time.Second); code == 0 {
			t.Errorf("%s exited 0", cmd)
		}
		if out := p.output(); !strings.Contains(out, "already in use") || !strings.Contains(out, "--listen") {
			t.Errorf("%s: the error does not explain the port or name --listen:\n%s", cmd, out)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("%s created its data directory although it could not listen (stat: %v)", cmd, err)
		}
	}
}

// slowBeats makes the heartbeat interval 20 s: a cancel that waited for
// the next heartbeat would take up to that long.
const slowBeats = `
server:
  lease_ttl: 60s
  heartbeat_interval: 20s
  allow_unknown_types: true
`

// Issue 9 item 10: a cancel reaches the worker when it is made (the
// server answers the worker's held heartbeat), not at the next beat.
func TestCancelOfARunningJobReachesTheWorkerAtOnce(t *testing.T) {
	cl := newCluster(t, slowBeats)
	cl.worker("w1", "--slots", "1")
	marker := filepath.Join(t.TempDir(), "started")
	job := cl.submit(api.JobSpec{Type: "long", MaxAttempts: 1, Command: []string{"sh", "-c", "touch " + marker + "; exec sleep 120"}})
	eventually(t, 20*time.Second, "the job to start", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	time.Sleep(500 * time.Millisecond) // the worker's heartbeat is now held by the server
	if _, err := cl.c.Cancel(context.Background(), job.ID); err != nil {
		t.Fatal(err)
	}
	// Well inside the 20 s heartbeat interval; the kill itself is SIGTERM.
	done := cl.wait(job.ID, 8*time.Second)
	if done.State != api.StateCancelled {
		t.Fatalf("job ended %s, want cancelled", done.State)
	}
}

// Issue 9 item 2: stopping `fairway dev` with a job running says what it
// waits for and how to skip it; a second Ctrl-C stops at once, kills the
// job's processes and hands the job back without charging an attempt,
// leaving no error or run_at on it.
func TestSecondCtrlCStopsDevAtOnceAndHandsTheJobBackUncharged(t *testing.T) {
	dir := t.TempDir()
	addr, data := freeAddr(t), filepath.Join(dir, "data")
	dev := start(t, "dev", "dev", "--listen", addr, "--data", data, "--slots", "1")
	c, err := client.New("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "dev to be ready", func() bool { return c.Ready(context.Background()) == nil })
	pidFile := filepath.Join(dir, "pid")
	r, err := c.Submit(context.Background(), api.JobSpec{Type: "long", MaxAttempts: 1,
		Command: []string{"sh", "-c", "echo $$ > " + pidFile + "; exec sleep 120"}})
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	eventually(t, 30*time.Second, "the job to start", func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	time.Sleep(300 * time.Millisecond) // the start reaches the server
	_ = dev.cmd.Process.Signal(syscall.SIGINT)
	eventually(t, 10*time.Second, "dev to say how to skip the drain", func() bool {
		return strings.Contains(dev.output(), "Ctrl-C again")
	})
	// The worker's line naming the job follows dev's by a moment.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(dev.output(), r.Job.ID) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(dev.output(), r.Job.ID) {
		t.Errorf("the shutdown does not name the job it waits for:\n%s", dev.output())
	}
	_ = dev.cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, dev, 15*time.Second); code != 0 {
		t.Errorf("dev exited %d after a forced stop", code)
	}
	if alive(pid) {
		t.Errorf("the job's process %d outlived the forced stop", pid)
	}
	// The job as a restarted server sees it: pending, nothing charged.
	srv := start(t, "server", "server", "--listen", addr, "--data", data)
	defer srv.stop()
	eventually(t, 30*time.Second, "the server to be ready", func() bool { return c.Ready(context.Background()) == nil })
	got, err := c.Get(context.Background(), r.Job.ID)
	if err != nil {
		t.Fatal(err)
	}
	j := got.Job
	if j.State != api.StatePending || j.Attempt-j.ReturnedLeases != 0 || j.LastError != "" || j.RunAt != nil || j.StartedAt != nil {
		t.Errorf("after a forced stop the job is %s, attempt %d (returned %d), error %q, run_at %v, started_at %v; want pending, uncharged, no error, no run_at",
			j.State, j.Attempt, j.ReturnedLeases, j.LastError, j.RunAt, j.StartedAt)
	}
}

// runCLI runs the fairway binary against a server and returns its exit
// code and combined output; it is bounded in time.
func runCLI(t *testing.T, server string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "FAIRWAY_SERVER="+server)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("fairway %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// startDev starts `fairway dev` on a free port and waits until it is ready.
func startDev(t *testing.T, args ...string) (string, *proc) {
	t.Helper()
	addr := freeAddr(t)
	all := append([]string{"dev", "--listen", addr, "--data", filepath.Join(t.TempDir(), "data")}, args...)
	dev := start(t, "dev", all...)
	// dev's worker runs in its own process group and would drain its jobs
	// when dev is killed: stop dev as a user would, with two Ctrl-Cs.
	t.Cleanup(func() { forceStop(t, dev) })
	c, err := client.New("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "dev and its worker to be ready", func() bool {
		ws, err := c.Workers(context.Background())
		return err == nil && len(ws) == 1
	})
	return "http://" + addr, dev
}

// Issue 9 item 3: the dev worker offers the machine's CPU and memory and
// runs shell jobs of ad-hoc types; a job no worker could run is refused
// at submit naming what is missing; submit --wait says why a job waits.
func TestDevOffersTheMachineAndSaysWhyAJobWaits(t *testing.T) {
	url, _ := startDev(t, "--slots", "1")
	if code, out := runCLI(t, url, "submit", "--cpu", "1", "--memory-mb", "64", "--wait", "demo", "--", "echo", "sized"); code != 0 || !strings.Contains(out, "sized") {
		t.Errorf("submit --cpu 1 --wait: exit %d\n%s", code, out)
	}
	if code, out := runCLI(t, url, "submit", "--shell", "--wait", "adhoc", "--", "echo $((40+2))"); code != 0 || !strings.Contains(out, "42") {
		t.Errorf("submit --shell on an ad-hoc type: exit %d\n%s", code, out)
	}
	code, out := runCLI(t, url, "submit", "--cpu", "100000", "demo", "--", "true")
	if code == 0 || !strings.Contains(out, "unrunnable") || !strings.Contains(out, "asks for 100000 cpu") {
		t.Errorf("submit --cpu 100000: exit %d\n%s", code, out)
	}
	if code, out := runCLI(t, url, "submit", "long", "--", "sleep", "30"); code != 0 {
		t.Fatalf("submit: exit %d\n%s", code, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "submit", "--wait", "demo", "--", "true")
	cmd.Env = append(os.Environ(), "FAIRWAY_SERVER="+url)
	waited, _ := cmd.CombinedOutput() // ends with the context: the job waits behind the sleep
	// It fits no free slot and ranks first: it reserves the worker (issue 26).
	if !strings.Contains(string(waited), "waits: reserved: starts on worker ") {
		t.Errorf("submit --wait on a job that waits does not say why:\n%s", waited)
	}
}

// forceStop sends SIGINT twice (a forced stop) and waits, bounded, for the
// process to exit.
func forceStop(t *testing.T, p *proc) {
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(200 * time.Millisecond)
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Errorf("%s did not stop on two SIGINTs", p.name)
	}
}
