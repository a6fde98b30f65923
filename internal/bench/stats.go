package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// recorder keeps, per job Seq, the time its handler first started and the
// submit->start latency computed from the timestamp carried in the job.
type recorder struct {
	start   []atomic.Int64 // unix ns of first start; 0 = not started
	lat     []atomic.Int64 // start minus Job.EnqueuedAt, ns
	leased  []atomic.Int64 // Job.LeasedAt of the first start; 0 = not known
	started atomic.Int64
	dups    atomic.Int64 // repeated executions of an already-started job
	unknown atomic.Int64 // Seq outside the run's range
}

func newRecorder(maxSeq int) *recorder {
	return &recorder{start: make([]atomic.Int64, maxSeq+1), lat: make([]atomic.Int64, maxSeq+1), leased: make([]atomic.Int64, maxSeq+1)}
}

func (r *recorder) onStart(j Job) {
	now := time.Now().UnixNano()
	if j.Seq < 1 || j.Seq >= int64(len(r.start)) {
		r.unknown.Add(1)
		return
	}
	if r.start[j.Seq].CompareAndSwap(0, now) {
		r.lat[j.Seq].Store(now - j.EnqueuedAt)
		r.leased[j.Seq].Store(j.LeasedAt)
		r.started.Add(1)
	} else {
		r.dups.Add(1)
	}
}

// waitStarted polls until at least n jobs have started; false on timeout.
func (r *recorder) waitStarted(ctx context.Context, n int64, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for r.started.Load() < n {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// lastStart is the latest start time among seqs [lo, hi] (0: none).
func (r *recorder) lastStart(lo, hi int64) int64 {
	var m int64
	for s := max(lo, 0); s <= hi && s < int64(len(r.start)); s++ {
		m = max(m, r.start[s].Load())
	}
	return m
}

// firstStart is the earliest start time among seqs [lo, hi] (0: none).
func (r *recorder) firstStart(lo, hi int64) int64 {
	var m int64 = math.MaxInt64
	for s := max(lo, 0); s <= hi && s < int64(len(r.start)); s++ {
		if v := r.start[s].Load(); v != 0 {
			m = min(m, v)
		}
	}
	if m == math.MaxInt64 {
		return 0
	}
	return m
}

// waitDrained polls sys.Outstanding every 10ms until it reports 0 and
// returns the time it did; ok=false on timeout or error.
func waitDrained(ctx context.Context, sys System, timeout time.Duration) (time.Time, bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		n, err := sys.Outstanding(qctx)
		cancel()
		now := time.Now()
		if err != nil {
			return now, false, err
		}
		if n == 0 {
			return now, true, nil
		}
		if now.After(deadline) || ctx.Err() != nil {
			return now, false, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pct returns the nearest-rank percentile (0<q<=1) of sorted ns values, in
// ms; NaN for no values.
func pct(sorted []int64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / 1e6
}

func sortedCopy(v []int64) []int64 {
	c := slices.Clone(v)
	slices.Sort(c)
	return c
}

// addLatencies adds the percentiles qs of lat (ns) to l as <prefix>pNN_ms
// (q=1: <prefix>max_ms). missing jobs count as infinitely late, so a
// percentile that falls on them prints as +Inf.
func addLatencies(l *line, prefix string, lat []int64, missing int, qs ...float64) {
	s := sortedCopy(lat)
	for range missing {
		s = append(s, math.MaxInt64)
	}
	for _, q := range qs {
		v := pct(s, q)
		if v >= float64(math.MaxInt64)/1e6 {
			v = math.Inf(1)
		}
		name := fmt.Sprintf("%sp%v_ms", prefix, math.Round(q*100))
		if q == 1 {
			name = prefix + "max_ms"
		}
		l.add(name, v)
	}
}

// line is an ordered key=value summary line; values never contain spaces.
type line struct{ kv []string }

// add appends k=v. Floats get 0 decimals from 100 up, 2 from 1 up, else 3;
// durations are seconds with 3 decimals; anything else is fmt.Sprint.
func (l *line) add(k string, v any) *line {
	var s string
	switch x := v.(type) {
	case float64:
		switch {
		case math.IsNaN(x):
			s = "NaN"
		case math.Abs(x) >= 100:
			s = strconv.FormatFloat(x, 'f', 0, 64)
		case math.Abs(x) >= 1:
			s = strconv.FormatFloat(x, 'f', 2, 64)
		default:
			s = strconv.FormatFloat(x, 'f', 3, 64)
		}
	case time.Duration:
		s = strconv.FormatFloat(x.Seconds(), 'f', 3, 64)
	default:
		s = fmt.Sprint(x)
	}
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' {
			return '_'
		}
		return r
	}, s)
	l.kv = append(l.kv, k+"="+s)
	return l
}

func (l *line) String() string { return strings.Join(l.kv, " ") }

// rate is n per second of d; NaN for d <= 0.
func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return math.NaN()
	}
	return float64(n) / d.Seconds()
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// boundedWait is the time left before ctx's deadline, capped at limit.
func boundedWait(ctx context.Context, limit time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(0, min(limit, time.Until(dl)))
	}
	return max(0, limit)
}
