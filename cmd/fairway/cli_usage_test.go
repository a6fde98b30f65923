package main

import (
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// fairway usage asks GET /usage for the window and grouping and prints a
// table or CSV; bad flags are usage errors and a 400 from the server is
// an API refusal.
func TestCLIUsage(t *testing.T) {
	report := api.UsageReport{Since: at.Add(-7 * 24 * time.Hour), Until: at, By: "tenant", Rows: []api.UsageRow{
		{Key: "acme", Jobs: 2, Attempts: 3, WallSeconds: 24, CoreSeconds: 42, GPUSeconds: 20, MemoryGBSeconds: 42,
			MeasuredAttempts: 2, CPUSeconds: 4, PeakMemoryGBSeconds: 10},
	}}
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/usage": replyWith(200, report)})
	before := time.Now()
	code, out, errOut := runCmd(t, "usage", "--server", f.URL, "--since", "7d", "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 2 || strings.Join(rows[0], ",") != "tenant,jobs,attempts,wall_seconds,core_seconds,gpu_seconds,memory_gb_seconds,measured_attempts,cpu_seconds,peak_memory_gb_seconds" ||
		strings.Join(rows[1], ",") != "acme,2,3,24.000,42.000,20.000,42.000,2,4.000,10.000" {
		t.Errorf("csv (%v):\n%s", err, out)
	}
	q := f.requests()[0].Query
	since, err := time.Parse(time.RFC3339Nano, q.Get("since"))
	if err != nil || since.Before(before.Add(-7*24*time.Hour)) || q.Get("by") != "tenant" {
		t.Errorf("query %v: since %s, want 7 days before %s", q, since, before)
	}
	if _, out, _ = runCmd(t, "usage", "--server", f.URL, "--by", "lane"); !strings.Contains(out, "CORE-S") || !strings.Contains(out, "acme") {
		t.Errorf("table:\n%s", out)
	}
	for _, args := range [][]string{{"usage", "--by", "type"}, {"usage", "--format", "xml"}, {"usage", "--since", "last week"}} {
		if code, _, _ := runCmd(t, append(args, "--server", f.URL)...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	bad := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/usage": replyWith(400,
		api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeInvalidArgument, Field: "since", Message: "since: is in the future"}})})
	if code, _, errOut := runCmd(t, "usage", "--server", bad.URL); code != exitAPI || !strings.Contains(errOut, "future") {
		t.Errorf("a 400: exit %d, %s", code, errOut)
	}
}

func TestUsageText(t *testing.T) {
	for u, want := range map[*api.Usage]string{
		nil: "",
		{CPUUserUS: 1_234_567, CPUSystemUS: 300_000, PeakRSSBytes: 64 << 20, Source: "cgroup"}: "cpu 1.235s user + 300ms system, peak 64.0 MiB (cgroup)",
		{CPUUserUS: 400, Source: "rusage"}: "cpu 0s user + 0s system (rusage)",
	} {
		if got := usageText(u); got != want {
			t.Errorf("usageText(%+v) = %q, want %q", u, got, want)
		}
	}
}
