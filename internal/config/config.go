package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fairwayhq/fairway/internal/policy"
)

// ErrInvalid wraps every configuration error.
var ErrInvalid = errors.New("invalid config")

// Config is the server's whole configuration.
type Config struct {
	Server  Server            `yaml:"server"`
	Lanes   map[string]Lane   `yaml:"lanes"`
	Tiers   map[string]Tier   `yaml:"tiers"`
	Types   map[string]Type   `yaml:"types"`
	Tenants map[string]Tenant `yaml:"tenants"`
	// RateLimits bound job starts (token buckets, docs/scheduling.md).
	RateLimits []RateLimit          `yaml:"rate_limits"`
	Cost       Cost                 `yaml:"cost"`
	AdminKeys  []string             `yaml:"admin_keys"`
	Workers    WorkerAuth           `yaml:"workers"`
	Alerts     Alerts               `yaml:"alerts"`
	Tracing    Tracing              `yaml:"tracing"`
	Extra      map[string]yaml.Node `yaml:",inline"` // rejected: unknown top-level keys
}

// Server holds process settings.
type Server struct {
	Listen  string `yaml:"listen"`
	DataDir string `yaml:"data_dir"`
	// Store is the database: empty for SQLite in DataDir (the default), or
	// a postgres:// URL, which several instances may share (one leads).
	Store string `yaml:"store"`
	// Advertise is the address other instances and clients reach this one
	// at (host:port); default: the listen address.
	Advertise string `yaml:"advertise"`
	// LeaderTTL is how long a leader's lease lasts without renewal: a
	// standby takes over within about this long after the leader dies.
	LeaderTTL         Duration `yaml:"leader_ttl"`
	LeaseTTL          Duration `yaml:"lease_ttl"`
	HeartbeatInterval Duration `yaml:"heartbeat_interval"`
	// AllowUnknownTypes accepts jobs whose type is not configured; they get
	// the defaults. Off, such a submit is refused with invalid_argument.
	AllowUnknownTypes bool `yaml:"allow_unknown_types"`
	MaxQueued         int  `yaml:"max_queued"` // whole server; 0 = unlimited
	// MaxSnoozes is a job's max_snoozes when its spec gives none
	// (DefaultMaxSnoozes when 0): past it, a snooze fails the job.
	MaxSnoozes int `yaml:"max_snoozes"`
	// Retention deletes finished jobs (with their executions and logs)
	// this long after they finished; 0 keeps them. Idempotency keys stay
	// bound for their own 24 h whatever the retention.
	Retention Duration `yaml:"retention"`
	// EventsRetention deletes audit events this long after they were
	// recorded; unset, it is Retention; 0 keeps them (see EventRetention).
	EventsRetention *Duration `yaml:"events_retention"`
	// HTTP connection limits (package connlimit). MaxConnections 0 means
	// the process's RLIMIT_NOFILE less headroom (connlimit.DefaultMax).
	MaxConnections int      `yaml:"max_connections"`
	IdleTimeout    Duration `yaml:"idle_timeout"` // keep-alive connection idle this long is closed
	BodyTimeout    Duration `yaml:"body_timeout"` // a request's body must arrive within this
	// OutputLimit is a job's stored output (stdout and stderr together)
	// unless its type or spec says otherwise; past it the head and the tail
	// are kept and the middle dropped with a marker. MaxOutputLimit bounds
	// what a type or a job may ask for.
	OutputLimit    ByteSize `yaml:"output_limit"`
	MaxOutputLimit ByteSize `yaml:"max_output_limit"`
	// Unrunnable says what a submit gets when no registered worker could
	// run the job (type, labels, capacity): UnrunnableAccept (the
	// default) queues it with a warning in the answer; UnrunnableRefuseUnseen
	// refuses it (422) unless a worker that could run it registered before
	// (restarting workers); UnrunnableRefuse refuses it whenever no
	// registered worker could run it now.
	Unrunnable string `yaml:"unrunnable"`
	// AcceptUnrunnable is the older switch: true is unrunnable: accept.
	AcceptUnrunnable bool `yaml:"accept_unrunnable"`
	// Results governs jobs' result locations (package results).
	Results Results `yaml:"results"`
	// GCFloor is the heap size below which the Go garbage collector does
	// not run (package gcfloor); unset: DefaultGCFloor; 0 turns it off.
	// It trades that much memory for fewer collections while the live
	// heap is small, which is most of the tail of submit-to-start latency.
	GCFloor *ByteSize `yaml:"gc_floor"`
	// ShellForUnknownTypes lets jobs of unconfigured types ask for a shell
	// (fairway dev without a config file); not settable from YAML.
	ShellForUnknownTypes bool `yaml:"-"`
}

// Results says where jobs may have their output written and how hard the
// server tries.
type Results struct {
	// Allow lists the locations (URL prefixes, as file:///srv/results or
	// s3://bucket/prefix) under which a job's result_location must lie;
	// empty allows any. Set it on a server shared by tenants: a file://
	// location is written by the server's own user.
	Allow    []string `yaml:"allow"`
	MaxTries int      `yaml:"max_tries"` // tries before an upload is given up (0: 20)
	Timeout  Duration `yaml:"timeout"`   // one try's limit (0: 1m)
}

// Lane is a swimlane's weight and ordering parameters. Omitted fields take
// policy.DefaultLaneConfig values.
type Lane struct {
	Weight      *float64  `yaml:"weight"`
	Aging       *Aging    `yaml:"aging"`
	OnDemand    *OnDemand `yaml:"on_demand"`
	RarityBonus *int64    `yaml:"rarity_bonus"`
	Backfill    *Backfill `yaml:"backfill"`
	Preemption  *Preempt  `yaml:"preemption"`
}

// Preempt lets the lane's jobs take capacity back from lower-priority
// running jobs once they have waited `after` (docs/scheduling.md,
// "Preemption"). Omitted: off.
type Preempt struct {
	After *Duration `yaml:"after"`
	Grace *Duration `yaml:"grace"` // the workers' kill grace, for predictions (default 10s)
}

// Backfill is how the lane reserves capacity for its best job when that
// job fits in no free hole (docs/scheduling.md, "Reservations and
// backfill"). Omitted: on, one reservation, a scan depth of 64.
type Backfill struct {
	Off          *bool `yaml:"off"`
	Reservations *int  `yaml:"reservations"`
	Depth        *int  `yaml:"depth"`
}

// Aging is stepwise aging: step points per interval waited. An omitted
// field keeps the default lane's value; step 0 turns aging off.
type Aging struct {
	Step     *int64    `yaml:"step"`
	Interval *Duration `yaml:"interval"`
}

// OnDemand is the treatment of jobs whose caller waits.
type OnDemand struct {
	Bonus    *int64    `yaml:"bonus"`
	Step     *int64    `yaml:"step"`
	Interval *Duration `yaml:"interval"`
	MaxAging *int64    `yaml:"max_aging"`
}

// Tier caps the running jobs of a band of priorities. The map key is a
// name; MinPriority/MaxPriority default from a key of the form "N" or
// "N-M".
type Tier struct {
	MinPriority  *int      `yaml:"min_priority"`
	MaxPriority  *int      `yaml:"max_priority"`
	MaxRunning   int       `yaml:"max_running"`
	PreemptAfter *Duration `yaml:"preempt_after"` // the tier's jobs may preempt after waiting this long
}

// Type is a job type's defaults and limits.
type Type struct {
	Priority       *int         `yaml:"priority"`
	Lane           string       `yaml:"lane"`
	Resources      Resources    `yaml:"resources"`
	MaxConcurrency int          `yaml:"max_concurrency"`
	ConflictGroup  string       `yaml:"conflict_group"`
	DefaultCost    float64      `yaml:"default_cost"`
	Timeout        Duration     `yaml:"timeout"`
	Expected       Duration     `yaml:"expected"`
	SLAPolicy      string       `yaml:"sla_policy"`
	MaxAttempts    int          `yaml:"max_attempts"`
	Retry          *RetryPolicy `yaml:"retry"`
	AllowShell     bool         `yaml:"allow_shell"`
	OutputLimit    ByteSize     `yaml:"output_limit"` // 0: server.output_limit
}

// Resources is a demand: cpu in cores.
type Resources struct {
	CPU      float64 `yaml:"cpu"`
	MemoryMB int64   `yaml:"memory_mb"`
	GPU      int64   `yaml:"gpu"`
}

// maxCores bounds a CPU amount so that it converts to millicores exactly.
const maxCores = 1e12

// Validate checks a demand: every amount a finite number >= 0. The error
// is a *FieldError naming cpu, memory_mb or gpu.
func (r Resources) Validate() error {
	switch {
	case math.IsNaN(r.CPU) || math.IsInf(r.CPU, 0) || r.CPU < 0 || r.CPU > maxCores:
		return &FieldError{Field: "cpu", Msg: "must be a number of cores >= 0"}
	case r.MemoryMB < 0:
		return &FieldError{Field: "memory_mb", Msg: "must be >= 0"}
	case r.GPU < 0:
		return &FieldError{Field: "gpu", Msg: "must be >= 0"}
	}
	return nil
}

// Policy converts a valid demand to the engine's units (CPU in
// thousandths of a core, rounded).
func (r Resources) Policy() policy.Resources {
	return policy.Resources{MilliCPU: int64(math.Round(r.CPU * 1000)), MemoryMB: r.MemoryMB, GPU: r.GPU}
}

// RetryPolicy is a type's default retry policy.
type RetryPolicy struct {
	Kind     string   `yaml:"kind"`
	Delay    Duration `yaml:"delay"`
	MaxDelay Duration `yaml:"max_delay"`
	Jitter   bool     `yaml:"jitter"`
	RetryOn  []string `yaml:"retry_on"`
}

// Tenant holds a tenant's limits and keys.
type Tenant struct {
	MaxRunning  int      `yaml:"max_running"`
	MaxQueued   int      `yaml:"max_queued"`   // not-yet-finished jobs; 0 = unlimited
	SubmitRate  float64  `yaml:"submit_rate"`  // jobs per second, token bucket; 0 = unlimited
	SubmitBurst int      `yaml:"submit_burst"` // bucket size; default max(1, rate)
	APIKeys     []string `yaml:"api_keys"`
	// Quota caps the cpu, memory and GPUs the tenant's running jobs hold.
	Quota *Quota `yaml:"quota"`
}

// WorkerAuth holds the keys workers present.
type WorkerAuth struct {
	APIKeys []string `yaml:"api_keys"`
}

// Cost tunes cost learning.
type Cost struct {
	Alpha          float64  `yaml:"alpha"`
	KeyTTL         Duration `yaml:"key_ttl"`
	EstimateTTL    Duration `yaml:"estimate_ttl"`
	AdvanceNewKeys bool     `yaml:"advance_new_keys"`
}

// Default is the configuration used without a file: one default lane,
// every type allowed, open (no API keys).
func Default() Config {
	c := Config{Server: Server{AllowUnknownTypes: true}}
	c.fill()
	return c
}

// LoadFile reads and validates a YAML config file.
func LoadFile(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	c, err := Load(bytes.NewReader(b))
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Load parses and validates a YAML config.
func Load(r io.Reader) (Config, error) {
	var c Config
	b, err := io.ReadAll(r)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	if err := decodeStrict(b, &c); err != nil {
		return Config{}, err
	}
	for k := range c.Extra {
		return Config{}, fmt.Errorf("%w: %s: unknown field", ErrInvalid, k)
	}
	c.Extra = nil
	c.fill()
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// decodeStrict decodes the document into c, refusing unknown fields and
// naming the field of a bad value.
func decodeStrict(b []byte, c *Config) error {
	if err := DecodeYAML(b, c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}

// DecodeYAML decodes one YAML document into v, refusing unknown fields. A
// bad value of one of this package's types (a Duration) is reported by its
// dotted field path, "lanes.batch.aging.interval: ...". An empty document
// is io.EOF.
func DecodeYAML(b []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	err := dec.Decode(v)
	var ne *nodeError
	if errors.As(err, &ne) {
		var doc yaml.Node
		_ = yaml.Unmarshal(b, &doc)
		return fmt.Errorf("%s: %s", pathAt(&doc, ne.line, ne.col), ne.msg)
	}
	return err
}

func (c *Config) fill() {
	if c.Server.Listen == "" {
		c.Server.Listen = "127.0.0.1:7070"
	}
	if c.Server.DataDir == "" {
		c.Server.DataDir = "./fairway-data"
	}
	if c.Server.LeaseTTL == 0 {
		c.Server.LeaseTTL = Duration(30 * time.Second)
	}
	if c.Server.HeartbeatInterval == 0 {
		c.Server.HeartbeatInterval = Duration(c.Server.LeaseTTL.D() / 3)
	}
	if c.Server.LeaderTTL == 0 {
		c.Server.LeaderTTL = Duration(DefaultLeaderTTL)
	}
	if c.Server.IdleTimeout == 0 {
		c.Server.IdleTimeout = Duration(60 * time.Second)
	}
	if c.Server.BodyTimeout == 0 {
		c.Server.BodyTimeout = Duration(30 * time.Second)
	}
	c.Server.OutputLimit, c.Server.MaxOutputLimit = c.Server.OutputLimits()
	if len(c.Lanes) == 0 {
		c.Lanes = map[string]Lane{policy.DefaultLane: {}}
	}
}

// EventRetention is how long audit events are kept: events_retention,
// or the jobs' retention when unset; 0 keeps them.
func (s Server) EventRetention() time.Duration {
	if s.EventsRetention != nil {
		return s.EventsRetention.D()
	}
	return s.Retention.D()
}

// A job's snooze cap: server.max_snoozes's default, and the most a job
// or the server may set.
const (
	DefaultMaxSnoozes = 100
	MaxSnoozesCap     = 10000
)

// SnoozeCap is server.max_snoozes with its default.
func (s Server) SnoozeCap() int {
	if s.MaxSnoozes == 0 {
		return DefaultMaxSnoozes
	}
	return s.MaxSnoozes
}

// server.unrunnable's values.
const (
	UnrunnableAccept       = "accept"
	UnrunnableRefuseUnseen = "refuse_unseen"
	UnrunnableRefuse       = "refuse"
)

// UnrunnablePolicy is server.unrunnable with its default (accept).
func (s Server) UnrunnablePolicy() string {
	if s.Unrunnable == "" || s.AcceptUnrunnable {
		return UnrunnableAccept
	}
	return s.Unrunnable
}

// DefaultGCFloor is server.gc_floor's default.
const DefaultGCFloor ByteSize = 256 << 20

// GCFloorBytes is the GC floor in bytes: DefaultGCFloor when unset, 0 when
// turned off.
func (s Server) GCFloorBytes() int64 {
	if s.GCFloor == nil {
		return int64(DefaultGCFloor)
	}
	return int64(*s.GCFloor)
}

// DefaultLeaderTTL is server.leader_ttl's default: a standby takes over
// within about this long (plus a third of it) after the leader dies.
const DefaultLeaderTTL = 2 * time.Second

// Validate checks every field and names the first bad one.
func (c *Config) Validate() error {
	if err := c.Tracing.validate(); err != nil {
		return err
	}
	if d := c.Server.LeaderTTL.D(); d != 0 && d < 300*time.Millisecond {
		return invalid("server.leader_ttl", "must be at least 300ms")
	}
	if c.Server.HeartbeatInterval.D() >= c.Server.LeaseTTL.D() {
		return invalid("server.heartbeat_interval", "must be shorter than server.lease_ttl")
	}
	if c.Server.Retention.D() < 0 {
		return invalid("server.retention", "must be >= 0 (0 keeps finished jobs)")
	}
	if c.Server.EventsRetention != nil && c.Server.EventsRetention.D() < 0 {
		return invalid("server.events_retention", "must be >= 0 (0 keeps events; unset: server.retention)")
	}
	switch c.Server.Unrunnable {
	case "", UnrunnableAccept, UnrunnableRefuseUnseen, UnrunnableRefuse:
	default:
		return invalid("server.unrunnable", fmt.Sprintf("must be accept, refuse_unseen or refuse, got %q", c.Server.Unrunnable))
	}
	if c.Server.AcceptUnrunnable && c.Server.Unrunnable != "" && c.Server.Unrunnable != UnrunnableAccept {
		return invalid("server.accept_unrunnable", "true contradicts server.unrunnable: "+c.Server.Unrunnable+"; keep only server.unrunnable")
	}
	if c.Server.MaxQueued < 0 {
		return invalid("server.max_queued", "must be >= 0")
	}
	if c.Server.MaxSnoozes < 0 || c.Server.MaxSnoozes > MaxSnoozesCap {
		return invalid("server.max_snoozes", fmt.Sprintf("must be between 0 (the default, %d) and %d", DefaultMaxSnoozes, MaxSnoozesCap))
	}
	if c.Server.MaxConnections < 0 {
		return invalid("server.max_connections", "must be >= 0 (0: from the open-file limit)")
	}
	if c.Server.GCFloor != nil && *c.Server.GCFloor < 0 {
		return invalid("server.gc_floor", "must be >= 0 (0 turns the floor off)")
	}
	if c.Server.IdleTimeout.D() < 0 || c.Server.BodyTimeout.D() < 0 {
		return invalid("server.idle_timeout", "timeouts must be positive")
	}
	if err := c.validateOutputLimits(); err != nil {
		return err
	}
	if c.Server.Results.MaxTries < 0 || c.Server.Results.Timeout.D() < 0 {
		return invalid("server.results", "max_tries and timeout must be >= 0")
	}
	if err := c.Alerts.validate(); err != nil {
		return err
	}
	for _, name := range sortedKeys(c.Lanes) {
		if err := c.Lanes[name].Validate(); err != nil {
			return fmt.Errorf("%w: lanes.%s.%v", ErrInvalid, name, err)
		}
	}
	for _, name := range sortedKeys(c.Types) {
		if err := c.Types[name].validate(c.Lanes); err != nil {
			return fmt.Errorf("%w: types.%s.%v", ErrInvalid, name, err)
		}
	}
	for _, name := range sortedKeys(c.Tenants) {
		t := c.Tenants[name]
		if t.MaxRunning < 0 || t.MaxQueued < 0 || t.SubmitRate < 0 || t.SubmitBurst < 0 {
			return invalid("tenants."+name, "max_running, max_queued, submit_rate and submit_burst must be >= 0")
		}
		if err := t.Quota.validate(name); err != nil {
			return err
		}
	}
	for i, r := range c.RateLimits {
		if err := r.validate(i, c); err != nil {
			return err
		}
	}
	if err := c.validateKeys(); err != nil {
		return err
	}
	if c.Cost.Alpha < 0 || c.Cost.Alpha > 1 {
		return invalid("cost.alpha", "must be in (0, 1]")
	}
	_, err := policy.New(c.PolicyConfig())
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}

func (c *Config) validateKeys() error {
	seen := map[string]string{}
	add := func(field, key string) error {
		if len(key) < 16 {
			return invalid(field, "api keys must be at least 16 characters")
		}
		if prev, ok := seen[key]; ok {
			return invalid(field, "key already used by "+prev)
		}
		seen[key] = field
		return nil
	}
	for i, k := range c.AdminKeys {
		if err := add(fmt.Sprintf("admin_keys[%d]", i), k); err != nil {
			return err
		}
	}
	for i, k := range c.Workers.APIKeys {
		if err := add(fmt.Sprintf("workers.api_keys[%d]", i), k); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(c.Tenants) {
		for i, k := range c.Tenants[name].APIKeys {
			if err := add(fmt.Sprintf("tenants.%s.api_keys[%d]", name, i), k); err != nil {
				return err
			}
		}
	}
	return nil
}

// Open reports whether the server runs without API keys.
func (c *Config) Open() bool {
	if len(c.AdminKeys) > 0 || len(c.Workers.APIKeys) > 0 {
		return false
	}
	for _, t := range c.Tenants {
		if len(t.APIKeys) > 0 {
			return false
		}
	}
	return true
}

// Output limits: the default a job gets, the default ceiling a type or a
// job may ask for, and the floor under which head and tail make no sense.
const (
	DefaultOutputLimit    ByteSize = 10 << 20
	DefaultMaxOutputLimit ByteSize = 256 << 20
	MinOutputLimit        ByteSize = 4 << 10
)

// OutputLimits returns the default output limit of a job and the most a
// type or a job may ask for, with the defaults where unset.
func (s Server) OutputLimits() (def, ceiling ByteSize) {
	def, ceiling = s.OutputLimit, s.MaxOutputLimit
	if def == 0 {
		def = DefaultOutputLimit
	}
	if ceiling == 0 {
		ceiling = max(DefaultMaxOutputLimit, def)
	}
	return def, ceiling
}

func (c *Config) validateOutputLimits() error {
	def, ceiling := c.Server.OutputLimits()
	if def < MinOutputLimit || def > ceiling {
		return invalid("server.output_limit", fmt.Sprintf("must be between %v and server.max_output_limit (%v), got %v", MinOutputLimit, ceiling, def))
	}
	for _, name := range sortedKeys(c.Types) {
		l := c.Types[name].OutputLimit
		if l != 0 && (l < MinOutputLimit || l > ceiling) {
			return invalid("types."+name+".output_limit", fmt.Sprintf("must be between %v and server.max_output_limit (%v), got %v", MinOutputLimit, ceiling, l))
		}
	}
	return nil
}

func (t Type) validate(lanes map[string]Lane) error {
	switch {
	case t.Priority != nil && (*t.Priority < policy.MinPriority || *t.Priority > policy.MaxPriority):
		return fmt.Errorf("priority: must be between %d and %d", policy.MinPriority, policy.MaxPriority)
	case t.Lane != "" && !hasKey(lanes, t.Lane):
		return fmt.Errorf("lane: unknown lane %q", t.Lane)
	case t.Resources.Validate() != nil:
		return fmt.Errorf("resources.%w", t.Resources.Validate())
	case t.MaxConcurrency < 0:
		return errors.New("max_concurrency: must be >= 0")
	case t.DefaultCost < 0:
		return errors.New("default_cost: must be >= 0")
	case t.MaxAttempts < 0:
		return errors.New("max_attempts: must be >= 0")
	case !ValidSLAPolicy(t.SLAPolicy):
		return fmt.Errorf("sla_policy: must be strict, flexible or warning_only, got %q", t.SLAPolicy)
	}
	if t.Retry != nil {
		if err := ValidRetryKind(t.Retry.Kind); err != nil {
			return fmt.Errorf("retry.kind: %v", err)
		}
		for i, c := range t.Retry.RetryOn {
			if !ValidFailureClass(c) {
				return fmt.Errorf("retry.retry_on[%d]: unknown failure class %q", i, c)
			}
		}
	}
	return nil
}

// FieldError is a bad value at a field path relative to what was checked.
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Validate checks what the engine would silently read as a default: a
// given weight must be a positive number. The error is a *FieldError.
func (l Lane) Validate() error {
	if w := l.Weight; w != nil && (math.IsNaN(*w) || math.IsInf(*w, 0) || *w <= 0) {
		return &FieldError{Field: "weight", Msg: "must be a positive number"}
	}
	return nil
}

// ValidSLAPolicy reports whether p is "", strict, flexible or warning_only.
func ValidSLAPolicy(p string) bool {
	return p == "" || p == "strict" || p == "flexible" || p == "warning_only"
}

// ValidRetryKind checks a retry kind.
func ValidRetryKind(k string) error {
	switch k {
	case "", "fixed", "exponential", "immediate":
		return nil
	}
	return fmt.Errorf("must be fixed, exponential or immediate, got %q", k)
}

// ValidFailureClass reports whether c names a failure class.
func ValidFailureClass(c string) bool {
	switch c {
	case "exit_code", "timeout", "killed", "oom", "signal", "lost_worker", "cancelled", "start_error":
		return true
	}
	return false
}

// PolicyConfig is the engine configuration the file describes.
func (c *Config) PolicyConfig() policy.Config {
	pc := policy.Config{
		Lanes:   map[string]policy.LaneConfig{},
		Types:   map[string]policy.TypeConfig{},
		Tenants: map[string]policy.TenantConfig{},
		Cost: policy.CostConfig{
			Alpha: c.Cost.Alpha, KeyTTL: c.Cost.KeyTTL.D(), EstimateTTL: c.Cost.EstimateTTL.D(),
			AdvanceNewKeys: c.Cost.AdvanceNewKeys,
		},
	}
	for name, l := range c.Lanes {
		pc.Lanes[name] = l.Policy()
	}
	for name, t := range c.Types {
		pc.Types[name] = policy.TypeConfig{
			DefaultCost: t.DefaultCost, MaxConcurrency: t.MaxConcurrency, ConflictGroup: t.ConflictGroup,
			Priority: t.Priority, Lane: t.Lane, Resources: t.Resources.Policy(),
		}
	}
	for name, t := range c.Tenants {
		pc.Tenants[name] = policy.TenantConfig{MaxRunning: t.MaxRunning, Quota: t.Quota.Policy()}
	}
	for _, r := range c.RateLimits {
		pc.RateLimits = append(pc.RateLimits, r.Policy())
	}
	for _, name := range sortedKeys(c.Tiers) {
		pc.Tiers = append(pc.Tiers, c.Tiers[name].policy(name))
	}
	return pc
}

// Policy is the engine's lane: policy.DefaultLaneConfig with the fields
// the lane gives. The server config and the simulator share it.
func (l Lane) Policy() policy.LaneConfig {
	lc := policy.DefaultLaneConfig()
	if l.Weight != nil {
		lc.Weight = *l.Weight
	}
	if a := l.Aging; a != nil {
		if a.Step != nil {
			lc.Aging.Step = *a.Step
		}
		if a.Interval != nil {
			lc.Aging.Interval = a.Interval.D()
		}
	}
	if o := l.OnDemand; o != nil {
		if o.Bonus != nil {
			lc.OnDemand.Bonus = *o.Bonus
		}
		if o.Step != nil {
			lc.OnDemand.Step = *o.Step
		}
		if o.Interval != nil {
			lc.OnDemand.Interval = o.Interval.D()
		}
		if o.MaxAging != nil {
			lc.OnDemand.MaxAging = *o.MaxAging
		}
	}
	if l.RarityBonus != nil {
		lc.RarityBonus = *l.RarityBonus
	}
	if b := l.Backfill; b != nil {
		if b.Off != nil {
			lc.Backfill.Off = *b.Off
		}
		if b.Reservations != nil {
			lc.Backfill.Reservations = *b.Reservations
		}
		if b.Depth != nil {
			lc.Backfill.Depth = *b.Depth
		}
	}
	if p := l.Preemption; p != nil {
		if p.After != nil {
			lc.Preemption.After = p.After.D()
		}
		if p.Grace != nil {
			lc.Preemption.Grace = p.Grace.D()
		}
	}
	return lc
}

// policy converts a tier; a name "N" or "N-M" gives the band when the
// fields are omitted.
func (t Tier) policy(name string) policy.TierConfig {
	lo, hi := bandOf(name)
	if t.MinPriority != nil {
		lo = *t.MinPriority
	}
	if t.MaxPriority != nil {
		hi = *t.MaxPriority
	}
	tc := policy.TierConfig{Name: name, MinPriority: lo, MaxPriority: hi, MaxRunning: t.MaxRunning}
	if t.PreemptAfter != nil {
		tc.PreemptAfter = t.PreemptAfter.D()
	}
	return tc
}

func bandOf(name string) (int, int) {
	lo, hi, found := strings.Cut(name, "-")
	a, errA := strconv.Atoi(strings.TrimSpace(lo))
	if errA != nil {
		return 0, -1 // no band: invalid unless the fields say it
	}
	if !found {
		return a, a
	}
	b, errB := strconv.Atoi(strings.TrimSpace(hi))
	if errB != nil {
		return 0, -1
	}
	return a, b
}

func invalid(field, msg string) error { return fmt.Errorf("%w: %s: %s", ErrInvalid, field, msg) }

func hasKey[V any](m map[string]V, k string) bool { _, ok := m[k]; return ok }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
