//go:build linux

package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// readCPU returns this process's CPU time so far and the machine's busy
// CPU time so far, summed over its CPUs.
func readCPU() (self, machineBusy time.Duration, err error) {
	if self, err = selfCPU(); err != nil {
		return 0, 0, err
	}
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("machine CPU: %w", err)
	}
	busy, err := procStatBusy(data)
	if err != nil {
		return 0, 0, err
	}
	return self, busy, nil
}

// procStatBusy reads the busy time from /proc/stat's first line, "cpu
// user nice system idle iowait irq softirq steal guest guest_nice" in
// clock ticks: everything but idle and iowait (guest time is already
// counted in user).
func procStatBusy(data []byte) (time.Duration, error) {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	fields := strings.Fields(string(first))
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, fmt.Errorf("machine CPU: unexpected first line of /proc/stat: %q", first)
	}
	var busy int64
	for i, f := range fields[1:9] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("machine CPU: /proc/stat field %d: %w", i+1, err)
		}
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return time.Duration(busy) * clockTick, nil
}
