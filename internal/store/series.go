package store

import (
	"fmt"
	"time"
)

// SeriesParams selects the executions a Series covers: those of the
// matching jobs, bucketed by Step over [Since, Until).
type SeriesParams struct {
	Tenant string
	Type   string
	Lane   string
	Since  time.Time
	Until  time.Time
	Step   time.Duration
}

// MaxSeriesPoints bounds the buckets of one series.
const MaxSeriesPoints = 1440

// Validate checks the range and the step.
func (p *SeriesParams) Validate() error {
	switch {
	case p.Since.IsZero() || p.Until.IsZero() || !p.Until.After(p.Since):
		return fmt.Errorf("%w: series: the range [%s, %s) is empty", ErrInvalid, p.Since, p.Until)
	case p.Step < time.Second:
		return fmt.Errorf("%w: series: step %s is under a second", ErrInvalid, p.Step)
	case p.Points() > MaxSeriesPoints:
		return fmt.Errorf("%w: series: %d points, at most %d", ErrInvalid, p.Points(), MaxSeriesPoints)
	}
	return nil
}

// Points is the number of buckets: the range over the step, rounded up.
func (p *SeriesParams) Points() int {
	if p.Step <= 0 {
		return 0
	}
	return int((p.Until.Sub(p.Since) + p.Step - 1) / p.Step)
}

// SeriesPoint is one bucket [Start, Start+Step) of a series: the attempts
// that ended in it, by outcome, and the waits of the attempts leased in
// it (from becoming ready to the lease).
type SeriesPoint struct {
	Start    time.Time
	Finished map[Outcome]int64 // attempts that ended in the bucket
	Leased   int64             // attempts leased in the bucket with a known wait
	WaitMean time.Duration
	WaitP50  time.Duration // estimated from WaitBuckets, as a histogram quantile
	WaitP95  time.Duration
	WaitMax  time.Duration
}

// WaitBounds are the upper bounds of the wait histogram a store keeps per
// bucket to estimate the percentiles (the last, open one is above them).
var WaitBounds = []time.Duration{
	10 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
	30 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour,
}

// WaitQuantile estimates the q-quantile (0 < q ≤ 1) of n waits from their
// histogram (counts[i] waits within WaitBounds[i], the last count above
// them all) by linear interpolation inside the bucket that holds the rank,
// as Prometheus's histogram_quantile does, with the bucket narrowed to
// [lo, hi], the smallest and largest waits seen (so one wait is its own
// every quantile).
func WaitQuantile(q float64, counts []int64, lo, hi time.Duration) time.Duration {
	var n int64
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := q * float64(n)
	var below int64
	lower := time.Duration(0)
	for i, c := range counts {
		upper := hi
		if i < len(WaitBounds) && WaitBounds[i] < hi {
			upper = WaitBounds[i]
		}
		if c > 0 && float64(below+c) >= rank {
			if lower < lo {
				lower = lo
			}
			if upper < lower {
				return lower
			}
			return lower + time.Duration(float64(upper-lower)*(rank-float64(below))/float64(c))
		}
		below += c
		if i < len(WaitBounds) {
			lower = WaitBounds[i]
		}
	}
	return hi
}
