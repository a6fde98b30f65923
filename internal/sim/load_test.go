package sim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/internal/policy"
)

const minimal = "pool: {slots: 1}\ntypes: {t: {}}\n"

func TestLoadErrorsNameTheField(t *testing.T) {
	tests := map[string]struct {
		doc  string
		want string
	}{
		"empty document":      {"", "empty document"},
		"unknown top field":   {minimal + "jbos: []\n", "field jbos not found"},
		"unknown job field":   {minimal + "jobs: [{type: t, durration: 1}]\n", "field durration not found"},
		"negative duration":   {minimal + "jobs: [{type: t}, {type: t}, {type: t}, {type: t, duration: -1}]\n", "jobs[3].duration: must be >= 0"},
		"nan at":              {minimal + "jobs: [{type: t, at: .nan}]\n", "jobs[0].at: must be >= 0"},
		"missing type":        {minimal + "jobs: [{key: k}]\n", "jobs[0].type: required"},
		"undeclared type":     {minimal + "jobs: [{type: x}]\n", `jobs[0].type: unknown type "x"`},
		"unknown job lane":    {minimal + "jobs: [{type: t, lane: gpu}]\n", `jobs[0].lane: unknown lane "gpu"`},
		"no default lane":     {minimal + "lanes: {batch: {}}\njobs: [{type: t}]\n", `jobs[0].lane: required: neither the job nor type "t" names a lane`},
		"priority range":      {minimal + "jobs: [{type: t, priority: 1001}]\n", "jobs[0].priority: priority 1001 outside [0, 1000]"},
		"zero count":          {minimal + "jobs: [{type: t, count: 0}]\n", "jobs[0].count: must be in"},
		"bad placeholder":     {minimal + "jobs: [{type: t, key: \"r{i%0}\"}]\n", "jobs[0].key: placeholder {i%0}"},
		"cancel before at":    {minimal + "jobs: [{type: t, at: 5, cancel_at: 1}]\n", "jobs[0].cancel_at: must be >= at"},
		"negative cost":       {minimal + "jobs: [{type: t, cost: -2}]\n", "jobs[0].cost: must be a finite number >= 0"},
		"negative cpu":        {minimal + "jobs: [{type: t, resources: {cpu: -1}}]\n", "jobs[0].resources.cpu"},
		"cpu not a number":    {minimal + "jobs: [{type: t, resources: {cpu: .nan}}]\n", "jobs[0].resources.cpu"},
		"negative gpu":        {minimal + "jobs: [{type: t, resources: {gpu: -2}}]\n", "jobs[0].resources.gpu"},
		"reprio priority":     {minimal + "jobs: [{type: t, reprioritize: {at: 1, priority: -3}}]\n", "jobs[0].reprioritize.priority"},
		"empty dependency":    {minimal + "jobs: [{type: t, depends_on: [\"\"]}]\n", "jobs[0].depends_on[0]: empty job id"},
		"no pool":             {"types: {t: {}}\n", "pool: required"},
		"pool and workers":    {minimal + "workers: [{name: w}]\n", "pool: give either pool or workers"},
		"worker without name": {"workers: [{slots: 2}]\ntypes: {t: {}}\n", "workers[0].name: required"},
		"duplicate worker":    {"workers: [{name: w}, {name: w}]\n", `workers[1].name: worker "w" already defined by workers[0]`},
		"zero slots":          {"pool: {slots: 0}\n", "pool.slots: must be >= 1"},
		"lane weight":         {minimal + "lanes: {a: {weight: 0}}\n", "lanes.a.weight: must be a positive number"},
		"aging interval":      {minimal + "lanes: {a: {aging: {step: 5, interval: 0}}}\n", "lanes.a.aging.interval: required when aging.step > 0"},
		"negative interval":   {minimal + "lanes: {a: {aging: {interval: -1}}}\n", "lanes.a.aging.interval: must be a non-negative duration"},
		"tier band":           {minimal + "tiers: {high: {max_running: 1}}\n", `tiers.high: band must be`},
		"tier overlap":        {minimal + "tiers: {\"1-5\": {}, \"4-9\": {}}\n", "overlaps"},
		"type lane":           {"pool: {slots: 1}\ntypes: {t: {lane: nowhere}}\n", `types.t.lane: unknown lane "nowhere"`},
		"type priority":       {"pool: {slots: 1}\ntypes: {t: {priority: 2000}}\n", "types.t.priority"},
		"tenant cap":          {minimal + "tenants: {a: {max_running: -1}}\n", "tenants.a.max_running: must be >= 0"},
		"cost alpha":          {minimal + "cost: {alpha: 2}\n", "cost.alpha"},
		"two documents":       {minimal + "---\npool: {slots: 2}\n", "more than one YAML document"},
		"wrong scalar type":   {minimal + "jobs: [{type: t, duration: soon}]\n", "cannot unmarshal"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tc.doc))
			if err == nil {
				t.Fatalf("no error for\n%s", tc.doc)
			}
			if !errors.Is(err, ErrScenario) {
				t.Errorf("error %v does not wrap ErrScenario", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadShippedScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if err != nil || len(files) < 10 {
		t.Fatalf("scenario files: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			loadFile(t, filepath.Base(f))
		})
	}
}

func TestCompileDefaults(t *testing.T) {
	s := loadString(t, `
workers:
  - {name: gpu, count: 2, slots: 3, cpu: 1.5, memory_mb: 1024, gpu: 1, types: [a], labels: [x]}
lanes:
  batch: {weight: 2, aging: {step: 0}, on_demand: {bonus: 7}}
  fast: {}
types:
  a: {priority: 8, lane: batch, resources: {cpu: 0.25}}
cost: {key_ttl: 90}
`)
	c, err := s.compile()
	if err != nil {
		t.Fatal(err)
	}
	wantBatch := policy.DefaultLaneConfig()
	wantBatch.Weight, wantBatch.Aging.Step, wantBatch.OnDemand.Bonus = 2, 0, 7
	want := map[string]policy.LaneConfig{"batch": wantBatch, "fast": policy.DefaultLaneConfig()}
	if diff := cmp.Diff(want, c.cfg.Lanes); diff != "" {
		t.Errorf("lanes (-want +got):\n%s", diff)
	}
	wantWorkers := []policy.Worker{
		{ID: "gpu-0", Types: []string{"a"}, Labels: []string{"x"}, Slots: 3, Resources: policy.Resources{MilliCPU: 1500, MemoryMB: 1024, GPU: 1}},
		{ID: "gpu-1", Types: []string{"a"}, Labels: []string{"x"}, Slots: 3, Resources: policy.Resources{MilliCPU: 1500, MemoryMB: 1024, GPU: 1}},
	}
	if diff := cmp.Diff(wantWorkers, c.workers); diff != "" {
		t.Errorf("workers (-want +got):\n%s", diff)
	}
	if got := c.cfg.Types["a"].Resources.MilliCPU; got != 250 {
		t.Errorf("type cpu 0.25 -> %d millicpu, want 250", got)
	}
	if c.cfg.Cost.KeyTTL != 90*time.Second {
		t.Errorf("key_ttl %v", c.cfg.Cost.KeyTTL)
	}
}

func TestTiersFromBands(t *testing.T) {
	got, err := compileTiers(map[string]TierSpec{"8": {MaxRunning: 8}, "700-1000": {MaxRunning: 3, Name: "fg"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []policy.TierConfig{
		{Name: "fg", MinPriority: 700, MaxPriority: 1000, MaxRunning: 3},
		{Name: "8", MinPriority: 8, MaxPriority: 8, MaxRunning: 8},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tiers (-want +got):\n%s", diff)
	}
}

func TestTemplate(t *testing.T) {
	tests := map[string]struct {
		in   string
		i    int
		want string
	}{
		"literal":        {"repo", 7, "repo"},
		"index":          {"r{i}", 7, "r7"},
		"modulo":         {"user{i%3}", 7, "user1"},
		"both":           {"{i%10}-{i}", 123, "3-123"},
		"other braces":   {"{x}{i", 2, "{x}{i"},
		"empty":          {"", 2, ""},
		"brace then var": {"{{i}}", 4, "{4}"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tm, err := parseTemplate(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := tm.render(tc.i); got != tc.want {
				t.Errorf("render(%q, %d) = %q, want %q", tc.in, tc.i, got, tc.want)
			}
		})
	}
	for _, bad := range []string{"{i%}", "{i%-2}", "{i%x}", "{i%3"} {
		if _, err := parseTemplate(bad); err == nil {
			t.Errorf("parseTemplate(%q): no error", bad)
		}
	}
}

func TestLoadFromFileHandle(t *testing.T) {
	f, err := os.Open(filepath.Join(scenarioDir, "seed001-4-conflict.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Jobs) != 4 || s.Pool == nil || *s.Pool.Slots != 8 {
		t.Errorf("parsed %d jobs, pool %+v", len(s.Jobs), s.Pool)
	}
}
