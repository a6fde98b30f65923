package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// crashLoad submits jobs with idempotency keys until stopped. A submit
// whose answer is lost (the server died) is retried with the same key
// until it is acknowledged, so every key is at most one job.
type crashLoad struct {
	mu      sync.Mutex
	acked   map[string]string // idempotency key -> job id
	doubled []string          // keys acknowledged as two different jobs
}

func (l *crashLoad) ack(key, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if prev, ok := l.acked[key]; ok && prev != id {
		l.doubled = append(l.doubled, fmt.Sprintf("%s: %s and %s", key, prev, id))
	}
	l.acked[key] = id
}

func (l *crashLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// submitter submits key prefix-0, prefix-1, ... each job appending
// "start KEY" and "end KEY" lines to the witness file around a short sleep.
// submitClient is what a submitter sends its jobs through.
type submitClient interface {
	Submit(ctx context.Context, spec api.JobSpec) (api.SubmitResponse, error)
}

func (l *crashLoad) submitter(ctx context.Context, c submitClient, prefix, witness string) {
	for i := 0; ctx.Err() == nil && i < 5000; i++ {
		key := fmt.Sprintf("%s-%d", prefix, i)
		script := fmt.Sprintf("echo 'start %s' >> %s; sleep 0.02; echo 'end %s' >> %s", key, witness, key, witness)
		spec := api.JobSpec{Type: "crash", MaxAttempts: 1, IdempotencyKey: key, Command: []string{"sh", "-c", script}}
		for ctx.Err() == nil {
			r, err := c.Submit(ctx, spec)
			if err == nil {
				l.ack(key, r.Job.ID)
				break
			}
			time.Sleep(10 * time.Millisecond) // the server is down: the same key again
		}
		time.Sleep(15 * time.Millisecond)
	}
}

// The server is SIGKILLed 12 times at sub-second intervals under a steady
// submit load and restarted on the same data directory. Every acknowledged
// job, with max_attempts 1, must run exactly once and succeed: a lease
// committed just before a kill whose answer never reached the worker goes
// back to the queue uncharged. The witness file the jobs append to, not
// fairway's records, shows that no job ran twice or overlapped itself.
func TestRepeatedServerKillsRunEveryAcknowledgedJobOnce(t *testing.T) {
	cl := newCluster(t, testConfig)
	cl.worker("w1", "--slots", "4")
	witness := filepath.Join(t.TempDir(), "witness")
	load := &crashLoad{acked: map[string]string{}}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for p := range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); load.submitter(ctx, cl.c, fmt.Sprintf("p%d", p), witness) }()
	}
	eventually(t, 30*time.Second, "50 acknowledged submits", func() bool { return load.count() >= 50 })
	rng := rand.New(rand.NewPCG(1, 2))
	for kill := range 12 {
		time.Sleep(time.Duration(300+rng.IntN(600)) * time.Millisecond)
		cl.server.kill()
		cl.startServer()
		t.Logf("kill %d: %d acknowledged so far", kill+1, load.count())
	}
	before := load.count()
	eventually(t, 30*time.Second, "submits after the last restart", func() bool { return load.count() >= before+20 })
	stop()
	wg.Wait()

	if len(load.doubled) > 0 {
		t.Fatalf("idempotency keys acknowledged as two jobs: %v", load.doubled)
	}
	for key, id := range load.acked {
		j := cl.wait(id, 60*time.Second)
		if j.State != api.StateSucceeded {
			t.Errorf("acknowledged job %s (%s) ended %s: %s %s (attempt %d, %d returned)",
				id, key, j.State, j.FailureClass, j.LastError, j.Attempt, j.ReturnedLeases)
		}
	}
	checkWitness(t, witness, load.acked)
	t.Logf("%d acknowledged jobs across 12 server kills, each ran once and succeeded", len(load.acked))
}

// checkWitness reads the witness file: every key has at most one start and
// one end, the end after the start, and every acknowledged key ran.
func checkWitness(t *testing.T, path string, acked map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	starts, ends := map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		what, key, ok := strings.Cut(sc.Text(), " ")
		switch {
		case !ok:
			t.Fatalf("witness line %q", sc.Text())
		case what == "start":
			if starts[key] > ends[key] {
				t.Errorf("%s started again while running", key)
			}
			starts[key]++
		case what == "end":
			ends[key]++
		}
	}
	for key, n := range starts {
		if n != 1 || ends[key] != 1 {
			t.Errorf("%s: %d starts, %d ends in the witness file, want 1 and 1", key, n, ends[key])
		}
	}
	for key := range acked {
		if starts[key] == 0 {
			t.Errorf("acknowledged %s never ran", key)
		}
	}
}

// A second server on the same data directory is refused at start with the
// first one's pid; the first keeps serving.
func TestSecondServerOnTheSameDataDirIsRefused(t *testing.T) {
	cl := newCluster(t, testConfig)
	second := start(t, "second", "server", "--config", cl.config, "--listen", freeAddr(t),
		"--data", filepath.Join(cl.dir, "data"))
	select {
	case <-second.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the second server is still running")
	}
	if code := second.cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("second server exited 0")
	}
	want := fmt.Sprintf("pid %d", cl.server.cmd.Process.Pid)
	if out := second.output(); !strings.Contains(out, "in use by another fairway server ("+want+")") {
		t.Errorf("second server's output does not name the holder (%s):\n%s", want, out)
	}
	if err := cl.c.Ready(context.Background()); err != nil {
		t.Fatalf("first server after the refusal: %v", err)
	}
}
