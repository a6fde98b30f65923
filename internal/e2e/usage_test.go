package e2e

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// burnScript spins a shell loop (CPU) and holds a 32 MB string in one
// process (memory).
const burnScript = `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; x=$(head -c 32000000 /dev/zero | tr '\0' a); echo ${#x}`

// A real worker runs a command that burns CPU and allocates memory; the
// execution record carries plausible figures: non-zero, CPU bounded by
// the wall time × cores, peak RSS at least the string it held. Not exact:
// the figures are the kernel's.
func TestAttemptUsageIsRecorded(t *testing.T) {
	for name, flags := range map[string][]string{
		"job cgroups (where the worker may create them)": nil,
		"process group and rusage":                       {"--job-cgroups=false"},
	} {
		t.Run(name, func(t *testing.T) {
			cl := newCluster(t, testConfig)
			cl.worker("w1", append([]string{"--slots", "1"}, flags...)...)
			job := cl.submit(api.JobSpec{Type: "burn", Command: []string{"sh", "-c", burnScript}})
			done := cl.wait(job.ID, 60*time.Second)
			if done.State != api.StateSucceeded {
				t.Fatalf("job ended %s: %+v", done.State, done)
			}
			execs, err := cl.c.Executions(context.Background(), job.ID)
			if err != nil || len(execs) != 1 {
				t.Fatalf("executions = %+v (%v)", execs, err)
			}
			e := execs[0]
			u := e.Usage
			if u == nil {
				t.Fatalf("no usage recorded: %+v", e)
			}
			cpuUS := u.CPUUserUS + u.CPUSystemUS
			// duration_ms is rounded down; the kernel's CPU figures are
			// counted in ticks: allow one millisecond and one tick.
			boundUS := (e.DurationMS+1)*1000*int64(runtime.NumCPU()) + 10_000
			if u.CPUUserUS <= 0 || cpuUS > boundUS {
				t.Errorf("cpu %dus user + %dus system, want > 0 and <= %dus (wall %dms × %d cores)",
					u.CPUUserUS, u.CPUSystemUS, boundUS, e.DurationMS, runtime.NumCPU())
			}
			if u.PeakRSSBytes < 32_000_000 || u.PeakRSSBytes > 1<<34 {
				t.Errorf("peak RSS %d bytes, want at least the 32 MB string and not absurd", u.PeakRSSBytes)
			}
			if u.Source != "cgroup" && u.Source != "rusage" || flags != nil && u.Source != "rusage" {
				t.Errorf("source %q", u.Source)
			}
			t.Logf("usage %+v, wall %dms", *u, e.DurationMS)
		})
	}
}
