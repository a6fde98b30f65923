package embedded

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/internal/leader"
	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/worker"
)

// The child processes of TestTwoProcessesElectOneLeaderAndSurviveItsKill:
// one embedded fairway each, on the parent's PostgreSQL schema.
const (
	childEnv        = "FAIRWAY_EMBEDDED_CHILD" // the child's name; set: run as a child
	childURLEnv     = "FAIRWAY_EMBEDDED_CHILD_URL"
	childWitnessEnv = "FAIRWAY_EMBEDDED_CHILD_WITNESS"
	childJobs       = 120 // jobs each child submits
)

const childConfig = `
server:
  leader_ttl: 1s
  lease_ttl: 2s
  heartbeat_interval: 500ms
  allow_unknown_types: true
`

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		os.Exit(runChild(name, os.Getenv(childURLEnv), os.Getenv(childWitnessEnv)))
	}
	os.Exit(m.Run())
}

// runChild opens fairway on url with an HTTP address, runs a worker whose
// jobs append "start KEY PID" and "end KEY PID" to the witness file
// around a short sleep, submits childJobs jobs with idempotency keys
// (printing "acked KEY ID" once each is acknowledged), prints "addr A",
// "leading" and "standby" as they become true, and "submitted" at the
// end of its submits; it closes when its stdin closes.
func runChild(name, url, witness string) int {
	ctx := context.Background()
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	fw, err := Open(ctx, Options{Store: url, Config: []byte(childConfig), HTTPAddr: "127.0.0.1:0", Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	say("addr %s", fw.Addr())
	pid := os.Getpid()
	wf, err := os.OpenFile(witness, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	// The first child's worker has one slot. Placement breaks a tie
	// between two equal workers by the lower worker id (package policy,
	// placementBefore), a draw: when a's worker won it, its four slots
	// kept up with both children's submits and the standby's worker,
	// which the kill waits for, got no job (two runs in three under
	// -race on a slow machine). One slot at 20 ms a job is saturated by
	// the two children's submits, so b's worker gets jobs either way.
	slots := 4
	if name == "a" {
		slots = 1
	}
	w, err := fw.NewWorker(worker.Options{Name: name, Slots: slots, Handlers: map[string]worker.Handler{
		"witnessed": worker.HandlerFunc(func(ctx context.Context, job worker.Job) (json.RawMessage, error) {
			_, _ = fmt.Fprintf(wf, "start %s %d\n", job.IdempotencyKey, pid)
			time.Sleep(20 * time.Millisecond)
			_, _ = fmt.Fprintf(wf, "end %s %d\n", job.IdempotencyKey, pid)
			return nil, nil
		}),
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	go func() { _ = w.Run(ctx) }()
	go func() {
		leading := false
		for {
			if now := fw.Leading(); now != leading {
				leading = now
				say(map[bool]string{true: "leading", false: "standby"}[now])
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	go func() {
		for i := range childJobs {
			key := fmt.Sprintf("%s-%d", name, i)
			spec := api.JobSpec{Type: "witnessed", IdempotencyKey: key, MaxAttempts: 5}
			for {
				r, err := fw.Submit(ctx, spec)
				if err == nil {
					say("acked %s %s", key, r.Job.ID)
					break
				}
				if !client.IsRetryable(err) {
					fmt.Fprintln(os.Stderr, "child submit:", err)
					os.Exit(1)
				}
				time.Sleep(20 * time.Millisecond) // no leader yet: the same key again
			}
			time.Sleep(10 * time.Millisecond)
		}
		say("submitted")
	}()
	_, _ = io.Copy(io.Discard, os.Stdin)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := fw.Close(cctx); err != nil {
		fmt.Fprintln(os.Stderr, "child close:", err)
	}
	return 0
}

// child is a running child process and what it printed.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // everything it prints, line by line
	exit  chan struct{}
}

func startChild(t *testing.T, name, url, witness string, acks func(key, id string)) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+name, childURLEnv+"="+url, childWitnessEnv+"="+witness)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{name: name, cmd: cmd, stdin: stdin, lines: make(chan string, 1024), exit: make(chan struct{})}
	go func() {
		defer close(c.exit)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 3 && f[0] == "acked" {
				acks(f[1], f[2])
				continue
			}
			c.lines <- sc.Text()
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.exit
	})
	return c
}

// await waits for a line starting with prefix and returns it.
func (c *child) await(t *testing.T, prefix string, within time.Duration) string {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		select {
		case l := <-c.lines:
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-c.exit:
			t.Fatalf("%s exited while waiting for %q", c.name, prefix)
		case <-timer.C:
			t.Fatalf("%s did not print %q within %s", c.name, prefix, within)
		}
	}
}

// Two processes embed fairway on one PostgreSQL database: the first leads
// and the second stands by, its worker and its submits going to the
// leader over HTTP. The leader is SIGKILLed under load: the second takes
// over, and every acknowledged job (of both processes) ends succeeded; the
// witness file shows no job running twice at once (a run of the killed
// process ends at the kill), and none run to its end twice by live
// processes.
func TestTwoProcessesElectOneLeaderAndSurviveItsKill(t *testing.T) {
	url := pgtest.URL(t)
	witness := filepath.Join(t.TempDir(), "witness")
	var mu sync.Mutex
	acked, doubled := map[string]string{}, []string{}
	ack := func(key, id string) {
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := acked[key]; ok && prev != id {
			doubled = append(doubled, key)
		}
		acked[key] = id
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }

	a := startChild(t, "a", url, witness, ack)
	a.await(t, "addr", 30*time.Second)
	a.await(t, "leading", 30*time.Second)
	b := startChild(t, "b", url, witness, ack)
	bAddr := strings.TrimPrefix(b.await(t, "addr", 30*time.Second), "addr ")
	// The kill waits for 60 acknowledged jobs and for a run that b's
	// worker ended while a led (its calls forwarded to the leader): a
	// leader that drains quickly may otherwise reach 60 with its own
	// worker before b's has registered.
	aPid := strconv.Itoa(a.cmd.Process.Pid)
	for deadline := time.Now().Add(60 * time.Second); count() < 60 || !endedBy(t, witness, aPid); {
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs acknowledged before the kill, the standby's worker ended a run: %v (its calls not forwarded?)", count(), endedBy(t, witness, aPid))
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case l := <-b.lines:
		t.Fatalf("b printed %q while a led: want nothing before the kill", l)
	default:
	}
	_ = a.cmd.Process.Signal(syscall.SIGKILL)
	<-a.exit
	appendLine(t, witness, fmt.Sprintf("killed - %d", a.cmd.Process.Pid))
	t.Logf("a (pid %d) killed after %d acknowledged jobs", a.cmd.Process.Pid, count())
	b.await(t, "leading", 30*time.Second)
	b.await(t, "submitted", 120*time.Second)

	c, err := client.New("http://" + bAddr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	mu.Lock()
	defer mu.Unlock()
	for key, id := range acked {
		j, err := c.Wait(ctx, id)
		if err != nil || j.State != api.StateSucceeded {
			t.Errorf("acknowledged %s (job %s) ended %s: %s %s %v", key, id, j.State, j.FailureClass, j.LastError, err)
		}
	}
	if len(doubled) > 0 {
		t.Errorf("keys acknowledged as two jobs: %v", doubled)
	}
	if acked["b-"+strconv.Itoa(childJobs-1)] == "" {
		t.Errorf("b's last job was not acknowledged")
	}
	checkRuns(t, witness, acked, a.cmd.Process.Pid)
	checkTerms(t, url)
	_ = b.stdin.Close()
	<-b.exit
}

// endedBy reports whether the witness file holds a run ended by a
// process other than pid.
func endedBy(t *testing.T, path, pid string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "end" && f[2] != pid {
			return true
		}
	}
	return false
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, line); err != nil {
		t.Fatal(err)
	}
}

// checkRuns reads the witness file: no key starts while a run of it is
// open (the killed process's open runs end at its "killed" line), every
// acknowledged key ran to its end, and none ran to its end twice in a
// process that was not killed.
func checkRuns(t *testing.T, path string, acked map[string]string, killedPid int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	killed := strconv.Itoa(killedPid)
	open := map[string]string{} // key -> pid of its open run
	ends, liveEnds, reruns := map[string]int{}, map[string]int{}, 0
	byPid := map[string]int{}          // runs ended, by process
	standbyRuns, afterKill := 0, false // runs the standby ended while the other led
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("witness line %q", line)
		}
		what, key, pid := f[0], f[1], f[2]
		switch what {
		case "start":
			if by, ok := open[key]; ok {
				t.Errorf("%s started in %s while running in %s", key, pid, by)
			}
			if ends[key] > 0 {
				reruns++
			}
			open[key] = pid
		case "end":
			delete(open, key)
			ends[key]++
			byPid[pid]++
			if pid != killed && !afterKill {
				standbyRuns++
			}
			if pid != killed {
				liveEnds[key]++
			}
		case "killed":
			afterKill = true
			for k, by := range open {
				if by == pid {
					delete(open, k)
					reruns++
				}
			}
		}
	}
	for key := range acked {
		if ends[key] == 0 {
			t.Errorf("acknowledged %s never ran to its end", key)
		}
		if liveEnds[key] > 1 {
			t.Errorf("%s ran to its end %d times in processes that were not killed", key, liveEnds[key])
		}
	}
	if standbyRuns == 0 {
		t.Errorf("the standby's worker ran no job while the other process led: its calls were not forwarded")
	}
	if len(byPid) < 2 {
		t.Errorf("runs ended by process: %v; want both processes' workers to have run jobs", byPid)
	}
	t.Logf("%d acknowledged jobs; runs ended by process %v (%d by the standby before the kill); %d runs cut or repeated by the kill", len(acked), byPid, standbyRuns, reruns)
}

// checkTerms reads leader_terms: at least two terms (a's, then b's), each
// one's first commit after the previous one's last.
func checkTerms(t *testing.T, url string) {
	t.Helper()
	terms, err := leader.Terms(context.Background(), pgtest.Open(t, url))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(terms); i++ {
		if !terms[i].FirstCommitAt.After(terms[i-1].LastCommitAt) {
			t.Errorf("term %d committed at %s, before term %d's last commit at %s",
				terms[i].Term, terms[i].FirstCommitAt, terms[i-1].Term, terms[i-1].LastCommitAt)
		}
	}
	if len(terms) < 2 {
		t.Errorf("%d terms committed, want 2 (a's, then b's)", len(terms))
	}
}
