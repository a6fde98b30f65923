//go:build !linux

package bench

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// readCPU: --cpustats reads /proc/stat, Linux only.
func readCPU() (self, machineBusy time.Duration, err error) {
	return 0, 0, fmt.Errorf("machine CPU on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
