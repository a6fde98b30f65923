//go:build linux

package runner

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// oomKills returns the worker's memory cgroup oom_kill counter and whether
// one was found. The child inherits the worker's cgroup, so a rise of the
// counter during a run that ended by SIGKILL is taken as OOM evidence. It is
// a package variable so that tests can replace it.
var oomKills = cgroupOOMKills

const cgroupRoot = "/sys/fs/cgroup"

func cgroupOOMKills() (uint64, bool) {
	for _, f := range oomCounterFiles() {
		if n, ok := readCounter(f, "oom_kill"); ok {
			return n, true
		}
	}
	return 0, false
}

// oomCounterFiles lists where the counter may live: cgroup v2's
// memory.events and v1's memory.oom_control, for the worker's own cgroup
// and, as a fallback inside a cgroup namespace, the mount root.
func oomCounterFiles() []string {
	v2, v1 := selfCgroups()
	var files []string
	if v2 != "" {
		files = append(files, filepath.Join(cgroupRoot, v2, "memory.events"))
	}
	if v1 != "" {
		files = append(files, filepath.Join(cgroupRoot, "memory", v1, "memory.oom_control"))
	}
	return append(files,
		filepath.Join(cgroupRoot, "memory.events"),
		filepath.Join(cgroupRoot, "memory", "memory.oom_control"))
}

// selfCgroups returns the worker's cgroup v2 path and v1 memory path, from
// /proc/self/cgroup ("0::/path" and "N:memory:/path").
func selfCgroups() (v2, v1 string) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", ""
	}
	for line := range strings.Lines(string(data)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case hasController(parts[1], "memory"):
			v1 = parts[2]
		}
	}
	return v2, v1
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readCounter reads "key value" lines and returns key's value.
func readCounter(path, key string) (uint64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
