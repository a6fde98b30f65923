package main

import (
	"context"
	"encoding/csv"
	"io"
	"strconv"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

func init() {
	commands["usage"] = command{summary: "resources used per tenant or lane over a time window (table or CSV)", run: runUsage}
}

const usageAbout = `What the attempts that finished in a window used, per tenant or per lane,
as GET /api/v1/usage answers it (docs/api.md):

  fairway usage [--since 7d] [--until T] [--by tenant|lane] [--format table|csv]

Requested figures are the job's requested resources × each attempt's wall
time (core-seconds, GPU-seconds, memory-GB-seconds); measured ones are what
workers measured of command jobs (CPU seconds, peak memory × wall time), over
the measured attempts. --since and --until take an RFC 3339 time or a
duration ago (24h, 7d); the default window is the last 24 hours. A tenant key
reads its own tenant's.`

// usageColumns are the CSV header and the table's columns, in order.
var usageColumns = []string{"key", "jobs", "attempts", "wall_seconds", "core_seconds", "gpu_seconds",
	"memory_gb_seconds", "measured_attempts", "cpu_seconds", "peak_memory_gb_seconds"}

func runUsage(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("usage", "[flags]", usageAbout, stdout, stderr)
	var since, until, by, format string
	c.fs.StringVar(&since, "since", "", "the window's start: an RFC 3339 `time` or a duration ago (7d); default 24h before --until")
	c.fs.StringVar(&until, "until", "", "the window's end: an RFC 3339 `time` or a duration ago; default now")
	c.fs.StringVar(&by, "by", "tenant", "group by `tenant` or lane")
	c.fs.StringVar(&format, "format", "table", "output `format`: table or csv")
	if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
		return code
	}
	if by != "tenant" && by != "lane" {
		return c.usageErr("--by: want tenant or lane, got %q", by)
	}
	if format != "table" && format != "csv" {
		return c.usageErr("--format: want table or csv, got %q", format)
	}
	opts := client.UsageOptions{By: by}
	var err error
	now := time.Now()
	if opts.Since, err = sinceFlag(since, now); err != nil {
		return c.usageErr("--since: %v", err)
	}
	if opts.Until, err = sinceFlag(until, now); err != nil {
		return c.usageErr("--until: %v", err)
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	report, err := cl.Usage(ctx, opts)
	if err != nil {
		return c.fail(err)
	}
	switch {
	case c.json:
		return c.done(c.printJSON(report))
	case format == "csv":
		return c.done(writeUsageCSV(stdout, report))
	}
	return c.done(c.printUsageTable(report))
}

// usageCells are a row's values in usageColumns' order.
func usageCells(r api.UsageRow) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{r.Key, i(r.Jobs), i(r.Attempts), f(r.WallSeconds), f(r.CoreSeconds), f(r.GPUSeconds),
		f(r.MemoryGBSeconds), i(r.MeasuredAttempts), f(r.CPUSeconds), f(r.PeakMemoryGBSeconds)}
}

func writeUsageCSV(w io.Writer, report api.UsageReport) error {
	cw := csv.NewWriter(w)
	header := append([]string{report.By}, usageColumns[1:]...)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range report.Rows {
		if err := cw.Write(usageCells(r)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func (c *cli) printUsageTable(report api.UsageReport) error {
	tw := c.table()
	tableRow(tw, "window:", report.Since.Format(time.RFC3339)+" .. "+report.Until.Format(time.RFC3339))
	tableRow(tw)
	header := []string{report.By, "JOBS", "ATTEMPTS", "WALL-S", "CORE-S", "GPU-S", "MEM-GB-S", "MEASURED", "CPU-S", "PEAK-GB-S"}
	header[0] = map[string]string{"tenant": "TENANT", "lane": "LANE"}[report.By]
	tableRow(tw, header...)
	for _, r := range report.Rows {
		tableRow(tw, usageCells(r)...)
	}
	return tw.Flush()
}
