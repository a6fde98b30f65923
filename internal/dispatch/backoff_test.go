package dispatch

import (
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// noJitter and fullJitter are the two ends of the jitter draw.
func noJitter(n int64) int64   { return n - 1 }
func fullJitter(n int64) int64 { return 0 }

func TestBackoffExponentialDoublesWithoutMaxDelay(t *testing.T) {
	p := store.RetryPolicy{Kind: store.RetryExponential, Delay: time.Second}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 64}
	for i, w := range want {
		if got := backoffDelay(p, i+1, noJitter); got != w*time.Second {
			t.Errorf("attempt %d: delay %v, want %v", i+1, got, w*time.Second)
		}
	}
}

func TestBackoffExponentialStopsAtDefaultCap(t *testing.T) {
	p := store.RetryPolicy{Kind: store.RetryExponential, Delay: time.Second}
	if got := backoffDelay(p, 40, noJitter); got != DefaultMaxBackoff {
		t.Errorf("attempt 40: delay %v, want the default cap %v", got, DefaultMaxBackoff)
	}
}

func TestBackoffExponentialStopsAtMaxDelay(t *testing.T) {
	p := store.RetryPolicy{Kind: store.RetryExponential, Delay: time.Second, MaxDelay: 5 * time.Second}
	for attempt, want := range map[int]time.Duration{1: time.Second, 3: 4 * time.Second, 4: 5 * time.Second, 30: 5 * time.Second} {
		if got := backoffDelay(p, attempt, noJitter); got != want {
			t.Errorf("attempt %d: delay %v, want %v", attempt, got, want)
		}
	}
}

func TestBackoffJitterStaysWithinHalfAndWhole(t *testing.T) {
	p := store.RetryPolicy{Kind: store.RetryExponential, Delay: time.Second, Jitter: true}
	for attempt := 1; attempt <= 8; attempt++ {
		whole := backoffDelay(store.RetryPolicy{Kind: p.Kind, Delay: p.Delay}, attempt, noJitter)
		hi, lo := backoffDelay(p, attempt, noJitter), backoffDelay(p, attempt, fullJitter)
		if hi != whole || lo != whole/2 {
			t.Errorf("attempt %d: jitter range [%v, %v], want [%v, %v]", attempt, lo, hi, whole/2, whole)
		}
	}
}

func TestBackoffFixedAndImmediate(t *testing.T) {
	fixed := store.RetryPolicy{Kind: store.RetryFixed, Delay: 3 * time.Second}
	if got := backoffDelay(fixed, 5, noJitter); got != 3*time.Second {
		t.Errorf("fixed: delay %v, want 3s", got)
	}
	if got := backoffDelay(store.RetryPolicy{Kind: store.RetryImmediate, Delay: time.Second}, 5, noJitter); got != 0 {
		t.Errorf("immediate: delay %v, want 0", got)
	}
}
