package config

import (
	"errors"

	"github.com/fairwayhq/fairway/internal/policy"
	"os"
	"strings"
	"testing"
	"time"
)

// TestOperationsExampleLoads keeps the example in docs/operations.md valid.
func TestOperationsExampleLoads(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	if !ok {
		t.Fatal("no yaml block in docs/operations.md")
	}
	block, _, _ := strings.Cut(rest, "```")
	c, err := Load(strings.NewReader(block))
	if err != nil {
		t.Fatalf("example does not load: %v", err)
	}
	pc := c.PolicyConfig()
	if len(pc.Tiers) != 2 || pc.Types["report"].MaxConcurrency != 8 || pc.Lanes["interactive"].Weight != 3 {
		t.Fatalf("policy config not as written: %+v", pc)
	}
	if c.Server.LeaseTTL.D() != 30*time.Second || c.Types["report"].Timeout.D() != 10*time.Minute {
		t.Fatalf("durations: %v %v", c.Server.LeaseTTL.D(), c.Types["report"].Timeout.D())
	}
	if c.Open() {
		t.Fatal("config with keys reported open")
	}
}

func TestErrorsNameTheField(t *testing.T) {
	cases := map[string]struct{ yaml, field string }{
		"unknown top-level":  {"bogus: 1\n", "bogus"},
		"unknown nested":     {"server: {listen: x, nope: 1}\n", "nope"},
		"bad retry kind":     {"types: {r: {retry: {kind: sometimes}}}\n", "types.r.retry.kind"},
		"unknown type lane":  {"types: {r: {lane: nowhere}}\n", "types.r.lane"},
		"priority range":     {"types: {r: {priority: 2000}}\n", "types.r.priority"},
		"bad sla":            {"types: {r: {sla_policy: lax}}\n", "types.r.sla_policy"},
		"negative memory":    {"types: {r: {resources: {memory_mb: -1}}}\n", "types.r.resources.memory_mb"},
		"cpu not a number":   {"types: {r: {resources: {cpu: .nan}}}\n", "types.r.resources.cpu"},
		"infinite cpu":       {"types: {r: {resources: {cpu: .inf}}}\n", "types.r.resources.cpu"},
		"bad duration":       {"server: {lease_ttl: soon}\n", "lease_ttl"},
		"heartbeat too long": {"server: {lease_ttl: 10s, heartbeat_interval: 20s}\n", "server.heartbeat_interval"},
		"short key":          {"admin_keys: [abc]\n", "admin_keys[0]"},
		"reused key":         {"admin_keys: [aaaaaaaaaaaaaaaaaaaa]\nworkers: {api_keys: [aaaaaaaaaaaaaaaaaaaa]}\n", "workers.api_keys[0]"},
		"negative tenant":    {"tenants: {t: {max_running: -1}}\n", "tenants.t"},
		"overlapping tiers":  {"tiers: {a: {min_priority: 0, max_priority: 10}, b: {min_priority: 5, max_priority: 20}}\n", "tiers"},
		"bad alpha":          {"cost: {alpha: 2}\n", "cost.alpha"},
		"zero lane weight":   {"lanes: {a: {weight: 0}}\n", "lanes.a.weight: must be a positive number"},
		"negative interval":  {"lanes: {a: {aging: {interval: -1}}}\n", "lanes.a.aging.interval"},
		"bad unrunnable":     {"server: {unrunnable: sometimes}\n", "server.unrunnable"},
		"both unrunnables":   {"server: {unrunnable: refuse, accept_unrunnable: true}\n", "server.accept_unrunnable"},
		"negative retention": {"server: {retention: -1h}\n", "server.retention"},
		"negative events":    {"server: {events_retention: -1h}\n", "server.events_retention"},
		"tracing endpoint":   {"tracing: {endpoint: \"127.0.0.1:4318\"}\n", "tracing.endpoint"},
		"tracing unknown":    {"tracing: {endpont: x}\n", "endpont"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Load(strings.NewReader(c.yaml))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("err = %v, want ErrInvalid naming %q", err, c.field)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	c, err := Load(strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Listen != "127.0.0.1:7070" || c.Server.LeaseTTL.D() != 30*time.Second || c.Server.HeartbeatInterval.D() != 10*time.Second || !c.Open() {
		t.Fatalf("defaults: %+v", c.Server)
	}
	if _, ok := c.PolicyConfig().Lanes["default"]; !ok {
		t.Fatal("no default lane")
	}
	if d := Default(); !d.Server.AllowUnknownTypes {
		t.Fatal("Default() must allow unknown types")
	}
}

// Events are kept as long as jobs unless events_retention says otherwise
// (0: kept for ever).
func TestEventRetention(t *testing.T) {
	for yaml, want := range map[string]time.Duration{
		"":                        0,
		"server: {retention: 2h}": 2 * time.Hour,
		"server: {retention: 2h, events_retention: 30m}": 30 * time.Minute,
		"server: {retention: 2h, events_retention: 0}":   0,
		"server: {events_retention: 10m}":                10 * time.Minute,
	} {
		c, err := Load(strings.NewReader(yaml))
		if err != nil {
			t.Fatalf("%q: %v", yaml, err)
		}
		if got := c.Server.EventRetention(); got != want {
			t.Errorf("%q: events kept %v, want %v", yaml, got, want)
		}
	}
}

func TestDurationAcceptsSeconds(t *testing.T) {
	c, err := Load(strings.NewReader("server: {lease_ttl: 1.5, heartbeat_interval: 500ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.LeaseTTL.D() != 1500*time.Millisecond || c.Server.HeartbeatInterval.D() != 500*time.Millisecond {
		t.Fatalf("%v %v", c.Server.LeaseTTL.D(), c.Server.HeartbeatInterval.D())
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte("lanes: {a: {weight: 2}}\ntypes: {t: {priority: 5, retry: {kind: fixed, delay: 1s}}}\n"))
	f.Add([]byte("tiers: {\"1-5\": {max_running: 2}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Load(strings.NewReader(string(b)))
	})
}

func TestLaneFieldsDefaultOneByOne(t *testing.T) {
	c, err := Load(strings.NewReader("lanes: {a: {aging: {interval: 10s}, on_demand: {bonus: 7}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, def := c.PolicyConfig().Lanes["a"], policy.DefaultLaneConfig()
	if got.Aging.Step != def.Aging.Step || got.Aging.Interval != 10*time.Second || got.OnDemand.Bonus != 7 || got.OnDemand.Step != def.OnDemand.Step {
		t.Fatalf("lane a = %+v", got)
	}
}

func TestOutputLimits(t *testing.T) {
	c, err := Load(strings.NewReader("server:\n  output_limit: 64KiB\ntypes:\n  big:\n    output_limit: 1GB\n  small:\n    output_limit: 8192\n"))
	if err == nil || !strings.Contains(err.Error(), "types.big.output_limit") {
		t.Fatalf("a type above the ceiling: err = %v", err)
	}
	c, err = Load(strings.NewReader("server:\n  output_limit: 64KiB\n  max_output_limit: 2GB\ntypes:\n  big:\n    output_limit: 1GB\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.OutputLimit != 64<<10 || c.Types["big"].OutputLimit != 1e9 || c.Server.MaxOutputLimit != 2e9 {
		t.Errorf("limits = %v, %v, %v", c.Server.OutputLimit, c.Types["big"].OutputLimit, c.Server.MaxOutputLimit)
	}
	if d := Default(); d.Server.OutputLimit != DefaultOutputLimit || d.Server.MaxOutputLimit != DefaultMaxOutputLimit {
		t.Errorf("defaults = %v, %v", d.Server.OutputLimit, d.Server.MaxOutputLimit)
	}
	for _, bad := range []string{"10XB", "-1", "1KiB", "lots"} {
		if _, err := Load(strings.NewReader("server:\n  output_limit: " + bad + "\n")); err == nil || !strings.Contains(err.Error(), "server.output_limit") {
			t.Errorf("output_limit %q: err = %v", bad, err)
		}
	}
}

func TestGCFloor(t *testing.T) {
	for yaml, want := range map[string]int64{
		"":                            int64(DefaultGCFloor),
		"server: {gc_floor: 0}\n":     0,
		"server: {gc_floor: 64MiB}\n": 64 << 20,
	} {
		c, err := Load(strings.NewReader(yaml))
		if err != nil {
			t.Fatalf("%q: %v", yaml, err)
		}
		if got := c.Server.GCFloorBytes(); got != want {
			t.Errorf("%q: GCFloorBytes() = %d, want %d", yaml, got, want)
		}
	}
	if got := Default().Server.GCFloorBytes(); got != int64(DefaultGCFloor) {
		t.Errorf("Default(): GCFloorBytes() = %d, want %d", got, DefaultGCFloor)
	}
	_, err := Load(strings.NewReader("server: {gc_floor: -1}\n"))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "server.gc_floor") {
		t.Errorf("gc_floor -1: err = %v, want an error naming gc_floor", err)
	}
}
