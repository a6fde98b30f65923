//go:build linux

package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// workerSysProcAttr makes the kernel kill the worker process if the bench
// dies.
func workerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// cpuSample is the CPU used so far by this process, the worker process
// and the worker's reaped children.
type cpuSample struct{ self, worker, jobs time.Duration }

func takeCPUSample(workerPid int) (cpuSample, error) {
	self, err := selfCPU()
	if err != nil {
		return cpuSample{}, err
	}
	own, children, err := procCPU(workerPid)
	if err != nil {
		return cpuSample{}, err
	}
	return cpuSample{self: self, worker: own, jobs: children}, nil
}

// selfCPU is this process's CPU time so far (user and system).
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return tvDuration(ru.Utime) + tvDuration(ru.Stime), nil
}

func tvDuration(tv syscall.Timeval) time.Duration {
	return time.Duration(tv.Sec)*time.Second + time.Duration(tv.Usec)*time.Microsecond
}

// clockTick is USER_HZ, the unit of /proc/PID/stat's times: 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// procCPU reads a process's own CPU time (utime+stime) and its reaped
// children's (cutime+cstime) from /proc/PID/stat.
func procCPU(pid int) (own, children time.Duration, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("worker process CPU: %w", err)
	}
	// pid (comm) state ppid ...: comm may hold spaces; utime is the 14th
	// field, i.e. the 12th after ')'.
	i := bytes.LastIndexByte(data, ')')
	fields := strings.Fields(string(data[i+1:]))
	if i < 0 || len(fields) < 15 {
		return 0, 0, fmt.Errorf("worker process CPU: unexpected /proc/%d/stat", pid)
	}
	var t [4]int64
	for k := range t {
		if t[k], err = strconv.ParseInt(fields[11+k], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("worker process CPU: field %d: %w", 14+k, err)
		}
	}
	return time.Duration(t[0]+t[1]) * clockTick, time.Duration(t[2]+t[3]) * clockTick, nil
}
