//go:build linux

package bench

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestProcStatBusy(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	data := []byte("cpu  100 2 30 5000 40 5 6 7 8 0\ncpu0 50 1 15 2500 20 2 3 3 4 0\nintr 1\n")
	got, err := procStatBusy(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Duration(100+2+30+5+6+7) * clockTick; got != want {
		t.Errorf("busy %v, want %v (idle, iowait and guest left out)", got, want)
	}
	for _, bad := range []string{"", "intr 1\n", "cpu 1 2 3\n", "cpu 1 2 3 4 5 x 7 8\n"} {
		if _, err := procStatBusy([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestDrainCPUStats runs a tiny drain with --cpustats through the
// command's entry point: both phases get the four CPU keys, after the
// allocation keys' place, and this process's share is a positive number.
func TestDrainCPUStats(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"drain", "--cpustats",
		"--jobs", "300", "--concurrency", "20", "--batch", "100",
		"--timeout", "40s", "--drain-timeout", "30s", "--max-runtime", "2m",
		"--data-dir", t.TempDir(),
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	order, kv := parseLine(t, strings.TrimSpace(stdout.String()))
	for _, phase := range []string{"insert", "work"} {
		for _, k := range []string{"_cpu_us_per_job", "_machine_cpu_us_per_job", "_others_cpu_us_per_job", "_busy"} {
			if _, err := strconv.ParseFloat(kv[phase+k], 64); err != nil {
				t.Errorf("%s%s=%q: %v", phase, k, kv[phase+k], err)
			}
		}
	}
	if v, _ := strconv.ParseFloat(kv["work_cpu_us_per_job"], 64); v <= 0 {
		t.Errorf("work_cpu_us_per_job=%s, want > 0", kv["work_cpu_us_per_job"])
	}
	joined := " " + strings.Join(order, " ") + " "
	if !strings.Contains(joined, " insert_jobs_per_s insert_cpu_us_per_job ") || !strings.Contains(joined, " dup_starts work_cpu_us_per_job ") {
		t.Errorf("keys out of place: %s", joined)
	}
}
