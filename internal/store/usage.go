package store

import (
	"fmt"
	"time"
)

// UsageBy is what a usage report groups by.
type UsageBy string

// The groupings.
const (
	UsageByTenant UsageBy = "tenant"
	UsageByLane   UsageBy = "lane"
)

// UsageParams select the attempts a usage report covers: those that
// finished inside (FinishedAfter, FinishedBefore). An attempt is counted
// whole in the window where it finished.
type UsageParams struct {
	By             UsageBy
	Tenant         string // only this tenant's jobs; "" every tenant
	FinishedAfter  time.Time
	FinishedBefore time.Time
}

// Validate checks the grouping and the window.
func (p UsageParams) Validate() error {
	switch {
	case p.By != UsageByTenant && p.By != UsageByLane:
		return fmt.Errorf("%w: usage: group by %q", ErrInvalid, p.By)
	case p.FinishedAfter.IsZero() || p.FinishedBefore.IsZero() || !p.FinishedAfter.Before(p.FinishedBefore):
		return fmt.Errorf("%w: usage: window %s..%s", ErrInvalid, p.FinishedAfter, p.FinishedBefore)
	}
	return nil
}

// UsageRow is one tenant's or lane's use over a window. The requested
// figures are the job's requested resources × each finished attempt's
// wall time; the measured ones sum what workers reported, over the
// attempts that have a measurement (Measured of Attempts).
type UsageRow struct {
	Key      string // the tenant or the lane
	Jobs     int64  // distinct jobs with an attempt in the window
	Attempts int64
	Wall     time.Duration // summed over the attempts

	CoreSeconds     float64 // requested cpu × wall
	GPUSeconds      float64 // requested gpu × wall
	MemoryGBSeconds float64 // requested memory (GiB) × wall

	Measured         int64   // attempts with a measured usage
	CPUSeconds       float64 // measured user + system CPU
	PeakMemGBSeconds float64 // measured peak RSS (GiB) × wall
}
