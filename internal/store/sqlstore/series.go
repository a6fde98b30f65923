package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// ExecutionSeries implements store.Reader with two grouped scans in one
// read transaction: the attempts that ended, by the bucket of finished_at
// (the executions_finished index), and the waits of the attempts leased,
// by the bucket of leased_at (executions_leased, which holds the wait, so
// that an unfiltered series reads no table row). A bucket is
// (t - since) / step in integer microseconds.
func (s *Core) ExecutionSeries(ctx context.Context, p store.SeriesParams) ([]store.SeriesPoint, error) {
	if err := s.readCheck(ctx); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	points := make([]store.SeriesPoint, p.Points())
	for i := range points {
		points[i] = store.SeriesPoint{Start: p.Since.Add(time.Duration(i) * p.Step), Finished: map[store.Outcome]int64{}}
	}
	tx, err := s.RDB.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: series: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := s.seriesFinished(ctx, tx, p, points); err != nil {
		return nil, fmt.Errorf("store: series of finished attempts: %w", err)
	}
	if err := s.seriesWaits(ctx, tx, p, points); err != nil {
		return nil, fmt.Errorf("store: series of waits: %w", err)
	}
	return points, nil
}

// seriesRange is the FROM and WHERE of a series scan over col, and its
// arguments after the bucket's two.
//
// Both branches of the attempts (attemptsFrom) are ranges of col's
// index; for leased_at, the attempts job rows hold are found through
// jobs_finished from since on (an attempt finishes after its lease), and
// filtered by leased_at (store doc.go, "The finished attempt in the job
// row").
func seriesRange(p store.SeriesParams, col string) (string, []any) {
	join, w := executionFilter(p.Tenant, p.Type, p.Lane, "", time.Time{}, time.Time{})
	w.add("e."+col+" >= ? AND e."+col+" < ?", timeArg(p.Since), timeArg(p.Until))
	var ex, held where
	ex.add(col+" >= ? AND "+col+" < ?", timeArg(p.Since), timeArg(p.Until))
	held.add(col+" >= ? AND "+col+" < ?", timeArg(p.Since), timeArg(p.Until))
	if col == "leased_at" {
		held.add("finished_at >= ?", timeArg(p.Since))
	}
	src, args := attemptsFrom(ex, held)
	return " FROM " + src + " e" + join + w.sql(), append(args, w.args...)
}

func bucketExpr(col string) string {
	return "(e." + col + " - CAST(? AS BIGINT)) / CAST(? AS BIGINT)"
}

// finishedSeriesQuery is the finished series' statement (? placeholders):
// the attempts finished in the range, through executions_finished.
func finishedSeriesQuery(p store.SeriesParams) (string, []any) {
	from, args := seriesRange(p, "finished_at")
	q := "SELECT " + bucketExpr("finished_at") + ", e.outcome, COUNT(*)" + from + " AND e.outcome IS NOT NULL GROUP BY 1, 2"
	return q, append([]any{timeArg(p.Since), p.Step.Microseconds()}, args...)
}

func (s *Core) seriesFinished(ctx context.Context, tx *sql.Tx, p store.SeriesParams, points []store.SeriesPoint) error {
	q, args := finishedSeriesQuery(p)
	rows, err := tx.QueryContext(ctx, s.D.rebind(q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var b, n int64
		var outcome string
		if err := rows.Scan(&b, &outcome, &n); err != nil {
			return err
		}
		if b >= 0 && b < int64(len(points)) {
			points[b].Finished[store.Outcome(outcome)] = n
		}
	}
	return rows.Err()
}

// waitSeriesQuery is the wait series' statement (? placeholders): the
// attempts leased in the range, through executions_leased.
func waitSeriesQuery(p store.SeriesParams) (string, []any) {
	from, args := seriesRange(p, "leased_at")
	var cols strings.Builder
	for _, bound := range store.WaitBounds {
		fmt.Fprintf(&cols, ", CAST(SUM(CASE WHEN e.wait_ms <= %d THEN 1 ELSE 0 END) AS BIGINT)", bound.Milliseconds())
	}
	q := "SELECT " + bucketExpr("leased_at") + ", COUNT(*), CAST(SUM(e.wait_ms) AS BIGINT), MIN(e.wait_ms), MAX(e.wait_ms)" + cols.String() +
		from + " AND e.wait_ms IS NOT NULL GROUP BY 1"
	return q, append([]any{timeArg(p.Since), p.Step.Microseconds()}, args...)
}

func (s *Core) seriesWaits(ctx context.Context, tx *sql.Tx, p store.SeriesParams, points []store.SeriesPoint) error {
	q, args := waitSeriesQuery(p)
	rows, err := tx.QueryContext(ctx, s.D.rebind(q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cumulative := make([]int64, len(store.WaitBounds))
	for rows.Next() {
		var b, n, sum, minMs, maxMs int64
		dst := []any{&b, &n, &sum, &minMs, &maxMs}
		for i := range cumulative {
			dst = append(dst, &cumulative[i])
		}
		if err := rows.Scan(dst...); err != nil {
			return err
		}
		if b < 0 || b >= int64(len(points)) || n == 0 {
			continue
		}
		fillWaits(&points[b], n, sum, minMs, maxMs, cumulative)
	}
	return rows.Err()
}

// fillWaits sets a point's wait figures from its count, sum, min and max
// (in milliseconds) and the cumulative counts at or under each bound.
func fillWaits(pt *store.SeriesPoint, n, sum, minMs, maxMs int64, cumulative []int64) {
	counts := make([]int64, len(cumulative)+1)
	prev := int64(0)
	for i, c := range cumulative {
		counts[i] = c - prev
		prev = c
	}
	counts[len(cumulative)] = n - prev
	minWait, maxWait := time.Duration(minMs)*time.Millisecond, time.Duration(maxMs)*time.Millisecond
	pt.Leased = n
	pt.WaitMean = time.Duration(sum/n) * time.Millisecond
	pt.WaitMax = maxWait
	pt.WaitP50 = store.WaitQuantile(0.5, counts, minWait, maxWait).Round(time.Millisecond)
	pt.WaitP95 = store.WaitQuantile(0.95, counts, minWait, maxWait).Round(time.Millisecond)
}
