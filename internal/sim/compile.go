package sim

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/policy"
)

// maxSeconds bounds every time in a scenario (about 31 years), so that
// arrival arithmetic in nanoseconds can never overflow.
const maxSeconds = 1e9

// compiled is a scenario turned into what the engine and the loop need.
type compiled struct {
	cfg     policy.Config
	workers []policy.Worker
	gens    []*jobGen
	scheds  []*simSched
	hasDeps bool
}

func fieldErr(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrScenario, field, fmt.Sprintf(format, args...))
}

// nanos converts a time in seconds to nanoseconds, checking its range.
func nanos(field string, v float64) (int64, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxSeconds {
		return 0, fieldErr(field, "must be >= 0 (seconds, at most %g)", float64(maxSeconds))
	}
	return int64(math.Round(v * 1e9)), nil
}

func duration(field string, v float64) (time.Duration, error) {
	n, err := nanos(field, v)
	return time.Duration(n), err
}

// compile validates the scenario and builds its engine configuration,
// workers and job generators.
func (s *Scenario) compile() (*compiled, error) {
	c := &compiled{}
	var err error
	if c.cfg.Lanes, err = compileLanes(s.Lanes); err != nil {
		return nil, err
	}
	if c.cfg.Tiers, err = compileTiers(s.Tiers); err != nil {
		return nil, err
	}
	if c.cfg.Types, err = compileTypes(s.Types); err != nil {
		return nil, err
	}
	if c.cfg.Tenants, err = compileTenants(s.Tenants); err != nil {
		return nil, err
	}
	if c.cfg.Cost, err = compileCost(s.Cost); err != nil {
		return nil, err
	}
	if c.cfg.RateLimits, err = compileRateLimits(s.RateLimits); err != nil {
		return nil, err
	}
	if _, err := policy.New(c.cfg); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrScenario, err)
	}
	if c.workers, err = compileWorkers(s.Pool, s.Workers); err != nil {
		return nil, err
	}
	if err := c.compileJobs(s); err != nil {
		return nil, err
	}
	if err := c.compileSchedules(s, c.laneSet()); err != nil {
		return nil, err
	}
	return c, nil
}

func compileLanes(in map[string]LaneSpec) (map[string]policy.LaneConfig, error) {
	out := map[string]policy.LaneConfig{}
	for name, ls := range in {
		lc, err := compileLane("lanes."+name, ls)
		if err != nil {
			return nil, err
		}
		out[name] = lc
	}
	return out, nil
}

// compileLane is the server config's lane, checked as the server checks it.
func compileLane(field string, ls LaneSpec) (policy.LaneConfig, error) {
	var fe *config.FieldError
	if err := ls.Validate(); errors.As(err, &fe) {
		return policy.LaneConfig{}, fieldErr(field+"."+fe.Field, "%s", fe.Msg)
	}
	return ls.Policy(), nil
}

func compileTiers(in map[string]TierSpec) ([]policy.TierConfig, error) {
	keys := sortedKeys(in)
	out := make([]policy.TierConfig, 0, len(keys))
	for _, k := range keys {
		lo, hi, err := parseBand(k)
		if err != nil {
			return nil, fieldErr("tiers."+k, "%v", err)
		}
		t := in[k]
		name := t.Name
		if name == "" {
			name = k
		}
		tc := policy.TierConfig{Name: name, MinPriority: lo, MaxPriority: hi, MaxRunning: t.MaxRunning}
		if t.PreemptAfter != nil {
			tc.PreemptAfter = t.PreemptAfter.D()
		}
		out = append(out, tc)
	}
	return out, nil
}

// parseBand reads a tier key: "8" or "700-1000".
func parseBand(k string) (int, int, error) {
	lo, hi, isRange := strings.Cut(k, "-")
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b := a
	var err2 error
	if isRange {
		b, err2 = strconv.Atoi(strings.TrimSpace(hi))
	}
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf(`band must be a priority "N" or a range "LO-HI"`)
	}
	if err := checkPriority(a); err != nil {
		return 0, 0, err
	}
	return a, b, checkPriority(b)
}

func checkPriority(p int) error {
	if p < policy.MinPriority || p > policy.MaxPriority {
		return fmt.Errorf("priority %d outside [%d, %d]", p, policy.MinPriority, policy.MaxPriority)
	}
	return nil
}

func compileTypes(in map[string]TypeSpec) (map[string]policy.TypeConfig, error) {
	out := map[string]policy.TypeConfig{}
	for name, t := range in {
		field := "types." + name
		if t.Priority != nil {
			if err := checkPriority(*t.Priority); err != nil {
				return nil, fieldErr(field+".priority", "%v", err)
			}
		}
		res, err := compileResources(field+".resources", t.Resources)
		if err != nil {
			return nil, err
		}
		out[name] = policy.TypeConfig{
			DefaultCost: t.DefaultCost, MaxConcurrency: t.MaxConcurrency, ConflictGroup: t.ConflictGroup,
			Priority: t.Priority, Lane: t.Lane, Resources: res,
		}
	}
	return out, nil
}

// compileResources checks and converts a demand as the server config
// does; nil is no demand.
func compileResources(field string, r *ResourceSpec) (policy.Resources, error) {
	if r == nil {
		return policy.Resources{}, nil
	}
	var fe *config.FieldError
	if err := r.Validate(); errors.As(err, &fe) {
		return policy.Resources{}, fieldErr(field+"."+fe.Field, "%s", fe.Msg)
	}
	return r.Policy(), nil
}

func compileTenants(in map[string]TenantSpec) (map[string]policy.TenantConfig, error) {
	out := map[string]policy.TenantConfig{}
	for name, t := range in {
		if t.MaxRunning < 0 {
			return nil, fieldErr("tenants."+name+".max_running", "must be >= 0")
		}
		if q := t.Quota; q != nil && q.CPU != nil && (math.IsNaN(*q.CPU) || math.IsInf(*q.CPU, 0) || *q.CPU < 0 || *q.CPU > 1e12) {
			return nil, fieldErr("tenants."+name+".quota.cpu", "must be a number of cores >= 0 (omit it for no limit)")
		}
		out[name] = policy.TenantConfig{MaxRunning: t.MaxRunning, Quota: t.Quota.Policy()}
	}
	return out, nil
}

func compileCost(c CostSpec) (policy.CostConfig, error) {
	out := policy.CostConfig{Alpha: c.Alpha, DefaultCost: c.DefaultCost, AdvanceNewKeys: c.AdvanceNewKeys}
	var err error
	if out.KeyTTL, err = duration("cost.key_ttl", c.KeyTTL); err != nil {
		return out, err
	}
	out.EstimateTTL, err = duration("cost.estimate_ttl", c.EstimateTTL)
	return out, err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// compileRateLimits converts the rate limits; the engine validates them
// (rate, per, by, lane) when the scenario's engine is built.
func compileRateLimits(in []RateLimitSpec) ([]policy.RateLimit, error) {
	var out []policy.RateLimit
	for i, r := range in {
		if r.Burst != nil && *r.Burst < 1 {
			return nil, fieldErr(fmt.Sprintf("rate_limits[%d].burst", i), "must be >= 1 (omit it for a burst of rate)")
		}
		out = append(out, r.Policy())
	}
	return out, nil
}
