//go:build linux

package runner

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// MarkerEnv names the environment variable every job process carries:
// WORKERPID:RANDOM, unique to one Run. Descendants inherit it whatever
// session or process group they move to (setsid, nohup, a double fork), so
// at the job's end every process carrying the marker is killed, and a
// worker that starts after another was SIGKILLed kills the processes left
// by the dead one (SweepOrphans). A process that clears its environment
// before exec escapes the marker; the subreaper (SetSubreaper) still makes
// it the worker's child rather than init's.
const MarkerEnv = "FAIRWAY_RUN"

// newMarker returns this Run's marker value.
func newMarker() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(b[:])
}

// SetSubreaper makes this process the child subreaper of its descendants
// (prctl PR_SET_CHILD_SUBREAPER): a job's orphaned descendants are
// re-parented to it instead of to init, where killOrphans finds them and
// reapOrphans collects their exit.
func SetSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
	}
	subreaper.Store(true)
	return nil
}

// subreaper is set once SetSubreaper succeeded: only then can orphans be
// re-parented to this process, and only then does reapOrphans wait for
// children (a process that is not a subreaper may have children of its
// own, started with os/exec, whose exit is not its to collect).
var subreaper atomic.Bool

// killMarkedScan SIGKILLs every process on the machine carrying marker,
// again until a scan finds none (a process may fork while it is being
// killed), at most ten rounds. It reads /proc/*/environ of every process,
// which costs milliseconds: it is used only where this process is not the
// subreaper, so that a job's orphans are not re-parented to it.
func killMarkedScan(marker string) int {
	want := markerBytes(marker)
	killed := 0
	for range 10 {
		pids := processesWhere(func(env []byte) bool { return bytes.Contains(env, want) })
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	return killed
}

func markerBytes(marker string) []byte { return []byte(MarkerEnv + "=" + marker + "\x00") }

// killOrphans kills the run's processes that left its process group
// (setsid, setpgid, a daemon's double fork), without scanning /proc.
//
// This process is the subreaper (SetSubreaper), so when a job process
// exits, its children are re-parented to this process, not to init. Once
// the job's child has exited and its group has been killed, every
// surviving descendant of the job is therefore a child of this process
// (an orphan) or a descendant of one. The orphans are few: killOrphans
// lists this process's children (/proc/self/task/*/children), skips the
// job roots of other Runs, and reads the environment of the rest only:
// those carrying marker are this run's. Each is killed and reaped (its
// rusage added to the returned total); its own children are thereby
// re-parented here and found in the next round. Rounds stop when one
// finds none. Zombie orphans (which can no longer be told apart by
// environment) are reaped without attribution.
//
// Without the subreaper (prctl failed) it falls back to killMarkedScan.
func killOrphans(marker string) (usage syscall.Rusage, killed int) {
	if !subreaper.Load() {
		return usage, killMarkedScan(marker)
	}
	want := markerBytes(marker)
	// Exclusive: no Run forks a root meanwhile, so a pid reaped here
	// cannot be reused by a new root that would then be waited for here.
	spawning.Lock()
	defer spawning.Unlock()
	var orphans []int
	unreadable := 0
	for range 1000 {
		found, again := false, false
		orphans = orphanChildren()
		for _, pid := range orphans {
			env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
			if (err != nil || len(env) == 0) && processAlive(pid) && !zombie(pid) {
				// Mid-execve (a process that execs right after it left the
				// group) its environment reads empty for a moment: look again.
				again = true
				continue
			}
			if !bytes.Contains(env, want) {
				continue
			}
			found = true
			_ = syscall.Kill(pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			var ru syscall.Rusage
			if wpid, err := syscall.Wait4(pid, &ws, 0, &ru); err == nil && wpid == pid {
				addRusage(&usage, &ru)
				killed++
			}
		}
		if !found && again && unreadable < maxUnreadableRounds {
			unreadable++
			time.Sleep(time.Millisecond)
			continue
		}
		if !found {
			break
		}
	}
	reap(orphans) // the last round's list: it found none of this run's, only others' and zombies
	return usage, killed
}

// maxUnreadableRounds bounds the rounds killOrphans waits, a millisecond
// each, for an orphan's environment that reads empty (it is mid-execve).
const maxUnreadableRounds = 100

// zombie reports whether pid has exited and waits to be reaped: its
// environment is gone for good.
func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X'
}

// addRusage adds b's CPU times to a and keeps the larger ru_maxrss.
func addRusage(a, b *syscall.Rusage) {
	a.Utime.Sec += b.Utime.Sec
	a.Utime.Usec += b.Utime.Usec
	a.Stime.Sec += b.Stime.Sec
	a.Stime.Usec += b.Stime.Usec
	a.Maxrss = max(a.Maxrss, b.Maxrss)
}

// SweepOrphans kills the processes left by workers that died without
// cleaning up (SIGKILL, a crash): those carrying a marker whose worker pid
// is no longer alive. A worker calls it at start. It returns how many it
// killed.
func SweepOrphans() int {
	prefix := []byte(MarkerEnv + "=")
	self := os.Getpid()
	killed := 0
	for range 10 {
		pids := processesWhere(func(env []byte) bool {
			owner, ok := markerOwner(env, prefix)
			return ok && owner != self && !processAlive(owner)
		})
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	return killed
}

// markerOwner is the worker pid of the marker in env, if env has one.
func markerOwner(env, prefix []byte) (int, bool) {
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			pid, _, _ := strings.Cut(string(v), ":")
			n, err := strconv.Atoi(pid)
			return n, err == nil
		}
	}
	return 0, false
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// processesWhere lists the pids (not this process) whose environment
// matches; processes it may not read are skipped.
func processesWhere(match func(env []byte) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !match(env) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// roots are the pids of the job processes Run is supervising: their exit
// is collected by exec.Cmd.Wait, never by reapOrphans. spawning is held
// (shared) from a job's fork until its pid is a root, and by reapOrphans
// (exclusive) while it scans, so that a job that exits at once is never
// taken for an orphan.
var (
	roots    sync.Map // pid -> struct{}
	spawning sync.RWMutex
)

func beginSpawn()        { spawning.RLock() }
func endSpawn()          { spawning.RUnlock() }
func addRoot(pid int)    { roots.Store(pid, struct{}{}) }
func removeRoot(pid int) { roots.Delete(pid) }

// reapOrphans collects the exit of this process's children that are not
// job roots: descendants re-parented to it as subreaper. Without it they
// would stay zombies.
func reapOrphans() {
	if !subreaper.Load() {
		return
	}
	spawning.Lock()
	defer spawning.Unlock()
	reapZombieOrphans()
}

// reapZombieOrphans reaps the orphans that have exited. The caller holds
// spawning exclusively.
func reapZombieOrphans() { reap(orphanChildren()) }

// reap collects the exit of those of pids that have exited. The caller
// holds spawning exclusively, so none of them can have been reused by a
// root.
func reap(pids []int) {
	for _, pid := range pids {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// orphanChildren lists this process's children that are not job roots.
// It reads /proc/self/task/*/children (an orphan is re-parented to any
// live thread of the subreaper), or, on kernels built without
// CONFIG_PROC_CHILDREN, scans /proc/*/stat for the parent pid.
func orphanChildren() []int {
	pids, ok := childrenFromTasks()
	if !ok {
		pids = childrenFromStat()
	}
	orphans := pids[:0]
	for _, pid := range pids {
		if _, root := roots.Load(pid); !root {
			orphans = append(orphans, pid)
		}
	}
	return orphans
}

// hasProcChildren reports whether the kernel has /proc/PID/task/TID/children.
var hasProcChildren = sync.OnceValue(func() bool {
	pid := strconv.Itoa(os.Getpid())
	_, err := os.Stat("/proc/" + pid + "/task/" + pid + "/children")
	return err == nil
})

func childrenFromTasks() ([]int, bool) {
	if !hasProcChildren() {
		return nil, false
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, false
	}
	var pids []int
	for _, t := range tasks {
		data, _ := os.ReadFile("/proc/self/task/" + t.Name() + "/children") // a thread may have exited
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, true
}

func childrenFromStat() []int {
	self := strconv.Itoa(os.Getpid())
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) >= 2 && fields[1] == self {
			pids = append(pids, pid)
		}
	}
	return pids
}
