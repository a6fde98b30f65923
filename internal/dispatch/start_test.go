package dispatch

import (
	"testing"
	"time"
)

// TestClampStart: a worker's reported start is kept within [lease, now],
// with the store's microsecond precision; no report means now.
func TestClampStart(t *testing.T) {
	lease := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	now := lease.Add(10 * time.Second)
	at := func(d time.Duration) *time.Time { v := lease.Add(d); return &v }
	for name, tc := range map[string]struct {
		reported *time.Time
		want     time.Time
	}{
		"between":            {at(3*time.Second + 1500), lease.Add(3*time.Second + time.Microsecond)},
		"before the lease":   {at(-time.Hour), lease},
		"after now":          {at(time.Hour), now},
		"at the lease":       {at(0), lease},
		"no report":          {nil, now},
		"zero":               {&time.Time{}, now},
		"other zone, inside": {func() *time.Time { v := lease.Add(time.Second).In(time.FixedZone("x", 3600)); return &v }(), lease.Add(time.Second)},
	} {
		got := clampStart(tc.reported, lease, now)
		if !got.Equal(tc.want) || got.Location() != time.UTC {
			t.Errorf("%s: clampStart = %v, want %v (UTC)", name, got, tc.want)
		}
	}
	if got := clampStart(at(-time.Hour), time.Time{}, now); !got.Equal(lease.Add(-time.Hour)) {
		t.Errorf("without a lease time the report is kept if not after now: %v", got)
	}
}
