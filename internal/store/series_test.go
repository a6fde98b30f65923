package store

import (
	"testing"
	"time"
)

func TestWaitQuantileInterpolatesInsideTheObservedRange(t *testing.T) {
	ms := time.Millisecond
	counts := func(set map[int]int64) []int64 {
		c := make([]int64, len(WaitBounds)+1)
		for i, n := range set {
			c[i] = n
		}
		return c
	}
	for _, c := range []struct {
		name     string
		q        float64
		counts   []int64
		min, max time.Duration
		want     time.Duration
	}{
		{"nothing", 0.5, counts(nil), 0, 0, 0},
		{"one wait is every quantile", 0.5, counts(map[int]int64{9: 1}), 30000 * ms, 30000 * ms, 30000 * ms},
		// 100ms..1s by 100ms: buckets ≤100 (1), ≤250 (1), ≤500 (3), ≤1s (5).
		{"median", 0.5, counts(map[int]int64{2: 1, 3: 1, 4: 3, 5: 5}), 100 * ms, 1000 * ms, 500 * ms},
		{"p95", 0.95, counts(map[int]int64{2: 1, 3: 1, 4: 3, 5: 5}), 100 * ms, 1000 * ms, 950 * ms},
		{"above every bound, capped by max", 0.99, counts(map[int]int64{len(WaitBounds): 4}), 2 * time.Hour, 3 * time.Hour, 2*time.Hour + 59*time.Minute + 24*time.Second},
	} {
		if got := WaitQuantile(c.q, c.counts, c.min, c.max); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
