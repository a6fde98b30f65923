package gcfloor

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// Capped returns the floor to use on this machine: floorBytes, lowered to
// half the Go memory limit (GOMEMLIMIT) and to a quarter of the cgroup's
// memory limit when either is set, so that a server in a small container
// collects before it nears its limit. why names what lowered it ("" when
// nothing did).
func Capped(floorBytes int64) (bytes int64, why string) {
	return capFor(floorBytes, debug.SetMemoryLimit(-1), cgroupMemoryLimit())
}

// capFor is Capped on given limits; a limit of 0 or math.MaxInt64 is none.
func capFor(floorBytes, goLimit, cgroupLimit int64) (int64, string) {
	bytes, why := floorBytes, ""
	if goLimit > 0 && goLimit < math.MaxInt64 && goLimit/2 < bytes {
		bytes, why = goLimit/2, "half of GOMEMLIMIT"
	}
	if cgroupLimit > 0 && cgroupLimit/4 < bytes {
		bytes, why = cgroupLimit/4, "a quarter of the cgroup memory limit"
	}
	return bytes, why
}

// noLimit is where cgroup v1 reports "unlimited" (a page-rounded
// MaxInt64); anything above counts as no limit.
const noLimit = 1 << 62

// cgroupMemoryLimit is the memory limit of the process's cgroup (v2
// memory.max, else v1 memory.limit_in_bytes), 0 when there is none or it
// cannot be read.
func cgroupMemoryLimit() int64 {
	var paths []string
	if p := cgroupV2Path("/proc/self/cgroup"); p != "" {
		paths = append(paths, filepath.Join("/sys/fs/cgroup", p, "memory.max"))
	}
	paths = append(paths, "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
	for _, p := range paths {
		if n, ok := readLimit(p); ok {
			return n
		}
	}
	return 0
}

// cgroupV2Path is the path of the unified ("0::") hierarchy in a
// /proc/self/cgroup file, "" if there is none.
func cgroupV2Path(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			return p
		}
	}
	return ""
}

// readLimit reads a limit file: (n, true) for a number, (0, true) for
// "max" or an unlimited value, (0, false) when the file is absent or
// unreadable.
func readLimit(file string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, true
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= noLimit {
		return 0, err == nil
	}
	return n, true
}
