//go:build linux

package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// containments are the two ways a run's escaped descendants are found:
// the subreaper's orphans carrying the run's marker, and the run's own
// cgroup (only where this process may create one).
func containments(t *testing.T) map[string]string {
	t.Helper()
	modes := map[string]string{"orphans": ""}
	if parent, err := JobCgroupParent(); err == nil {
		modes["cgroup"] = parent
	} else {
		t.Logf("no job cgroups here: %v", err)
	}
	return modes
}

func needSetsid(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
}

// A child forks a grandchild that leaves the session (setsid) and itself
// forks a great-grandchild that leaves again; the child exits at once. All
// of them die with the job, in both modes.
func TestDescendantsThatLeaveTheGroupDieWithTheJob(t *testing.T) {
	t.Parallel()
	needSetsid(t)
	script := `mkfifo synced; setsid sh -c '
		echo $$ > escaped.pid
		setsid sh -c "echo \$\$ > deep.pid; echo > synced; exec sleep 1000" &
		exec sleep 1000' &
		read x < synced; echo ready`
	for mode, parent := range containments(t) {
		dir := t.TempDir()
		res, rec := run(t, t.Context(), Spec{Argv: sh(script), Dir: dir, CgroupParent: parent})
		escaped, deep := readPid(t, dir, "escaped.pid"), readPid(t, dir, "deep.pid")
		t.Cleanup(func() { _ = syscall.Kill(escaped, syscall.SIGKILL); _ = syscall.Kill(deep, syscall.SIGKILL) })
		wantClass(t, res, ClassNone, nil)
		if res.OutputIncomplete || rec.String(Stdout) != "ready\n" {
			t.Errorf("%s: OutputIncomplete=%v stdout=%q", mode, res.OutputIncomplete, rec.String(Stdout))
		}
		waitGone(t, escaped)
		waitGone(t, deep)
	}
}

// Only a cgroup catches a descendant that leaves the session and clears
// its environment (the marker): see TestEscapedPipeHolderBoundedByDrainTimeout
// for the orphans mode.
func TestCgroupKillsADescendantWithoutTheMarker(t *testing.T) {
	t.Parallel()
	needSetsid(t)
	parent, err := JobCgroupParent()
	if err != nil {
		t.Skipf("no job cgroups here: %v", err)
	}
	dir := t.TempDir()
	res, rec := run(t, t.Context(), Spec{
		Argv: sh(`mkfifo synced; setsid env -i sh -c 'echo $$ > escaped.pid; echo > synced; exec sleep 1000' &
			read x < synced; echo ready`),
		Dir: dir, CgroupParent: parent, DrainTimeout: time.Hour,
	})
	pid := readPid(t, dir, "escaped.pid")
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	wantClass(t, res, ClassNone, nil)
	if res.OutputIncomplete || rec.String(Stdout) != "ready\n" || res.Usage.Source != UsageCgroup {
		t.Errorf("OutputIncomplete=%v stdout=%q usage=%+v", res.OutputIncomplete, rec.String(Stdout), res.Usage)
	}
	waitGone(t, pid)
}

// A run that burns CPU in a grandchild and touches memory reports usage
// that is plausible: non-zero, and no more CPU than wall time × cores.
func TestUsageIsRecorded(t *testing.T) {
	t.Parallel()
	// The grandchild (a subshell) spins; the child waits for it, so its
	// rusage includes the grandchild's.
	script := `( i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done ); x=$(head -c 8000000 /dev/zero | tr '\0' a); echo ${#x}`
	for mode, parent := range containments(t) {
		res, rec := run(t, t.Context(), Spec{Argv: sh(script), CgroupParent: parent})
		wantClass(t, res, ClassNone, nil)
		u := res.Usage
		wantSource := map[string]UsageSource{"orphans": UsageRusage, "cgroup": UsageCgroup}[mode]
		bound := res.Duration() * time.Duration(runtime.NumCPU())
		if u.Source != wantSource || u.User <= 0 || u.CPU() > bound || u.PeakRSSBytes <= 0 {
			t.Errorf("%s: usage %+v (cpu %v, bound %v), stdout %q", mode, u, u.CPU(), bound, rec.String(Stdout))
		}
	}
}

// An escaped process's CPU is counted in the orphans mode too: it is
// reaped by the runner with its rusage.
func TestUsageCountsEscapedProcesses(t *testing.T) {
	t.Parallel()
	needSetsid(t)
	script := `mkfifo synced; setsid sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo > synced; exec sleep 1000' &
		read x < synced; echo ready`
	for mode, parent := range containments(t) {
		res, _ := run(t, t.Context(), Spec{Argv: sh(script), Dir: t.TempDir(), CgroupParent: parent})
		wantClass(t, res, ClassNone, nil)
		// The spinning loop alone takes well over 10ms of CPU; the
		// child's own sh, a read, takes next to none.
		if res.Usage.CPU() < 10*time.Millisecond {
			t.Errorf("%s: usage %+v does not include the escaped process's CPU", mode, res.Usage)
		}
	}
}

// A cgroup parent where no cgroup can be created: the run goes on without
// one, contained by its process group and the subreaper's orphans.
func TestRunFallsBackWithoutACgroup(t *testing.T) {
	t.Parallel()
	needSetsid(t)
	dir := t.TempDir()
	res, _ := run(t, t.Context(), Spec{
		Argv:         sh(`mkfifo synced; setsid sh -c 'echo $$ > escaped.pid; echo > synced; exec sleep 1000' & read x < synced`),
		Dir:          dir,
		CgroupParent: filepath.Join(dir, "no-such-cgroup"),
	})
	pid := readPid(t, dir, "escaped.pid")
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	wantClass(t, res, ClassNone, nil)
	if res.Usage.Source != UsageRusage {
		t.Errorf("usage source %q, want rusage", res.Usage.Source)
	}
	waitGone(t, pid)
}

// SweepCgroups empties and removes the job cgroups of a worker that died,
// and leaves those of live workers alone.
//
// Not parallel: it starts children of its own (true, sleep) outside the
// runner's spawn lock, which a parallel test's job end, reaping this
// subreaper's orphans, could reap first (waitid: no child processes, in
// CI under load).
func TestSweepCgroupsRemovesADeadWorkersCgroups(t *testing.T) {
	parent, err := JobCgroupParent()
	if err != nil {
		t.Skipf("no job cgroups here: %v", err)
	}
	// A pid that is certainly gone: a child that has been reaped.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(parent, fmt.Sprintf("%s%d-1", jobCgroupPrefix, gone.Process.Pid))
	alive := filepath.Join(parent, fmt.Sprintf("%s%d-1", jobCgroupPrefix, os.Getppid()))
	for _, d := range []string{dead, alive} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = syscall.Rmdir(alive); _ = syscall.Rmdir(dead) })
	// A process left in the dead worker's cgroup.
	g := &jobCgroup{dir: dead, fd: -1}
	fd, err := syscall.Open(dead, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.fd = fd
	left := exec.Command("sleep", "1000")
	left.SysProcAttr = &syscall.SysProcAttr{}
	g.attach(left.SysProcAttr)
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	g.started()
	waited := make(chan struct{})
	go func() { _ = left.Wait(); close(waited) }()
	t.Cleanup(func() { _ = left.Process.Kill(); <-waited })

	// The parent is the machine's: workers that other packages' tests
	// killed (go test runs packages at once) may have left cgroups there
	// too, and the sweep removes those as well. What this test owns is
	// checked by name below.
	if n := SweepCgroups(parent); n < 1 {
		t.Errorf("SweepCgroups removed %d cgroups, want at least the dead worker's", n)
	}
	<-waited // killed
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead worker's cgroup is still there: %v", err)
	}
	if _, err := os.Stat(alive); err != nil {
		t.Errorf("the live worker's cgroup was removed: %v", err)
	}
}
