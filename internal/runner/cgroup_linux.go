//go:build linux

package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// A job cgroup is a cgroup v2 directory created for one Run under
// Spec.CgroupParent, named fairway-job-WORKERPID-N. The child is started
// straight into it (clone3 CLONE_INTO_CGROUP, so not even its first
// instruction runs outside), and every descendant stays in it whatever it
// does with sessions, process groups or its environment. At the job's end
// cgroup.kill (or, before Linux 5.14, a SIGKILL to every pid of
// cgroup.procs) empties it; its cpu.stat (and memory.peak, where the
// memory controller is enabled for it) is the job's usage; then it is
// removed.

const jobCgroupPrefix = "fairway-job-"

var cgroupSeq atomic.Uint64

// jobCgroup is one Run's cgroup.
type jobCgroup struct {
	dir string
	fd  int // an O_DIRECTORY descriptor for CLONE_INTO_CGROUP; -1 once closed
}

// newJobCgroup creates a fresh cgroup under parent.
func newJobCgroup(parent string) (*jobCgroup, error) {
	name := jobCgroupPrefix + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(cgroupSeq.Add(1), 10)
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create job cgroup: %w", err)
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = syscall.Rmdir(dir)
		return nil, fmt.Errorf("open job cgroup: %w", err)
	}
	return &jobCgroup{dir: dir, fd: fd}, nil
}

// attach makes attr start the process inside the cgroup.
func (g *jobCgroup) attach(attr *syscall.SysProcAttr) {
	attr.UseCgroupFD = true
	attr.CgroupFD = g.fd
}

// started closes the descriptor, needed only for the fork.
func (g *jobCgroup) started() {
	if g.fd >= 0 {
		_ = syscall.Close(g.fd)
		g.fd = -1
	}
}

// populated reports whether a live process is in the cgroup (zombies are
// not: the job's unreaped child does not count).
func (g *jobCgroup) populated() bool {
	n, ok := readCounter(filepath.Join(g.dir, "cgroup.events"), "populated")
	return !ok || n != 0
}

// kill SIGKILLs every process in the cgroup and waits, at most bound,
// until none is left. It is cheap when the cgroup is already empty: one
// read of cgroup.events.
func (g *jobCgroup) kill(bound time.Duration) {
	if !g.populated() {
		return
	}
	useKillFile := os.WriteFile(filepath.Join(g.dir, "cgroup.kill"), []byte("1"), 0) == nil
	deadline := time.Now().Add(bound)
	for g.populated() && time.Now().Before(deadline) {
		if !useKillFile {
			g.signalProcs(syscall.SIGKILL) // before Linux 5.14; repeated, as a process may fork meanwhile
		}
		time.Sleep(time.Millisecond)
	}
}

// signalProcs sends sig to every process listed in cgroup.procs. The pids
// are read from the cgroup, so they are its own processes at that moment.
func (g *jobCgroup) signalProcs(sig syscall.Signal) {
	data, err := os.ReadFile(filepath.Join(g.dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// usage reads the CPU time of every process that ever ran in the cgroup
// (cpu.stat, always present in cgroup v2) and its memory high-water mark
// (memory.peak, present only where the memory controller is enabled for
// the cgroup, Linux 5.19 and later; 0 otherwise).
func (g *jobCgroup) usage() (u Usage, ok bool) {
	user, okU := readCounter(filepath.Join(g.dir, "cpu.stat"), "user_usec")
	sys, okS := readCounter(filepath.Join(g.dir, "cpu.stat"), "system_usec")
	if !okU || !okS {
		return Usage{}, false
	}
	u = Usage{User: time.Duration(user) * time.Microsecond, System: time.Duration(sys) * time.Microsecond, Source: UsageCgroup}
	if data, err := os.ReadFile(filepath.Join(g.dir, "memory.peak")); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil {
			u.PeakRSSBytes = n
		}
	}
	return u, true
}

// remove deletes the cgroup; it must be empty. A cgroup left behind (it
// could not be emptied) is removed by SweepCgroups at the next start.
func (g *jobCgroup) remove() {
	g.started()
	for range 100 {
		err := syscall.Rmdir(g.dir)
		if err == nil || !errors.Is(err, syscall.EBUSY) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// JobCgroupParent returns the cgroup v2 directory under which Run can
// create job cgroups (Spec.CgroupParent): this process's own cgroup, if it
// may create a cgroup there and start a process into it. The error says
// why not: no cgroup v2 hierarchy, no permission (a cgroup not delegated
// to this user), a kernel without clone3 CLONE_INTO_CGROUP (before 5.7).
func JobCgroupParent() (string, error) {
	parent, err := selfCgroupV2Dir()
	if err != nil {
		return "", err
	}
	g, err := newJobCgroup(parent)
	if err != nil {
		return "", err
	}
	defer g.remove()
	attr := &syscall.SysProcAttr{}
	g.attach(attr)
	p, err := os.StartProcess(shellPath, []string{"sh", "-c", "exit 0"}, &os.ProcAttr{Sys: attr})
	if err != nil {
		return "", fmt.Errorf("start a process in a job cgroup: %w", err)
	}
	_, _ = p.Wait()
	return parent, nil
}

// selfCgroupV2Dir is this process's cgroup v2 directory: "0::/path" of
// /proc/self/cgroup under the cgroup2 mount, /sys/fs/cgroup (unified) or
// /sys/fs/cgroup/unified (hybrid).
func selfCgroupV2Dir() (string, error) {
	v2, _ := selfCgroups()
	if v2 == "" {
		return "", errors.New("no cgroup v2 hierarchy for this process")
	}
	for _, mount := range []string{cgroupRoot, filepath.Join(cgroupRoot, "unified")} {
		var st syscall.Statfs_t
		const cgroup2SuperMagic = 0x63677270
		if syscall.Statfs(mount, &st) == nil && st.Type == cgroup2SuperMagic {
			return filepath.Join(mount, v2), nil
		}
	}
	return "", errors.New("no cgroup2 file system at " + cgroupRoot + " or " + cgroupRoot + "/unified")
}

// SweepCgroups kills the processes of, and removes, the job cgroups under
// parent left by workers that died (their pid, in the name, is gone). A
// worker calls it at start. It returns how many cgroups it removed.
func SweepCgroups(parent string) int {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), jobCgroupPrefix)
		owner, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(owner)
		if !ok || !e.IsDir() || err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		g := &jobCgroup{dir: filepath.Join(parent, e.Name()), fd: -1}
		g.kill(time.Second)
		g.remove()
		removed++
	}
	return removed
}
