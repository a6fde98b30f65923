package bench

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The commands workload runs real command jobs in a real fairway worker
// process and reports the CPU per job of the server, the worker and the
// commands.
func TestCommandsWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fairway and starts processes")
	}
	bin := filepath.Join(t.TempDir(), "fairway")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/fairwayhq/fairway/cmd/fairway").CombinedOutput(); err != nil {
		t.Fatalf("build fairway: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"commands", "--jobs", "40", "--command", "true",
		"--worker-bin", bin, "--command-slots", "2", "--timeout", "60s", "--drain-timeout", "50s",
		"--max-runtime", "2m", "--data-dir", t.TempDir()}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	_, kv := parseLine(t, strings.TrimSpace(stdout.String()))
	if kv["workload"] != "commands" || kv["status"] != "ok" || kv["jobs"] != "40" || kv["command"] != "true" {
		t.Errorf("line: %s", stdout.String())
	}
	for _, k := range []string{"jobs_per_s", "server_cpu_us_per_job", "worker_cpu_us_per_job", "job_cpu_us_per_job"} {
		if v, err := strconv.ParseFloat(kv[k], 64); err != nil || v < 0 {
			t.Errorf("%s=%q", k, kv[k])
		}
	}
	if v, _ := strconv.ParseFloat(kv["worker_cpu_us_per_job"], 64); v <= 0 {
		t.Errorf("worker_cpu_us_per_job=%s: the worker process's CPU was not counted", kv["worker_cpu_us_per_job"])
	}
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !strings.HasPrefix(l, "# ") {
			t.Errorf("stderr line without the # prefix: %q", l)
		}
	}
}

func TestCommandsBadFlags(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"commands", "--command", " ", "--max-runtime", "1m", "--data-dir", t.TempDir()}, &out, &errb)
	if code != 1 || !strings.Contains(out.String(), "status=error") {
		t.Errorf("empty --command: exit %d, stdout %q", code, out.String())
	}
}
