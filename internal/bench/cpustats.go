package bench

import (
	"runtime"
	"time"
)

// cpuMark is what --cpustats reads at the edge of a drain phase: this
// process's CPU time (getrusage), the machine's busy CPU time
// (/proc/stat's first line: every CPU, every process, the database
// server's included), and the wall clock.
type cpuMark struct {
	self, machineBusy time.Duration
	at                time.Time
	ok                bool
}

// markCPU reads the counters with --cpustats; the zero mark without, or
// when they cannot be read (the phase then gets no CPU keys).
func (e *env) markCPU() cpuMark {
	if !e.cpustats {
		return cpuMark{}
	}
	self, busy, err := readCPU()
	if err != nil {
		e.logf("--cpustats: %v", err)
		return cpuMark{}
	}
	return cpuMark{self: self, machineBusy: busy, at: time.Now(), ok: true}
}

// addCPU adds, with --cpustats, what the phase since from cost per job:
// prefix_cpu_us_per_job (this process: the server or embedded fairway,
// its workers and producers), prefix_machine_cpu_us_per_job (every
// process on the machine), prefix_others_cpu_us_per_job (the
// difference: the database server's when it runs here, and anything
// else running meanwhile) and prefix_busy, the share of the machine's
// CPUs busy over the phase (1: every CPU all the time).
func (e *env) addCPU(l *line, prefix string, from cpuMark, jobs int64) {
	if !from.ok || jobs <= 0 {
		return
	}
	to := e.markCPU()
	if !to.ok {
		return
	}
	self, machine := to.self-from.self, to.machineBusy-from.machineBusy
	l.add(prefix+"_cpu_us_per_job", usPerJob(self, jobs)).
		add(prefix+"_machine_cpu_us_per_job", usPerJob(machine, jobs)).
		add(prefix+"_others_cpu_us_per_job", usPerJob(machine-self, jobs))
	if wall := to.at.Sub(from.at); wall > 0 {
		l.add(prefix+"_busy", float64(machine)/float64(wall)/float64(runtime.NumCPU()))
	}
}

func usPerJob(d time.Duration, jobs int64) float64 {
	return float64(d) / float64(time.Microsecond) / float64(jobs)
}
