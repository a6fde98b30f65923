package server

import (
	"math"
	"sync"
	"time"

	"github.com/fairwayhq/fairway/internal/config"
)

// limiter is a token bucket per tenant on submits (seed 000 §8.7).
type limiter struct {
	mu      sync.Mutex
	rate    map[string]float64
	burst   map[string]float64
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newLimiter(c config.Config) *limiter {
	l := &limiter{rate: map[string]float64{}, burst: map[string]float64{}, buckets: map[string]*bucket{}}
	for name, t := range c.Tenants {
		if t.SubmitRate <= 0 {
			continue
		}
		l.rate[name] = t.SubmitRate
		b := float64(t.SubmitBurst)
		if b <= 0 {
			b = math.Max(1, t.SubmitRate)
		}
		l.burst[name] = b
	}
	return l
}

// burstOf is the most tokens tenant's bucket holds; ok false when the
// tenant has no submit rate.
func (l *limiter) burstOf(tenant string) (int, bool) {
	if _, ok := l.rate[tenant]; !ok {
		return 0, false
	}
	return int(l.burst[tenant]), true
}

// allow takes n tokens for tenant at now, or says how many seconds until
// they would be there.
func (l *limiter) allow(tenant string, n int, now time.Time) (bool, int) {
	rate, ok := l.rate[tenant]
	if !ok {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[tenant]
	if b == nil {
		b = &bucket{tokens: l.burst[tenant], at: now}
		l.buckets[tenant] = b
	}
	b.tokens = math.Min(l.burst[tenant], b.tokens+now.Sub(b.at).Seconds()*rate)
	b.at = now
	need := float64(n)
	if b.tokens >= need {
		b.tokens -= need
		return true, 0
	}
	wait := (need - b.tokens) / rate
	return false, int(math.Ceil(wait))
}
