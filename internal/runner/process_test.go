//go:build linux

package runner

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// groupScript starts a grandchild in the background, records its pid, says
// "ready" and waits for it.
const groupScript = `sleep 1000 & echo $! > grandchild.pid; echo ready; wait`

func TestTimeoutKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := newRecorder()
	ready := make(chan struct{})
	rec.on(Stdout, "ready\n", func() { close(ready) })
	res := Run(t.Context(), Spec{Argv: sh(groupScript), Dir: dir, Timeout: time.Second}, rec)
	select {
	case <-ready:
	default:
		t.Fatal("the child never got ready before the timeout")
	}
	wantClass(t, res, ClassTimeout, ErrTimeout)
	if errors.Is(res.Err, context.Canceled) || res.Signal != "terminated" || res.ExitCode != -1 {
		t.Errorf("Err=%v Signal=%q ExitCode=%d, want a SIGTERM-ed child", res.Err, res.Signal, res.ExitCode)
	}
	if d := res.Duration(); d < time.Second {
		t.Errorf("Duration = %v, shorter than the timeout", d)
	}
	waitGone(t, readPid(t, dir, "grandchild.pid"))
}

func TestCancelKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	cause := errors.New("job cancelled by user")
	rec := newRecorder()
	rec.on(Stdout, "ready\n", func() { cancel(cause) })
	res := Run(ctx, Spec{Argv: sh(groupScript), Dir: dir, Timeout: time.Hour}, rec)
	wantClass(t, res, ClassKilled, ErrKilled)
	if !errors.Is(res.Err, cause) || errors.Is(res.Err, ErrTimeout) {
		t.Errorf("Err = %v, want the cancel cause and no timeout", res.Err)
	}
	waitGone(t, readPid(t, dir, "grandchild.pid"))
}

func TestSIGTERMIgnoredThenSIGKILLAfterGrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const grace = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var cancelledAt time.Time
	rec := newRecorder()
	rec.on(Stdout, "ready\n", func() { cancelledAt = time.Now(); cancel() })
	res := Run(ctx, Spec{Argv: sh(`trap '' TERM; ` + groupScript), Dir: dir, KillGrace: grace}, rec)
	wantClass(t, res, ClassKilled, context.Canceled)
	if res.Signal != "killed" {
		t.Errorf("Signal = %q, want killed", res.Signal)
	}
	if waited := res.Finished.Sub(cancelledAt); waited < grace {
		t.Errorf("SIGKILL after %v, before the %v grace", waited, grace)
	}
	waitGone(t, readPid(t, dir, "grandchild.pid"))
}

func TestSIGTERMHandlerRunsBeforeKill(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rec := newRecorder()
	rec.on(Stdout, "ready\n", cancel)
	// The trap is set after the fork: a child forked with the trap set and
	// signalled before its exec would lose the signal and keep the pipes.
	script := `sleep 1000 & trap 'echo cleanup; exit 0' TERM; echo ready; wait`
	res := Run(ctx, Spec{Argv: sh(script), KillGrace: time.Hour}, rec)
	wantClass(t, res, ClassKilled, context.Canceled) // stopped by us, even though it exited 0
	if res.ExitCode != 0 || res.Signal != "" || rec.String(Stdout) != "ready\ncleanup\n" {
		t.Errorf("ExitCode=%d Signal=%q stdout=%q", res.ExitCode, res.Signal, rec.String(Stdout))
	}
}

func TestLeftoversKilledWhenTheChildExits(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"holding stdout":   `sleep 1000 & echo $! > grandchild.pid`,
		"detached from IO": `sleep 1000 >/dev/null 2>&1 </dev/null & echo $! > grandchild.pid`,
	}
	for name, script := range tests {
		dir := t.TempDir()
		res, _ := run(t, t.Context(), Spec{Argv: sh(script), Dir: dir, DrainTimeout: time.Hour})
		if res.Class != ClassNone || res.OutputIncomplete {
			t.Errorf("%s: Class=%q OutputIncomplete=%v", name, res.Class, res.OutputIncomplete)
		}
		waitGone(t, readPid(t, dir, "grandchild.pid"))
	}
}

// A descendant that leaves the job's process group and session (setsid)
// still carries the run's marker and is killed when the job ends, for an
// exit, a timeout or a cancel alike.
func TestSetsidDescendantDiesWithTheJob(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	for name, spec := range map[string]Spec{
		"exit":    {Argv: sh(`mkfifo synced; setsid sh -c 'echo $$ > escaped.pid; echo > synced; exec sleep 1000' & read x < synced; echo ready`)},
		"timeout": {Argv: sh(`mkfifo synced; setsid sh -c 'echo $$ > escaped.pid; echo > synced; exec sleep 1000' & read x < synced; echo ready; sleep 1000`), Timeout: 2 * time.Second},
	} {
		dir := t.TempDir()
		spec.Dir = dir
		res, rec := run(t, t.Context(), spec)
		pid := readPid(t, dir, "escaped.pid")
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
		if res.OutputIncomplete || rec.String(Stdout) != "ready\n" {
			t.Errorf("%s: OutputIncomplete=%v stdout=%q: the escaped process held the pipe", name, res.OutputIncomplete, rec.String(Stdout))
		}
		waitGone(t, pid)
	}
}

// A descendant that also clears its environment escapes the marker; it can
// hold the output pipe only for the drain timeout.
func TestEscapedPipeHolderBoundedByDrainTimeout(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	dir := t.TempDir()
	begin := time.Now()
	res, rec := run(t, t.Context(), Spec{
		// The fifo makes sure setsid has run before the child exits and
		// its group is killed.
		Argv: sh(`mkfifo synced; setsid env -i sh -c 'echo $$ > escaped.pid; echo > synced; exec sleep 1000' &
			read x < synced; echo ready`),
		Dir:          dir,
		DrainTimeout: 200 * time.Millisecond,
	})
	pid := readPid(t, dir, "escaped.pid")
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL); waitGone(t, pid) })
	wantClass(t, res, ClassNone, nil)
	if !res.OutputIncomplete || rec.String(Stdout) != "ready\n" {
		t.Errorf("OutputIncomplete=%v stdout=%q", res.OutputIncomplete, rec.String(Stdout))
	}
	if took := time.Since(begin); took > 30*time.Second {
		t.Errorf("Run took %v with a pipe held open", took)
	}
	if processGone(pid) {
		t.Error("the escaped process died: the test did not exercise the drain bound")
	}
}

func TestSignalClassification(t *testing.T) {
	t.Parallel()
	res, _ := run(t, t.Context(), Spec{Argv: sh(`kill -SEGV $$`)})
	wantClass(t, res, ClassSignal, ErrSignal)
	if res.ExitCode != -1 || res.Signal != "segmentation fault" {
		t.Errorf("ExitCode=%d Signal=%q", res.ExitCode, res.Signal)
	}
}

// Not parallel: it replaces the package's OOM probe.
func TestSIGKILLFromOutsideAndOOM(t *testing.T) {
	var counter atomic.Uint64
	orig := oomKills
	oomKills = func() (uint64, bool) { return counter.Load(), true }
	t.Cleanup(func() { oomKills = orig })

	selfKill := Spec{Argv: sh(`kill -KILL $$`)}
	exit137 := Spec{Argv: sh(`sh -c 'kill -KILL $$'; exit $?`)}
	oomDuring := func(s Spec) Spec {
		s.OnStart = func(int) { counter.Add(1) }
		return s
	}
	tests := map[string]struct {
		spec  Spec
		class FailureClass
		err   error
	}{
		"SIGKILL, no OOM evidence":  {selfKill, ClassKilled, ErrKilled},
		"SIGKILL, oom_kill rose":    {oomDuring(selfKill), ClassOOM, ErrOOM},
		"exit 137, no OOM evidence": {exit137, ClassExitCode, ErrExit},
		"exit 137, oom_kill rose":   {oomDuring(exit137), ClassOOM, ErrOOM},
	}
	for name, tc := range tests {
		res, _ := run(t, t.Context(), tc.spec)
		if res.Class != tc.class || !errors.Is(res.Err, tc.err) {
			t.Errorf("%s: Class=%q Err=%v, want %q wrapping %v", name, res.Class, res.Err, tc.class, tc.err)
		}
	}
}

// helperEnv makes the test binary act as a worker (see helperWorker).
const helperEnv = "FAIRWAY_RUNNER_HELPER"

// helperWorker runs `sleep 1000` through Run, prints its pid and blocks. It
// is SIGKILLed, so it uses the test's directory: Run cannot remove its own.
func helperWorker() {
	Run(context.Background(), Spec{
		Argv:    []string{"sleep", "1000"},
		Dir:     os.Getenv(helperEnv),
		OnStart: func(pid int) { os.Stdout.WriteString(strconv.Itoa(pid) + "\n") },
	}, nil)
	os.Exit(3)
}

func TestChildDiesWithTheWorker(t *testing.T) {
	t.Parallel()
	worker := exec.Command(os.Args[0], "-test.run=^$")
	worker.Env = append(os.Environ(), helperEnv+"="+t.TempDir())
	stdout, err := worker.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = worker.Process.Kill()
		_ = worker.Wait()
		t.Fatalf("reading the child's pid: %v", err)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(line))
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = worker.Wait()
	waitGone(t, child)
}
