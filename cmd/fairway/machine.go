package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// devResources is what the dev worker offers the scheduler: by default the
// machine's CPU count and memory, so that a job asking for resources runs.
type devResources struct {
	cpu      float64
	memoryMB int64
	gpu      int64
}

func (r *devResources) register(fs *flag.FlagSet) {
	cpus, memoryMB := runtime.NumCPU(), machineMemoryMB()
	fs.Float64Var(&r.cpu, "cpu", float64(cpus), fmt.Sprintf("CPU `cores` the local worker offers (default: this machine's, %d)", cpus))
	fs.Int64Var(&r.memoryMB, "memory-mb", memoryMB, fmt.Sprintf("memory the local worker offers, in `MB` (default: this machine's, %d)", memoryMB))
	fs.Int64Var(&r.gpu, "gpu", 0, "GPUs the local worker offers")
}

// machineMemoryMB is the machine's total memory from /proc/meminfo (Linux),
// 0 where it cannot be read.
func machineMemoryMB() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}
