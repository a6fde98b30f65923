package policy

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// DefaultLane is the lane a job lands in when neither the job nor its type
// names one.
const DefaultLane = "default"

// Priority bounds used by the server's validation. The engine itself accepts
// any int; these are the documented range of the API.
const (
	MinPriority     = 0
	MaxPriority     = 1000
	DefaultPriority = 500
)

// Resources is a demand or a capacity vector. A zero field means "none":
// a worker with MilliCPU 0 offers no CPU, so a job that asks for CPU does not
// fit on it; a job with all fields zero fits anywhere with a free slot.
type Resources struct {
	MilliCPU int64 // thousandths of a core
	MemoryMB int64
	GPU      int64
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	return Resources{r.MilliCPU + o.MilliCPU, r.MemoryMB + o.MemoryMB, r.GPU + o.GPU}
}

// Sub returns r - o.
func (r Resources) Sub(o Resources) Resources {
	return Resources{r.MilliCPU - o.MilliCPU, r.MemoryMB - o.MemoryMB, r.GPU - o.GPU}
}

// Covers reports whether r has at least d of every resource.
func (r Resources) Covers(d Resources) bool {
	return r.MilliCPU >= d.MilliCPU && r.MemoryMB >= d.MemoryMB && r.GPU >= d.GPU
}

// IsZero reports whether no resource is asked for or offered.
func (r Resources) IsZero() bool { return r == Resources{} }

func (r Resources) negative() bool { return r.MilliCPU < 0 || r.MemoryMB < 0 || r.GPU < 0 }

// Aging raises a waiting job's score by Step points for every Interval
// boundary crossed since it was enqueued (see docs/scheduling.md). Step 0
// turns aging off.
type Aging struct {
	Step     int64
	Interval time.Duration
}

// OnDemandPolicy is how a lane treats jobs whose caller is waiting: a flat
// Bonus, and their own aging slope (Step per Interval, replacing the lane's
// aging) capped at MaxAging points so that a flood of on-demand work cannot
// outgrow queued work forever.
type OnDemandPolicy struct {
	Bonus    int64
	Step     int64
	Interval time.Duration
	MaxAging int64
}

// LaneConfig is one swimlane's weight and ordering parameters.
type LaneConfig struct {
	Weight      float64 // DRF weight; larger gets a larger share. Default 1.
	Aging       Aging
	OnDemand    OnDemandPolicy
	RarityBonus int64 // score += RarityBonus / n, n = free slots that could run the job
	Backfill    BackfillConfig
	Preemption  PreemptionConfig
}

// PreemptionConfig lets a lane's jobs take capacity back from running
// jobs of lower priority (preempt.go, docs/scheduling.md "Preemption").
// The zero value is off.
type PreemptionConfig struct {
	// After is how long a job of the lane must have waited, holding a
	// reservation, before it may preempt. 0: the lane's jobs never do
	// (a tier's PreemptAfter may still allow it).
	After time.Duration
	// Grace is how long a victim is given to stop (the workers' kill
	// grace), for the predictions; default 10 s.
	Grace time.Duration
}

// DefaultPreemptGrace is the grace assumed for a victim to stop.
const DefaultPreemptGrace = 10 * time.Second

// BackfillConfig is how a lane reserves capacity for its best-ranked job
// when that job fits in no free hole (reserve.go, docs/scheduling.md
// "Reservations and backfill"). The zero value is on, with the defaults.
type BackfillConfig struct {
	// Off turns reservations off for the lane: a job that fits in no free
	// hole waits until one of its size opens, however long that takes.
	Off bool
	// Reservations is how many of the lane's jobs hold a reservation at
	// once, best-ranked first, each on a worker of its own. Default 1.
	Reservations int
	// Depth is how many of the lane's candidates one decision tries
	// against the reservations (a candidate that would take reserved
	// units and is not predicted to end in time is skipped) before the
	// lane gives up its turn. Default 64.
	Depth int
}

// Backfill defaults.
const (
	DefaultReservations  = 1
	DefaultBackfillDepth = 64
)

// TierConfig is a named band of base priorities [MinPriority, MaxPriority]
// whose running jobs are capped at MaxRunning (0 = no cap).
type TierConfig struct {
	Name        string
	MinPriority int
	MaxPriority int
	MaxRunning  int
	// PreemptAfter lets the tier's jobs preempt once they have waited this
	// long, whatever their lane says (0: the lane's setting).
	PreemptAfter time.Duration
}

// TypeConfig holds a job type's defaults and limits.
type TypeConfig struct {
	DefaultCost    float64 // seconds of wall time assumed before any observation
	MaxConcurrency int     // 0 = unlimited
	ConflictGroup  string  // jobs of one non-empty group conflict on equal resource keys
	Priority       *int    // default priority; nil = DefaultPriority
	Lane           string  // default lane; "" = DefaultLane
	Resources      Resources
}

// TenantConfig holds per-tenant limits enforced by the engine.
type TenantConfig struct {
	MaxRunning int // 0 = unlimited
	// Quota caps what the tenant's running jobs hold together (quota.go).
	Quota Quota
}

// CostConfig tunes cost learning and fairness-key bookkeeping.
type CostConfig struct {
	// Alpha is the EMA smoothing factor in (0,1]. Default 0.3.
	Alpha float64
	// DefaultCost is used for a job whose type has no DefaultCost. Default 1.
	DefaultCost float64
	// KeyTTL evicts a fairness key's accumulated cost after it has been idle
	// (nothing pending or running) this long. Default 10 minutes.
	KeyTTL time.Duration
	// EstimateTTL evicts a (type, resource key) cost estimate not used for
	// this long. Default 24 hours.
	EstimateTTL time.Duration
	// AdvanceNewKeys starts a new or evicted fairness key at the current
	// minimum accumulated cost of the active keys instead of zero.
	AdvanceNewKeys bool
}

// Config is the whole policy: lanes, tiers, types and tenants. Unknown types
// and tenants are allowed and get defaults; unknown lanes are not.
type Config struct {
	Lanes   map[string]LaneConfig
	Tiers   []TierConfig
	Types   map[string]TypeConfig
	Tenants map[string]TenantConfig
	Cost    CostConfig
	// RateLimits bound the starts of the jobs they match (ratelimit.go).
	RateLimits []RateLimit
}

// ErrInvalidConfig wraps every configuration error.
var ErrInvalidConfig = errors.New("invalid policy config")

// DefaultLaneConfig is the ordering a lane gets when none is configured.
// With these values a queued job of priority 0 outranks every on-demand job
// and every later arrival after W* = 30 s · (⌊2400/100⌋ + 2) = 13 minutes of
// waiting; docs/scheduling.md derives the bound.
func DefaultLaneConfig() LaneConfig {
	return LaneConfig{
		Weight:     1,
		Aging:      Aging{Step: 100, Interval: 30 * time.Second},
		OnDemand:   OnDemandPolicy{Bonus: 400, Step: 300, Interval: 30 * time.Second, MaxAging: 1000},
		Backfill:   BackfillConfig{Reservations: DefaultReservations, Depth: DefaultBackfillDepth},
		Preemption: PreemptionConfig{Grace: DefaultPreemptGrace},
	}
}

// withDefaults returns a copy of c with defaults filled in, or an error that
// names the offending field.
func (c Config) withDefaults() (Config, error) {
	out := Config{
		Lanes:   map[string]LaneConfig{},
		Types:   map[string]TypeConfig{},
		Tenants: map[string]TenantConfig{},
		Cost:    c.Cost,
	}
	for name, l := range c.Lanes {
		if name == "" {
			return out, fmt.Errorf("%w: lanes: empty lane name", ErrInvalidConfig)
		}
		if err := l.validate(); err != nil {
			return out, fmt.Errorf("%w: lanes.%s.%v", ErrInvalidConfig, name, err)
		}
		out.Lanes[name] = l.normalized()
	}
	if len(out.Lanes) == 0 {
		out.Lanes[DefaultLane] = DefaultLaneConfig().normalized()
	}
	for name, t := range c.Types {
		if err := t.validate(out.Lanes); err != nil {
			return out, fmt.Errorf("%w: types.%s.%v", ErrInvalidConfig, name, err)
		}
		out.Types[name] = t
	}
	for name, t := range c.Tenants {
		if t.MaxRunning < 0 {
			return out, fmt.Errorf("%w: tenants.%s.max_running: must be >= 0", ErrInvalidConfig, name)
		}
		if err := t.Quota.validate(); err != nil {
			return out, fmt.Errorf("%w: tenants.%s.%v", ErrInvalidConfig, name, err)
		}
		out.Tenants[name] = t
	}
	limits, err := validateRateLimits(c.RateLimits, out.Lanes)
	if err != nil {
		return out, err
	}
	out.RateLimits = limits
	tiers, err := normalizeTiers(c.Tiers)
	if err != nil {
		return out, err
	}
	out.Tiers = tiers
	out.Cost, err = c.Cost.normalized()
	return out, err
}

func (l LaneConfig) validate() error {
	switch {
	case l.Weight < 0 || math.IsNaN(l.Weight) || math.IsInf(l.Weight, 0):
		return errors.New("weight: must be a positive number")
	case l.Aging.Step < 0:
		return errors.New("aging.step: must be >= 0")
	case l.Aging.Interval < 0:
		return errors.New("aging.interval: must be >= 0")
	case l.Aging.Step > 0 && l.Aging.Interval == 0:
		return errors.New("aging.interval: required when aging.step > 0")
	case l.OnDemand.Bonus < 0 || l.OnDemand.Step < 0 || l.OnDemand.MaxAging < 0:
		return errors.New("on_demand: bonus, step and max_aging must be >= 0")
	case l.OnDemand.Interval < 0:
		return errors.New("on_demand.interval: must be >= 0")
	case l.OnDemand.Step > 0 && l.OnDemand.Interval == 0:
		return errors.New("on_demand.interval: required when on_demand.step > 0")
	case l.RarityBonus < 0:
		return errors.New("rarity_bonus: must be >= 0")
	case l.Backfill.Reservations < 0:
		return errors.New("backfill.reservations: must be >= 0 (0: the default, 1)")
	case l.Backfill.Depth < 0:
		return errors.New("backfill.depth: must be >= 0 (0: the default, 64)")
	case l.Preemption.After < 0 || l.Preemption.Grace < 0:
		return errors.New("preemption: after and grace must be >= 0")
	}
	return nil
}

// normalized fills Weight and leaves aging as given: a lane configured
// explicitly with zero aging has aging off. Callers wanting the documented
// defaults start from DefaultLaneConfig.
func (l LaneConfig) normalized() LaneConfig {
	if l.Weight == 0 {
		l.Weight = 1
	}
	if l.OnDemand.Step > 0 && l.OnDemand.MaxAging == 0 {
		l.OnDemand.MaxAging = MaxPriority
	}
	if l.Backfill.Reservations == 0 {
		l.Backfill.Reservations = DefaultReservations
	}
	if l.Backfill.Depth == 0 {
		l.Backfill.Depth = DefaultBackfillDepth
	}
	if l.Preemption.Grace == 0 {
		l.Preemption.Grace = DefaultPreemptGrace
	}
	return l
}

func (t TypeConfig) validate(lanes map[string]LaneConfig) error {
	switch {
	case t.DefaultCost < 0 || math.IsNaN(t.DefaultCost) || math.IsInf(t.DefaultCost, 0):
		return errors.New("default_cost: must be a finite number >= 0")
	case t.MaxConcurrency < 0:
		return errors.New("max_concurrency: must be >= 0")
	case t.Resources.negative():
		return errors.New("resources: must be >= 0")
	}
	if t.Lane != "" {
		if _, ok := lanes[t.Lane]; !ok {
			return fmt.Errorf("lane: unknown lane %q", t.Lane)
		}
	}
	return nil
}

func normalizeTiers(in []TierConfig) ([]TierConfig, error) {
	tiers := append([]TierConfig(nil), in...)
	sort.SliceStable(tiers, func(i, j int) bool { return tiers[i].MinPriority > tiers[j].MinPriority })
	for i, t := range tiers {
		if t.Name == "" {
			tiers[i].Name = fmt.Sprintf("%d-%d", t.MinPriority, t.MaxPriority)
		}
		if t.MaxPriority < t.MinPriority {
			return nil, fmt.Errorf("%w: tiers.%s: max_priority %d below min_priority %d", ErrInvalidConfig, tiers[i].Name, t.MaxPriority, t.MinPriority)
		}
		if t.MaxRunning < 0 {
			return nil, fmt.Errorf("%w: tiers.%s.max_running: must be >= 0", ErrInvalidConfig, tiers[i].Name)
		}
		if t.PreemptAfter < 0 {
			return nil, fmt.Errorf("%w: tiers.%s.preempt_after: must be >= 0", ErrInvalidConfig, tiers[i].Name)
		}
		if i > 0 && t.MaxPriority >= tiers[i-1].MinPriority {
			return nil, fmt.Errorf("%w: tiers.%s overlaps tier %s", ErrInvalidConfig, tiers[i].Name, tiers[i-1].Name)
		}
	}
	return tiers, nil
}

func (c CostConfig) normalized() (CostConfig, error) {
	if c.Alpha == 0 {
		c.Alpha = 0.3
	}
	if !(c.Alpha > 0 && c.Alpha <= 1) {
		return c, fmt.Errorf("%w: cost.alpha: must be in (0, 1], got %v", ErrInvalidConfig, c.Alpha)
	}
	if c.DefaultCost == 0 {
		c.DefaultCost = 1
	}
	if c.DefaultCost < 0 || math.IsNaN(c.DefaultCost) || math.IsInf(c.DefaultCost, 0) {
		return c, fmt.Errorf("%w: cost.default_cost: must be a finite number > 0", ErrInvalidConfig)
	}
	if c.KeyTTL == 0 {
		c.KeyTTL = 10 * time.Minute
	}
	if c.EstimateTTL == 0 {
		c.EstimateTTL = 24 * time.Hour
	}
	if c.KeyTTL < 0 || c.EstimateTTL < 0 {
		return c, fmt.Errorf("%w: cost: ttl must be > 0", ErrInvalidConfig)
	}
	return c, nil
}
