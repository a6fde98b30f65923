//go:build !linux

package bench

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"time"
)

// The commands workload reads the worker's CPU from /proc: Linux only.

// cpuSample is the CPU used so far by this process, the worker process
// and the worker's reaped children.
type cpuSample struct{ self, worker, jobs time.Duration }

func takeCPUSample(int) (cpuSample, error) {
	return cpuSample{}, fmt.Errorf("commands workload on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func workerSysProcAttr() *syscall.SysProcAttr { return nil }
