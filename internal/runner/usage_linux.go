//go:build linux

package runner

import (
	"os"
	"syscall"
	"time"
)

// jobCgroupFor creates the run's cgroup under spec.CgroupParent; nil when
// there is none to create or it cannot be created (the run then goes on
// with its process group and the subreaper's orphans).
func jobCgroupFor(spec Spec) *jobCgroup {
	if spec.CgroupParent == "" {
		return nil
	}
	g, err := newJobCgroup(spec.CgroupParent)
	if err != nil {
		return nil
	}
	return g
}

// orphanUsage sums the rusage of the escaped processes killOrphans reaped.
type orphanUsage struct{ ru syscall.Rusage }

func (o *orphanUsage) add(ru syscall.Rusage, _ int) { addRusage(&o.ru, &ru) }

// processUsage is the child's rusage from wait4 (the child and the
// descendants it waited for) plus the orphans'.
func processUsage(ps *os.ProcessState, orphans orphanUsage) Usage {
	ru := orphans.ru
	if ps != nil {
		if own, ok := ps.SysUsage().(*syscall.Rusage); ok && own != nil {
			addRusage(&ru, own)
		}
	}
	return Usage{
		User:         timeval(ru.Utime),
		System:       timeval(ru.Stime),
		PeakRSSBytes: ru.Maxrss * 1024, // ru_maxrss is in KiB on Linux
		Source:       UsageRusage,
	}
}

func timeval(tv syscall.Timeval) time.Duration {
	return time.Duration(tv.Sec)*time.Second + time.Duration(tv.Usec)*time.Microsecond
}
