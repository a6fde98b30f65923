package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fairwayhq/fairway/internal/config"

	"go.yaml.in/yaml/v3"
)

// ErrScenario wraps every error caused by the scenario itself (parsing,
// validation, or a job the scenario makes impossible at run time). The
// command maps it to exit code 2.
var ErrScenario = errors.New("scenario")

// Scenario is a parsed scenario file. Its exported fields mirror the YAML
// document (docs/simulator.md); Run compiles them afresh on every call, so a
// test may load a file, change a field and run it again.
type Scenario struct {
	Pool      *WorkerSpec           `yaml:"pool"`
	Workers   []WorkerSpec          `yaml:"workers"`
	Lanes     map[string]LaneSpec   `yaml:"lanes"` // the server config's lane schema
	Tiers     map[string]TierSpec   `yaml:"tiers"`
	Types     map[string]TypeSpec   `yaml:"types"`
	Tenants   map[string]TenantSpec `yaml:"tenants"`
	Cost      CostSpec              `yaml:"cost"`
	Jobs      []JobSpec             `yaml:"jobs"`
	Schedules []ScheduleSpec        `yaml:"schedules"`
	// RateLimits are the server config's rate_limits, as they are.
	RateLimits []RateLimitSpec `yaml:"rate_limits"`
}

// RateLimitSpec is a rate limit on starts: the server config's.
type RateLimitSpec = config.RateLimit

// QuotaSpec is a tenant's resource quota: the server config's (cpu in
// cores).
type QuotaSpec = config.Quota

// WorkerSpec is one executor, or Count of them named by the Name template.
// No Types means every type. CPU is in cores.
type WorkerSpec struct {
	Name     string   `yaml:"name"`
	Types    []string `yaml:"types"`
	Labels   []string `yaml:"labels"`
	Slots    *int     `yaml:"slots"`
	CPU      float64  `yaml:"cpu"`
	MemoryMB int64    `yaml:"memory_mb"`
	GPU      int64    `yaml:"gpu"`
	Count    *int     `yaml:"count"`
}

// LaneSpec is a lane's configuration: the server config's lane, so that a
// scenario can use a production config's lanes as they are. A field left
// out takes its value from policy.DefaultLaneConfig; intervals are a number
// of seconds or a duration string.
type LaneSpec = config.Lane

// AgingSpec is a lane's stepwise aging: Step points per Interval.
type AgingSpec = config.Aging

// OnDemandSpec is how a lane treats on-demand jobs.
type OnDemandSpec = config.OnDemand

// TierSpec caps the running jobs of a priority band. The band is the map
// key: one priority ("8") or an inclusive range ("700-1000").
type TierSpec struct {
	Name       string `yaml:"name"`
	MaxRunning int    `yaml:"max_running"`
	// PreemptAfter lets the tier's jobs preempt lower-priority running
	// jobs once they have waited this long (seconds or a Go duration).
	PreemptAfter *config.Duration `yaml:"preempt_after"`
}

// TypeSpec is a job type's defaults and limits.
type TypeSpec struct {
	MaxConcurrency int           `yaml:"max_concurrency"`
	ConflictGroup  string        `yaml:"conflict_group"`
	Priority       *int          `yaml:"priority"`
	DefaultCost    float64       `yaml:"default_cost"`
	Lane           string        `yaml:"lane"`
	Resources      *ResourceSpec `yaml:"resources"`
}

// ResourceSpec is a resource demand, the server config's: CPU is in
// cores and may be fractional.
type ResourceSpec = config.Resources

// TenantSpec holds a tenant's limits.
type TenantSpec struct {
	MaxRunning int        `yaml:"max_running"`
	Quota      *QuotaSpec `yaml:"quota"`
}

// CostSpec tunes cost learning; TTLs are in seconds.
type CostSpec struct {
	Alpha          float64 `yaml:"alpha"`
	DefaultCost    float64 `yaml:"default_cost"`
	KeyTTL         float64 `yaml:"key_ttl"`
	EstimateTTL    float64 `yaml:"estimate_ttl"`
	AdvanceNewKeys bool    `yaml:"advance_new_keys"`
}

// JobSpec is one job, or Count copies of it arriving Every seconds apart.
// Times are seconds from the start of the simulation. The ID, Key,
// FairnessKey, Tenant and DependsOn strings may contain {i} or {i%M}, the
// copy's index (0..Count-1) or that index modulo M. RunAt, CancelAt and
// Reprioritize.At are absolute for copy 0 and shift with each copy's
// arrival like At.
type JobSpec struct {
	ID           string            `yaml:"id"`
	At           float64           `yaml:"at"`
	Type         string            `yaml:"type"`
	Key          string            `yaml:"key"`
	FairnessKey  string            `yaml:"fairness_key"`
	Tenant       string            `yaml:"tenant"`
	Lane         string            `yaml:"lane"`
	Priority     *int              `yaml:"priority"`
	OnDemand     bool              `yaml:"on_demand"`
	Resources    *ResourceSpec     `yaml:"resources"`
	Labels       []string          `yaml:"labels"`
	Cost         *float64          `yaml:"cost"`
	Duration     float64           `yaml:"duration"`
	Count        *int              `yaml:"count"`
	Every        float64           `yaml:"every"`
	RunAt        *float64          `yaml:"run_at"`
	CancelAt     *float64          `yaml:"cancel_at"`
	Reprioritize *ReprioritizeSpec `yaml:"reprioritize"`
	DependsOn    []string          `yaml:"depends_on"`
	// Preemptible false keeps the job from being preempted (default true).
	Preemptible *bool `yaml:"preemptible"`
	// Snooze makes the job's first Times runs end snoozed (docs/worker.md
	// "Snooze"): each runs its duration, then the job waits Delay seconds
	// blocked and runs again.
	Snooze *SnoozeSpec `yaml:"snooze"`
}

// SnoozeSpec is how often a job snoozes, and for how long.
type SnoozeSpec struct {
	Times int     `yaml:"times"`
	Delay float64 `yaml:"delay"`
}

// ReprioritizeSpec changes a pending job's priority at a time.
type ReprioritizeSpec struct {
	At       float64 `yaml:"at"`
	Priority int     `yaml:"priority"`
}

// Load parses and validates a scenario document. Unknown fields are errors;
// every error wraps ErrScenario and names the offending field.
func Load(r io.Reader) (*Scenario, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%w: read: %w", ErrScenario, err)
	}
	var s Scenario
	if err := config.DecodeYAML(b, &s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: empty document", ErrScenario)
		}
		return nil, fmt.Errorf("%w: %s", ErrScenario, cleanYAMLError(err))
	}
	if documents(b) > 1 {
		return nil, fmt.Errorf("%w: more than one YAML document", ErrScenario)
	}
	if _, err := s.compile(); err != nil {
		return nil, err
	}
	return &s, nil
}

// documents counts the YAML documents in b.
func documents(b []byte) int {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	n := 0
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return n
		}
		n++
	}
}

// cleanYAMLError drops the decoder's Go type names, which mean nothing to
// the author of a scenario.
func cleanYAMLError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	msg = strings.ReplaceAll(msg, "\n  ", "; ")
	msg = strings.NewReplacer(" in type config.Lane", "", " in type config.Aging", "", " in type config.OnDemand", "", " in type config.Duration", "", " in type config.RateLimit", "", " in type config.RateMatch", "", " in type config.Quota", "").Replace(msg)
	for _, t := range []string{"Scenario", "WorkerSpec", "TierSpec", "TypeSpec", "ResourceSpec", "TenantSpec", "CostSpec", "JobSpec", "ReprioritizeSpec", "ScheduleSpec"} {
		msg = strings.ReplaceAll(msg, " in type sim."+t, "")
	}
	return msg
}
