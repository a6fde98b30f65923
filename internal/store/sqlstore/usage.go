package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// usageColumns are the job columns a usage report may group by.
var usageColumns = map[store.UsageBy]string{store.UsageByTenant: "j.tenant", store.UsageByLane: "j.lane"}

// ExecutionUsage implements store.Reader. One grouped query over the
// finished executions of the window (the executions_finished index) joined
// with their jobs. Products stay integers (milli-cores × ms, MiB × ms) so
// that no driver returns a decimal type; they are scaled here.
func (s *Core) ExecutionUsage(ctx context.Context, p store.UsageParams) ([]store.UsageRow, error) {
	if err := s.readCheck(ctx); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	col := usageColumns[p.By]
	var w where
	w.add("e.finished_at IS NOT NULL")
	w.add("e.finished_at > ?", timeArg(p.FinishedAfter))
	w.add("e.finished_at < ?", timeArg(p.FinishedBefore))
	if p.Tenant != "" {
		w.add("j.tenant = ?", p.Tenant)
	}
	var ex, held where
	finishedRange(&ex, &held, p.FinishedAfter, p.FinishedBefore)
	src, srcArgs := attemptsFrom(ex, held)
	w.args = append(srcArgs, w.args...)
	q := `SELECT ` + col + `, COUNT(DISTINCT e.job_id), COUNT(*),
		COALESCE(SUM(e.duration_ms), 0),
		COALESCE(SUM(j.milli_cpu * e.duration_ms), 0),
		COALESCE(SUM(j.gpu * e.duration_ms), 0),
		COALESCE(SUM(j.memory_mb * e.duration_ms), 0),
		COUNT(e.usage_source),
		COALESCE(SUM(e.cpu_user_us + e.cpu_system_us), 0),
		COALESCE(SUM((e.peak_rss_bytes / 1048576) * e.duration_ms), 0)
		FROM ` + src + ` e JOIN jobs j ON j.id = e.job_id` + w.sql() +
		` GROUP BY ` + col + ` ORDER BY ` + col
	rows, err := s.RDB.QueryContext(ctx, s.D.rebind(q), w.args...)
	if err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	defer rows.Close()
	var out []store.UsageRow
	for rows.Next() {
		var r store.UsageRow
		var wallMs, milliCPUMs, gpuMs, memMBMs, cpuUS, peakMiBMs int64
		if err := rows.Scan(&r.Key, &r.Jobs, &r.Attempts, &wallMs, &milliCPUMs, &gpuMs, &memMBMs,
			&r.Measured, &cpuUS, &peakMiBMs); err != nil {
			return nil, fmt.Errorf("store: usage: %w", err)
		}
		r.Wall = time.Duration(wallMs) * time.Millisecond
		r.CoreSeconds = float64(milliCPUMs) / 1e6
		r.GPUSeconds = float64(gpuMs) / 1e3
		r.MemoryGBSeconds = float64(memMBMs) / 1024 / 1e3
		r.CPUSeconds = float64(cpuUS) / 1e6
		r.PeakMemGBSeconds = float64(peakMiBMs) / 1024 / 1e3
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	return out, nil
}
